// Attention scores with the encoding inside (issue 51): an engine's pre-softmax scores
// S[h, i, j] = scale·(R(m_i)q_i · R(n_j)k_j) + bias[h, i, j], with RoPE (FlashInfer's pos_encoding_mode
// "ROPE_LLAMA", flash-attention's flash_attn_with_kvcache(rotary_cos, ...)), ALiBi's bias (flash-attention's
// alibi_slopes, FlashInfer's "ALIBI", HF's BLOOM and MPT baddbmm; HF's Falcon scales the bias too,
// scale_bias) or neither, checked against the exact scores of the q and k given before the encoding.
//
// The exact scores: q and k as given (exact), RoPE's exact rotation of each (within 2^-53), their dot product
// in double, ALiBi's bias correctly rounded. The budget is an engine's that accumulates in float32:
//   scale·(d + 2)·2^-24·Σ_c |q'_c|·|k'_c|   the products and sums in any order, the scale's product
// + 3·2^-24·|bias|                          the slope in float32, the distance's product, the add
// + (2^-24 + u_out)·|S| + denorm_min(out)   the sum's rounding and the output's
// and with RoPE, each rotated element within e_c of the exact one, e_c the element budget of HF's rotate_half
// in q's and k's type (the rope.torch_f32, _bf16 or _f16 contract at the pair's angle: a float32 rotation, or
// one in the model's 16-bit type, stored there), so scale·Σ_c (e_q,c·(|k'_c| + e_k,c) + |q'_c|·e_k,c) more,
// and |q'|, |k'| widened by e. A masked score where the key lies after the query's position (-inf, or HF
// eager's finfo.min plus the score: at most half the type's lowest) is accepted there and nowhere else.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "pe/check/check.h"

namespace pe::check {

enum class ScoreEncoding { None, Alibi, Rope };
std::string_view to_string(ScoreEncoding e) noexcept;  // "none", "alibi", "rope"
std::optional<ScoreEncoding> parse_score_encoding(std::string_view s) noexcept;

struct ScoresRequest {
  DataView scores;  // [heads, queries, keys]
  DataView q, k;  // [queries, heads, d] and [keys, kv_heads, d] (kv_heads divides heads), before the encoding
  // Default: keys 0..K-1 and the queries the last Q of them (bottom-right, as a decode step or a chunk sees
  // them).
  std::optional<std::vector<std::int64_t>> query_positions, key_positions;
  std::optional<double> scale;  // default 1/sqrt(d)
  ScoreEncoding encoding = ScoreEncoding::Alibi;
  AlibiSpec alibi;          // max_bias, slopes, form; heads are q's
  bool scale_bias = false;  // scale·(q·k + bias): HF's Falcon
  RopeSpec rope;            // encoding rope: the rotation of q and k (hf: a config's)
  HfSource hf;
};

// The verdict, the worst score (doc.worst: head, query, key, value, exact, budget) and, for a failure, the
// mistakes that reproduce every score within the budget: the query offset dropped (queries numbered from 0,
// not from keys − queries: top-left where bottom-right was meant, the ALiBi and RoPE twin of a dropped decode
// offset), no softmax scale, the scale on the bias too (or not), no bias, another ALiBi form or slope rule,
// keys or queries not rotated, the other RoPE layout. BadRequest naming the array or parameter at fault.
Report check_scores(const ScoresRequest& r, const Names& names);

}  // namespace pe::check

// RoPE scaling methods as typed parameters, following Hugging Face transformers'
// modeling_rope_utils.py (rope_type "linear", "dynamic", "yarn", "llama3", "longrope", "proportional"), plus
// the static NTK-aware rule HF does not have, and the engines' other readings of HF's types as typed
// choices (dynamic's static table, Hunyuan's alpha). The formulas themselves are in
// pe/detail/rope_scaling_math.h; every deviation from HF is listed in docs/commands.md ("RoPE scaling").
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

namespace pe {

enum class RopeScalingType : std::uint8_t {
  None,      // θ_j = b^(-2j/d)
  Linear,    // position interpolation: θ_j / s
  Ntk,       // NTK-aware (bloc97): base' = b·s^(d/(d-2)); no HF rope_type of its own
  Dynamic,   // HF "dynamic": base' = b·(s·n/L - (s-1))^(d/(d-2)), n = max(seq_len, L)
  Yarn,      // HF "yarn": per-pair ramp between θ_j and θ_j/s, attention factor on cos and sin
  Llama3,    // HF "llama3": by wavelength, θ_j / s beyond L/low_freq_factor, θ_j below L/high_freq_factor
  LongRope,  // HF "longrope": θ_j / short_factor[j] or / long_factor[j], attention factor
  Proportional  // HF "proportional" (Gemma 4): θ_j / s for the first int(F·d // 2) pairs, 0 past them
};

std::string_view to_string(RopeScalingType t) noexcept;
std::optional<RopeScalingType> parse_rope_scaling_type(std::string_view s) noexcept;

// LongRoPE's choice between its lists. HF picks one list per sequence (long once max(position_ids) + 1 > L);
// TGI's SuRotaryEmbedding picks per token (short below L, long from L on, inside one sequence).
enum class LongRopeSwitch { PerSequence, PerToken };
std::string_view to_string(LongRopeSwitch s) noexcept;  // "per-sequence", "per-token"
std::optional<LongRopeSwitch> parse_longrope_switch(std::string_view s) noexcept;

// Dynamic NTK's length n. HF's rotary embedding recomputes base' from the live length n = max(seq_len, L);
// vLLM's and SGLang's DynamicNTKScalingRotaryEmbedding build one table at n = factor·L (static: seq_len
// unread).
enum class DynamicSemantics { Live, Static };
std::string_view to_string(DynamicSemantics s) noexcept;  // "live", "static"
std::optional<DynamicSemantics> parse_dynamic_semantics(std::string_view s) noexcept;

// YaRN's attention_factor with its own mscale: HF's _compute_yarn_parameters replaces the mscale by it when
// given (Replace); vLLM's YaRNScalingRotaryEmbedding multiplies yarn_get_mscale(s) by it, its
// DeepseekScalingRotaryEmbedding the mscale ratio (Multiply), and so does SGLang.
enum class YarnAttention { Replace, Multiply };
std::string_view to_string(YarnAttention a) noexcept;  // "replace", "multiply"
std::optional<YarnAttention> parse_yarn_attention(std::string_view s) noexcept;

// Fields a method does not use are ignored by it. Defaults are HF's where HF has one.
struct RopeScaling {
  RopeScalingType type = RopeScalingType::None;
  double factor = 1.0;                           // s; finite, > 0 (s < 1 compresses)
  std::int64_t original_max_position = 0;        // L (HF original_max_position_embeddings); dynamic, yarn,
                                                 // llama3 and longrope need it
  std::int64_t seq_len = 0;                      // dynamic: the current length n; longrope: long factors
                                                 // when seq_len > L. 0 = not given (HF's None)
  double beta_fast = 32, beta_slow = 1;          // yarn: correction range, in rotations over L
  bool truncate = true;                          // yarn: floor/ceil the correction range
  std::optional<double> mscale, mscale_all_dim;  // yarn: attention = m(s,mscale)/m(s,mscale_all_dim)
  std::optional<double> attention_factor;        // any method: the factor on cos and sin (yarn's and
                                                 // longrope's own when unset, else 1)
  double position_scale = 1;                     // any method: positions divided by it (θ'_j / scale), the
                                                 // hypothesis "positions divided by 2"; no HF key
  double low_freq_factor = 1, high_freq_factor = 4;              // llama3
  std::vector<double> short_factor, long_factor;                 // longrope: rotary_dim/2 factors each
  LongRopeSwitch longrope_switch = LongRopeSwitch::PerSequence;  // longrope; per token: seq_len unread
  DynamicSemantics dynamic_semantics = DynamicSemantics::Live;   // dynamic; static: seq_len unread
  YarnAttention yarn_attention = YarnAttention::Replace;         // yarn: attention_factor with its mscale
  std::optional<double> alpha;       // dynamic (Hunyuan's key): base' = b·alpha^(d/(d-2)), length unread
  double partial_rotary_factor = 1;  // proportional: F, the share of the pairs that rotate (the exponent
                                     // stays over the rotary dim d; HF's partial rotary shrinks d instead)
};

// Calls f(name, member) for every scaling parameter under its HF name (position_scale and longrope_switch
// have none), in the order messages list them: the one list of parameters for RopeScaling's JSON and for
// check's ScalingSpec, whose members carry the same names.
template <class Scaling, class F>
void for_each_scaling_parameter(Scaling& s, F&& f) {
  f("factor", s.factor);
  f("original_max_position", s.original_max_position);
  f("seq_len", s.seq_len);
  f("beta_fast", s.beta_fast);
  f("beta_slow", s.beta_slow);
  f("mscale", s.mscale);
  f("mscale_all_dim", s.mscale_all_dim);
  f("attention_factor", s.attention_factor);
  f("truncate", s.truncate);
  f("low_freq_factor", s.low_freq_factor);
  f("high_freq_factor", s.high_freq_factor);
  f("short_factor", s.short_factor);
  f("long_factor", s.long_factor);
  f("position_scale", s.position_scale);
  f("longrope_switch", s.longrope_switch);
  f("dynamic_semantics", s.dynamic_semantics);
  f("yarn_attention", s.yarn_attention);
  f("alpha", s.alpha);
  f("partial_rotary_factor", s.partial_rotary_factor);
}

// True when the scaling changes the plain encoding at all: a method, a position scale or an attention factor.
inline bool scales(const RopeScaling& s) noexcept {
  return s.type != RopeScalingType::None || s.position_scale != 1.0 || s.attention_factor.has_value();
}

// LongRoPE switching per token: each token's scaling is a per-sequence one, its list chosen by its position.
inline bool switches_per_token(const RopeScaling& s) noexcept {
  return s.type == RopeScalingType::LongRope && s.longrope_switch == LongRopeSwitch::PerToken;
}
// The scaling the token at `position` is rotated with (s itself unless it switches per token).
RopeScaling scaling_at(const RopeScaling& s, std::int64_t position);
// The scalings of the tokens below original_max_position and of those from it on (s twice unless it
// switches per token): what every consumer of a per-token switch splits its tokens by.
struct PerTokenSides {
  RopeScaling below, from;
};
inline PerTokenSides per_token_sides(const RopeScaling& s) {
  return {scaling_at(s, s.original_max_position - 1), scaling_at(s, s.original_max_position)};
}

// The methods as data: which RopeScaling fields each reads and requires. Plan validation, the CLI's
// flags, the census JSON and the config reader take them from here. A field's name is its member's
// (and InvalidArgument's parameter); `hf_key` is its key in HF's rope_scaling ("" where HF has none:
// seq_len is the runtime length).
struct ScalingField {
  std::string_view name, hf_key;
};
struct ScalingMethod {
  RopeScalingType type;
  std::string_view name;  // HF's rope_type where HF has the method
  std::span<const std::string_view> reads, required;
};
std::span<const ScalingField> scaling_fields() noexcept;
std::span<const ScalingMethod> scaling_methods() noexcept;
const ScalingMethod& scaling_method(RopeScalingType t) noexcept;
bool reads_field(RopeScalingType t, std::string_view field) noexcept;
bool requires_field(RopeScalingType t, std::string_view field) noexcept;

// Proportional's rotating pairs: HF's int(F·d // 2) for d = rotary_dim (the product in double, floored).
std::int64_t proportional_pairs(const RopeScaling& s, std::int64_t rotary_dim) noexcept;

// HF's dim = int(head_dim · partial_rotary_factor): throws InvalidArgument naming
// partial_rotary_factor unless the factor is in (0, 1] and the result is even and >= 2.
std::int64_t partial_rotary_dim(std::int64_t head_dim, double partial_rotary_factor);

}  // namespace pe

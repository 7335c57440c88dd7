// Model RoPE configs drawn from the shared model-config space (pe/harness/config_space.h,
// harness/data/config_space.json): the space pe_suite.verify_rope and pe_suite.strategies draw from in
// Python. An HF rope_type with the space's parameters (and the rules that tie them: YaRN's
// max_position_embeddings = original x factor, Llama-3's high = low x ratio, LongRoPE's one factor per pair,
// the runtime seq_len = max(position_ids) + 1 of dynamic and LongRoPE), rope_theta, a head dim of the
// space's, partial_rotary_factor, M-RoPE sections; positions as the space's scenarios (prefill, decode,
// chunked, packed, left padding, and crossing: consecutive positions across the original context, in one
// call).
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "pe/harness/config_space.h"
#include "pe/plan.h"

namespace pe::testing {

struct ModelRope {
  RopeParams params;
  std::string rope_type, form, scenario;
  std::vector<std::int64_t> positions;  // [n_axes][tokens] (M-RoPE: t, h, w)
};

// "llama3, partial, decode: head_dim 128, rotary_dim 64, rope_theta 500000, llama3(...), positions [...]".
std::ostream& operator<<(std::ostream& os, const ModelRope& m);

// A value of one parameter (shrinks toward the first choice, or the range's low end).
rc::Gen<double> gen_param(const harness::ParamSpec& spec);
// A model's RoPE, head dims up to max_head_dim, positions up to max_position, the space's token counts capped
// at max_tokens (the exact reference's cost grows with every element).
rc::Gen<ModelRope> gen_model_rope(Layout layout, std::int64_t max_head_dim, std::int64_t max_position,
                                  std::int64_t max_tokens);

}  // namespace pe::testing

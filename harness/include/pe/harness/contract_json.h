// The contract and the RoPE scaling as JSON (nlohmann ADL): every field and coefficient, read back to an
// equal Contract. `pe-suite list --json`, the census and outside tools use this one form.
#pragma once

#include <nlohmann/json.hpp>

#include "pe/contract.h"
#include "pe/harness/enum_json.h"
#include "pe/rope_scaling.h"

namespace pe {

// {"layouts": [...], "outputs": [...], "angle_type", "compute_type", "table_type", "max_position",
//  "max_base", "max_input_abs", "depends_on", "coefficients": {"c0","ck","ct","c1","c1_pair","ca","c1_gain"}}
void to_json(nlohmann::json& j, const Contract& c);
// Throws nlohmann::json::exception on a missing field and std::runtime_error naming an unknown
// layout or type (pe/harness/enum_json.h). depends_on is not kept (a const char* the variant owns): it reads
// back empty.
void from_json(const nlohmann::json& j, Contract& c);

// {"type": "<method>", then every field the method reads (pe/rope_scaling.h's table) by its name}:
// optional fields (mscale, mscale_all_dim, attention_factor) only when set, seq_len only when > 0,
// position_scale only when not 1, longrope_switch ("per-sequence" or "per-token") only when per token.
void to_json(nlohmann::json& j, const RopeScaling& s);
// The inverse: "type" and the fields its method reads (a census file's "rope_scaling" may also hold
// "partial_rotary_factor", which is not a RopeScaling field: take it out first) (absent ones keep
// RopeScaling's defaults). Throws std::runtime_error naming an unknown method, a key the method does not
// read, or a required field that is missing; nlohmann::json::exception for a mistyped value.
void from_json(const nlohmann::json& j, RopeScaling& s);

}  // namespace pe

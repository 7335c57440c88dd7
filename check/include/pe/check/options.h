// The RoPE and ALiBi parameters as a user gives them, before they are a plan: each front end fills these
// (the command line from its flags, Python from its keywords), with `given` holding the canonical names
// (names.h) of what the user actually gave, which decides whether a value is used, never the value
// itself. Defaults are HF's. The conversions below reject what the core would silently ignore (a
// parameter the chosen method does not read) or take as "absent" (a method's required one missing); the
// values themselves are checked by the plans, whose errors come back under the front end's name.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "pe/alibi.h"
#include "pe/attn_temperature.h"
#include "pe/check/names.h"
#include "pe/errors.h"
#include "pe/plan.h"
#include "pe/rope_scaling.h"

namespace pe::check {

struct ScalingOptions {
  std::string scaling = "none";
  double factor = 1, beta_fast = 32, beta_slow = 1, mscale = 0, mscale_all_dim = 0, attention_factor = 0;
  double low_freq_factor = 1, high_freq_factor = 4, partial_rotary_factor = 1, position_scale = 1;
  std::int64_t original_max_position = 0, seq_len = 0;
  std::string truncate = "true";
  std::string longrope_switch = "per-sequence";
  std::string short_factors, long_factors;                  // longrope's lists as 1-D f32/f64 .npy files, or
  std::vector<double> short_factor_list, long_factor_list;  // in memory (a config's rope_scaling)
  std::set<std::string> given;  // "scaling", "factor", ..., "partial_rotary_factor"
};

struct FormOptions {
  std::vector<std::int64_t> mrope_section;  // pairs per axis t, h, w (and e); empty: text RoPE
  std::string mrope_layout;                 // sectioned (default) or interleaved
  std::string vision;                       // qwen2vl or pixtral
  std::int64_t rotary_offset = 0;
};

struct TemperatureOptions {
  std::string type;  // "" or "none": no temperature
  double attn_scale = 0.1, beta = 0.1;
  std::int64_t floor_scale = 8192;
  std::set<std::string> given;  // "attn_temperature", "attn_scale", "floor_scale", "beta"
};

struct AlibiOptions {
  std::int64_t heads = 0;
  double max_bias = 8;
  std::string slopes = "interpolated", form = "causal";
  std::vector<std::int64_t> queries, keys;  // empty: not given
  bool slopes_only = false;
  std::set<std::string> given;  // "heads", "max_bias", "alibi_slopes", "alibi_form", "queries", "keys", ...
};

// Everything a RoPE check or export takes besides the data: `given` holds the canonical names of the
// options outside scaling and temperature that the user gave ("base", "layout", "rotary_dim",
// "head_dim", "mrope_section", "mrope_layout"), where a model config must not overwrite them.
struct RopeOptions {
  double base = 10000.0;
  std::string layout;                         // "": the family's default
  std::int64_t rotary_dim = 0, head_dim = 0;  // 0: all of the head; the data's head dim
  ScalingOptions scaling;
  FormOptions form;
  TemperatureOptions temperature;
  bool no_rope = false;  // a NoPE layer: the output is the input (times the temperature)
  std::set<std::string> given;
};

// The canonical names of the scaling parameters, in the order messages list them.
std::span<const std::string_view> scaling_parameters() noexcept;

// The scaling the options describe. BadRequest naming: an unknown method, a parameter the method does not
// read, a required one missing (factor for every method but none; original_max_position for dynamic, yarn,
// llama3, longrope), mscale without mscale_all_dim (HF ignores it alone), truncate not true/false, a factor
// list that is not a 1-D float .npy.
RopeScaling to_rope_scaling(const ScalingOptions& o, const Names& names);
// BadRequest naming the first scaling parameter given (they apply to RoPE only).
void reject_scaling(const ScalingOptions& o, const Names& names, const std::string& why);
// The rotary dimension: `rotary_dim` (0: all of head_dim) or, with partial_rotary_factor, HF's
// int(head_dim·F); both given is refused.
std::int64_t rotary_dim_for(const ScalingOptions& o, std::int64_t head_dim, std::int64_t rotary_dim,
                            const Names& names);

// The form; BadRequest naming mrope_layout without mrope_section, an unknown layout or vision form,
// vision with mrope_section.
RopeForm to_rope_form(const FormOptions& o, const Names& names);
RopeParams with_form(RopeParams params, const FormOptions& o, const Names& names);
void reject_form(const FormOptions& o, const Names& names, const std::string& why);
// "mrope_section" when the form's axes come from it, else "vision": what made the form multi-axis.
std::string_view axes_parameter(const FormOptions& o) noexcept;

// The temperature; mistral's L is the scaling's original_max_position (HF Ministral3 reads the same key).
AttnTemperature to_attn_temperature(const TemperatureOptions& t, const ScalingOptions& scaling,
                                    const Names& names);
// `scaling` without original_max_position where only the mistral temperature reads it.
ScalingOptions scaling_besides(ScalingOptions scaling, const AttnTemperature& t);
void reject_temperature(const TemperatureOptions& t, const Names& names, const std::string& why);

// The ALiBi parameters for `heads` heads.
AlibiParams to_alibi_params(const AlibiOptions& o, std::int64_t heads, const Names& names);
void reject_alibi(const AlibiOptions& o, const Names& names, const std::string& why);

// RopePlan(params), an InvalidArgument about a parameter turned into BadRequest under its name.
RopePlan rope_plan(const RopeParams& params, const Names& names);
// Throws `e` again as BadRequest "<name>: message" where the front end names its parameter, else as it is.
[[noreturn]] void rethrow_named(const InvalidArgument& e, const Names& names);

// One line for headers: "yarn (factor 4, original_max_position 4096; attention 1.14)".
std::string describe_scaling(const RopeScaling& s, const RopePlan& plan);
// "M-RoPE sectioned 16,24,24", "vision qwen2vl", "rotary at 128"; "" for text RoPE.
std::string describe_form(const RopeParams& params);
// "unknown layout 'neox' (rope: interleaved, halfsplit or deinterleave; GPT-NeoX's rotate_half is halfsplit)"
std::string unknown_layout(const std::string& given, Family family);
// "llama4 (attn_scale 0.1, floor_scale 8192)"; "none".
std::string describe_temperature(const AttnTemperature& t);
// The error model's words for budgets: "(6*2^-24 + 2*u_bf16) * t(p) * |x| (...)".
std::string describe_gain_budget(DType out, const std::string& magnitude);

}  // namespace pe::check

// The one typed description of an encoding as a caller gives it, read and written by every front end (the
// command line, Python, the model-config resolver, the diagnosis's findings): each field an empty optional
// when not given, where a model config's value or HF's default applies. The conversions below turn a spec
// into the core's parameters and reject what the core would silently ignore (a parameter the chosen method
// does not read) or take as absent (a method's required one missing); the values themselves are checked by
// the plans, whose errors come back under the front end's name (names.h).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "pe/alibi.h"
#include "pe/attn_temperature.h"
#include "pe/check/names.h"
#include "pe/errors.h"
#include "pe/harness/sinusoidal_rows.h"
#include "pe/plan.h"
#include "pe/rope_scaling.h"
#include "pe/xpos.h"

namespace pe::check {

// RoPE scaling (RopeScaling's fields) and HF's partial_rotary_factor: proportional's own share of the pairs
// with --scaling proportional, else HF's partial rotary (the rotary dim int(head_dim·F)).
struct ScalingSpec {
  std::optional<RopeScalingType> method;
  std::optional<double> factor, beta_fast, beta_slow, mscale, mscale_all_dim, attention_factor,
      low_freq_factor, high_freq_factor, position_scale, partial_rotary_factor;
  std::optional<std::int64_t> original_max_position, seq_len;
  std::optional<bool> truncate;
  std::optional<LongRopeSwitch> longrope_switch;
  std::optional<DynamicSemantics> dynamic_semantics;
  std::optional<YarnAttention> yarn_attention;
  std::optional<double> alpha;
  std::optional<std::vector<double>> short_factor, long_factor;

  // Whether the parameter of this canonical name ("factor", "scaling", ...) is given.
  bool given(std::string_view canonical) const;
  bool operator==(const ScalingSpec&) const = default;
};

// The rotary form: M-RoPE's sections (pairs per axis t, h, w and e), 2-D vision RoPE, axial N-D RoPE's
// channels per axis (diffusers' axes_dim), the first channel.
struct FormSpec {
  std::optional<std::vector<std::int64_t>> mrope_section;
  std::optional<MropeLayout> mrope_layout;
  std::optional<VisionRope> vision;
  std::optional<std::vector<std::int64_t>> axes_dim;
  std::optional<std::int64_t> rotary_offset;

  bool operator==(const FormSpec&) const = default;
};

// Llama-4's and Mistral's attention temperature (mistral's L is the scaling's original_max_position).
struct TemperatureSpec {
  std::optional<AttnTemperatureType> type;
  std::optional<double> attn_scale, beta;
  std::optional<std::int64_t> floor_scale;
  bool operator==(const TemperatureSpec&) const = default;
};

// xPos's gain after the rotation (pe/xpos.h): scale_base as flash-attention's RotaryEmbedding and
// rotary-embedding-torch's xpos_scale_base, the centre their seqlen // 2, the tensor q or k.
struct XPosSpec {
  std::optional<double> scale_base;
  std::optional<std::int64_t> centre;
  std::optional<bool> keys;
  bool operator==(const XPosSpec&) const = default;
};

struct RopeSpec {
  std::optional<double> base;
  std::optional<Layout> layout;
  std::optional<std::int64_t> rotary_dim, head_dim;  // rotary_dim 0: all of the head
  ScalingSpec scaling;
  FormSpec form;
  TemperatureSpec temperature;
  XPosSpec xpos;
  std::optional<bool> no_rope;  // a NoPE layer: the output is the input (times the temperature)

  bool nope() const { return no_rope.value_or(false); }
  bool operator==(const RopeSpec&) const = default;
};

struct AlibiSpec {
  std::optional<std::int64_t> heads;
  std::optional<double> max_bias;
  std::optional<AlibiSlopes> slopes;
  std::optional<AlibiForm> form;
  std::optional<std::vector<std::int64_t>> queries, keys;
  std::optional<bool> slopes_only;
};

// A sinusoidal table's switches under diffusers' names (get_timestep_embedding, get_2d_sincos_pos_embed,
// get_3d_sincos_pos_embed; fairseq's padding_idx): base is max_period. A grid (H,W or T,H,W) replaces the
// positions with its coordinates (pe/harness/sinusoidal_rows.h).
struct SinusoidalSpec {
  std::optional<double> base;
  std::optional<Layout> layout;
  std::optional<bool> flip_sin_to_cos;
  std::optional<double> downscale_freq_shift, scale;
  std::optional<std::int64_t> padding_idx;
  std::optional<std::vector<std::int64_t>> grid;
  std::optional<double> base_size, interpolation_scale, temporal_interpolation_scale;
  std::optional<std::int64_t> extra_tokens;

  bool operator==(const SinusoidalSpec&) const = default;
};

// The given values by their canonical names (diffusers'), in the order above.
std::vector<SpecEntry> entries(const SinusoidalSpec& spec);
// The table's parameters for `dim` channels: the paper's table (interleaved, base 10000) where the spec is
// silent. BadRequest naming a value the reference refuses; a grid's parameter without --grid.
SinusoidalParams sinusoidal_params(const SinusoidalSpec& spec, std::int64_t dim, const Names& names);
// The grid the spec gives (spec.grid set), its scales 1 and its extra tokens 0 where unset.
harness::GridSpec grid_spec(const SinusoidalSpec& spec);

// The spec's given values (SpecEntry, names.h), enumerations by their names: base, then the scaling's in the
// order messages list them, then the rest. What a front end restates in its own words (the command line as
// flags, Python as keywords) and what the check's JSON records.
std::vector<SpecEntry> entries(const RopeSpec& spec);
void to_json(nlohmann::json& j, const RopeSpec& spec);
// A spec written by to_json read back (an unknown enumerated value refused).
void from_json(const nlohmann::json& j, RopeSpec& spec);

// A caller's text for an enumerated parameter, parsed; BadRequest naming it (in the caller's words) with the
// values it takes. The words are the same for every front end.
RopeScalingType parse_scaling(std::string_view text, const Names& names);
bool parse_truncate(std::string_view text, const Names& names);
LongRopeSwitch parse_switch(std::string_view text, const Names& names);
DynamicSemantics parse_dynamic_semantics(std::string_view text, const Names& names);
YarnAttention parse_yarn_attention(std::string_view text, const Names& names);
MropeLayout parse_mrope_layout(std::string_view text, const Names& names);
VisionRope parse_vision(std::string_view text, const Names& names);
AttnTemperatureType parse_temperature(std::string_view text, const Names& names);  // "" and none: None
AlibiSlopes parse_slopes(std::string_view text, const Names& names);
AlibiForm parse_alibi_form(std::string_view text, const Names& names);
Layout parse_layout(std::string_view text, Family family, const Names& names);
// A 1-D float32/float64 .npy of longrope factors, named `parameter`.
std::vector<double> read_factors(const std::string& path, std::string_view parameter, const Names& names);

// The scaling the spec describes. BadRequest naming: a parameter the method does not read, a required one
// missing (factor for every method but none; original_max_position for dynamic, yarn, llama3, longrope),
// mscale without mscale_all_dim (HF ignores it alone), attention_factor with mscale.
RopeScaling to_rope_scaling(const ScalingSpec& s, const Names& names);
// BadRequest naming the first scaling parameter given (they apply to RoPE only).
void reject_scaling(const ScalingSpec& s, const Names& names, const std::string& why);
// The rotary dimension: `rotary_dim` (0 or none: all of head_dim) or, with partial_rotary_factor, HF's
// int(head_dim·F); both given is refused.
std::int64_t rotary_dim_for(const RopeSpec& spec, std::int64_t head_dim, const Names& names);

// The form; BadRequest naming mrope_layout without mrope_section, vision with mrope_section, axes_dim with
// either.
RopeForm to_rope_form(const FormSpec& f, const Names& names);
void reject_form(const FormSpec& f, const Names& names, const std::string& why);
// "mrope_section", "vision" or "axes_dim": what made the form multi-axis.
std::string_view axes_parameter(const FormSpec& f) noexcept;

// The temperature; mistral's L is the scaling's original_max_position (HF Ministral3 reads the same key).
AttnTemperature to_attn_temperature(const RopeSpec& spec, const Names& names);
// `scaling` without original_max_position where only the mistral temperature reads it.
ScalingSpec scaling_besides(ScalingSpec scaling, const AttnTemperature& t);
void reject_temperature(const TemperatureSpec& t, const Names& names, const std::string& why);
// xPos; the centre, where not given, (the largest position + 1) div 2: both engines' seqlen // 2 for a table
// built to the sequence's length. BadRequest naming xpos_centre or xpos_keys without xpos_scale_base, a
// value pe::validate refuses.
XPos to_xpos(const XPosSpec& x, std::int64_t largest_position, const Names& names);
void reject_xpos(const XPosSpec& x, const Names& names, const std::string& why);

// The RoPE parameters of data whose head is `head_dim` wide, under temperature `t`: the layout (the
// family's default when none), the rotary dim, the base (HF's 10000 when none), the scaling, the form.
RopeParams rope_params(const RopeSpec& spec, std::int64_t head_dim, const AttnTemperature& t,
                       const Names& names);

// The ALiBi parameters for `heads` heads.
AlibiParams to_alibi_params(const AlibiSpec& a, std::int64_t heads, const Names& names);
void reject_alibi(const AlibiSpec& a, const Names& names, const std::string& why);

// RopePlan(params), an InvalidArgument about a parameter turned into BadRequest under its name.
RopePlan rope_plan(const RopeParams& params, const Names& names);
// Throws `e` again as BadRequest "<name>: message" where the front end names its parameter, else as it is.
[[noreturn]] void rethrow_named(const InvalidArgument& e, const Names& names);

// One line for headers: "yarn (factor 4, original_max_position 4096; attention 1.14)".
std::string describe_scaling(const RopeScaling& s, const RopePlan& plan);
// "M-RoPE sectioned 16,24,24", "vision qwen2vl", "axial 16,56,56", "rotary at 128"; "" for text RoPE.
std::string describe_form(const RopeParams& params);
// "unknown layout 'neox' (rope: interleaved, halfsplit or deinterleave; GPT-NeoX's rotate_half is halfsplit)"
std::string unknown_layout(const std::string& given, Family family);
// "llama4 (attn_scale 0.1, floor_scale 8192)"; "none".
std::string describe_temperature(const AttnTemperature& t);
// "xPos on q: gain ((2j + 0.4d)/(1.4d))^((p - 2048)/512), d = 128".
std::string describe_xpos(const XPos& x, std::size_t rotary_dim);
// The error model's words for budgets: "(6*2^-24 + 2*u_bf16) * t(p) * |x| (...)"; xPos's.
std::string describe_gain_budget(DType out, const std::string& magnitude);
std::string describe_xpos_budget(DType out);

}  // namespace pe::check

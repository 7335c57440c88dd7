// The parameters as given, into the core's typed parameters (options.h).
#include "pe/check/options.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "pe/check/npy.h"

namespace pe::check {
namespace {

using T = RopeScalingType;

// Every scaling parameter by its canonical name: RopeScaling's fields, the method and the partial factor.
constexpr std::array<std::string_view, 17> kScaling = {"scaling",
                                                       "factor",
                                                       "original_max_position",
                                                       "seq_len",
                                                       "beta_fast",
                                                       "beta_slow",
                                                       "mscale",
                                                       "mscale_all_dim",
                                                       "attention_factor",
                                                       "truncate",
                                                       "low_freq_factor",
                                                       "high_freq_factor",
                                                       "short_factor",
                                                       "long_factor",
                                                       "position_scale",
                                                       "longrope_switch",
                                                       "partial_rotary_factor"};

bool has(const std::set<std::string>& given, std::string_view name) {
  return given.count(std::string(name)) > 0;
}

// The parameters among `fields` (a method's reads or requires), in kScaling's order.
std::vector<std::string_view> parameters_of(std::span<const std::string_view> fields) {
  std::vector<std::string_view> out;
  for (std::string_view p : kScaling) {
    if (std::find(fields.begin(), fields.end(), p) != fields.end()) out.push_back(p);
  }
  return out;
}

std::string listed(const std::vector<std::string_view>& parameters, const Names& names) {
  std::string s;
  for (std::string_view p : parameters) s += (s.empty() ? "" : ", ") + names(p);
  return s.empty() ? "no other parameter" : s;
}

// A 1-D float32/float64 .npy of factors.
std::vector<double> read_factors(const std::string& path, std::string_view parameter, const Names& names) {
  NpyArray a;
  try {
    a = read_npy(path);
  } catch (const NpyError& e) {
    names.fail(parameter, e.what());
  }
  if (a.integer || (a.dtype != DType::F32 && a.dtype != DType::F64))
    names.fail(parameter, fmt::format("{} holds {}; expected float32 or float64", path,
                                      a.integer ? "integers" : std::string(to_string(a.dtype))));
  if (a.shape.size() != 1)
    names.fail(parameter, fmt::format("{} has rank {}; expected a 1-D array of rotary_dim/2 factors", path,
                                      a.shape.size()));
  return a.values;
}

// Each temperature parameter with the type that reads it.
struct TemperatureParameter {
  std::string_view name;
  AttnTemperatureType type;
};
constexpr std::array<TemperatureParameter, 4> kTemperature = {
    {{"attn_scale", AttnTemperatureType::Llama4},
     {"floor_scale", AttnTemperatureType::Llama4},
     {"beta", AttnTemperatureType::Mistral},
     {"original_max_position", AttnTemperatureType::Mistral}}};

}  // namespace

std::span<const std::string_view> scaling_parameters() noexcept { return kScaling; }

RopeScaling to_rope_scaling(const ScalingOptions& o, const Names& names) {
  const auto type = parse_rope_scaling_type(o.scaling);
  if (!type)
    names.fail("scaling",
               "unknown method '" + o.scaling + "' (none, linear, ntk, dynamic, yarn, llama3, longrope)");
  const auto given = [&o](std::string_view p) { return has(o.given, p); };
  const ScalingMethod& method = scaling_method(*type);
  const std::vector<std::string_view> used = parameters_of(method.reads);
  for (std::string_view p : kScaling) {
    if (p == "scaling" || p == "partial_rotary_factor" || !given(p)) continue;
    if (std::find(used.begin(), used.end(), p) == used.end())
      names.fail(p, fmt::format("not used by {} {} (it reads {})", names("scaling"), o.scaling,
                                listed(used, names)));
  }
  RopeScaling s;
  s.type = *type;
  if (given("attention_factor")) s.attention_factor = o.attention_factor;
  if (given("position_scale")) s.position_scale = o.position_scale;
  if (*type == T::None) return s;
  for (std::string_view p : parameters_of(method.required)) {
    if (!given(p)) names.fail(p, fmt::format("required with {} {}", names("scaling"), o.scaling));
  }
  s.factor = o.factor;
  s.original_max_position = o.original_max_position;
  s.seq_len = o.seq_len;
  s.beta_fast = o.beta_fast;
  s.beta_slow = o.beta_slow;
  s.low_freq_factor = o.low_freq_factor;
  s.high_freq_factor = o.high_freq_factor;
  if (o.truncate != "true" && o.truncate != "false")
    names.fail("truncate", "expected true or false, got '" + o.truncate + "'");
  s.truncate = o.truncate == "true";
  if (given("longrope_switch")) {
    const auto sw = parse_longrope_switch(o.longrope_switch);
    if (!sw)
      names.fail("longrope_switch", "expected per-sequence or per-token, got '" + o.longrope_switch + "'");
    s.longrope_switch = *sw;
  }
  // HF reads mscale only together with mscale_all_dim, and neither when attention_factor is given.
  if (given("mscale") != given("mscale_all_dim")) {
    const std::string_view alone = given("mscale") ? "mscale" : "mscale_all_dim";
    names.fail(alone, fmt::format("HF ignores it without {}; give both or neither",
                                  names(given("mscale") ? "mscale_all_dim" : "mscale")));
  }
  if (given("attention_factor") && given("mscale"))
    names.fail("attention_factor", fmt::format("it overrides {} and {} (as in HF); give one or the other",
                                               names("mscale"), names("mscale_all_dim")));
  if (given("mscale")) {
    s.mscale = o.mscale;
    s.mscale_all_dim = o.mscale_all_dim;
  }
  if (reads_field(*type, "short_factor")) {
    s.short_factor = o.short_factors.empty() && !o.short_factor_list.empty()
                         ? o.short_factor_list
                         : read_factors(o.short_factors, "short_factor", names);
    s.long_factor = o.long_factors.empty() && !o.long_factor_list.empty()
                        ? o.long_factor_list
                        : read_factors(o.long_factors, "long_factor", names);
  }
  return s;
}

void reject_scaling(const ScalingOptions& o, const Names& names, const std::string& why) {
  if (has(o.given, "scaling") && o.scaling != "none") names.fail("scaling", why);
  for (std::string_view p : kScaling) {
    if (p != "scaling" && has(o.given, p)) names.fail(p, why);  // "scaling none": no scaling
  }
}

std::int64_t rotary_dim_for(const ScalingOptions& o, std::int64_t head_dim, std::int64_t rotary_dim,
                            const Names& names) {
  if (!has(o.given, "partial_rotary_factor")) return rotary_dim;
  if (rotary_dim != 0)
    throw BadRequest(fmt::format("{} and {}: give one, not both (got {} and {:g})", names("rotary_dim"),
                                 names("partial_rotary_factor"), rotary_dim, o.partial_rotary_factor),
                     "partial_rotary_factor");
  try {
    return partial_rotary_dim(head_dim, o.partial_rotary_factor);
  } catch (const InvalidArgument& e) {
    names.fail("partial_rotary_factor", e.what());
  }
}

RopeForm to_rope_form(const FormOptions& o, const Names& names) {
  RopeForm form;
  form.mrope_section = o.mrope_section;
  if (!o.mrope_layout.empty()) {
    if (o.mrope_section.empty())
      names.fail("mrope_layout", fmt::format("applies with {}", names("mrope_section")));
    const auto l = parse_mrope_layout(o.mrope_layout);
    if (!l) names.fail("mrope_layout", "sectioned or interleaved, got '" + o.mrope_layout + "'");
    form.mrope_layout = *l;
  }
  if (!o.vision.empty()) {
    const auto v = parse_vision_rope(o.vision);
    if (!v || *v == VisionRope::None) names.fail("vision", "qwen2vl or pixtral, got '" + o.vision + "'");
    if (!o.mrope_section.empty())
      names.fail("vision", fmt::format("give {} or {}, not both", names("vision"), names("mrope_section")));
    form.vision = *v;
  }
  return form;
}

RopeParams with_form(RopeParams params, const FormOptions& o, const Names& names) {
  params.form = to_rope_form(o, names);
  params.rotary_offset = o.rotary_offset;
  return params;
}

void reject_form(const FormOptions& o, const Names& names, const std::string& why) {
  for (const auto& [p, given] :
       {std::pair{"mrope_section", !o.mrope_section.empty()},
        std::pair{"mrope_layout", !o.mrope_layout.empty()}, std::pair{"vision", !o.vision.empty()},
        std::pair{"rotary_offset", o.rotary_offset != 0}}) {
    if (given) names.fail(p, why);
  }
}

std::string_view axes_parameter(const FormOptions& o) noexcept {
  return !o.vision.empty() ? "vision" : "mrope_section";
}

AttnTemperature to_attn_temperature(const TemperatureOptions& t, const ScalingOptions& scaling,
                                    const Names& names) {
  const auto type = parse_attn_temperature_type(t.type.empty() ? "none" : t.type);
  if (!type) names.fail("attn_temperature", "llama4 or mistral, got '" + t.type + "'");
  AttnTemperature out;
  out.type = *type;
  for (const TemperatureParameter& p : kTemperature) {
    if (!has(t.given, p.name)) continue;  // original_max_position is the scaling's, never here
    if (*type == AttnTemperatureType::None)
      names.fail(p.name, fmt::format("applies with {} {}", names("attn_temperature"), to_string(p.type)));
    if (p.type != *type)
      names.fail(p.name, fmt::format("not read by {} {} (it is {}'s)", names("attn_temperature"),
                                     to_string(*type), to_string(p.type)));
  }
  if (*type == AttnTemperatureType::None) return out;
  out.attn_scale = t.attn_scale;
  out.floor_scale = t.floor_scale;
  out.beta = t.beta;
  if (*type == AttnTemperatureType::Mistral) {
    if (!has(scaling.given, "original_max_position"))
      names.fail("original_max_position",
                 fmt::format("required with {} mistral (L, HF original_max_position_embeddings)",
                             names("attn_temperature")));
    out.original_max_position = scaling.original_max_position;
  }
  try {
    validate(out);
  } catch (const InvalidArgument& e) {
    rethrow_named(e, names);
  }
  return out;
}

ScalingOptions scaling_besides(ScalingOptions scaling, const AttnTemperature& t) {
  const auto method = parse_rope_scaling_type(scaling.scaling);
  const bool scaling_reads_l = method && reads_field(*method, "original_max_position");
  if (t.type == AttnTemperatureType::Mistral && !scaling_reads_l)
    scaling.given.erase("original_max_position");
  return scaling;
}

void reject_temperature(const TemperatureOptions& t, const Names& names, const std::string& why) {
  for (std::string_view p : {"attn_temperature", "attn_scale", "floor_scale", "beta"}) {
    if (has(t.given, p)) names.fail(p, why);
  }
}

AlibiParams to_alibi_params(const AlibiOptions& o, std::int64_t heads, const Names& names) {
  AlibiParams p{.n_heads = heads, .max_bias = o.max_bias};
  const auto slopes = parse_alibi_slopes(o.slopes);
  if (!slopes) names.fail("alibi_slopes", "interpolated or direct, got '" + o.slopes + "'");
  const auto form = parse_alibi_form(o.form);
  if (!form) names.fail("alibi_form", "causal, symmetric or bloom, got '" + o.form + "'");
  p.slopes = *slopes;
  p.form = *form;
  try {
    AlibiPlan{p};
  } catch (const InvalidArgument& e) {
    names.fail(e.parameter() == "n_heads" ? "heads" : "max_bias", e.what());
  }
  return p;
}

void reject_alibi(const AlibiOptions& o, const Names& names, const std::string& why) {
  for (std::string_view p :
       {"heads", "max_bias", "alibi_slopes", "alibi_form", "queries", "keys", "slopes_only"}) {
    if (has(o.given, p)) names.fail(p, why);
  }
}

void rethrow_named(const InvalidArgument& e, const Names& names) {
  if (!names.knows(e.parameter())) throw e;
  throw BadRequest(names(e.parameter()) + ": " + e.what(), e.parameter());
}

RopePlan rope_plan(const RopeParams& params, const Names& names) {
  try {
    return RopePlan(params);
  } catch (const InvalidArgument& e) {
    rethrow_named(e, names);
  }
}

std::string describe_scaling(const RopeScaling& s, const RopePlan& plan) {
  if (!scales(s)) return "none";
  std::string out =
      s.type == T::None ? "none (" : fmt::format("{} (factor {:g}", to_string(s.type), s.factor);
  if (s.position_scale != 1)
    out += fmt::format("{}positions divided by {:g}", s.type == T::None ? "" : ", ", s.position_scale);
  if (s.original_max_position > 0) out += fmt::format(", original_max_position {}", s.original_max_position);
  if (switches_per_token(s)) {
    out += ", switched per token";
  } else if (s.seq_len > 0) {
    out += fmt::format(", seq_len {}", s.seq_len);
  }
  if (plan.effective_base() != plan.params().base)
    out += fmt::format("; base' {:.6g}", plan.effective_base());
  if (plan.attention_factor() != 1.0 || s.attention_factor)
    out += fmt::format("{}attention factor {:.17g}", out.back() == '(' ? "" : "; ", plan.attention_factor());
  return out + ")";
}

std::string describe_form(const RopeParams& p) {
  std::string out;
  if (p.form.vision != VisionRope::None) {
    out = fmt::format("vision {}", to_string(p.form.vision));
  } else if (!p.form.mrope_section.empty()) {
    out = fmt::format("M-RoPE {} {}", to_string(p.form.mrope_layout), fmt::join(p.form.mrope_section, ","));
  }
  if (p.rotary_offset != 0) out += fmt::format("{}rotary at {}", out.empty() ? "" : ", ", p.rotary_offset);
  return out;
}

std::string describe_temperature(const AttnTemperature& t) {
  switch (t.type) {
    case AttnTemperatureType::Llama4:
      return fmt::format("llama4 (attn_scale {:g}, floor_scale {})", t.attn_scale, t.floor_scale);
    case AttnTemperatureType::Mistral:
      return fmt::format("mistral (beta {:g}, original_max_position {})", t.beta, t.original_max_position);
    case AttnTemperatureType::None:
      break;
  }
  return "none";
}

std::string describe_gain_budget(DType out, const std::string& magnitude) {
  return fmt::format(
      "(6*2^-24 + 2*u_{}) * t(p) * {} (the gain in float32, rounded into {} with the product: {:.3g} "
      "relative)",
      to_string(out), magnitude, to_string(out), gain_relative_error(out));
}

std::string unknown_layout(const std::string& given, Family family) {
  std::vector<std::string_view> names;
  for (const Layout l : family_info(family).layouts) names.push_back(to_string(l));
  std::string list;
  for (std::size_t k = 0; k < names.size(); ++k)
    list += fmt::format("{}{}", k == 0 ? "" : k + 1 == names.size() ? " or " : ", ", names[k]);
  return fmt::format(
      "unknown layout '{}' ({}: {}{})", given, to_string(family), list,
      family == Family::Rope ? "; GPT-NeoX's and HF's rotate_half is halfsplit, GPT-J's interleaved" : "");
}

}  // namespace pe::check

// A spec (spec.h) into the core's typed parameters, and a caller's text into the spec's enumerations.
#include "pe/check/spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <type_traits>

#include "pe/check/npy.h"
#include "pe/harness/enum_json.h"

namespace pe::check {
namespace {

using T = RopeScalingType;

// Every field of a spec with its canonical name: the scaling's in the order messages list them, then the
// rest. One list for given(), the rejections, entries() and from_json().
template <class S, class F>
void for_each_scaling_field(S& s, F&& f) {
  f("scaling", s.method);
  for_each_scaling_parameter(s, f);  // partial_rotary_factor among them (proportional's, or the rotary dim)
}

template <class S, class F>
void for_each_field(S& spec, F&& f) {
  f("base", spec.base);
  for_each_scaling_field(spec.scaling, f);
  f("rotary_dim", spec.rotary_dim);
  f("head_dim", spec.head_dim);
  f("layout", spec.layout);
  f("mrope_section", spec.form.mrope_section);
  f("mrope_layout", spec.form.mrope_layout);
  f("vision", spec.form.vision);
  f("axes_dim", spec.form.axes_dim);
  f("rotary_offset", spec.form.rotary_offset);
  f("attn_temperature", spec.temperature.type);
  f("attn_scale", spec.temperature.attn_scale);
  f("floor_scale", spec.temperature.floor_scale);
  f("beta", spec.temperature.beta);
  f("xpos_scale_base", spec.xpos.scale_base);
  f("xpos_centre", spec.xpos.centre);
  f("xpos_keys", spec.xpos.keys);
  f("no_rope", spec.no_rope);
}

// The scaling parameters' canonical names, in the order messages list them (listed once).
const std::vector<std::string_view>& scaling_names() {
  static const std::vector<std::string_view> names = [] {
    const ScalingSpec none;
    std::vector<std::string_view> out;
    for_each_scaling_field(none, [&out](std::string_view name, const auto&) { out.push_back(name); });
    return out;
  }();
  return names;
}

// The parameters among `fields` (a method's reads or requires), in the order messages list them.
std::vector<std::string_view> parameters_of(std::span<const std::string_view> fields) {
  std::vector<std::string_view> out;
  for (std::string_view p : scaling_names()) {
    if (std::find(fields.begin(), fields.end(), p) != fields.end()) out.push_back(p);
  }
  return out;
}

std::string listed(const std::vector<std::string_view>& parameters, const Names& names) {
  std::string s;
  for (std::string_view p : parameters) s += (s.empty() ? "" : ", ") + names(p);
  return s.empty() ? "no other parameter" : s;
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

bool ScalingSpec::given(std::string_view p) const {
  bool given = false;
  for_each_scaling_field(*this,
                         [&](std::string_view name, const auto& v) { given = given || (name == p && v); });
  return given;
}

namespace {

// `text` as a value of E (enum_names.h), else BadRequest naming `canonical`: "<expected>, got '<text>'".
template <class E>
E parsed(std::string_view canonical, std::string_view text, std::string_view expected, const Names& names) {
  const auto v = parse_enum<E>(text);
  if (!v) names.fail(canonical, fmt::format("{}, got '{}'", expected, text));
  return *v;
}

}  // namespace

RopeScalingType parse_scaling(std::string_view text, const Names& names) {
  const auto type = parse_rope_scaling_type(text);
  if (!type)
    names.fail(
        "scaling",
        fmt::format("unknown method '{}' (none, linear, ntk, dynamic, yarn, llama3, longrope, proportional)",
                    text));
  return *type;
}

bool parse_truncate(std::string_view text, const Names& names) {
  if (text != "true" && text != "false")
    names.fail("truncate", fmt::format("expected true or false, got '{}'", text));
  return text == "true";
}

LongRopeSwitch parse_switch(std::string_view text, const Names& names) {
  return parsed<LongRopeSwitch>("longrope_switch", text, "expected per-sequence or per-token", names);
}
YarnAttention parse_yarn_attention(std::string_view text, const Names& names) {
  return parsed<YarnAttention>("yarn_attention", text, "expected replace (HF) or multiply (vLLM, SGLang)",
                               names);
}
DynamicSemantics parse_dynamic_semantics(std::string_view text, const Names& names) {
  return parsed<DynamicSemantics>("dynamic_semantics", text, "expected live (HF) or static (vLLM, SGLang)",
                                  names);
}
MropeLayout parse_mrope_layout(std::string_view text, const Names& names) {
  return parsed<MropeLayout>("mrope_layout", text, "sectioned, interleaved or ernie", names);
}
VisionRope parse_vision(std::string_view text, const Names& names) {
  if (text == to_string(VisionRope::None))
    names.fail("vision", fmt::format("qwen2vl or pixtral, got '{}'", text));
  return parsed<VisionRope>("vision", text, "qwen2vl or pixtral", names);
}
AttnTemperatureType parse_temperature(std::string_view text, const Names& names) {
  if (text.empty()) return AttnTemperatureType::None;
  return parsed<AttnTemperatureType>("attn_temperature", text, "llama4 or mistral", names);
}
AlibiSlopes parse_slopes(std::string_view text, const Names& names) {
  return parsed<AlibiSlopes>("alibi_slopes", text, "interpolated or direct", names);
}
AlibiForm parse_alibi_form(std::string_view text, const Names& names) {
  return parsed<AlibiForm>("alibi_form", text, "causal, symmetric or bloom", names);
}

Layout parse_layout(std::string_view text, Family family, const Names& names) {
  const auto l = pe::parse_layout(text);
  if (!l) names.fail("layout", unknown_layout(std::string(text), family));
  return *l;
}

RopeScaling to_rope_scaling(const ScalingSpec& o, const Names& names) {
  const RopeScalingType type = o.method.value_or(T::None);
  const auto given = [&o](std::string_view p) { return o.given(p); };
  const ScalingMethod& method = scaling_method(type);
  const std::vector<std::string_view> used = parameters_of(method.reads);
  for (std::string_view p : scaling_names()) {
    if (p == "scaling" || p == "partial_rotary_factor" || !given(p)) continue;
    if (std::find(used.begin(), used.end(), p) == used.end())
      names.fail(p, fmt::format("not used by {} {} (it reads {})", names("scaling"), to_string(type),
                                listed(used, names)));
  }
  RopeScaling s;
  s.type = type;
  s.attention_factor = o.attention_factor;
  if (o.position_scale) s.position_scale = *o.position_scale;
  if (type == T::None) return s;
  // Hunyuan's alpha states dynamic's base alone: the factor and L it would need otherwise are unread.
  const bool alpha = type == T::Dynamic && given("alpha");
  for (std::string_view p : parameters_of(method.required)) {
    if (!given(p) && !alpha)
      names.fail(p, fmt::format("required with {} {}", names("scaling"), to_string(type)));
  }
  const RopeScaling hf;  // HF's defaults where the spec says nothing
  s.factor = o.factor.value_or(hf.factor);
  s.original_max_position = o.original_max_position.value_or(0);
  s.seq_len = o.seq_len.value_or(0);
  s.beta_fast = o.beta_fast.value_or(hf.beta_fast);
  s.beta_slow = o.beta_slow.value_or(hf.beta_slow);
  s.low_freq_factor = o.low_freq_factor.value_or(hf.low_freq_factor);
  s.high_freq_factor = o.high_freq_factor.value_or(hf.high_freq_factor);
  s.truncate = o.truncate.value_or(hf.truncate);
  s.longrope_switch = o.longrope_switch.value_or(hf.longrope_switch);
  s.dynamic_semantics = o.dynamic_semantics.value_or(hf.dynamic_semantics);
  s.yarn_attention = o.yarn_attention.value_or(hf.yarn_attention);
  s.alpha = o.alpha;
  if (type == T::Proportional) s.partial_rotary_factor = o.partial_rotary_factor.value_or(1.0);
  // HF reads mscale only together with mscale_all_dim, and neither when attention_factor is given.
  if (given("mscale") != given("mscale_all_dim")) {
    const std::string_view alone = given("mscale") ? "mscale" : "mscale_all_dim";
    names.fail(alone, fmt::format("HF ignores it without {}; give both or neither",
                                  names(given("mscale") ? "mscale_all_dim" : "mscale")));
  }
  const bool multiply = o.yarn_attention == YarnAttention::Multiply;  // vLLM: both apply, multiplied
  if (given("attention_factor") && given("mscale") && !multiply)
    names.fail("attention_factor", fmt::format("it overrides {} and {} (as in HF); give one or the other",
                                               names("mscale"), names("mscale_all_dim")));
  s.mscale = o.mscale;
  s.mscale_all_dim = o.mscale_all_dim;
  if (reads_field(type, "short_factor")) {
    s.short_factor = o.short_factor.value_or(std::vector<double>{});
    s.long_factor = o.long_factor.value_or(std::vector<double>{});
  }
  return s;
}

void reject_scaling(const ScalingSpec& o, const Names& names, const std::string& why) {
  for_each_scaling_field(o, [&](std::string_view p, const auto& v) {
    if (v && (p != "scaling" || *o.method != T::None)) names.fail(p, why);  // "scaling none": no scaling
  });
}

std::int64_t rotary_dim_for(const RopeSpec& spec, std::int64_t head_dim, const Names& names) {
  const std::int64_t rotary_dim = spec.rotary_dim.value_or(0);
  // Proportional reads F itself over the whole rotary dim (its pairs past int(F·d // 2) turn by 0).
  if (!spec.scaling.partial_rotary_factor || spec.scaling.method == T::Proportional) return rotary_dim;
  const double factor = *spec.scaling.partial_rotary_factor;
  if (rotary_dim != 0)
    throw BadRequest(fmt::format("{} and {}: give one, not both (got {} and {:g})", names("rotary_dim"),
                                 names("partial_rotary_factor"), rotary_dim, factor),
                     "partial_rotary_factor");
  try {
    return partial_rotary_dim(head_dim, factor);
  } catch (const InvalidArgument& e) {
    names.fail("partial_rotary_factor", e.what());
  }
}

RopeForm to_rope_form(const FormSpec& o, const Names& names) {
  RopeForm form;
  form.mrope_section = o.mrope_section.value_or(std::vector<std::int64_t>{});
  if (o.mrope_layout) {
    if (form.mrope_section.empty())
      names.fail("mrope_layout", fmt::format("applies with {}", names("mrope_section")));
    form.mrope_layout = *o.mrope_layout;
  }
  if (o.vision) {
    if (!form.mrope_section.empty())
      names.fail("vision", fmt::format("give {} or {}, not both", names("vision"), names("mrope_section")));
    form.vision = *o.vision;
  }
  if (o.axes_dim) {
    if (!form.mrope_section.empty() || o.vision)
      names.fail("axes_dim", fmt::format("axial RoPE is a form of its own: give {} without {} or {}",
                                         names("axes_dim"), names("mrope_section"), names("vision")));
    if (o.axes_dim->empty()) names.fail("axes_dim", "no axes given");
    form.axes_dim = *o.axes_dim;
  }
  return form;
}

void reject_form(const FormSpec& o, const Names& names, const std::string& why) {
  for (const auto& [p, given] :
       {std::pair{"mrope_section", o.mrope_section && !o.mrope_section->empty()},
        std::pair{"mrope_layout", o.mrope_layout.has_value()}, std::pair{"vision", o.vision.has_value()},
        std::pair{"axes_dim", o.axes_dim.has_value()},
        std::pair{"rotary_offset", o.rotary_offset.value_or(0) != 0}}) {
    if (given) names.fail(p, why);
  }
}

std::string_view axes_parameter(const FormSpec& o) noexcept {
  return o.vision ? "vision" : o.axes_dim ? "axes_dim" : "mrope_section";
}

RopeParams rope_params(const RopeSpec& spec, std::int64_t head_dim, const AttnTemperature& t,
                       const Names& names) {
  RopeParams p{head_dim, rotary_dim_for(spec, head_dim, names), spec.base.value_or(10000.0),
               spec.layout.value_or(default_layout(Family::Rope)),
               to_rope_scaling(scaling_besides(spec.scaling, t), names)};
  p.form = to_rope_form(spec.form, names);
  p.rotary_offset = spec.form.rotary_offset.value_or(0);
  return p;
}

XPos to_xpos(const XPosSpec& x, std::int64_t largest_position, const Names& names) {
  if (!x.scale_base) {
    reject_xpos(x, names, fmt::format("applies with {}", names("xpos_scale_base")));
    return {};
  }
  XPos out{*x.scale_base, x.centre.value_or((largest_position + 1) / 2), x.keys.value_or(false)};
  try {
    validate(out);
  } catch (const InvalidArgument& e) {
    rethrow_named(e, names);
  }
  return out;
}

void reject_xpos(const XPosSpec& x, const Names& names, const std::string& why) {
  if (x.scale_base) names.fail("xpos_scale_base", why);
  if (x.centre) names.fail("xpos_centre", why);
  if (x.keys) names.fail("xpos_keys", why);
}

AttnTemperature to_attn_temperature(const RopeSpec& spec, const Names& names) {
  const TemperatureSpec& t = spec.temperature;
  const AttnTemperatureType type = t.type.value_or(AttnTemperatureType::None);
  AttnTemperature out;
  out.type = type;
  const auto given = [&t](std::string_view p) {
    return p == "attn_scale"    ? t.attn_scale.has_value()
           : p == "floor_scale" ? t.floor_scale.has_value()
           : p == "beta"        ? t.beta.has_value()
                                : false;  // original_max_position is the scaling's, never here
  };
  for (const TemperatureParameter& p : kTemperature) {
    if (!given(p.name)) continue;
    if (type == AttnTemperatureType::None)
      names.fail(p.name, fmt::format("applies with {} {}", names("attn_temperature"), to_string(p.type)));
    if (p.type != type)
      names.fail(p.name, fmt::format("not read by {} {} (it is {}'s)", names("attn_temperature"),
                                     to_string(type), to_string(p.type)));
  }
  if (type == AttnTemperatureType::None) return out;
  out.attn_scale = t.attn_scale.value_or(out.attn_scale);
  out.floor_scale = t.floor_scale.value_or(out.floor_scale);
  out.beta = t.beta.value_or(out.beta);
  if (type == AttnTemperatureType::Mistral) {
    if (!spec.scaling.original_max_position)
      names.fail("original_max_position",
                 fmt::format("required with {} mistral (L, HF original_max_position_embeddings)",
                             names("attn_temperature")));
    out.original_max_position = *spec.scaling.original_max_position;
  }
  try {
    validate(out);
  } catch (const InvalidArgument& e) {
    rethrow_named(e, names);
  }
  return out;
}

ScalingSpec scaling_besides(ScalingSpec scaling, const AttnTemperature& t) {
  const bool scaling_reads_l = scaling.method && reads_field(*scaling.method, "original_max_position");
  if (t.type == AttnTemperatureType::Mistral && !scaling_reads_l) scaling.original_max_position.reset();
  return scaling;
}

void reject_temperature(const TemperatureSpec& t, const Names& names, const std::string& why) {
  for (const auto& [p, given] :
       {std::pair{"attn_temperature", t.type.has_value()}, std::pair{"attn_scale", t.attn_scale.has_value()},
        std::pair{"floor_scale", t.floor_scale.has_value()}, std::pair{"beta", t.beta.has_value()}}) {
    if (given) names.fail(p, why);
  }
}

AlibiParams to_alibi_params(const AlibiSpec& o, std::int64_t heads, const Names& names) {
  AlibiParams p{.n_heads = heads, .max_bias = o.max_bias.value_or(8.0)};
  p.slopes = o.slopes.value_or(AlibiSlopes::Interpolated);
  p.form = o.form.value_or(AlibiForm::Causal);
  try {
    AlibiPlan{p};
  } catch (const InvalidArgument& e) {
    names.fail(e.parameter() == "n_heads" ? "heads" : "max_bias", e.what());
  }
  return p;
}

void reject_alibi(const AlibiSpec& o, const Names& names, const std::string& why) {
  for (const auto& [p, given] :
       {std::pair{"heads", o.heads.has_value()}, std::pair{"max_bias", o.max_bias.has_value()},
        std::pair{"alibi_slopes", o.slopes.has_value()}, std::pair{"alibi_form", o.form.has_value()},
        std::pair{"queries", o.queries.has_value()}, std::pair{"keys", o.keys.has_value()},
        std::pair{"slopes_only", o.slopes_only.has_value()}}) {
    if (given) names.fail(p, why);
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
  if (s.type == T::Proportional) out += fmt::format(", partial_rotary_factor {:g}", s.partial_rotary_factor);
  if (s.type == T::Dynamic && s.alpha) out += fmt::format(", alpha {:g}", *s.alpha);
  if (s.type == T::Dynamic && s.dynamic_semantics == DynamicSemantics::Static)
    out += ", static (n = factor·L)";
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
  } else if (!p.form.axes_dim.empty()) {
    out = fmt::format("axial {}", fmt::join(p.form.axes_dim, ","));
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

std::string describe_xpos(const XPos& x, std::size_t rotary_dim) {
  return fmt::format("xPos on {}: gain ((2j + 0.4d)/(1.4d))^({}(p - {})/{:g}) per pair j, d = {}",
                     x.keys ? "k" : "q", x.keys ? "-" : "", x.centre, x.scale_base, rotary_dim);
}

std::string describe_gain_budget(DType out, const std::string& magnitude) {
  return fmt::format(
      "(6*2^-24 + 2*u_{}) * t(p) * {} (the gain in float32, rounded into {} with the product: {:.3g} "
      "relative)",
      to_string(out), magnitude, to_string(out), gain_relative_error(out));
}

std::string describe_xpos_budget(DType out) {
  return fmt::format(
      "((7|w| + 4)*2^-24 + 2*u_{}) * g_j(p) * (|x_a| + |x_b|) (zeta_j, w and the power in float32, the "
      "tables' products rounded into {}: docs/contracts.md §2m)",
      to_string(out), to_string(out));
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

std::vector<SpecEntry> entries(const RopeSpec& spec) {
  std::vector<SpecEntry> out;
  for_each_field(spec, [&out](std::string_view name, const auto& v) {
    if (v) out.push_back({name, nlohmann::json(*v)});  // enumerations by their names (enum_json.h)
  });
  return out;
}

void to_json(nlohmann::json& j, const RopeSpec& spec) {
  j = nlohmann::json::object();
  for (const SpecEntry& e : entries(spec)) j[std::string(e.name)] = e.value;
}

void from_json(const nlohmann::json& j, RopeSpec& spec) {
  spec = {};
  for_each_field(spec, [&j](std::string_view name, auto& v) {
    if (const auto it = j.find(name); it != j.end())
      v = it->template get<typename std::decay_t<decltype(v)>::value_type>();
  });
}

Restated Names::restate(const std::vector<SpecEntry>& given) const {
  if (render_) return render_(given);
  std::string text;
  for (const SpecEntry& e : given) {
    const nlohmann::json& v = e.value;
    text += fmt::format("{}{}={}", text.empty() ? "" : " ", e.name,
                        v.is_number_float() ? fmt::format("{:.17g}", v.get<double>())
                        : v.is_string()     ? v.get<std::string>()
                                            : v.dump());
  }
  return {"as parameters", "parameters", text};
}

}  // namespace pe::check

// A resolved config into the spec's fields the user left empty (hf_config.h): every value the config sets
// unless the user gave it, which wins and is reported as an override, and the resolution's text for the
// report.
#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "pe/check/hf_config.h"
#include "pe/harness/enum_json.h"

namespace pe::check {
namespace {

std::string shown(const nlohmann::json& v) {
  if (v.is_array()) return fmt::format("[{} values]", v.size());
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number()) return fmt::format("{:g}", v.get<double>());
  return v.dump();
}

// The key a resolved value came from, "" when the config did not give it.
std::string key_of(const HfRopeSetting& s, const std::string& name) {
  for (const HfValue& v : s.sources) {
    if (v.name == name) return v.key;
  }
  return "";
}

// A value the config sets unless the user gave it: then an override, reported.
struct Filler {
  const HfRopeSetting& s;
  HfResolution& r;
  const Names& names;
  template <class V>
  void operator()(std::string_view parameter, const std::string& key_name, std::optional<V>& target,
                  const std::optional<V>& value) {
    if (!value) return;
    if (target) {
      r.overrides.push_back(fmt::format("{} {} overrides {} {}", names(parameter),
                                        shown(nlohmann::json(*target)), key_of(s, key_name),
                                        shown(nlohmann::json(*value))));
      return;
    }
    target = value;
  }
  template <class V>
  void operator()(std::string_view parameter, std::optional<V>& target, const std::optional<V>& value) {
    (*this)(parameter, std::string(parameter), target, value);
  }
};

void fill_scaling(const HfRopeSetting& s, HfResolution& r, ScalingSpec& f,
                  const std::function<std::vector<std::int64_t>()>& positions, const Names& names) {
  const ScalingSpec& c = s.spec.scaling;
  const RopeScalingType method = c.method.value_or(RopeScalingType::None);
  if (f.method) {
    if (method != RopeScalingType::None)
      r.overrides.push_back(fmt::format("{} {} overrides {} {} (the config's whole scaling block dropped)",
                                        names("scaling"), to_string(*f.method), key_of(s, "scaling"),
                                        to_string(method)));
    return;
  }
  if (method == RopeScalingType::None) return;
  f.method = method;
  Filler fill{s, r, names};
  fill("factor", f.factor, c.factor);
  fill("original_max_position", f.original_max_position, c.original_max_position);
  fill("beta_fast", f.beta_fast, c.beta_fast);
  fill("beta_slow", f.beta_slow, c.beta_slow);
  fill("mscale", f.mscale, c.mscale);
  fill("mscale_all_dim", f.mscale_all_dim, c.mscale_all_dim);
  fill("attention_factor", f.attention_factor, c.attention_factor);
  fill("low_freq_factor", f.low_freq_factor, c.low_freq_factor);
  fill("high_freq_factor", f.high_freq_factor, c.high_freq_factor);
  fill("truncate", f.truncate, c.truncate);
  fill("longrope_switch", f.longrope_switch, c.longrope_switch);
  fill("dynamic_semantics", f.dynamic_semantics, c.dynamic_semantics);
  fill("yarn_attention", f.yarn_attention, c.yarn_attention);
  fill("alpha", f.alpha, c.alpha);
  fill("seq_len", f.seq_len, c.seq_len);
  // Proportional's own share of the pairs (not a rotary dim: the whole head turns).
  if (method == RopeScalingType::Proportional)
    fill("partial_rotary_factor", f.partial_rotary_factor, c.partial_rotary_factor);
  for (auto [key, list, value] : {std::tuple{"short_factor", &f.short_factor, &c.short_factor},
                                  std::tuple{"long_factor", &f.long_factor, &c.long_factor}}) {
    if (!*value) continue;
    if (*list) {
      r.overrides.push_back(fmt::format("{} overrides {}", names(key), key_of(s, key)));
    } else {
      *list = *value;
    }
  }
  // HF's runtime length: dynamic_rope_update's seq_len = max(position_ids) + 1; not where the reading takes
  // no length (vLLM's static table, Hunyuan's alpha, LongRoPE switching per token).
  const bool reads_length =
      (method == RopeScalingType::Dynamic && !f.alpha &&
       f.dynamic_semantics.value_or(DynamicSemantics::Live) == DynamicSemantics::Live) ||
      (method == RopeScalingType::LongRope &&
       f.longrope_switch.value_or(LongRopeSwitch::PerSequence) == LongRopeSwitch::PerSequence);
  if (reads_length && !f.seq_len && positions) {
    const std::vector<std::int64_t> p = positions();
    if (p.empty()) return;
    f.seq_len = *std::max_element(p.begin(), p.end()) + 1;
    r.setting.notes.push_back(
        fmt::format("seq_len {} = max(position_ids) + 1, as HF's dynamic_rope_update ({} overrides)",
                    *f.seq_len, names("seq_len")));
  }
}

// A NoPE layer: no_rope, and Llama-4's temperature unless the user chose one.
void fill_nope(const HfSource& src, const HfRopeSetting& s, HfResolution& r, RopeSpec& spec, const HfUse& use,
               const Names& names) {
  if (!use.no_rope)
    names.fail(src.layer ? "layer" : "layer_type",
               fmt::format("a NoPE layer ({}); {} writes RoPE only", key_of(s, "no_rope"), use.command));
  spec.no_rope = true;
  const TemperatureSpec& c = s.spec.temperature;
  if (!c.type || !use.temperature) return;
  TemperatureSpec& t = spec.temperature;
  const bool typed = t.type.has_value();
  Filler fill{s, r, names};
  fill("attn_temperature", t.type, c.type);
  if (typed) return;
  const AttnTemperature hf;  // the config's values, else HF's defaults
  fill("attn_scale", t.attn_scale, std::optional(c.attn_scale.value_or(hf.attn_scale)));
  fill("floor_scale", t.floor_scale, std::optional(c.floor_scale.value_or(hf.floor_scale)));
}

// A rotary layer: every field `use` takes that the user left empty.
void fill_rope(const HfRopeSetting& s, HfResolution& r, RopeSpec& spec, const HfUse& use,
               const Names& names) {
  const RopeSpec& c = s.spec;
  Filler fill{s, r, names};
  if (spec.nope())
    r.overrides.push_back(
        fmt::format("{} overrides the config: its {} layers use RoPE", names("no_rope"), s.name));
  if (use.base) fill("base", spec.base, c.base);
  if (use.layout) fill("layout", spec.layout, c.layout);
  fill_scaling(s, r, spec.scaling, use.positions, names);
  if (!use.rotary_dim && c.scaling.method != RopeScalingType::Proportional)  // census: for its own head dims
    fill("partial_rotary_factor", "rotary_dim", spec.scaling.partial_rotary_factor,
         c.scaling.partial_rotary_factor);
  if (use.rotary_dim && (c.rotary_dim != c.head_dim || s.mla)) {
    if (spec.rotary_dim || spec.scaling.partial_rotary_factor) {
      r.overrides.push_back(fmt::format("{} {} overrides {} {}", names("rotary_dim"),
                                        spec.rotary_dim.value_or(0), key_of(s, "rotary_dim"), *c.rotary_dim));
    } else {
      spec.rotary_dim = c.rotary_dim;
    }
  }
  if (use.head_dim && !spec.head_dim && spec.form.rotary_offset.value_or(0) == 0) spec.head_dim = c.head_dim;
  // A form's list (M-RoPE's sections, the axial dims) the config gives unless the user gave one.
  const auto fill_list = [&](std::string_view parameter, std::optional<std::vector<std::int64_t>>& target,
                             const std::optional<std::vector<std::int64_t>>& value) {
    if (!value) return;
    if (target) {
      r.overrides.push_back(fmt::format("{} {} overrides {} {}", names(parameter), fmt::join(*target, ","),
                                        key_of(s, std::string(parameter)), fmt::join(*value, ",")));
    } else {
      target = value;
    }
  };
  fill_list("mrope_section", spec.form.mrope_section, c.form.mrope_section);
  if (c.form.mrope_section) fill("mrope_layout", spec.form.mrope_layout, c.form.mrope_layout);
  fill_list("axes_dim", spec.form.axes_dim, c.form.axes_dim);
}

std::string block_of(const HfResolution& r, const HfSource& src) {
  const HfRopeSetting& s = r.setting;
  std::string line;
  for (const HfValue& v : s.sources)
    line += fmt::format("{}{} {} ({})", line.empty() ? "" : "; ", v.name, shown(v.value), v.key);
  std::string out = fmt::format("{}{}: {}\n", src.label,
                                r.layer ? fmt::format(" layer {} ({})", *r.layer, s.name)
                                        : (s.name == "all layers" ? std::string() : " " + s.name),
                                line);
  for (const std::string& n : s.notes) out += fmt::format("  note: {}\n", n);
  for (const std::string& o : r.overrides) out += fmt::format("  override: {}\n", o);
  if (!r.not_read.empty()) out += fmt::format("  not read: {}\n", fmt::join(r.not_read, ", "));
  return out;
}

}  // namespace

RopeScaling rope_scaling_of(const HfRopeSetting& s,
                            const std::function<std::vector<std::int64_t>()>& positions, const Names& names) {
  ScalingSpec f;
  HfResolution unused;
  unused.setting = s;
  fill_scaling(s, unused, f, positions, names);
  return to_rope_scaling(f, names);
}

std::optional<HfResolution> apply_hf_config(const HfSource& src, RopeSpec& spec, const HfUse& use,
                                            const Names& names) {
  if (src.config.is_null()) {
    if (src.layer)
      throw BadRequest(fmt::format("{} {}: applies with {}", names("layer"), *src.layer, names("hf_config")),
                       "layer");
    if (!src.layer_type.empty())
      throw BadRequest(
          fmt::format("{} {}: applies with {}", names("layer_type"), src.layer_type, names("hf_config")),
          "layer_type");
    return std::nullopt;
  }
  HfResolution r = resolve_hf_config(src.config, src.file, src.source, src.layer, src.layer_type, names);
  if (!r.setting.rope()) {
    fill_nope(src, r.setting, r, spec, use, names);
  } else {
    fill_rope(r.setting, r, spec, use, names);
  }
  r.block = block_of(r, src);
  return r;
}

}  // namespace pe::check

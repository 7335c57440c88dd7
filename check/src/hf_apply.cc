// A resolved config into the options the user left alone (hf_config.h): every value the config sets unless
// the user gave it, which wins and is reported as an override, and the resolution's text for the report.
#include <fmt/format.h>

#include <algorithm>
#include <tuple>

#include "pe/check/hf_config.h"

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

// "16,24,24" as the pairs per axis; the resolver has already read each as an integer.
std::vector<std::int64_t> sections_of(const std::string& text) {
  std::vector<std::int64_t> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t comma = std::min(text.find(',', start), text.size());
    out.push_back(std::stoll(text.substr(start, comma - start)));
    start = comma + 1;
  }
  return out;
}

// A value the config sets unless the user gave it: then an override, reported.
struct Filler {
  const HfRopeSetting& s;
  HfResolution& r;
  const Names& names;
  bool given;
  template <class Target, class Value>
  void operator()(std::string_view parameter, const std::string& name, Target* target, const Value& value,
                  std::set<std::string>* given_set = nullptr) {
    if (target == nullptr) return;
    if (given) {
      r.overrides.push_back(fmt::format("{} {} overrides {} {}", names(parameter),
                                        shown(nlohmann::json(*target)), key_of(s, name),
                                        shown(nlohmann::json(value))));
      return;
    }
    *target = value;
    if (given_set != nullptr) given_set->insert(std::string(parameter));
  }
};

void fill_scaling(const HfRopeSetting& s, HfResolution& r, ScalingOptions& f,
                  const std::function<std::vector<std::int64_t>()>& positions, const Names& names) {
  const auto given = [&f](const char* p) { return f.given.count(p) > 0; };
  if (given("scaling")) {
    if (s.scaling != "none")
      r.overrides.push_back(fmt::format("{} {} overrides {} {} (the config's whole scaling block dropped)",
                                        names("scaling"), f.scaling, key_of(s, "scaling"), s.scaling));
    return;
  }
  f.scaling = s.scaling;
  if (s.scaling == "none") return;
  f.given.insert("scaling");
  const auto one = [&](const char* p, auto* target, const auto& value) {
    if (value) Filler{s, r, names, given(p)}(p, p, target, *value, &f.given);
  };
  one("factor", &f.factor, s.factor);
  one("original_max_position", &f.original_max_position, s.original_max_position);
  one("beta_fast", &f.beta_fast, s.beta_fast);
  one("beta_slow", &f.beta_slow, s.beta_slow);
  one("mscale", &f.mscale, s.mscale);
  one("mscale_all_dim", &f.mscale_all_dim, s.mscale_all_dim);
  one("attention_factor", &f.attention_factor, s.attention_factor);
  one("low_freq_factor", &f.low_freq_factor, s.low_freq_factor);
  one("high_freq_factor", &f.high_freq_factor, s.high_freq_factor);
  if (s.truncate)
    Filler{s, r, names, given("truncate")}("truncate", "truncate", &f.truncate,
                                           std::string(*s.truncate ? "true" : "false"), &f.given);
  if (s.longrope_switch)
    Filler{s, r, names, given("longrope_switch")}("longrope_switch", "longrope_switch", &f.longrope_switch,
                                                  *s.longrope_switch, &f.given);
  if (s.scaling == "longrope") {
    for (auto [key, list, value] : {std::tuple{"short_factor", &f.short_factor_list, &s.short_factor},
                                    std::tuple{"long_factor", &f.long_factor_list, &s.long_factor}}) {
      if (given(key)) {
        r.overrides.push_back(fmt::format("{} overrides {}", names(key), key_of(s, key)));
      } else {
        *list = *value;
        f.given.insert(key);
      }
    }
  }
  // HF's runtime length: dynamic_rope_update's seq_len = max(position_ids) + 1.
  if ((s.scaling == "dynamic" || s.scaling == "longrope") && !given("seq_len") && positions) {
    const std::vector<std::int64_t> p = positions();
    if (p.empty()) return;
    f.seq_len = *std::max_element(p.begin(), p.end()) + 1;
    f.given.insert("seq_len");
    r.setting.notes.push_back(
        fmt::format("seq_len {} = max(position_ids) + 1, as HF's dynamic_rope_update ({} overrides)",
                    f.seq_len, names("seq_len")));
  }
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
  ScalingOptions f;
  HfResolution unused;
  unused.setting = s;
  fill_scaling(s, unused, f, positions, names);
  return to_rope_scaling(f, names);
}

std::optional<HfResolution> apply_hf_config(const HfSource& src, HfTargets& t, const Names& names) {
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
  const HfRopeSetting& s = r.setting;
  const auto given = [&t](const char* p) { return t.given.count(p) > 0; };
  if (!s.rope) {
    if (t.no_rope == nullptr)
      names.fail(src.layer ? "layer" : "layer_type",
                 fmt::format("a NoPE layer ({}); {} writes RoPE only", key_of(s, "no_rope"), t.command));
    *t.no_rope = true;
    if (!s.temperature.empty() && t.temperature != nullptr) {
      TemperatureOptions& tf = *t.temperature;
      const bool typed = tf.given.count("attn_temperature") > 0;
      Filler{s, r, names, typed}("attn_temperature", "attn_temperature", &tf.type, s.temperature, &tf.given);
      if (!typed) {
        Filler{s, r, names, tf.given.count("attn_scale") > 0}("attn_scale", "attn_scale", &tf.attn_scale,
                                                              s.attn_scale, &tf.given);
        Filler{s, r, names, tf.given.count("floor_scale") > 0}("floor_scale", "floor_scale", &tf.floor_scale,
                                                               s.floor_scale, &tf.given);
      }
    }
  } else {
    if (t.no_rope != nullptr && *t.no_rope)
      r.overrides.push_back(names("no_rope") + " overrides the config: its " + s.name + " layers use RoPE");
    Filler{s, r, names, given("base")}("base", "base", t.base, s.base);
    if (!s.layout.empty()) Filler{s, r, names, given("layout")}("layout", "layout", t.layout, s.layout);
    if (t.scaling != nullptr) {
      fill_scaling(s, r, *t.scaling, t.positions, names);
      if (s.partial_rotary_factor && t.rotary_dim == nullptr)  // census: the factor, for its own head dims
        Filler{s, r, names, t.scaling->given.count("partial_rotary_factor") > 0}(
            "partial_rotary_factor", "rotary_dim", &t.scaling->partial_rotary_factor,
            *s.partial_rotary_factor, &t.scaling->given);
    }
    if (t.rotary_dim != nullptr && (s.rotary_dim != s.head_dim || s.mla)) {
      const bool typed =
          given("rotary_dim") || (t.scaling != nullptr && t.scaling->given.count("partial_rotary_factor"));
      Filler{s, r, names, typed}("rotary_dim", "rotary_dim", t.rotary_dim, s.rotary_dim);
    }
    if (t.head_dim != nullptr && !given("head_dim") && (t.form == nullptr || t.form->rotary_offset == 0)) {
      *t.head_dim = s.head_dim;
      if (t.head_dim_source != nullptr)
        *t.head_dim_source = fmt::format("{}: head_dim from {}", src.source, key_of(s, "head_dim"));
      if (t.mla_nope_head_dim != nullptr && s.mla) *t.mla_nope_head_dim = s.mla_nope_head_dim;
    }
    if (t.form != nullptr && !s.mrope_section.empty()) {
      if (given("mrope_section")) {
        r.overrides.push_back(fmt::format("{} {} overrides {} {}", names("mrope_section"),
                                          fmt::join(t.form->mrope_section, ","), key_of(s, "mrope_section"),
                                          s.mrope_section));
      } else {
        t.form->mrope_section = sections_of(s.mrope_section);
      }
      if (!s.mrope_layout.empty())
        Filler{s, r, names, given("mrope_layout")}("mrope_layout", "mrope_layout", &t.form->mrope_layout,
                                                   s.mrope_layout);
    }
  }
  r.block = block_of(r, src);
  return r;
}

}  // namespace pe::check

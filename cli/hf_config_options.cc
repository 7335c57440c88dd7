// --hf-config into the command's flags (hf_config_options.h).
#include "report_text.h"
#include "hf_config_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>
#include <tuple>

#include "common.h"

namespace pe::cli {
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

// A value the config sets unless the command line gave its flag: then an override, reported.
struct Filler {
  const HfRopeSetting& s;
  HfResolution& r;
  bool given;
  template <class T, class U>
  void operator()(const std::string& flag, const std::string& name, T* target, const U& value,
                  std::set<std::string>* given_set = nullptr) {
    if (target == nullptr) return;
    if (given) {
      r.overrides.push_back(fmt::format("{} {} overrides {} {}", flag, shown(nlohmann::json(*target)),
                                        key_of(s, name), shown(nlohmann::json(value))));
      return;
    }
    *target = value;
    if (given_set != nullptr) given_set->insert(flag);
  }
};

void fill_scaling(const HfRopeSetting& s, HfResolution& r, ScalingFlags& f, const HfTargets& t) {
  const auto given = [&f](const char* flag) { return f.given.count(flag) > 0; };
  if (given("--scaling")) {
    if (s.scaling != "none")
      r.overrides.push_back(
          fmt::format("--scaling {} overrides {} {} (the config's whole scaling block dropped)", f.scaling,
                      key_of(s, "scaling"), s.scaling));
    return;
  }
  f.scaling = s.scaling;
  if (s.scaling == "none") return;
  f.given.insert("--scaling");
  const auto one = [&](const char* flag, const char* name, auto* target, const auto& value) {
    if (value) Filler{s, r, given(flag)}(flag, name, target, *value, &f.given);
  };
  one("--factor", "factor", &f.factor, s.factor);
  one("--original-max-position", "original_max_position", &f.original_max_position, s.original_max_position);
  one("--beta-fast", "beta_fast", &f.beta_fast, s.beta_fast);
  one("--beta-slow", "beta_slow", &f.beta_slow, s.beta_slow);
  one("--mscale", "mscale", &f.mscale, s.mscale);
  one("--mscale-all-dim", "mscale_all_dim", &f.mscale_all_dim, s.mscale_all_dim);
  one("--attention-factor", "attention_factor", &f.attention_factor, s.attention_factor);
  one("--low-freq-factor", "low_freq_factor", &f.low_freq_factor, s.low_freq_factor);
  one("--high-freq-factor", "high_freq_factor", &f.high_freq_factor, s.high_freq_factor);
  if (s.truncate) {
    Filler{s, r, given("--truncate")}("--truncate", "truncate", &f.truncate,
                                      std::string(*s.truncate ? "true" : "false"), &f.given);
  }
  if (s.scaling == "longrope") {
    for (auto [flag, key, list, value] :
         {std::tuple{"--short-factors", "short_factor", &f.short_factor_list, &s.short_factor},
          std::tuple{"--long-factors", "long_factor", &f.long_factor_list, &s.long_factor}}) {
      if (given(flag)) {
        r.overrides.push_back(fmt::format("{} overrides {}", flag, key_of(s, key)));
      } else {
        *list = *value;
        f.given.insert(flag);
      }
    }
  }
  // HF's runtime length: dynamic_rope_update's seq_len = max(position_ids) + 1.
  if ((s.scaling == "dynamic" || s.scaling == "longrope") && !given("--seq-len") && t.positions != nullptr &&
      (!t.positions->empty() || !t.positions_file->empty())) {
    const std::vector<std::int64_t> p = positions_from(*t.positions, *t.positions_file);
    f.seq_len = *std::max_element(p.begin(), p.end()) + 1;
    f.given.insert("--seq-len");
    r.setting.notes.push_back(fmt::format(
        "seq_len {} = max(position_ids) + 1, as HF's dynamic_rope_update (--seq-len overrides)", f.seq_len));
  }
}

}  // namespace

void add_hf_config_options(CLI::App& cmd, HfConfigFlags& f) {
  cmd.add_option(
         "--hf-config", f.path,
         "A model's config.json (transformers'): fills --base, the scaling, the rotary dim, the form; "
         "flags given override it")
      ->group("Model config");
  cmd.add_option("--layer", f.layer, "--hf-config: the layer whose RoPE to use (configs whose layers differ)")
      ->group("Model config");
  cmd.add_option(
         "--layer-type", f.layer_type,
         "--hf-config: the layer type whose RoPE to use (sliding_attention, full_attention, nope, ...)")
      ->group("Model config");
}

RopeScaling rope_scaling_of(const HfRopeSetting& s, const HfTargets& t) {
  ScalingFlags f;
  HfResolution unused;
  unused.setting = s;
  fill_scaling(s, unused, f, t);
  return to_rope_scaling(f);
}

std::optional<HfResolution> apply_hf_config(const HfConfigFlags& flags, const CLI::App& cmd,
                                            const HfTargets& t) {
  const bool layer_given = cmd.count("--layer") > 0;
  if (flags.path.empty()) {
    if (layer_given) throw UsageError(fmt::format("--layer {}: applies with --hf-config", flags.layer));
    if (!flags.layer_type.empty())
      throw UsageError("--layer-type " + flags.layer_type + ": applies with --hf-config");
    return std::nullopt;
  }
  const std::string name = std::filesystem::path(flags.path).filename().string();
  HfResolution r =
      resolve_hf_config(read_hf_config(flags.path), name,
                        layer_given ? std::optional(flags.layer) : std::nullopt, flags.layer_type);
  const HfRopeSetting& s = r.setting;
  const auto given = [&cmd](const char* flag) {  // census has no --base
    const CLI::Option* o = cmd.get_option_no_throw(flag);
    return o != nullptr && o->count() > 0;
  };
  if (!s.rope) {
    if (t.no_rope == nullptr)
      throw UsageError(fmt::format("--layer{}: a NoPE layer ({}); {} writes RoPE only",
                                   layer_given ? "" : "-type", key_of(s, "no_rope"), cmd.get_name()));
    *t.no_rope = true;
    if (!s.temperature.empty() && t.temperature != nullptr) {
      TemperatureFlags& tf = *t.temperature;
      const bool typed = tf.given.count("--attn-temperature") > 0;
      Filler{s, r, typed}("--attn-temperature", "attn_temperature", &tf.type, s.temperature, &tf.given);
      if (!typed) {
        Filler{s, r, tf.given.count("--attn-scale") > 0}("--attn-scale", "attn_scale", &tf.attn_scale,
                                                         s.attn_scale, &tf.given);
        Filler{s, r, tf.given.count("--floor-scale") > 0}("--floor-scale", "floor_scale", &tf.floor_scale,
                                                          s.floor_scale, &tf.given);
      }
    }
  } else {
    if (t.no_rope != nullptr && *t.no_rope)
      r.overrides.push_back("--no-rope overrides the config: its " + s.name + " layers use RoPE");
    Filler{s, r, given("--base")}("--base", "base", t.base, s.base);
    if (!s.layout.empty()) Filler{s, r, given("--layout")}("--layout", "layout", t.layout, s.layout);
    if (t.scaling != nullptr) {
      fill_scaling(s, r, *t.scaling, t);
      if (s.partial_rotary_factor && t.rotary_dim == nullptr)  // census: the factor, for its own head dims
        Filler{s, r, t.scaling->given.count("--partial-rotary-factor") > 0}(
            "--partial-rotary-factor", "rotary_dim", &t.scaling->partial_rotary_factor,
            *s.partial_rotary_factor, &t.scaling->given);
    }
    if (t.rotary_dim != nullptr && (s.rotary_dim != s.head_dim || s.mla)) {
      const bool typed =
          given(t.rotary_flag) || (t.scaling != nullptr && t.scaling->given.count("--partial-rotary-factor"));
      Filler{s, r, typed}(t.rotary_flag, "rotary_dim", t.rotary_dim, s.rotary_dim);
    }
    if (t.head_dim != nullptr && !given("--head-dim") && (t.form == nullptr || t.form->rotary_offset == 0)) {
      *t.head_dim = s.head_dim;
      if (t.head_dim_flag != nullptr)
        *t.head_dim_flag = fmt::format("--hf-config {}: head_dim from {}", name, key_of(s, "head_dim"));
    }
    if (t.form != nullptr && !s.mrope_section.empty()) {
      Filler{s, r, given("--mrope-section")}("--mrope-section", "mrope_section", &t.form->mrope_section,
                                             s.mrope_section);
      if (!s.mrope_layout.empty())
        Filler{s, r, given("--mrope-layout")}("--mrope-layout", "mrope_layout", &t.form->mrope_layout,
                                              s.mrope_layout);
    }
  }
  std::string line;
  for (const HfValue& v : s.sources)
    line += fmt::format("{}{} {} ({})", line.empty() ? "" : "; ", v.name, shown(v.value), v.key);
  say("hf-config {}{}: {}\n", name,
             r.layer ? fmt::format(" layer {} ({})", *r.layer, s.name)
                     : (s.name == "all layers" ? std::string() : " " + s.name),
             line);
  for (const std::string& n : s.notes) say("  note: {}\n", n);
  for (const std::string& o : r.overrides) say("  override: {}\n", o);
  if (!r.not_read.empty()) {
    std::string nr;
    for (const std::string& k : r.not_read) nr += (nr.empty() ? "" : ", ") + k;
    say("  not read: {}\n", nr);
  }
  return r;
}

}  // namespace pe::cli

#include "names.h"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace pe::cli {
namespace {

// Canonical name -> flag, for every option the commands share.
constexpr std::array<std::pair<std::string_view, std::string_view>, 59> kFlags = {{
    {"scaling", "--scaling"},
    {"factor", "--factor"},
    {"original_max_position", "--original-max-position"},
    {"seq_len", "--seq-len"},
    {"beta_fast", "--beta-fast"},
    {"beta_slow", "--beta-slow"},
    {"mscale", "--mscale"},
    {"mscale_all_dim", "--mscale-all-dim"},
    {"attention_factor", "--attention-factor"},
    {"position_scale", "--position-scale"},
    {"longrope_switch", "--longrope-switch"},
    {"dynamic_semantics", "--dynamic-semantics"},
    {"alpha", "--alpha"},
    {"yarn_attention", "--yarn-attention"},
    {"heads_first", "--heads-first"},
    {"truncate", "--truncate"},
    {"low_freq_factor", "--low-freq-factor"},
    {"high_freq_factor", "--high-freq-factor"},
    {"short_factor", "--short-factors"},
    {"long_factor", "--long-factors"},
    {"partial_rotary_factor", "--partial-rotary-factor"},
    {"mrope_section", "--mrope-section"},
    {"mrope_layout", "--mrope-layout"},
    {"vision", "--vision"},
    {"axes_dim", "--axes-dim"},
    {"rotary_offset", "--rotary-offset"},
    {"attn_temperature", "--attn-temperature"},
    {"attn_scale", "--attn-scale"},
    {"floor_scale", "--floor-scale"},
    {"beta", "--beta"},
    {"xpos_scale_base", "--xpos-scale-base"},
    {"xpos_centre", "--xpos-centre"},
    {"xpos_keys", "--xpos-keys"},
    {"heads", "--heads"},
    {"max_bias", "--max-bias"},
    {"alibi_slopes", "--alibi-slopes"},
    {"alibi_form", "--alibi-form"},
    {"queries", "--queries"},
    {"keys", "--keys"},
    {"slopes_only", "--slopes-only"},
    {"hf_config", "--hf-config"},
    {"layer", "--layer"},
    {"layer_type", "--layer-type"},
    {"no_rope", "--no-rope"},
    {"base", "--base"},
    {"layout", "--layout"},
    {"dtype", "--dtype"},
    {"contract", "--contract"},
    {"max_abs", "--max-abs"},
    {"against", "--against"},
    {"flip_sin_to_cos", "--flip-sin-to-cos"},
    {"downscale_freq_shift", "--downscale-freq-shift"},
    {"scale", "--scale"},
    {"padding_idx", "--padding-idx"},
    {"grid", "--grid"},
    {"base_size", "--base-size"},
    {"interpolation_scale", "--interpolation-scale"},
    {"temporal_interpolation_scale", "--temporal-interpolation-scale"},
    {"extra_tokens", "--extra-tokens"},
}};

}  // namespace

std::string flag_for_parameter(std::string_view canonical) {
  for (const auto& [name, flag] : kFlags) {
    if (name == canonical) return std::string(flag);
  }
  return "";
}

namespace {

// A hypothesis as the flags that state it, every number in full (a rerun must see the fitted table, not a
// rounding of it): the command line's renderer of the engine's typed findings.
check::Restated as_flags(const std::vector<check::SpecEntry>& entries) {
  std::string text;
  const auto flag_value = [](const nlohmann::json& v) {
    return v.is_number_float() ? fmt::format("{:.17g}", v.get<double>())
           : v.is_string()     ? v.get<std::string>()
                               : v.dump();
  };
  for (const check::SpecEntry& e : entries) {
    const nlohmann::json& v = e.value;
    // A switch (CLI11's flag, no value): named where true, left out where false (its default).
    if ((e.name == "no_rope" || e.name == "xpos_keys") && v.is_boolean()) {
      if (v.get<bool>()) text += fmt::format("{}{}", text.empty() ? "" : " ", flag_for_parameter(e.name));
      continue;
    }
    // Lists comma-separated, as --mrope-section reads them (16,24,24). LongRoPE's factor lists are read
    // from .npy files instead, so a restated list of those is not a flag that runs as printed.
    std::string value;
    if (v.is_array())
      for (const nlohmann::json& item : v) value += (value.empty() ? "" : ",") + flag_value(item);
    else
      value = flag_value(v);
    text += fmt::format("{}{} {}", text.empty() ? "" : " ", flag_for_parameter(e.name), value);
  }
  return {"as flags", "flags", text};
}

}  // namespace

check::Names flag_names(std::map<std::string, std::string, std::less<>> overrides) {
  return check::Names(
      [overrides = std::move(overrides)](std::string_view canonical) {
        if (const auto it = overrides.find(canonical); it != overrides.end()) return it->second;
        return flag_for_parameter(canonical);
      },
      as_flags);
}

}  // namespace pe::cli

// The config.json resolver: transformers' reading of a config, rule by rule (hf_config.h).
#include "pe/check/hf_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "model_config/hf_config_detail.h"
#include "pe/errors.h"
#include "pe/rope_scaling.h"

namespace pe::check {

using nlohmann::json;

std::string HfRopeSetting::summary() const {
  const TemperatureSpec& t = spec.temperature;
  const AttnTemperature hf;  // HF's defaults where the config gives none
  if (!rope()) {
    return !t.type
               ? std::string("NoPE")
               : fmt::format("NoPE, temperature {} (attn_scale {:g}, floor_scale {})", to_string(*t.type),
                             t.attn_scale.value_or(hf.attn_scale), t.floor_scale.value_or(hf.floor_scale));
  }
  const ScalingSpec& sc = spec.scaling;
  std::string s = fmt::format("base {:g}, scaling {}", spec.base.value_or(10000.0),
                              to_string(sc.method.value_or(RopeScalingType::None)));
  if (sc.factor) s += fmt::format(" factor {:g}", *sc.factor);
  if (sc.original_max_position) s += fmt::format(" L {}", *sc.original_max_position);
  if (spec.rotary_dim != spec.head_dim) s += fmt::format(", rotary {} of {}", *spec.rotary_dim, head_dim());
  if (spec.form.mrope_section)
    s += fmt::format(", M-RoPE {}{}", fmt::join(*spec.form.mrope_section, ","),
                     spec.form.mrope_layout ? " " + std::string(to_string(*spec.form.mrope_layout)) : "");
  if (spec.layout) s += fmt::format(", layout {}", to_string(*spec.layout));
  return s;
}

json HfResolution::to_json() const {
  json resolved = json::object();
  for (const HfValue& v : setting.sources) resolved[v.name] = {{"value", v.value}, {"key", v.key}};
  json j = {{"file", file},         {"setting", setting.name}, {"summary", setting.summary()},
            {"resolved", resolved}, {"notes", setting.notes},  {"overrides", overrides},
            {"not_read", not_read}};
  if (layer) j["layer"] = *layer;
  if (!layer_type.empty()) j["layer_type"] = layer_type;
  return j;
}

json read_hf_config(const std::string& path, const Names& names) {
  std::stringstream text;
  std::ifstream in(path);
  if (!in || std::filesystem::is_directory(path))
    throw BadRequest(names("hf_config") + " " + path + ": cannot be read (" + why_unreadable(path) + ")",
                     "hf_config");
  text << in.rdbuf();
  json j;
  try {
    j = json::parse(text.str());
  } catch (const json::parse_error& e) {
    throw BadRequest(names("hf_config") + " " + path + ": not valid JSON (" + e.what() + ")", "hf_config");
  }
  if (!j.is_object()) throw BadRequest(names("hf_config") + " " + path + ": not a JSON object", "hf_config");
  return j;
}

std::vector<HfRopeSetting> hf_rope_settings(const json& config, const std::string& source) {
  return detail::resolve_layers(config, source).settings;
}

namespace {

std::string list_layers(const std::vector<std::int64_t>& layers) {
  std::string s;
  for (std::size_t k = 0; k < layers.size(); ++k) {
    std::size_t end = k;
    while (end + 1 < layers.size() && layers[end + 1] == layers[end] + 1) ++end;
    s += (s.empty() ? "" : ",") +
         (end == k ? std::to_string(layers[k]) : fmt::format("{}-{}", layers[k], layers[end]));
    k = end;
  }
  return s;
}

std::string list_settings(const std::vector<HfRopeSetting>& settings) {
  std::string s;
  for (const HfRopeSetting& r : settings)
    s += fmt::format("{}  {} (layers {}): {}", s.empty() ? "" : "\n", r.name, list_layers(r.layers),
                     r.summary());
  return s;
}

}  // namespace

HfResolution resolve_hf_config(const json& config, const std::string& file, const std::string& source,
                               std::optional<std::int64_t> layer, const std::string& layer_type,
                               const Names& names) {
  detail::Layers all = detail::resolve_layers(config, source);
  HfResolution r;
  r.file = file;
  r.layer = layer;
  r.layer_type = layer_type;
  r.not_read = all.not_read;
  if (layer && !layer_type.empty())
    throw BadRequest(fmt::format("{} {} and {} {}: give one, not both", names("layer"), *layer,
                                 names("layer_type"), layer_type),
                     "layer");
  if (layer) {
    if (all.n_layers == 0)
      throw BadRequest(fmt::format("{} {}: {} gives no num_hidden_layers; its layers do not differ",
                                   names("layer"), *layer, file),
                       "layer");
    if (*layer < 0 || *layer >= all.n_layers)
      throw BadRequest(fmt::format("{} {}: out of range; {} has layers 0 to {} (num_hidden_layers {})",
                                   names("layer"), *layer, file, all.n_layers - 1, all.n_layers),
                       "layer");
    for (const HfRopeSetting& s : all.settings) {
      if (std::find(s.layers.begin(), s.layers.end(), *layer) != s.layers.end()) r.setting = s;
    }
    return r;
  }
  if (!layer_type.empty()) {
    for (const HfRopeSetting& s : all.settings) {
      if (s.name == layer_type) {
        r.setting = s;
        return r;
      }
    }
    throw BadRequest(fmt::format("{} {}: {} has no such layers; its layer types are:\n{}",
                                 names("layer_type"), layer_type, file, list_settings(all.settings)),
                     "layer_type");
  }
  if (all.settings.size() > 1)
    throw BadRequest(
        fmt::format("{}: {}'s layers differ in RoPE; give {} N or {} T, one of:\n{}", names("layer"), file,
                    names("layer"), names("layer_type"), list_settings(all.settings)),
        "layer");
  r.setting = all.settings.front();
  return r;
}

}  // namespace pe::check

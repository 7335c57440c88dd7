// The resolver proper: one config.json read key by key with transformers' rules, per layer.
//
// Sources (huggingface/transformers, src/transformers/):
//   modeling_rope_utils.py: standardize_rope_params (rope_type from "type", rope_theta and
//   partial_rotary_factor
//     into the parameters, original_max_position_embeddings: the top-level key first, then the parameters',
//     then max_position_embeddings), the _compute_*_parameters functions (what each type reads and derives),
//     dynamic_rope_update (seq_len = max(position_ids) + 1);
//   configuration_utils.py (v5 RotaryEmbeddingConfigMixin.convert_rope_params_to_dict): a legacy rope_scaling
//     wins over rope_parameters, and rope_parameters' own rope_theta over the top-level one;
//   models/gemma3/configuration_gemma3.py and modeling_gemma3.py, models/llama4/configuration_llama4.py and
//   modeling_llama4.py, models/smollm3/configuration_smollm3.py,
//   models/qwen2_5_vl/configuration_qwen2_5_vl.py, models/deepseek_v2/modeling_deepseek_v2.py,
//   models/deepseek_v3/modeling_deepseek_v3.py, models/phi3.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "model_config/hf_config_detail.h"
#include "pe/errors.h"
#include "pe/rope_scaling.h"

namespace pe::check::detail {
namespace {

// Top-level keys the resolver reads; any other key naming a rope/rotary/position thing is listed as not read.
const std::set<std::string> kTopLevelRead = {"rope_theta",
                                             "rope_scaling",
                                             "rope_parameters",
                                             "partial_rotary_factor",
                                             "max_position_embeddings",
                                             "original_max_position_embeddings",
                                             "qk_rope_head_dim",
                                             "qk_nope_head_dim",
                                             "rope_local_base_freq",
                                             "no_rope_layers",
                                             "no_rope_layer_interval",
                                             "rope_interleave",
                                             "head_dim",
                                             "global_head_dim",
                                             "mrope_section"};

// Each layer's type: layer_types, else Gemma-3's sliding_window_pattern, else Gemma-2's alternation (empty:
// the config has none).
std::vector<std::string> layer_types(const Text& t, std::int64_t n_layers) {
  std::vector<std::string> types;
  if (const json* lt = t.get("layer_types")) {
    if (!lt->is_array()) t.fail(t.key("layer_types"), "expected a list of layer types");
    for (const json& x : *lt) types.push_back(x.is_string() ? x.get<std::string>() : x.dump());
  } else if (t.get("rope_local_base_freq") != nullptr && t.get("sliding_window_pattern") != nullptr) {
    // modeling_gemma3.py: is_sliding = bool((layer_idx + 1) % config.sliding_window_pattern).
    const std::int64_t pattern = t.integer("sliding_window_pattern");
    if (pattern == 0) t.fail(t.key("sliding_window_pattern"), "must be > 0");
    for (std::int64_t i = 0; i < n_layers; ++i)
      types.push_back((i + 1) % pattern != 0 ? "sliding_attention" : "full_attention");
  } else if (t.model_type == "gemma2") {
    for (std::int64_t i = 0; i < n_layers; ++i)  // modeling_gemma2.py: is_sliding = not bool(layer_idx % 2)
      types.push_back(i % 2 == 0 ? "sliding_attention" : "full_attention");
  }
  if (!types.empty() && static_cast<std::int64_t>(types.size()) != n_layers)
    t.fail(t.key("layer_types"), fmt::format("{} entries, num_hidden_layers is {}", types.size(), n_layers));
  return types;
}

// Whether each layer uses RoPE: no_rope_layers (1 = uses RoPE), else no_rope_layer_interval (empty: all do).
std::vector<bool> rope_layers(const Text& t, std::int64_t n_layers) {
  std::vector<bool> uses_rope;
  const json* nope_list = t.get("no_rope_layers");
  if (nope_list != nullptr && nope_list->is_array() && !nope_list->empty()) {
    for (const json& x : *nope_list) uses_rope.push_back(x.is_number() && x.get<double>() != 0);
    if (static_cast<std::int64_t>(uses_rope.size()) != n_layers)
      t.fail(t.key("no_rope_layers"),
             fmt::format("{} entries, num_hidden_layers is {}", uses_rope.size(), n_layers));
  } else if (const std::int64_t interval = t.integer("no_rope_layer_interval"); interval > 0) {
    for (std::int64_t i = 0; i < n_layers; ++i) uses_rope.push_back((i + 1) % interval != 0);
  }
  return uses_rope;
}

// The first `n` layers' settings merged into the distinct ones, each with its layers; layer types alike in
// RoPE are one setting ("all layers"), as in Gemma-2.
template <class SettingOf>
void merge_layers(Layers& out, std::int64_t n, const SettingOf& setting_of) {
  for (std::int64_t i = 0; i < n; ++i) {
    HfRopeSetting s = setting_of(i);
    auto same = std::find_if(out.settings.begin(), out.settings.end(),
                             [&](const HfRopeSetting& o) { return o.same_rope(s) && o.name == s.name; });
    if (same == out.settings.end()) {
      out.settings.push_back(std::move(s));
      same = out.settings.end() - 1;
    }
    if (n > 1 || out.n_layers > 0) same->layers.push_back(i);
  }
  if (out.settings.size() == 1 && n == 1 && out.n_layers > 0) {
    out.settings.front().layers.clear();
    for (std::int64_t i = 0; i < out.n_layers; ++i) out.settings.front().layers.push_back(i);
  }
  if (out.settings.size() > 1) {
    bool alike = true;
    for (const HfRopeSetting& s : out.settings) alike = alike && s.same_rope(out.settings.front());
    if (alike) {
      for (std::size_t k = 1; k < out.settings.size(); ++k)
        out.settings.front().layers.insert(out.settings.front().layers.end(), out.settings[k].layers.begin(),
                                           out.settings[k].layers.end());
      out.settings.resize(1);
      std::sort(out.settings.front().layers.begin(), out.settings.front().layers.end());
    }
  }
  if (out.settings.size() == 1) out.settings.front().name = "all layers";
}

}  // namespace

Layers resolve_layers(const json& config, const std::string& source) {
  if (std::optional<Layers> diffusers = diffusers_rope_layers(config, source)) return *diffusers;
  const Text t = text_of(config, source);
  Layers out;
  std::set<std::string> not_read;
  // Which dict: convert_rope_params_to_dict's `rope_scaling or rope_parameters`.
  const json* params = nullptr;
  std::string pk;
  const json* legacy = t.get("rope_scaling");
  const json* v5 = t.get("rope_parameters");
  if (legacy != nullptr && legacy->is_object() && !legacy->empty()) {
    params = legacy;
    pk = t.prefix + "rope_scaling";
    if (v5 != nullptr)
      not_read.insert(t.prefix + "rope_parameters (rope_scaling wins: convert_rope_params_to_dict)");
  } else if (v5 != nullptr && v5->is_object()) {
    params = v5;
    pk = t.prefix + "rope_parameters";
  }
  out.n_layers = t.integer("num_hidden_layers");
  const std::vector<std::string> types = layer_types(t, out.n_layers);
  // v5 rope_parameters keyed by layer type (standardize_rope_params' case 2).
  bool keyed = params != nullptr && !params->empty() && !types.empty();
  if (keyed) {
    for (const auto& [k, v] : params->items())
      keyed = keyed && v.is_object() && std::find(types.begin(), types.end(), k) != types.end();
  }
  const json* nope_list = t.get("no_rope_layers");
  const std::vector<bool> uses_rope = rope_layers(t, out.n_layers);
  if ((!types.empty() || !uses_rope.empty()) && out.n_layers == 0)
    t.fail(t.prefix + "num_hidden_layers", "required by the per-layer keys");
  const Head head = head_of(t);
  // Gemma 4: the full_attention layers' heads are global_head_dim wide (modeling_gemma4.py passes
  // head_dim_key "global_head_dim" to their rotary embedding).
  Head global = head;
  if (const json* g = t.get("global_head_dim")) {
    global.head_dim = t.integer("global_head_dim");
    std::erase_if(global.sources, [](const HfValue& v) { return v.name == "head_dim"; });
    global.sources.push_back({"head_dim", *g, t.key("global_head_dim") + " (full_attention layers)"});
  }
  const auto setting_of = [&](std::int64_t i) {
    const std::string type = types.empty() ? std::string() : types[static_cast<std::size_t>(i)];
    if (!uses_rope.empty() && !uses_rope[static_cast<std::size_t>(i)]) {
      HfRopeSetting s;
      s.spec.no_rope = true;
      s.name = "nope";
      s.sources.push_back(
          {"no_rope", true,
           t.key(nope_list != nullptr && !nope_list->empty() ? "no_rope_layers" : "no_rope_layer_interval")});
      // modeling_llama4.py: the temperature only where use_rope is false.
      if (const json* tune = t.get("attn_temperature_tuning");
          tune != nullptr &&
          ((tune->is_boolean() && tune->get<bool>()) || (tune->is_number() && tune->get<double>() != 0))) {
        TemperatureSpec& temperature = s.spec.temperature;
        temperature.type = AttnTemperatureType::Llama4;
        s.sources.push_back({"attn_temperature", "llama4", t.key("attn_temperature_tuning")});
        if (const json* v = t.get("attn_scale")) {
          temperature.attn_scale = t.number(*v, t.key("attn_scale"));
          s.sources.push_back({"attn_scale", *v, t.key("attn_scale")});
        }
        if (t.get("floor_scale") != nullptr) {
          temperature.floor_scale = t.integer("floor_scale");
          s.sources.push_back({"floor_scale", *temperature.floor_scale, t.key("floor_scale")});
        }
      }
      return s;
    }
    HfRopeSetting s;
    if (keyed) {
      if (!params->contains(type)) t.fail(pk, "has no entry for layer type " + type);
      s = rotary(t, type == "full_attention" ? global : head, &(*params)[type], pk + "." + type, false,
                 not_read);
    } else if (type == "sliding_attention" && t.get("rope_local_base_freq") != nullptr) {
      // modeling_gemma3.py: the local rotary embedding is rope_type "default" at rope_local_base_freq.
      s = rotary(t, head, nullptr, pk, true, not_read);
      s.spec.base = t.number(*t.get("rope_local_base_freq"), t.key("rope_local_base_freq"));
      std::erase_if(s.sources, [](const HfValue& v) { return v.name == "base"; });
      s.sources.push_back({"base", *s.spec.base, t.key("rope_local_base_freq")});
      s.notes.push_back(
          "sliding layers: rope_local_base_freq and no scaling (Gemma-3's local rotary embedding)");
    } else {
      s = rotary(t, head, params, pk, true, not_read);
    }
    s.name = type.empty() ? "rope" : type;
    return s;
  };
  merge_layers(out, types.empty() && uses_rope.empty() ? 1 : out.n_layers, setting_of);
  for (const auto& [k, v] : t.j->items()) {
    if (kTopLevelRead.count(k) > 0 || v.is_null()) continue;
    if (k.find("rope") != std::string::npos || k.find("rotary") != std::string::npos ||
        k.find("position") != std::string::npos || k.find("theta") != std::string::npos)
      not_read.insert(t.prefix + k);
  }
  out.not_read.assign(not_read.begin(), not_read.end());
  return out;
}

}  // namespace pe::check::detail

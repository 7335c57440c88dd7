// --hf-config: a model's config.json read the way Hugging Face transformers reads it, resolved into
// the same RoPE flags a user would type (--base, --scaling and its parameters, the rotary dim, the
// M-RoPE form, the layout, --no-rope and Llama-4's temperature). Per-layer configs (Gemma-3's
// sliding layers, Llama-4's and SmolLM3's NoPE layers, v5 rope_parameters keyed by layer type) are
// resolved per layer; --layer N or --layer-type T picks one.
//
// The rules, each from transformers' published code (cited where applied in hf_config.cc):
//   modeling_rope_utils.py    the rope types, their keys, defaults and derived values
//   (standardize_rope_params,
//                             _compute_{linear,dynamic,yarn,longrope,llama3}_parameters, dynamic_rope_update)
//   configuration_gemma3.py   rope_local_base_freq and sliding_window_pattern; the class defaults
//   configuration_llama4.py   no_rope_layers / no_rope_layer_interval, attn_temperature_tuning
//   configuration_smollm3.py  no_rope_layers / no_rope_layer_interval
//   modeling_llama4.py, modeling_deepseek_v2.py, modeling_deepseek_v3.py   the pair layouts
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace pe::cli {

// One resolved value and the config key it came from ("rope_theta", "text_config.rope_scaling.factor",
// "max_position_embeddings/original_max_position_embeddings", "Gemma3TextConfig default").
struct HfValue {
  std::string name;      // what it sets: "base", "scaling", "factor", "head_dim", ...
  nlohmann::json value;  // as resolved (a number, a string, a list)
  std::string key;
};

// The RoPE of one layer (or of every layer alike), in the words of the CLI's flags. Strings are the
// flags' values; "" where the config says nothing (the flag's default applies).
struct HfRopeSetting {
  std::string name;  // layer type ("sliding_attention", "full_attention"), "nope", or "all layers"
  std::vector<std::int64_t> layers;  // the layers that use it (empty: the config has no layer count)
  bool rope = true;                  // false: a NoPE layer (--no-rope)
  double base = 10000;
  std::int64_t head_dim = 0, rotary_dim = 0;  // rotary_dim: HF's int(head_dim * partial_rotary_factor)
  bool mla = false;                           // DeepSeek MLA: head_dim is qk_rope_head_dim, the rope part
  std::string scaling = "none";  // the core's name: none, linear, dynamic, yarn, llama3, longrope
  std::optional<double> factor, beta_fast, beta_slow, mscale, mscale_all_dim, attention_factor,
      low_freq_factor, high_freq_factor;
  std::optional<bool> truncate;
  std::optional<std::int64_t>
      original_max_position;  // L as the method reads it (dynamic: max_position_embeddings)
  std::vector<double> short_factor, long_factor;
  std::optional<double>
      partial_rotary_factor;                // as the config gives it (census reads the factor, not the dim)
  std::string mrope_section, mrope_layout;  // "16,24,24"; "interleaved" or ""
  std::string layout;       // "" (half-split, HF's rotate_half) unless the model type rotates otherwise
  std::string temperature;  // "llama4" on Llama-4's NoPE layers, else ""
  double attn_scale = 0.1;
  std::int64_t floor_scale = 8192;
  std::vector<HfValue> sources;  // every value above that the config gave, with its key
  std::vector<std::string>
      notes;  // renamings and derivations ("rope_scaling.type su: Phi-3's old name for longrope")

  // "base 10000, scaling none" / "base 1e+06, scaling linear factor 8": one phrase for lists.
  std::string summary() const;
  bool same_rope(const HfRopeSetting& other) const;
};

// What the config resolved to for the layer asked for.
struct HfResolution {
  std::string file;
  std::optional<std::int64_t> layer;
  std::string layer_type;
  HfRopeSetting setting;
  std::vector<std::string> not_read;   // "rope_scaling.foo", "rope_embedding_base (top level)"
  std::vector<std::string> overrides;  // "--base 10000 overrides rope_theta 500000"
  nlohmann::json to_json() const;      // check --json's "hf_config"
};

// The config file parsed; UsageError "--hf-config: FILE: ..." when unreadable or not a JSON object.
nlohmann::json read_hf_config(const std::string& path);

// Every distinct RoPE setting among the config's layers, in the order of their first layer, each
// with its name and layers (one "all layers" setting when they do not differ). For the diagnosis: a
// check of one layer type can try the others' parameters. UsageError naming the file and the key for
// what cannot be resolved (an unsupported rope_type, no head dim derivable, ...).
std::vector<HfRopeSetting> hf_rope_settings(const nlohmann::json& config, const std::string& file);

// The setting of the layer asked for: `layer` (--layer N) or `layer_type` (--layer-type T), or the
// only one. UsageError naming --layer when the layers differ and neither is given (the layer types
// listed with their parameters), --layer with its value when out of range, --layer-type with its
// value when unknown (the valid ones listed). The unread keys are listed in the result.
HfResolution resolve_hf_config(const nlohmann::json& config, const std::string& file,
                               std::optional<std::int64_t> layer, const std::string& layer_type);

}  // namespace pe::cli

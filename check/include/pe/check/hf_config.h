// A model's config.json read the way Hugging Face transformers reads it, resolved into the RoPE spec a
// user would give (spec.h: the base, the scaling and its parameters, the rotary dim, the M-RoPE form,
// the layout, NoPE and Llama-4's temperature). Per-layer configs (Gemma-3's sliding layers, Llama-4's
// and SmolLM3's NoPE layers, v5 rope_parameters keyed by layer type) are resolved per layer; a layer
// index or a layer type picks one. `source` in the functions below is the words that name the config
// in messages (the command line's flag and file, "scaling" for Python's dict).
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
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pe/check/names.h"
#include "pe/check/spec.h"

namespace pe::check {

// One resolved value and the config key it came from ("rope_theta", "text_config.rope_scaling.factor",
// "max_position_embeddings/original_max_position_embeddings", "Gemma3TextConfig default").
struct HfValue {
  std::string name;      // what it sets: "base", "scaling", "factor", "head_dim", ...
  nlohmann::json value;  // as resolved (a number, a string, a list)
  std::string key;
};

// The RoPE of one layer (or of every layer alike) as the spec (spec.h) a user would give: base, head dim
// and rotary dim always set, every other field where the config sets it (HF's default applies elsewhere).
struct HfRopeSetting {
  std::string name;  // layer type ("sliding_attention", "full_attention"), "nope", or "all layers"
  std::vector<std::int64_t> layers;    // the layers that use it (empty: the config has no layer count)
  RopeSpec spec;                       // no_rope set on a NoPE layer; rotary_dim HF's int(head_dim * factor)
  bool mla = false;                    // DeepSeek MLA: head_dim is qk_rope_head_dim, the rope part
  std::int64_t mla_nope_head_dim = 0;  // MLA: qk_nope_head_dim, the part before it in the full q/k
  std::vector<HfValue> sources;        // every value above that the config gave, with its key
  std::vector<std::string>
      notes;  // renamings and derivations ("rope_scaling.type su: Phi-3's old name for longrope")

  bool rope() const { return !spec.nope(); }
  std::int64_t head_dim() const { return spec.head_dim.value_or(0); }
  // "base 10000, scaling none" / "base 1e+06, scaling linear factor 8": one phrase for lists.
  std::string summary() const;
  bool same_rope(const HfRopeSetting& other) const { return spec == other.spec; }
};

// What the config resolved to for the layer asked for.
struct HfResolution {
  std::string file;
  std::optional<std::int64_t> layer;
  std::string layer_type;
  HfRopeSetting setting;
  std::vector<std::string> not_read;   // "rope_scaling.foo", "rope_embedding_base (top level)"
  std::vector<std::string> overrides;  // "<base> 10000 overrides rope_theta 500000", in the caller's words
  std::string block;                   // the resolution as a report prints it (apply_hf_config)
  nlohmann::json to_json() const;      // check --json's "hf_config"
};

// The config file parsed; BadRequest "<hf_config's name> FILE: ..." when unreadable or not a JSON object.
nlohmann::json read_hf_config(const std::string& path, const Names& names);

// Every distinct RoPE setting among the config's layers, in the order of their first layer, each
// with its name and layers (one "all layers" setting when they do not differ). For the diagnosis: a
// check of one layer type can try the others' parameters. BadRequest naming the key and the source for
// what cannot be resolved (an unsupported rope_type, no head dim derivable, ...).
std::vector<HfRopeSetting> hf_rope_settings(const nlohmann::json& config, const std::string& source);

// The setting of the layer asked for: `layer` or `layer_type`, or the only one. BadRequest naming layer
// when the layers differ and neither is given (the layer types listed with their parameters), layer
// with its value when out of range, layer_type with its value when unknown (the valid ones listed). The
// unread keys are listed in the result. `file` names the config in the report.
HfResolution resolve_hf_config(const nlohmann::json& config, const std::string& file,
                               const std::string& source, std::optional<std::int64_t> layer,
                               const std::string& layer_type, const Names& names);

// The config a request names, and the layer it asks for.
struct HfSource {
  nlohmann::json config;  // null: none given
  std::string file;       // the report's JSON names it ("Llama-3.1-8B.json", "scaling")
  std::string label;      // the report's text names it ("hf-config Llama-3.1-8B.json", "scaling")
  std::string source;     // messages name it (the command line's flag and file, "scaling")
  std::optional<std::int64_t> layer;
  std::string layer_type;
};

// What of the spec a front end takes from a config: census sweeps its own bases and head dims (the
// scaling and the form only, the partial factor as a factor), export has no rotary or head dim, NoPE or
// temperature for Python's reference.
struct HfUse {
  bool base = true, layout = true, rotary_dim = true, head_dim = true, temperature = true, no_rope = true;
  // The data's positions, for HF's seq_len = max(position_ids) + 1 under dynamic and longrope (not
  // called when the scaling needs none).
  std::function<std::vector<std::int64_t>()> positions;
  std::string command = "check";  // for "a NoPE layer; export writes RoPE only"
};

// Nothing without a config (and BadRequest for layer or layer_type without one). Otherwise resolves the
// config and fills every field of `spec` that `use` takes and the user left empty; a field the user gave
// wins and the config's value is reported as overridden. The resolution's `block` is the text a report
// shows ("hf-config Llama-3.1-8B.json: base 500000 (rope_theta); ...").
std::optional<HfResolution> apply_hf_config(const HfSource& source, RopeSpec& spec, const HfUse& use,
                                            const Names& names);

// Another layer type's setting as the scaling it resolves to, with no option given (HF's seq_len from
// the positions), for the diagnosis's per-layer candidates.
RopeScaling rope_scaling_of(const HfRopeSetting& s,
                            const std::function<std::vector<std::int64_t>()>& positions, const Names& names);

// A diffusers model's config.json (UNets' flip_sin_to_cos and freq_shift; PixArt/DiT/SD3's patch grid;
// CogVideoX's video grid) into `spec` where it is silent (model_config/diffusers_config.cc names the keys);
// each value taken is appended to `taken`. BadRequest naming hf_config for a config with none of the keys
// or a key of the wrong type.
SinusoidalSpec sinusoidal_spec_from(const HfSource& hf, SinusoidalSpec spec, std::vector<HfValue>& taken);

}  // namespace pe::check

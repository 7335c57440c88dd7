// The resolver's pieces: the per-layer pass (hf_config_layers.cc) and one rotary layer's reading
// (hf_config_rotary.cc).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "pe/check/errors.h"
#include "pe/check/hf_config.h"

namespace pe::check::detail {

struct Layers {
  std::vector<HfRopeSetting> settings;  // distinct, in the order of their first layer
  std::int64_t n_layers = 0;            // 0: the config has no layer count
  std::vector<std::string> not_read;
};

// Every layer's setting, merged into the distinct ones. BadRequest naming the key and `source` (the words
// that name the config: the command line's flag and file, "scaling").
Layers resolve_layers(const nlohmann::json& config, const std::string& source);
// A diffusers transformer's axial RoPE (Flux, HunyuanVideo, Wan, CogVideoX: diffusers_rope.cc); nullopt when
// the config is not one of theirs.
std::optional<Layers> diffusers_rope_layers(const nlohmann::json& config, const std::string& source);

using nlohmann::json;

inline bool present(const json& j, const std::string& k) {
  return j.is_object() && j.contains(k) && !j[k].is_null();
}

// The text model's keys: text_config's when the config nests one (Gemma-3, Llama-4), with the class defaults.
struct Text {
  const json* j;
  std::string prefix, source, model_type;
  json defaults = json::object();
  std::string defaults_name;

  const json* get(const std::string& k) const {
    if (present(*j, k)) return &(*j)[k];
    return present(defaults, k) ? &defaults[k] : nullptr;
  }
  std::string key(const std::string& k) const {
    return present(*j, k) ? prefix + k : defaults_name + " default";
  }
  [[noreturn]] void fail(const std::string& k, const std::string& why) const {
    throw BadRequest(fmt::format("{}: {} ({})", k, why, source), "hf_config");
  }
  double number(const json& v, const std::string& shown) const {
    if (!v.is_number()) fail(shown, fmt::format("expected a number, got {}", v.dump()));
    return v.get<double>();
  }
  std::int64_t integer(const std::string& k) const {
    const json* v = get(k);
    if (v == nullptr) return 0;
    if (!v->is_number_integer() || v->get<std::int64_t>() < 0)
      fail(key(k), fmt::format("expected a non-negative integer, got {}", v->dump()));
    return v->get<std::int64_t>();
  }
};

// The text model of `config` (text_config when nested) with its class defaults.
Text text_of(const json& config, const std::string& file);

// What every rotary layer shares: the head and the rotary dims, the layout.
struct Head {
  std::int64_t head_dim = 0;
  bool mla = false;
  std::int64_t mla_nope_head_dim = 0;  // qk_nope_head_dim: the full q/k is [q_nope | q_pe]
  std::vector<HfValue> sources;
  std::optional<Layout> layout;
  std::vector<std::string> notes;
};

Head head_of(const Text& t);

// One rotary layer's setting from its parameter dict `p` (null: none), named `pk` in messages. `flat`: the
// config's single dict (standardize_rope_params' case 1), where the top-level
// original_max_position_embeddings wins over the dict's (Phi-3). The dict's keys it does not read go to
// `not_read`.
HfRopeSetting rotary(const Text& t, const Head& h, const json* p, const std::string& pk, bool flat,
                     std::set<std::string>& not_read);

}  // namespace pe::check::detail

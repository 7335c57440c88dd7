#include "pe/harness/contract_json.h"

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace pe {
namespace {

// j[key] into `out`; a word that names no value (std::runtime_error) is named with its document and key.
template <class T>
void read(const nlohmann::json& j, const char* document, const std::string& key, T& out) {
  try {
    j.at(key).get_to(out);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("{}: {} {}", document, key, e.what()));
  }
}

}  // namespace

void to_json(nlohmann::json& j, const Contract& c) {
  j = {{"layouts", c.layouts},
       {"outputs", c.outputs},
       {"angle_type", c.angle_type},
       {"compute_type", c.compute_type},
       {"table_type", c.table_type},
       {"max_position", c.max_position},
       {"max_base", c.max_base},
       {"max_input_abs", c.max_input_abs},
       {"depends_on", c.depends_on},
       {"state_rows", c.state_rows},
       {"coefficients",
        {{"c0", c.c0},
         {"ck", c.ck},
         {"ct", c.ct},
         {"c1", c.c1},
         {"c1_pair", c.c1_pair},
         {"ca", c.ca},
         {"c1_gain", c.c1_gain}}}};
}

void from_json(const nlohmann::json& j, Contract& c) {
  c = Contract{};
  read(j, "contract", "layouts", c.layouts);
  read(j, "contract", "outputs", c.outputs);
  read(j, "contract", "angle_type", c.angle_type);
  read(j, "contract", "compute_type", c.compute_type);
  read(j, "contract", "table_type", c.table_type);
  j.at("max_position").get_to(c.max_position);
  j.at("max_base").get_to(c.max_base);
  j.at("max_input_abs").get_to(c.max_input_abs);
  c.state_rows = j.value("state_rows", std::int64_t{0});  // census files written before it was declared
  const auto& k = j.at("coefficients");
  k.at("c0").get_to(c.c0);
  k.at("ck").get_to(c.ck);
  k.at("ct").get_to(c.ct);
  k.at("c1").get_to(c.c1);
  k.at("c1_pair").get_to(c.c1_pair);
  k.at("ca").get_to(c.ca);
  k.at("c1_gain").get_to(c.c1_gain);
}

namespace {
// Calls f(name, member) for every RopeScaling field of the methods table: the one list of members
// that both directions of the JSON read.
template <class Scaling, class F>
void for_each_field(Scaling& s, F&& f) {
  f("factor", s.factor);
  f("original_max_position", s.original_max_position);
  f("seq_len", s.seq_len);
  f("beta_fast", s.beta_fast);
  f("beta_slow", s.beta_slow);
  f("truncate", s.truncate);
  f("mscale", s.mscale);
  f("mscale_all_dim", s.mscale_all_dim);
  f("attention_factor", s.attention_factor);
  f("low_freq_factor", s.low_freq_factor);
  f("high_freq_factor", s.high_freq_factor);
  f("short_factor", s.short_factor);
  f("long_factor", s.long_factor);
  f("position_scale", s.position_scale);
  f("longrope_switch", s.longrope_switch);
}

// A field's JSON, or null when the method leaves it unset (an empty optional, seq_len 0) or at its identity
// (position_scale 1 and the per-sequence switch, which no HF config spells).
template <class T>
nlohmann::json field_json(std::string_view name, const T& v) {
  if constexpr (requires { v.has_value(); }) {
    return v ? nlohmann::json(*v) : nlohmann::json();
  } else {
    if (name == "seq_len" && v == T{}) return nlohmann::json();
    if constexpr (std::is_same_v<T, LongRopeSwitch>) {
      if (v == LongRopeSwitch::PerSequence) return nlohmann::json();
    } else if (name == "position_scale" && v == T{1}) {
      return nlohmann::json();
    }
    return v;
  }
}
}  // namespace

void to_json(nlohmann::json& j, const RopeScaling& s) {
  j = {{"type", s.type}};
  for_each_field(s, [&](std::string_view name, const auto& member) {
    if (!reads_field(s.type, name)) return;
    nlohmann::json v = field_json(name, member);
    if (!v.is_null()) j[std::string(name)] = std::move(v);
  });
}

void from_json(const nlohmann::json& j, RopeScaling& s) {
  const std::string type = j.at("type").get<std::string>();
  const auto parsed_type = parse_rope_scaling_type(type);
  if (!parsed_type) throw std::runtime_error("rope_scaling: unknown type '" + type + "'");
  s = RopeScaling{};
  s.type = *parsed_type;
  for (const auto& [key, value] : j.items()) {
    if (key != "type" && !reads_field(s.type, key))
      throw std::runtime_error("rope_scaling: " + type + " does not read '" + key + "'");
  }
  for (std::string_view name : scaling_method(s.type).required) {
    if (!j.contains(std::string(name)))
      throw std::runtime_error("rope_scaling: " + type + " requires '" + std::string(name) + "'");
  }
  for_each_field(s, [&j](std::string_view name, auto& member) {
    const std::string key(name);
    if (!j.contains(key)) return;
    if constexpr (requires { member.has_value(); }) {
      member = j.at(key).get<double>();
    } else {
      read(j, "rope_scaling", key, member);
    }
  });
}

}  // namespace pe

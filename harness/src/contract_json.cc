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

// Calls f(name, member) for the contract's fields that a census file reads back (depends_on, the variant's
// C string, and state_rows, absent from older files, are apart).
template <class C, class F>
void for_each_field(C& c, F&& f) {
  f("layouts", c.layouts);
  f("outputs", c.outputs);
  f("angle_type", c.angle_type);
  f("compute_type", c.compute_type);
  f("table_type", c.table_type);
  f("max_position", c.max_position);
  f("max_base", c.max_base);
  f("max_input_abs", c.max_input_abs);
}

// Calls f(name, member) for the budget's coefficients, which the JSON holds under "coefficients".
template <class C, class F>
void for_each_coefficient(C& c, F&& f) {
  f("c0", c.c0);
  f("ck", c.ck);
  f("ct", c.ct);
  f("c1", c.c1);
  f("c1_pair", c.c1_pair);
  f("ca", c.ca);
  f("c1_gain", c.c1_gain);
  f("c1_scale", c.c1_scale);
}

}  // namespace

void to_json(nlohmann::json& j, const Contract& c) {
  j = {{"depends_on", c.depends_on}, {"state_rows", c.state_rows}};
  for_each_field(c, [&j](const char* name, const auto& member) { j[name] = member; });
  for_each_coefficient(c, [&j](const char* name, double member) { j["coefficients"][name] = member; });
}

void from_json(const nlohmann::json& j, Contract& c) {
  c = Contract{};
  for_each_field(c, [&j](const char* name, auto& member) { read(j, "contract", name, member); });
  c.state_rows = j.value("state_rows", std::int64_t{0});  // census files written before it was declared
  const auto& k = j.at("coefficients");
  // c1_scale (issue 49) is absent from census files written before it: 0, as the contracts then had it.
  for_each_coefficient(c, [&k](const char* name, double& member) {
    if (std::string_view(name) == "c1_scale" && !k.contains(name)) return;
    k.at(name).get_to(member);
  });
}

namespace {
// A field's JSON, or null when the method leaves it unset (an empty optional, seq_len 0) or at its identity
// (position_scale 1, the per-sequence switch and dynamic's live length, which no HF config spells).
template <class T>
nlohmann::json field_json(std::string_view name, const T& v) {
  if constexpr (requires { v.has_value(); }) {
    return v ? nlohmann::json(*v) : nlohmann::json();
  } else {
    if (name == "seq_len" && v == T{}) return nlohmann::json();
    if constexpr (std::is_same_v<T, LongRopeSwitch>) {
      if (v == LongRopeSwitch::PerSequence) return nlohmann::json();
    } else if constexpr (std::is_same_v<T, DynamicSemantics>) {
      if (v == DynamicSemantics::Live) return nlohmann::json();
    } else if constexpr (std::is_same_v<T, YarnAttention>) {
      if (v == YarnAttention::Replace) return nlohmann::json();
    } else if (name == "position_scale" && v == T{1}) {
      return nlohmann::json();
    }
    return v;
  }
}
}  // namespace

void to_json(nlohmann::json& j, const RopeScaling& s) {
  j = {{"type", s.type}};
  for_each_scaling_parameter(s, [&](std::string_view name, const auto& member) {
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
  for_each_scaling_parameter(s, [&j](std::string_view name, auto& member) {
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

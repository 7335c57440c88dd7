#include "pe/harness/contract_json.h"

#include <stdexcept>
#include <string>

namespace pe {
namespace {

template <class T>
T parsed(std::optional<T> v, const std::string& what, const std::string& text) {
  if (!v) throw std::runtime_error("contract: unknown " + what + " '" + text + "'");
  return *v;
}

DType dtype_of(const nlohmann::json& j, const char* key) {
  const std::string s = j.at(key).get<std::string>();
  return parsed(parse_dtype(s), key, s);
}

}  // namespace

void to_json(nlohmann::json& j, const Contract& c) {
  nlohmann::json layouts = nlohmann::json::array(), outputs = nlohmann::json::array();
  for (Layout l : c.layouts) layouts.push_back(std::string(to_string(l)));
  for (DType t : c.outputs) outputs.push_back(std::string(to_string(t)));
  j = {{"layouts", layouts},
       {"outputs", outputs},
       {"angle_type", std::string(to_string(c.angle_type))},
       {"compute_type", std::string(to_string(c.compute_type))},
       {"table_type", std::string(to_string(c.table_type))},
       {"max_position", c.max_position},
       {"max_base", c.max_base},
       {"max_input_abs", c.max_input_abs},
       {"depends_on", c.depends_on},
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
  for (const auto& l : j.at("layouts")) {
    const std::string s = l.get<std::string>();
    c.layouts.push_back(parsed(parse_layout(s), "layout", s));
  }
  for (const auto& t : j.at("outputs")) {
    const std::string s = t.get<std::string>();
    c.outputs.push_back(parsed(parse_dtype(s), "output type", s));
  }
  c.angle_type = dtype_of(j, "angle_type");
  c.compute_type = dtype_of(j, "compute_type");
  c.table_type = dtype_of(j, "table_type");
  j.at("max_position").get_to(c.max_position);
  j.at("max_base").get_to(c.max_base);
  j.at("max_input_abs").get_to(c.max_input_abs);
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
// A field's value, or null when the method leaves it unset.
nlohmann::json field_value(const RopeScaling& s, std::string_view name) {
  const auto optional = [](const std::optional<double>& v) {
    return v ? nlohmann::json(*v) : nlohmann::json();
  };
  if (name == "factor") return s.factor;
  if (name == "original_max_position") return s.original_max_position;
  if (name == "seq_len") return s.seq_len > 0 ? nlohmann::json(s.seq_len) : nlohmann::json();
  if (name == "beta_fast") return s.beta_fast;
  if (name == "beta_slow") return s.beta_slow;
  if (name == "truncate") return s.truncate;
  if (name == "mscale") return optional(s.mscale);
  if (name == "mscale_all_dim") return optional(s.mscale_all_dim);
  if (name == "attention_factor") return optional(s.attention_factor);
  if (name == "low_freq_factor") return s.low_freq_factor;
  if (name == "high_freq_factor") return s.high_freq_factor;
  if (name == "short_factor") return s.short_factor;
  if (name == "long_factor") return s.long_factor;
  throw std::logic_error("RopeScaling has no field " + std::string(name));
}
}  // namespace

void to_json(nlohmann::json& j, const RopeScaling& s) {
  j = {{"type", std::string(to_string(s.type))}};
  for (std::string_view name : scaling_method(s.type).reads) {
    nlohmann::json v = field_value(s, name);
    if (!v.is_null()) j[std::string(name)] = std::move(v);
  }
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
  const auto get = [&j](const char* key, auto& field) {
    if (j.contains(key)) j.at(key).get_to(field);
  };
  get("factor", s.factor);
  get("original_max_position", s.original_max_position);
  get("seq_len", s.seq_len);
  get("beta_fast", s.beta_fast);
  get("beta_slow", s.beta_slow);
  get("truncate", s.truncate);
  const auto get_optional = [&j](const char* key, std::optional<double>& field) {
    if (j.contains(key)) field = j.at(key).get<double>();
  };
  get_optional("mscale", s.mscale);
  get_optional("mscale_all_dim", s.mscale_all_dim);
  get_optional("attention_factor", s.attention_factor);
  get("low_freq_factor", s.low_freq_factor);
  get("high_freq_factor", s.high_freq_factor);
  get("short_factor", s.short_factor);
  get("long_factor", s.long_factor);
}

}  // namespace pe

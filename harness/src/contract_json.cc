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

}  // namespace pe

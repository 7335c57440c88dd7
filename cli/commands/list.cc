// pe-suite list: every registered variant with its contract.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common.h"
#include "pe/harness/contract_json.h"
#include "pe/harness/contract_words.h"
#include "pe/harness/family_traits.h"
#include "pe/pe.h"
#include "plugin_option.h"

namespace pe::cli {
namespace {

std::string join(const auto& items) {
  std::string s;
  for (const auto& i : items) {
    if (!s.empty()) s += ',';
    s += to_string(i);
  }
  return s;
}

nlohmann::json contract_json(const Variant& v) {
  const Contract& c = v.contract();
  nlohmann::json budgets = nlohmann::json::object();
  for (DType t : c.outputs) {
    budgets[std::string(to_string(t))] = {{"c0", effective_c0(c, t)}, {"c1", c.c1}, {"c1_pair", c.c1_pair}};
  }
  nlohmann::json j = c;  // pe/harness/contract_json.h: every field and coefficient
  j["name"] = v.name();
  j["family"] = std::string(to_string(v.family()));
  j["budget"] = budgets;
  if (!is_builtin(v)) j["origin"] = variant_origin(v);  // a plugin's file
  return j;
}

}  // namespace

void print_list(bool json) {
  if (json) {
    nlohmann::json all = nlohmann::json::array();
    for (const Variant* v : registry()) all.push_back(contract_json(*v));
    fmt::print("{}\n", all.dump(2));
  } else {
    fmt::print("{:<24} {:<11} {:<26} {:<17} {:<6} {:>8}  {}\n", "variant", "family", "layouts", "outputs",
               "angle", "max pos", "budget |y - exact| <=");
    for (const Variant* v : registry()) {
      const Contract& c = v->contract();
      fmt::print("{:<24} {:<11} {:<26} {:<17} {:<6} {:>8}  {}\n", v->name(), to_string(v->family()),
                 join(c.layouts), join(c.outputs), to_string(c.angle_type),
                 harness::position_words(c.max_position), harness::budget_words(*v));
    }
    for (const Variant* v : registry()) {
      if (!is_builtin(*v)) fmt::print("{} is from {}\n", v->name(), variant_origin(*v));
    }
  }
}

void add_list(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "list", "Every registered variant with its family, layouts, output types and contract");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print JSON instead of a table");
  const auto plugins = add_plugin_option(*cmd);
  cmd->callback([json, plugins, &exit_code] {
    load_plugins(*plugins);
    print_list(*json);
    exit_code = kOk;
  });
}

}  // namespace pe::cli

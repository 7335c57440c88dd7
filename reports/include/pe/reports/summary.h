// Census results as text: the terminal table `pe-suite verify` prints and the Markdown page the
// report carries. Generated from the census JSON only, never edited by hand.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace pe::reports {

// One row per instance: bands checked, worst |err| and where, worst err/budget, verdict.
std::string census_instance_table(const nlohmann::json& census);
// An exhaustive census (pe/harness/exhaustive.h's JSON, one shard or merged): per instance and band the
// positions, elements, max |err|, max ULP, the worst err/budget and where, violations, MPFR fallbacks.
std::string exhaustive_table(const nlohmann::json& exhaustive);
// What an instance's runs broke ("" when nothing: its "runs" entry shows no differing element).
std::string run_failure(const nlohmann::json& instance);
// One row per (instance, position band): worst absolute error, worst ULP, the budget there, verdict.
std::string census_table(const nlohmann::json& census);
// The same as a Markdown document with a heading and the contract of each instance.
std::string census_markdown(const nlohmann::json& census);

}  // namespace pe::reports

// verify's terminal report of failed property tests: each test's failure as the property suite wrote it
// (the property, the failure, the minimal case and its diagnosis: properties/support/case_report.h), an
// assertion GoogleTest worded itself on one line, and a rerun line narrowed to that test and its instance.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pe/harness/sweep.h"
#include "properties.h"

namespace pe::cli {

// `gtest` is GoogleTest's JSON report; `rerun` the command that reproduces the whole run ("pe-suite verify
// --plugin ... --seed N"), `glob` its --variant, `log` the property log (where GoogleTest's own wording of
// an assertion is left: the terminal gets one line of it).
std::string failed_properties(const nlohmann::json& gtest, const std::string& rerun, const std::string& glob,
                              const std::string& log);

// Every test of the run with its verdict, for a sweep's document: passed, failed (the failure's line),
// skipped, crashed or hung (the signal or time limit, the kernel and the last case).
std::vector<sweep::PropertyVerdict> property_verdicts(const PropertyRun& run);

}  // namespace pe::cli

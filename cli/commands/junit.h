// JUnit XML for CI systems: one testsuite per property suite (from GoogleTest's JSON report) and
// one "census" suite with a test case per instance.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace pe::cli {

// `gtest` may be null (no property run); `census` is the census instances array.
std::string junit_xml(const nlohmann::json& gtest, const nlohmann::json& census,
                      const std::string& rc_params);

}  // namespace pe::cli

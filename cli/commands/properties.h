// The property suite (GoogleTest + RapidCheck) run from pe-suite: the pe_props binary built beside
// this one, as a child process restricted to the selected variants ($PE_VARIANT), with a fixed
// RapidCheck seed, reporting through GoogleTest's JSON output.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace pe::cli {

struct PropertyRun {
  std::string rc_params;  // what RapidCheck ran with (the seed reproduces a failure)
  int tests = 0, failures = 0;
  nlohmann::json gtest;  // GoogleTest's JSON report
  std::string log;       // the binary's output (RapidCheck prints counterexamples there)
  // Tests during which the binary died or hung (an outside kernel's crash or endless loop): "Suite.Test:
  // signal 11 (Segmentation fault)"; the rest were rerun without them. Each counts as a failure.
  std::vector<std::string> crashed;
};

// Runs the properties of the instances matching `glob`; quick effort runs 25 cases per property,
// full 100 (RapidCheck's default). The binary's output goes to `log_path`. Empty when this build has
// no property binary.
// `filter`, when not empty, is a GoogleTest filter (--gtest_filter's positive patterns) over the tests. A
// test still running after `test_timeout_s` is hung: the binary is killed, the test named in `crashed`
// ("Suite.Test: hung: no result within N s (the binary was killed)"), and the rest run without it.
// `shard` ("I/N"; empty: all) keeps the tests of the instances in that shard of a sweep ($PE_SHARD).
std::optional<PropertyRun> run_properties(const std::string& glob, std::uint64_t seed, bool full,
                                          const std::string& log_path, const std::string& filter = "",
                                          double test_timeout_s = 600, const std::string& shard = "");

}  // namespace pe::cli

// The verification step shared by `verify` and `run`: the property suite over the selected
// variants, then the census against the exact reference.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "pe/harness/census.h"
#include "properties.h"

namespace pe::cli {

inline constexpr std::uint64_t kDefaultSeed = 20261130;

struct VerifyOptions {
  std::string glob = "*";
  std::string effort = "quick";
  std::int64_t max_position = 0;
  std::uint64_t seed = kDefaultSeed;
  bool properties = true;
  double call_timeout_s = 60;  // an outside kernel's call that does not return within it is a hang
  // A property test with no progress (no new test, no new RoPE call) for min(this, 10 × call_timeout_s) is
  // hung: a hung kernel holds the run a few minutes by default, not 10 × 60 s.
  double property_timeout_s = 180;
  std::string json_out, markdown_out, junit_out;
  std::string
      census_table_at;  // where the census's every row is, when the terminal shows only the failing ones
  std::string properties_log;   // the property binary's output; empty: beside --out (or --markdown, --junit),
                                // else in a fresh folder of $TMPDIR: one per run
  std::string property_filter;  // GoogleTest filter over the property tests; empty: all
  // A sweep (pe/harness/sweep.h): this array task's shard ("I/N"; empty: unsharded), and the census run per
  // model config from the base options (each config's scaling and form; unset: the base alone). A sweep
  // (a shard given, or more than one config) writes a sweep document to json_out.
  std::string shard;
  std::function<std::vector<census::Options>(const census::Options&)> per_config;
  nlohmann::json selection = nlohmann::json::object();  // a sweep's --layer and --layer-type, when given
};

struct VerifyResult {
  int exit_code = 0;
  nlohmann::json census;  // the census document (census::to_document); a sweep's document for a sweep
  std::optional<PropertyRun> properties;
};

// "quick" or "full"; anything else is a usage error naming --effort.
census::Effort parse_effort(const std::string& effort);

// census::run with a progress line on stderr when it is a terminal.
std::vector<census::InstanceResult> run_census(census::Options options);

VerifyResult verify(const VerifyOptions& options);

}  // namespace pe::cli

// The census: a deterministic accuracy sweep of every selected instance over a fixed grid of
// position bands (0-10^3-10^4-...-2^31, as far as each contract promises), dims, bases and output
// types, against the exact reference. A function of (instance, grid) only, so shards are disjoint.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "support/instances.h"

namespace pe::census {

enum class Effort { Quick, Full };

struct Options {
  std::string glob = "*";
  Effort effort = Effort::Quick;
  std::int64_t max_position = 0;  // 0: each contract's own largest position
  // Shard `shard_index` of `shard_count`: every shard_count-th matching instance, so shards are
  // disjoint and together cover the selection.
  std::size_t shard_index = 0, shard_count = 1;
  // Called before each instance with (done, total, instance name): progress display.
  std::function<void(std::size_t, std::size_t, const std::string&)> on_instance;
};

struct Worst {
  double value = 0;
  std::int64_t position = 0;
  std::int64_t channel = 0;
  std::int64_t dim = 0;
  double base = 0;
};

struct Band {
  std::int64_t lo = 0, hi = 0;  // positions in [lo, hi]
  std::size_t samples = 0;
  Worst max_abs;           // largest |y - exact|
  Worst max_ulp;           // largest fractional ULP error (SLEEF)
  Worst max_budget_ratio;  // largest |y - exact| / budget; > 1 breaks the contract
  double budget_at_max_abs = 0;
  double p99_abs = 0;  // 99th percentile of |y - exact| over the band's samples
};

struct InstanceResult {
  testing::Instance instance;
  std::vector<Band> bands;
  bool within_contract() const;
};

std::vector<InstanceResult> run(const Options& options);
// The instances as a JSON array (what the summary tables read).
nlohmann::json to_json(const std::vector<InstanceResult>& results);
// The census file: {"schema", "effort", "shard", "instances": to_json(...)}.
nlohmann::json to_document(const std::vector<InstanceResult>& results, const Options& options);
// The instances of several census files (shards) in one array; throws std::runtime_error when a
// file is not a census or an instance appears twice.
nlohmann::json merge_instances(const std::vector<nlohmann::json>& documents);

}  // namespace pe::census

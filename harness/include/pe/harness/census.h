// The census: a deterministic accuracy sweep of every selected instance over a fixed grid of
// position bands (0-10^3-10^4-...-2^31, as far as each contract promises), dims, bases and output
// types, against the exact reference. A function of (instance, grid) only, so shards are disjoint.
// Unscaled, each band also holds an edge cell (FamilyTraits::census_edges: a tail for every vector
// width, positions out of order, pass-through channels and the inverse direction, or the fused add
// with padding) and a run of consecutive positions computed whole and in pieces (RunCheck).
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pe/harness/instance.h"
#include "pe/harness/measure.h"
#include "pe/harness/shard.h"
#include "pe/rope_form.h"
#include "pe/rope_scaling.h"

namespace pe::census {

enum class Effort { Quick, Full };

struct Options {
  std::string glob = "*";
  Effort effort = Effort::Quick;
  std::int64_t max_position = 0;  // 0: each contract's own largest position
  // Shard `shard_index` of `shard_count`: the matching instances whose shard_of() is shard_index,
  // so shards are disjoint, together cover the selection, and agree across machines whose CPUs
  // register different Highway targets (an instance's shard depends on its name alone).
  std::size_t shard_index = 0, shard_count = 1;
  // A sweep's model config (pe/harness/sweep.h: the --hf-config path as given): recorded in the document,
  // and the shard of an instance under it is shard_of(shard_key(config, name)), so that a sweep's
  // (config, instance) pairs spread over its shards. "" outside a sweep.
  std::string config;
  // RoPE under a scaling (pe/rope_scaling.h) and HF's partial_rotary_factor (0: rotate all of head_dim,
  // else rotary_dim = int(head_dim·F)). Either restricts the census to RoPE instances (sharded after
  // that restriction). LongRoPE's lists fix rotary_dim/2: see rope_head_dims.
  RopeScaling scaling{};
  double partial_rotary_factor = 0;
  // A rotary form (pe/rope_form.h) and DeepSeek MLA's rotary offset (rotary_dim = head_dim - offset):
  // RoPE instances only, at the head dims the form fits. Multi-axis positions come from each band's:
  // t = p, and the other axes a few rows and columns back, as an image's patches are.
  RopeForm form{};
  std::int64_t rotary_offset = 0;
  // An outside kernel (not built into libpe: a plugin's, an outside project's) is swept first in a forked
  // worker, so that its crash or hang cannot take the census with it: a call that does not return within
  // this many seconds is a hang (0: outside kernels run in-process, unguarded).
  double call_timeout_s = 60;
  // Called before each instance with (done, total, instance name): progress display.
  std::function<void(std::size_t, std::size_t, const std::string&)> on_instance;
};

// Runs of consecutive positions computed whole and split at their direct rows (pe/contract.h's
// state_rows): any element whose bits differ breaks the contract.
struct RunCheck {
  std::size_t rows = 0, differing = 0;
  std::int64_t first_position = -1;  // of the first differing element
};

struct InstanceResult {
  harness::Instance instance;
  std::vector<harness::BandStats> bands;  // max_ratio > 1 breaks the contract
  RunCheck runs;
  // What stopped the kernel's sweep: its worker died or hung (the plugin, the kernel, the signal or the time
  // limit, the last case started), or a call wrote outside its rows (pe/kernel_guard.h: where, and the
  // case). "" when nothing did; otherwise bands hold nothing and the contract is broken.
  std::string fault;
  bool within_contract() const;
};

// A band of a census file's instance, as census.cc writes it and the reports read it: "lo", "hi", "samples",
// the worst elements {"value", "position", "channel", "dim", "base"} by absolute error, ULP and err/budget,
// "budget_at_max_abs", the 99th percentiles, "undecidable" and the band's "verdict" word. A kernel's NaN or
// infinity is written as null and read back as NaN; reading needs "lo", "hi" and "verdict" (an absent number
// reads as NaN, an absent count or position as 0).
struct Worst {
  double value = 0;
  std::int64_t position = 0, channel = 0, dim = 0;
  double base = 0;
};
struct Band {
  std::int64_t lo = 0, hi = 0;
  std::size_t samples = 0, undecidable = 0;
  Worst max_abs, max_ulp, max_budget_ratio;
  double budget_at_max_abs = 0, p99_abs = 0, p99_ulp = 0;
  std::string verdict;  // "pass", "FAIL" or "undecidable"
  Band() = default;
  explicit Band(const harness::BandStats& b);
};
void to_json(nlohmann::json& j, const Worst& w);
void from_json(const nlohmann::json& j, Worst& w);
void to_json(nlohmann::json& j, const Band& b);
void from_json(const nlohmann::json& j, Band& b);

// The shard an instance belongs to: FNV-1a of its name modulo shard_count.
std::size_t shard_of(const std::string& instance_name, std::size_t shard_count);
// What shard_of() hashes for an instance under a sweep's config: the name alone without one.
std::string shard_key(const std::string& config, const std::string& instance_name);
// The names of the instances `options` select before sharding (every shard's census covers part of them).
std::vector<std::string> selection(const Options& options);

// Throws InvalidArgument naming the scaling parameter (or partial_rotary_factor) the plan rejects.
std::vector<InstanceResult> run(const Options& options);
// Whether `options` select RoPE instances only (a scaling or a partial rotary factor given).
bool rope_only(const Options& options);
// The head dims the RoPE sweep uses: the grid's (128 quick; 64, 128, 1024 full), under LongRoPE only
// those whose rotary_dim/2 equals the length of short_factor. Throws InvalidArgument naming
// short_factor when none does, and partial_rotary_factor when it fits no head dim of the grid.
std::vector<std::int64_t> rope_head_dims(const Options& options);
// The sinusoidal grid's dims (128 quick; 64, 128, 1024 full).
std::vector<std::int64_t> grid_dims(Effort effort);
// head_dim, or int(head_dim·partial_rotary_factor) when one is given (throws InvalidArgument naming it).
std::int64_t rotary_dim_of(const Options& options, std::int64_t head_dim);
// The instances as a JSON array (what the summary tables read).
nlohmann::json to_json(const std::vector<InstanceResult>& results);
// The census file: {"schema", "effort", "variant", "shard", ["config",] "rope_scaling", ["rope_form",]
// "instances": to_json(...)}; "rope_form" ({mrope_section, mrope_layout} or {vision}, and rotary_offset) when
// not text; "rope_scaling" holds "type" ("none", "yarn", ...), every parameter that method reads, and
// "partial_rotary_factor" when one was given.
nlohmann::json to_document(const std::vector<InstanceResult>& results, const Options& options);
// The instances of several census files (shards) in one array; throws std::runtime_error when a
// file is not a census, an instance appears twice, the files are of different configs, or shards of an
// N-way census (N > 1) are missing or given twice (naming them).
nlohmann::json merge_instances(const std::vector<nlohmann::json>& documents);
// The RoPE scaling the census files were measured under ({"type": "none"} when absent); throws
// std::runtime_error when they differ (merge_instances refuses such files too).
nlohmann::json rope_scaling_of(const std::vector<nlohmann::json>& documents);

}  // namespace pe::census

// A sweep: verify or census over several model configs (--hf-config files) × the selected instances
// (outside plugins' included), split into array tasks by a stable hash. Each (config, instance) pair of
// the census belongs to shard_of(shard_key(config, instance)); each property test to its instance's
// shard (pe-suite verify sets $PE_SHARD for the property binary). A task writes one sweep document; merge()
// joins the tasks' documents into the one an unsharded run writes, refusing a missing or repeated shard
// and documents of different sweeps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pe::sweep {

inline constexpr const char* kSchema = "pe-suite/sweep/1";

// What every task of one sweep shares, and its own shard.
struct Header {
  std::string variant, effort;
  std::int64_t max_position = 0;
  std::vector<std::string> configs;  // the --hf-config paths as given ("" for the flags alone)
  std::vector<std::string> plugins;  // the loaded plugins' file names
  bool properties = false;           // verify ran the property suite (its seed in `seed`)
  std::uint64_t seed = 0;
  std::size_t shard_index = 0, shard_count = 1;
  nlohmann::json selection = nlohmann::json::object();  // --layer, --layer-type, --property when given
};

// A property test's verdict: "passed", "failed", "skipped", "crashed" or "hung", and its message.
struct PropertyVerdict {
  std::string test, result, message;
};

// {"schema", "variant", "effort", "max_position", "configs", "plugins", "selection" (what else chose the
// run's work: layer, layer type, property filter), ["seed", "properties": {test: {"result", ["message"]}},]
// "shard": "I/N", "census": [census documents, one per config, in `configs` order, each with "config" and
// "selected"]}.
nlohmann::json document(const Header& header, const std::vector<nlohmann::json>& census_documents,
                        const std::vector<PropertyVerdict>& properties);

// The tasks' documents as one: every shard 0..N-1 exactly once, the same header otherwise (else
// std::runtime_error naming the missing or repeated shard, or the field that differs). Instances sorted
// by name within each config; a test run by several shards (one not bound to an instance) keeps the
// worst result: failed, crashed or hung over passed over skipped. "shard" becomes "merged", with
// "merged_from": N. A single unsharded document merges into itself.
// `sources` names the documents in messages (their files); every field merge() reads is checked first.
// A census document's "selected" (the run's instance count under that config before sharding) must equal
// the merged count, and each instance must belong to the task that holds it.
nlohmann::json merge(const std::vector<nlohmann::json>& shards, const std::vector<std::string>& sources = {});

// The verdicts alone, for comparing runs: {"census": {config: {instance: "within" | "outside" |
// "fault"}}, "properties": {test: result}}.
nlohmann::json verdicts(const nlohmann::json& merged);

// The merged sweep as Markdown: one table per config (every instance and its verdict) and the failing
// property tests.
std::string markdown(const nlohmann::json& merged);

}  // namespace pe::sweep

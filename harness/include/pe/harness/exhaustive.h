// The exhaustive census: every position of a range, every channel, of one dim and base, for the
// selected sinusoidal tables and RoPE rotations of unit pairs (the (cos, sin) table), against the
// reference's fast exact path (MPFR where it cannot decide an element's verdict; counted). The range
// is split into shards by position (--shard i/n), each shard's result carries its range, and
// merge() joins shards, refusing gaps and overlaps. No sampling: the claim "within the contract at
// every position below 2^31" is the result.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pe/harness/instance.h"

namespace pe::exhaustive {

inline constexpr const char* kSchema = "pe-suite/exhaustive/1";

struct Options {
  std::string glob = "sinusoidal.exact";
  std::int64_t begin = 0, end = std::int64_t{1} << 31;  // positions [begin, end)
  std::int64_t dim = 128;
  double base = 1e4;
  std::size_t shard_index = 0, shard_count = 1;  // this shard: the i-th of n equal parts of [begin, end)
  std::size_t threads = 0;                       // 0: every hardware thread
  // (positions done, positions total) now and then, from the calling thread.
  std::function<void(std::int64_t, std::int64_t)> on_progress;
  // Checkpoints: the shard is swept in segments of `checkpoint_every` positions (rounded up to a multiple
  // of the kernel chunk, at absolute multiples of it), and after each segment but the last the result so
  // far goes to on_checkpoint as to_json's document plus "checkpoint": {"done_until": p}. 0: one segment.
  std::int64_t checkpoint_every = 0;
  std::function<void(const nlohmann::json&)> on_checkpoint;
  // A checkpoint document to continue from: the same instances, dim, base, range and shard, or
  // InvalidArgument naming "resume". The result is then the uninterrupted run's, but for its seconds.
  nlohmann::json resume;
};

// The largest value of a statistic and where it was met (the lowest position, then channel, on ties:
// the same for any thread count).
struct Worst {
  double value = 0;
  std::int64_t position = -1, channel = -1;
  double y = 0, exact = 0, budget = 0;
};

struct Band {
  std::int64_t lo = 0, hi = 0;  // positions [lo, hi)
  std::uint64_t elements = 0, violations = 0;
  Worst max_abs, max_ulp, max_ratio;
};

struct InstanceResult {
  harness::Instance instance;
  std::int64_t begin = 0, end = 0;  // the positions checked: the shard's range within the contract's
  std::vector<Band> bands;
  std::uint64_t mpfr_fallbacks = 0;  // elements whose verdict MPFR decided
  bool within_contract() const;
};

struct Result {
  Options options;                              // with the shard's own range in begin/end
  std::int64_t range_begin = 0, range_end = 0;  // the whole range the shards split
  std::vector<InstanceResult> instances;
  double seconds = 0;
};

// The shard's part of [begin, end): [begin + L·i/n, begin + L·(i+1)/n).
std::pair<std::int64_t, std::int64_t> shard_range(std::int64_t begin, std::int64_t end, std::size_t index,
                                                  std::size_t count);

// Throws InvalidArgument naming the option (range, dim, base, shard) for a bad one, and for a glob that
// selects no sinusoidal or RoPE instance.
Result run(const Options& options);

nlohmann::json to_json(const Result& result);
// Shards of one run (same instances, dim, base and whole range) joined: their ranges must tile the
// whole range without a gap or an overlap. Throws std::runtime_error naming the gap or overlap, or a
// checkpoint (an unfinished shard) among the files.
nlohmann::json merge(const std::vector<nlohmann::json>& shards);

}  // namespace pe::exhaustive

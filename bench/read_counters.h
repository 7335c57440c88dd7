// The counters of a check benchmark (issue 53): items and bytes per second, ns_per_element, and
// read_fraction: the bytes read per second over the read limit of the same buffers in the same seconds
// (ReadWindow), with that limit as read_limit_gbps.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <initializer_list>
#include <span>
#include <vector>

namespace pe::bench {

// The read limit of a check's own buffers, sampled inside its benchmark's loop: after each iteration, one
// load-only pass over them (machine_limits.h's read_seconds), untimed, so that the limit and the check are
// means over the same seconds. Timed once after the loop, the limit read this machine at other moments than
// the check: a process's five ratios spread about twice as wide (docs/speed.md, "Fifteenth round").
class ReadWindow {
 public:
  explicit ReadWindow(std::initializer_list<std::span<const std::byte>> read) : read_(read) {}
  // time_pass() with the benchmark's timer paused around it; call last in each iteration.
  void sample(benchmark::State& state);
  // One pass over the buffers, timed (passes over a few KiB, shorter than reading the clock, doubled until
  // they take 20 µs together, and that many counted).
  void time_pass();
  std::size_t bytes() const;
  std::size_t passes() const { return passes_; }
  double seconds() const { return seconds_; }
  // Bytes per second over every pass so far (0 before the first).
  double bytes_per_second() const;

 private:
  std::vector<std::span<const std::byte>> read_;
  double seconds_ = 0;
  std::size_t passes_ = 0;
};

void check_read_counters(benchmark::State& state, std::size_t elements, const ReadWindow& window);

}  // namespace pe::bench

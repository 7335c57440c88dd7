// The counters of a check benchmark (issue 53): items and bytes per second, ns_per_element, and
// read_fraction: the check's bytes read per second over the read limit of the same buffers in the same
// seconds (ReadWindow), with that limit as read_limit_gbps.
#pragma once

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <span>
#include <string>
#include <vector>

#include "grid.h"
#include "pace.h"

namespace pe::bench {

// The read limit of a check's own buffers, sampled inside its benchmark's loop: after each iteration, one
// load-only pass over them (machine_limits.h's read_seconds), untimed by the benchmark. The window times the
// iterations' checks and its passes on one clock (steady_clock, wall time), so that read_fraction is the
// mean pass over the mean check of the same seconds. Timed once after the loop, the limit read this machine
// at other moments than the check: a process's five ratios spread about twice as wide (docs/speed.md,
// "Fifteenth round").
class ReadWindow {
 public:
  // Built just before the loop: the first check's time runs from here.
  explicit ReadWindow(std::initializer_list<std::span<const std::byte>> read);
  // The iteration's check timed (since the last sample), then time_pass() with the benchmark's timer paused
  // around it; call last in each iteration. Nothing once the benchmark has met an error (SkipWithError: its
  // timer may no longer be paused).
  void sample(benchmark::State& state);
  // One pass over the buffers, timed: a pass shorter than 20 µs (buffers under about half a MiB) is repeated,
  // the count doubled until the passes take 20 µs together (starting from the last call's count), and
  // counted.
  void time_pass();
  std::size_t bytes() const;
  std::size_t passes() const { return passes_; }
  double seconds() const { return seconds_; }  // the passes'
  // Bytes per second over every pass so far (0 before the first).
  double bytes_per_second() const;
  // The checks' bytes per second over the passes': the mean pass over the mean check (0 before a sample).
  double read_fraction() const;

 private:
  using Clock = std::chrono::steady_clock;
  std::vector<std::span<const std::byte>> read_;
  double seconds_ = 0, check_seconds_ = 0;
  std::size_t passes_ = 0, samples_ = 0, last_passes_ = 1;
  Clock::time_point mark_;
};

void check_read_counters(benchmark::State& state, std::size_t elements, const ReadWindow& window);

// A check benchmark's loop: check() each iteration (a check::Report), the benchmark failed with
// failure(report) where that is not empty; the window over `read` sampled after each iteration; then the
// pace (grid.h's record_pace) and check_read_counters over `elements`. Returns the window (its bytes).
template <class Check, class Failure>
ReadWindow check_loop(benchmark::State& state, std::size_t elements,
                      std::initializer_list<std::span<const std::byte>> read, const Check& check,
                      const Failure& failure) {
  const double pace_before = pace_ns();
  ReadWindow window(read);
  for (auto _ : state) {
    const auto report = check();
    if (const std::string why = failure(report); !why.empty()) state.SkipWithError(why.c_str());
    benchmark::DoNotOptimize(report.text.data());
    window.sample(state);
  }
  record_pace(state, pace_before);
  check_read_counters(state, elements, window);
  return window;
}

// check_loop's failure where the data is a correct kernel's: the check must pass.
inline constexpr auto must_pass = [](const auto& report) {
  return report.passed ? std::string() : std::string("the check failed a correct kernel");
};

}  // namespace pe::bench

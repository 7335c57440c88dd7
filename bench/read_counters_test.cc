#include "read_counters.h"

#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "machine_limits.h"

namespace pe::bench {
namespace {

TEST(ReadWindow, NothingBeforeAPass) {
  const std::vector<std::byte> a(4096);
  const ReadWindow w({a});
  EXPECT_EQ(w.bytes(), 4096u);
  EXPECT_EQ(w.passes(), 0u);
  EXPECT_EQ(w.bytes_per_second(), 0.0);
  EXPECT_EQ(w.read_fraction(), 0.0);
}

// A pass reads every buffer: with a 64 MiB one among them, one pass takes far over 20 µs (a pass that read
// only the 64-byte one would be repeated), whichever comes first.
TEST(ReadWindow, APassReadsEveryBuffer) {
  const std::vector<std::byte> small(64), large(std::size_t{64} << 20);
  ReadWindow first({small, large}), last({large, small});
  for (ReadWindow* w : {&first, &last}) {
    EXPECT_EQ(w->bytes(), (std::size_t{64} << 20) + 64);
    w->time_pass();
    EXPECT_EQ(w->passes(), 1u);
    EXPECT_EQ(w->bytes_per_second(), static_cast<double>(w->bytes()) / w->seconds());
  }
}

TEST(ReadWindow, RepeatsAPassShorterThan20Microseconds) {
  const std::vector<std::byte> a(64);
  ReadWindow w({a});
  w.time_pass();
  // 64 bytes load in nanoseconds: the passes are doubled until they take 20 µs together, and so many counted.
  EXPECT_GT(w.passes(), 1u);
  EXPECT_GE(w.seconds(), 20e-6);
  EXPECT_EQ(w.bytes_per_second(), 64.0 * static_cast<double>(w.passes()) / w.seconds());
}

// The window inside Google Benchmark's loop, as the check benchmarks use it: a "check" that reads its buffer
// twice reads at under the limit of one pass (read_fraction in (0, 1): two passes take longer than one, and
// the means over 16 iterations absorb a pass that a neighbour slowed, as one did 2.6-fold in 4 under
// ctest -j2); a benchmark that fails in its loop (SkipWithError, then sample()) is reported, not aborted.
struct Captured : benchmark::BenchmarkReporter {
  std::map<std::string, Run> runs;
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& report) override {
    for (const Run& r : report) runs[r.benchmark_name()] = r;
  }
};

TEST(ReadWindow, InABenchmarkLoop) {
  const std::vector<std::byte> data(std::size_t{16} << 20);
  const std::span<const std::byte> buffers[] = {data};
  benchmark::RegisterBenchmark("read_window_test/twice", [&](benchmark::State& state) {
    ReadWindow window({data});
    for (auto _ : state) {
      benchmark::DoNotOptimize(read_seconds(buffers, 2));
      window.sample(state);
    }
    check_read_counters(state, data.size(), window);
  })->Iterations(16);
  benchmark::RegisterBenchmark("read_window_test/fails", [&](benchmark::State& state) {
    ReadWindow window({data});
    for (auto _ : state) {
      state.SkipWithError("a failing check");
      window.sample(state);
    }
    check_read_counters(state, data.size(), window);
  })->Iterations(3);
  Captured captured;
  benchmark::RunSpecifiedBenchmarks(&captured, "read_window_test/");
  ASSERT_EQ(captured.runs.count("read_window_test/twice/iterations:16"), 1u);
  const auto& twice = captured.runs.at("read_window_test/twice/iterations:16");
  EXPECT_FALSE(twice.error_occurred);
  EXPECT_GT(twice.counters.at("read_fraction").value, 0.0);
  EXPECT_LT(twice.counters.at("read_fraction").value, 1.0);
  EXPECT_GT(twice.counters.at("read_limit_gbps").value, 0.0);
  ASSERT_EQ(captured.runs.count("read_window_test/fails/iterations:3"), 1u);
  EXPECT_TRUE(captured.runs.at("read_window_test/fails/iterations:3").error_occurred);
}

}  // namespace
}  // namespace pe::bench

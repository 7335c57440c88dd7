#include "read_counters.h"

#include <cstdint>

#include "machine_limits.h"

namespace pe::bench {

void ReadWindow::sample(benchmark::State& state) {
  state.PauseTiming();
  time_pass();
  state.ResumeTiming();
}

void ReadWindow::time_pass() {
  constexpr double kLeast = 20e-6;
  constexpr std::size_t kMostPasses = std::size_t{1} << 24;
  std::size_t passes = 1;
  double seconds = read_seconds(read_, passes);
  while (seconds < kLeast && passes < kMostPasses) seconds = read_seconds(read_, passes *= 2);
  seconds_ += seconds;
  passes_ += passes;
}

std::size_t ReadWindow::bytes() const {
  std::size_t bytes = 0;
  for (const auto& b : read_) bytes += b.size();
  return bytes;
}

double ReadWindow::bytes_per_second() const {
  return passes_ == 0 ? 0.0 : static_cast<double>(bytes()) * static_cast<double>(passes_) / seconds_;
}

void check_read_counters(benchmark::State& state, std::size_t elements, const ReadWindow& window) {
  const std::size_t bytes = window.bytes();
  const double limit = window.bytes_per_second();
  const auto iters = static_cast<double>(state.iterations());
  using benchmark::Counter;
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(elements));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.counters["ns_per_element"] =
      Counter(iters * static_cast<double>(elements) * 1e-9, Counter::kIsRate | Counter::kInvert);
  state.counters["read_fraction"] =
      Counter(limit > 0 ? iters * static_cast<double>(bytes) / limit : 0.0, Counter::kIsRate);
  state.counters["read_limit_gbps"] = limit * 1e-9;
}

}  // namespace pe::bench

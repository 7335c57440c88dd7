#include "read_counters.h"

#include <cstdint>

#include "machine_limits.h"

namespace pe::bench {

ReadWindow::ReadWindow(std::initializer_list<std::span<const std::byte>> read)
    : read_(read), mark_(Clock::now()) {}

void ReadWindow::sample(benchmark::State& state) {
  if (state.error_occurred()) return;
  check_seconds_ += std::chrono::duration<double>(Clock::now() - mark_).count();
  ++samples_;
  state.PauseTiming();
  time_pass();
  state.ResumeTiming();
  mark_ = Clock::now();
}

void ReadWindow::time_pass() {
  constexpr double kLeast = 20e-6;
  constexpr std::size_t kMostPasses = std::size_t{1} << 24;
  std::size_t passes = last_passes_;
  double seconds = read_seconds(read_, passes);
  while (seconds < kLeast && passes < kMostPasses) seconds = read_seconds(read_, passes *= 2);
  seconds_ += seconds;
  passes_ += passes;
  last_passes_ = passes;
}

std::size_t ReadWindow::bytes() const {
  std::size_t bytes = 0;
  for (const auto& b : read_) bytes += b.size();
  return bytes;
}

double ReadWindow::bytes_per_second() const {
  return passes_ == 0 ? 0.0 : static_cast<double>(bytes()) * static_cast<double>(passes_) / seconds_;
}

double ReadWindow::read_fraction() const {
  if (samples_ == 0 || passes_ == 0 || !(check_seconds_ > 0)) return 0.0;
  return (seconds_ / static_cast<double>(passes_)) / (check_seconds_ / static_cast<double>(samples_));
}

void check_read_counters(benchmark::State& state, std::size_t elements, const ReadWindow& window) {
  const std::size_t bytes = window.bytes();
  const auto iters = static_cast<double>(state.iterations());
  using benchmark::Counter;
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(elements));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.counters["ns_per_element"] =
      Counter(iters * static_cast<double>(elements) * 1e-9, Counter::kIsRate | Counter::kInvert);
  state.counters["read_fraction"] = window.read_fraction();
  state.counters["read_limit_gbps"] = window.bytes_per_second() * 1e-9;
}

}  // namespace pe::bench

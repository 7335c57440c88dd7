#include "read_counters.h"

#include <cstdint>

#include "machine_limits.h"

namespace pe::bench {

void check_read_counters(benchmark::State& state, std::size_t elements, std::size_t bytes) {
  const Limits lim = limits_for(bytes);
  const auto iters = static_cast<double>(state.iterations());
  using benchmark::Counter;
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(elements));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.counters["ns_per_element"] =
      Counter(iters * static_cast<double>(elements) * 1e-9, Counter::kIsRate | Counter::kInvert);
  state.counters["read_fraction"] =
      Counter(iters * static_cast<double>(bytes) / lim.read_bytes_per_second, Counter::kIsRate);
}

}  // namespace pe::bench

#include "read_counters.h"

#include <cstdint>

#include "alloc_counter.h"
#include "machine_limits.h"

namespace pe::bench {

void check_read_counters(benchmark::State& state, std::size_t elements,
                         std::initializer_list<std::span<const std::byte>> read) {
  std::size_t bytes = 0;
  for (const auto& b : read) bytes += b.size();
  const double limit = [&] {
    Uncounted setup;
    return read_bytes_per_second_of(read);
  }();
  const auto iters = static_cast<double>(state.iterations());
  using benchmark::Counter;
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(elements));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.counters["ns_per_element"] =
      Counter(iters * static_cast<double>(elements) * 1e-9, Counter::kIsRate | Counter::kInvert);
  state.counters["read_fraction"] = Counter(iters * static_cast<double>(bytes) / limit, Counter::kIsRate);
  state.counters["read_limit_gbps"] = limit * 1e-9;
}

}  // namespace pe::bench

// The counters of a check benchmark (issue 53): items and bytes per second, ns_per_element and
// read_fraction, the bytes read per second over the machine's read limit at the same bytes
// (machine_limits.h), measured in the same run.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>

namespace pe::bench {

void check_read_counters(benchmark::State& state, std::size_t elements, std::size_t bytes);

}  // namespace pe::bench

// The counters of a check benchmark (issue 53): items and bytes per second, ns_per_element, and
// read_fraction: the bytes read per second over the read limit of the same buffers (machine_limits.h's
// load-only sum over them, timed right after the benchmark's loop in the same process), with that limit
// as read_limit_gbps.
#pragma once

#include <benchmark/benchmark.h>

#include <cstddef>
#include <initializer_list>
#include <span>

namespace pe::bench {

void check_read_counters(benchmark::State& state, std::size_t elements,
                         std::initializer_list<std::span<const std::byte>> read);

}  // namespace pe::bench

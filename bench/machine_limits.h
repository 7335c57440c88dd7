// The machine's own limits, measured in the same run: a store-only fill and a copy of n bytes, on
// buffers touched beforehand. Each kernel benchmark reports the fraction of these it reaches.
#pragma once

#include <cstddef>

namespace pe::bench {

struct Limits {
  double fill_bytes_per_second = 0;
  double copy_bytes_per_second = 0;  // bytes written per second (as many are read)
};

// Median of repeated timings at this size; cached per size for the whole run.
Limits limits_for(std::size_t bytes);

// Registers limits/fill/<bytes> and limits/copy/<bytes> as benchmarks of their own, for the record.
void register_limit_benchmarks(std::size_t bytes);

}  // namespace pe::bench

// The machine's own limits, measured in the same run: a store-only fill and a copy of n bytes, on
// buffers touched beforehand, each both ways: the C library's memset/memcpy and streaming stores
// (stream_stores.h). Each kernel benchmark reports the fraction it reaches of the faster fill and copy. A
// load-only read (a sum over the bytes) is the floor of a reader such as `check`: a check benchmark times it
// over its own buffers, inside its loop (read_seconds below; read_counters.h's ReadWindow).
#pragma once

#include <cstddef>
#include <span>

namespace pe::bench {

struct Limits {
  double fill_bytes_per_second = 0;  // the faster of the two fills below
  double copy_bytes_per_second = 0;  // bytes written per second (as many are read); the faster copy
  bool fill_streams = false, copy_streams = false;  // whether streaming stores were the faster
  double memset_bytes_per_second = 0, stream_fill_bytes_per_second = 0;
  double memcpy_bytes_per_second = 0, stream_copy_bytes_per_second = 0;
};

// Median of repeated timings at this size, `threads` threads each writing its own slice (a
// pe::ThreadPool, as the kernels' own); cached per size and thread count for the whole run.
Limits limits_for(std::size_t bytes, int threads = 1);

// Seconds of `passes` passes of limits/read's load-only sum over exactly these buffers, one after another,
// timed together: a check's floor on the bytes it reads, not on a fresh buffer of the same size (on this
// virtual machine eight 64 MiB buffers of one process read at 24 to 37 GB/s: docs/speed.md, "Fourteenth
// round").
double read_seconds(std::span<const std::span<const std::byte>> buffers, std::size_t passes);

// Registers limits/fill, limits/fill_stream, limits/copy, limits/copy_stream and limits/read
// /<bytes>[/threads:N] as benchmarks of their own, for the record.
void register_limit_benchmarks(std::size_t bytes, int threads = 1);

}  // namespace pe::bench

// Non-temporal (streaming) stores for outputs larger than the caches. A table written with normal
// stores beyond the last-level cache pays a read-for-ownership of every line it writes; streaming
// stores skip it (on this machine 8.8 GB/s with memset, 19 GB/s streamed: docs/speed.md). Kernels that
// support it (sinusoidal.exact's float32 table) stream an output of at least this many bytes and use
// normal stores below it, where the data is likely read again from the cache. Results are the same
// bits either way.
#pragma once

#include <cstddef>

namespace pe {

// The output size from which kernels stream; process-wide. The default is measured (docs/speed.md);
// SIZE_MAX turns streaming off, 0 streams everything (tests).
std::size_t streaming_threshold() noexcept;
void set_streaming_threshold(std::size_t bytes) noexcept;

}  // namespace pe

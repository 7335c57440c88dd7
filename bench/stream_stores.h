// Fill and copy with non-temporal (streaming) stores, Highway `Stream` on the best target the CPU
// has: the write bandwidth of a buffer larger than the caches without the read-for-ownership that
// normal stores pay. The C library's memset and memcpy need not use them (glibc's memset here does not,
// even for 512 MiB), so the machine's fill and copy limits are measured both ways (machine_limits.h).
#pragma once

#include <cstddef>

namespace pe::bench {

// dst[0, bytes) = value / src[0, bytes): the aligned middle by streaming stores, the unaligned ends by
// memset/memcpy; fenced (hwy::FlushStream) before returning, so later loads see the data.
void stream_fill(void* dst, std::size_t bytes, unsigned char value);
void stream_copy(void* dst, const void* src, std::size_t bytes);

}  // namespace pe::bench

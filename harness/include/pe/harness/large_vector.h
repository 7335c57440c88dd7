// Large arrays whose first touch is cheap: a fresh 4 KiB page's first touch costs microseconds on a virtual
// machine (about 12 µs on the machines this project runs on), a 2 MiB page's about 500 times less per byte.
#pragma once

#include <cstddef>
#include <vector>

namespace pe::harness {

// v.reserve(n), with transparent huge pages asked for on the new allocation's 2 MiB-aligned part before
// anything touches it. Only a hint: the contents and the size are reserve's.
void reserve_large(std::vector<double>& v, std::size_t n);

// A buffer of at least n doubles (its size() is what it holds room for; its contents are unspecified):
// from a small per-thread pool of buffers already touched where one is large enough (a check run again
// reuses the last one's percentile tails instead of faulting fresh pages in, ~1.5 µs per 4 KiB), else new.
std::vector<double> take_large(std::size_t n);
// Gives a buffer back to the pool (kept while the pool has room: eight, 64 MiB in all).
void recycle_large(std::vector<double>&& v);

}  // namespace pe::harness

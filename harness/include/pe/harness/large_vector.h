// Large arrays whose first touch is cheap: a fresh 4 KiB page's first touch costs microseconds on a virtual
// machine (about 12 µs on the machines this project runs on), a 2 MiB page's about 500 times less per byte.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace pe::harness {

// An allocator whose resize() leaves new doubles as they are (default-initialised, not zeroed): a buffer that
// is written before it is read need not have its pages touched twice (once by the zeroing, once by its use),
// nor touched at all where it is never used (room taken ahead).
template <class T>
struct UninitAllocator : std::allocator<T> {
  using value_type = T;
  template <class U>
  struct rebind {
    using other = UninitAllocator<U>;
  };
  UninitAllocator() = default;
  template <class U>
  UninitAllocator(const UninitAllocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)
  template <class U>
  void construct(U* p) noexcept {
    ::new (static_cast<void*>(p)) U;
  }
  template <class U, class... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};
template <class T, class U>
bool operator==(const UninitAllocator<T>&, const UninitAllocator<U>&) noexcept {
  return true;
}

// A buffer of doubles whose size() is what it holds room for, its contents unspecified until written.
using LargeVector = std::vector<double, UninitAllocator<double>>;

// v.reserve(n), with transparent huge pages asked for on the new allocation's 2 MiB-aligned part before
// anything touches it. Only a hint: the contents and the size are reserve's.
void reserve_large(std::vector<double>& v, std::size_t n);
void reserve_large(LargeVector& v, std::size_t n);

// A buffer of at least n doubles (its size() is what it holds room for; its contents are unspecified, and
// a new one's pages untouched): from a small per-thread pool of buffers already touched where one is large
// enough (a check run again reuses the last one's percentile tails instead of faulting fresh pages in, ~1.5
// µs per 4 KiB), else new.
LargeVector take_large(std::size_t n);
// Gives a buffer back to the pool (kept while the pool has room: eight, 64 MiB in all).
void recycle_large(LargeVector&& v);

}  // namespace pe::harness

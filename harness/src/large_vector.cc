#include "pe/harness/large_vector.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

namespace pe::harness {

namespace {
template <class Vector>
void reserve_huge(Vector& v, std::size_t n) {
  if (n <= v.capacity()) return;
  v.reserve(n);  // allocated, not yet touched past the old size
#ifdef MADV_HUGEPAGE
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<std::uintptr_t>(v.data() + v.size());
  const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(v.data()) + n * sizeof(double);
  if (end > first + kHuge)
    madvise(reinterpret_cast<void*>(first), (end - first) & ~(kHuge - 1), MADV_HUGEPAGE);
#endif
}
}  // namespace

void reserve_large(std::vector<double>& v, std::size_t n) { reserve_huge(v, n); }
void reserve_large(LargeVector& v, std::size_t n) { reserve_huge(v, n); }

namespace {
constexpr std::size_t kPoolBuffers = 8, kPoolBytes = std::size_t{64} << 20;
std::vector<LargeVector>& pool() {
  thread_local std::vector<LargeVector> buffers;
  return buffers;
}
}  // namespace

LargeVector take_large(std::size_t n) {
  auto& p = pool();
  auto best = p.end();
  for (auto it = p.begin(); it != p.end(); ++it)
    if (it->size() >= n && (best == p.end() || it->size() < best->size())) best = it;
  if (best != p.end()) {
    LargeVector v = std::move(*best);
    p.erase(best);
    return v;
  }
  LargeVector v;
  reserve_large(v, n);
  v.resize(n);  // not zeroed (UninitAllocator): its pages are touched as they are written
  return v;
}

void recycle_large(LargeVector&& v) {
  if (v.empty()) return;
  const auto bytes_of = [](const LargeVector& b) { return b.size() * sizeof(double); };
  if (bytes_of(v) > kPoolBytes) return;  // freed
  // The pool keeps the largest buffers it has room for: a tail's growth hands back ever larger ones, and the
  // small ones it leaves must not crowd out the last (the one a check run again wants first).
  auto& p = pool();
  p.push_back(std::move(v));
  std::size_t bytes = 0;
  for (const auto& b : p) bytes += bytes_of(b);
  while (p.size() > kPoolBuffers || bytes > kPoolBytes) {
    const auto smallest = std::min_element(p.begin(), p.end(),
                                           [&](const auto& a, const auto& b) { return a.size() < b.size(); });
    bytes -= bytes_of(*smallest);
    p.erase(smallest);  // freed
  }
}

}  // namespace pe::harness

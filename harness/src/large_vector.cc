#include "pe/harness/large_vector.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>

namespace pe::harness {

void reserve_large(std::vector<double>& v, std::size_t n) {
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

namespace {
constexpr std::size_t kPoolBuffers = 8, kPoolBytes = std::size_t{64} << 20;
std::vector<std::vector<double>>& pool() {
  thread_local std::vector<std::vector<double>> buffers;
  return buffers;
}
}  // namespace

std::vector<double> take_large(std::size_t n) {
  auto& p = pool();
  auto best = p.end();
  for (auto it = p.begin(); it != p.end(); ++it)
    if (it->size() >= n && (best == p.end() || it->size() < best->size())) best = it;
  if (best != p.end()) {
    std::vector<double> v = std::move(*best);
    p.erase(best);
    return v;
  }
  std::vector<double> v;
  reserve_large(v, n);
  v.resize(n);
  return v;
}

void recycle_large(std::vector<double>&& v) {
  if (v.empty()) return;
  auto& p = pool();
  std::size_t bytes = v.size() * sizeof(double);
  for (const auto& b : p) bytes += b.size() * sizeof(double);
  if (p.size() >= kPoolBuffers || bytes > kPoolBytes) return;  // freed
  p.push_back(std::move(v));
}

}  // namespace pe::harness

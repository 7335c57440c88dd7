#include "pe/harness/large_vector.h"

#include <sys/mman.h>

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

}  // namespace pe::harness

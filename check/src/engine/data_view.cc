// DataView's two forms (check.h): doubles, or the caller's elements in place.
#include <cstring>

#include "pe/check/check.h"
#include "pe/check/npy.h"

namespace pe::check {

std::size_t DataView::count() const noexcept {
  std::size_t n = 1;
  for (std::size_t s : shape) n *= s;
  return n;
}

harness::Values DataView::read() const {
  if (typed != nullptr) return {typed, dtype, count()};
  return values;
}

DataView as_doubles(const DataView& v, std::vector<double>& storage) {
  if (v.typed == nullptr) return v;
  const std::size_t n = v.count();
  const harness::Values in = v.read();
  resize_large(storage, n);
  for (std::size_t i = 0; i < n; ++i) storage[i] = in[i];
  DataView out = v;
  out.values = storage;
  out.typed = nullptr;
  return out;
}

}  // namespace pe::check

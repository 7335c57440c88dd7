// An owned buffer of any output type, read and written as double, so that properties and the census
// are written once for every type.
#pragma once

#include <cstddef>
#include <cstring>
#include <new>
#include <span>
#include <vector>

#include "pe/half.h"
#include "pe/types.h"

namespace pe::harness {

// Cache-line aligned storage: offset 0 is what a framework's allocator hands a kernel (kernels take
// aligned paths there, such as streaming stores from registers), offset 1 is not.
template <class T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <class U>
  explicit CacheLineAllocator(const CacheLineAllocator<U>&) noexcept {}
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlign); }
  bool operator==(const CacheLineAllocator&) const noexcept { return true; }
};

class TypedBuffer {
 public:
  // `offset` elements of slack before the data: offset 1 misaligns it by one element.
  TypedBuffer(DType dtype, std::size_t size, std::size_t offset = 0)
      : dtype_(dtype),
        size_(size),
        offset_(offset * size_of(dtype)),
        storage_((size + offset) * size_of(dtype)) {}

  DType dtype() const noexcept { return dtype_; }
  std::size_t size() const noexcept { return size_; }
  Buffer view() noexcept { return {storage_.data() + offset_, size_, dtype_}; }
  // The elements' bytes, without the slack.
  std::vector<unsigned char> bytes() const {
    return {storage_.begin() + static_cast<std::ptrdiff_t>(offset_), storage_.end()};
  }

  double get(std::size_t i) const noexcept {
    switch (dtype_) {
      case DType::F32:
        return load<float>(i);
      case DType::F64:
        return load<double>(i);
      case DType::BF16:
        return to_float(load<BFloat16>(i));
      case DType::F16:
        return to_float(load<Float16>(i));
    }
    return 0;
  }
  // Stores v rounded to the buffer's type (to nearest even).
  void set(std::size_t i, double v) noexcept {
    switch (dtype_) {
      case DType::F32:
        return store(i, static_cast<float>(v));
      case DType::F64:
        return store(i, v);
      case DType::BF16:
        return store(i, to_bfloat16(v));
      case DType::F16:
        return store(i, to_float16(v));
    }
  }
  // out[k] = get(first + index[k]) for every k, the type switched on once (hot loops).
  void gather(std::size_t first, std::span<const std::size_t> index, double* out) const noexcept {
    const auto each = [&](auto convert) {
      for (std::size_t k = 0; k < index.size(); ++k) out[k] = convert(first + index[k]);
    };
    switch (dtype_) {
      case DType::F32:
        return each([&](std::size_t i) -> double { return load<float>(i); });
      case DType::F64:
        return each([&](std::size_t i) { return load<double>(i); });
      case DType::BF16:
        return each([&](std::size_t i) -> double { return to_float(load<BFloat16>(i)); });
      case DType::F16:
        return each([&](std::size_t i) -> double { return to_float(load<Float16>(i)); });
    }
  }
  std::vector<double> values() const {
    std::vector<double> v(size_);
    for (std::size_t i = 0; i < size_; ++i) v[i] = get(i);
    return v;
  }

 private:
  template <class T>
  T load(std::size_t i) const noexcept {
    T v;
    std::memcpy(&v, storage_.data() + offset_ + i * sizeof(T), sizeof(T));
    return v;
  }
  template <class T>
  void store(std::size_t i, T v) noexcept {
    std::memcpy(storage_.data() + offset_ + i * sizeof(T), &v, sizeof(T));
  }

  DType dtype_;
  std::size_t size_;
  std::size_t offset_;
  std::vector<unsigned char, CacheLineAllocator<unsigned char>> storage_;
};

}  // namespace pe::harness

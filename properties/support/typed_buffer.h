// An owned buffer of any output type, read and written as double, so that properties and the census
// are written once for every type.
#pragma once

#include <cstddef>
#include <cstring>
#include <vector>

#include "pe/types.h"

namespace pe::testing {

class TypedBuffer {
 public:
  TypedBuffer(DType dtype, std::size_t size) : dtype_(dtype), size_(size), bytes_(size * size_of(dtype)) {}

  DType dtype() const noexcept { return dtype_; }
  std::size_t size() const noexcept { return size_; }
  Buffer view() noexcept { return {bytes_.data(), size_, dtype_}; }
  const std::vector<unsigned char>& bytes() const noexcept { return bytes_; }

  double get(std::size_t i) const noexcept {
    switch (dtype_) {
      case DType::F32:
        return load<float>(i);
      case DType::F64:
        return load<double>(i);
      default:
        return 0;  // 16-bit types: not produced by any variant yet
    }
  }
  // Stores v rounded to the buffer's type (v must already be representable to round-trip).
  void set(std::size_t i, double v) noexcept {
    switch (dtype_) {
      case DType::F32:
        store(i, static_cast<float>(v));
        return;
      case DType::F64:
        store(i, v);
        return;
      default:
        return;
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
    std::memcpy(&v, bytes_.data() + i * sizeof(T), sizeof(T));
    return v;
  }
  template <class T>
  void store(std::size_t i, T v) noexcept {
    std::memcpy(bytes_.data() + i * sizeof(T), &v, sizeof(T));
  }

  DType dtype_;
  std::size_t size_;
  std::vector<unsigned char> bytes_;
};

}  // namespace pe::testing

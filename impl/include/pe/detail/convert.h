// Loads and stores between a compute type (float, double) and every storage type, each store one
// rounding to nearest-even.
#pragma once

#include "pe/half.h"
#include "pe/types.h"

namespace pe::detail {

template <class Out, class C>
inline Out store_as(C v) noexcept {
  if constexpr (std::is_same_v<Out, BFloat16>) {
    return to_bfloat16(v);
  } else if constexpr (std::is_same_v<Out, Float16>) {
    return to_float16(v);
  } else {
    return static_cast<Out>(v);
  }
}

template <class C, class T>
inline C load_as(T v) noexcept {
  if constexpr (std::is_same_v<T, BFloat16> || std::is_same_v<T, Float16>) {
    return static_cast<C>(to_float(v));
  } else {
    return static_cast<C>(v);
  }
}

// Calls f with the buffer's data as a typed pointer. Only dtypes the variant declared reach here.
template <class F>
void with_typed(Buffer b, F&& f) noexcept {
  switch (b.dtype) {
    case DType::F32:
      f(static_cast<float*>(b.data));
      return;
    case DType::F64:
      f(static_cast<double*>(b.data));
      return;
    case DType::BF16:
      f(static_cast<BFloat16*>(b.data));
      return;
    case DType::F16:
      f(static_cast<Float16*>(b.data));
      return;
  }
}

}  // namespace pe::detail

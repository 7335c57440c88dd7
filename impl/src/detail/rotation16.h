// The rotation in a 16-bit data type R (BFloat16, Float16), as PyTorch runs
// `q * cos + rotate_half(q) * sin` on bf16/f16 tensors: each product and the sum is its own operation,
// computed in float and rounded to R (c10::BFloat16/c10::Half arithmetic, and PyTorch's CPU and CUDA
// elementwise kernels, round every op's result to the tensor's dtype). A product of an R value by a
// 16-bit table value is exact in float (at most 11 + 11 significant bits), so it is one rounding; by a
// float32 table value it is two (float, then R), as is the sum of two R values far apart.
// For the pairwise RoPE variants whose contract's compute type is R (rope.torch_bf16, rope.math_bf16 and
// their float16 twins, PairwiseRope<float, SinCos, Rotation16<R>::Backend>): the SinCos rule gives float32
// sin/cos (rounded to R already where the table is stored in R), the driver multiplies them by the
// attention factor in float unless the rule does.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "detail/framework_sincos.h"
#include "pe/detail/convert.h"
#include "pe/detail/loops.h"
#include "pe/plan.h"

namespace pe::detail {

template <class R>
inline float rounded_to(float v) noexcept {
  return load_as<float>(store_as<R>(v));
}

// The driver's backend for the rule SinCos (whose plan is `rule.plan`), rotating in R:
// PairwiseRope<float, SinCos, Rotation16<R>::Backend>.
template <class R>
struct Rotation16 {
  template <class SinCos>
  struct Backend : PairwiseBackend<SinCos> {
    // Pair k of row r is (row[first(k)], row[first(k) + partner]): HF's x1·cos + (-x2)·sin and
    // x2·cos + x1·sin, each product rounded to R, then the sum. The negation is exact. Only R outputs
    // are declared (the contract's), so the store into T = R is the sum's own rounding.
    template <class T>
    void rotate(T* const* rows, std::size_t n_rows, std::size_t j0, std::size_t n, const float* s,
                const float* c, float sign) const noexcept {
      const RopePlan& plan = this->rule.plan;
      const bool interleaved = plan.pairs_interleaved();
      const std::size_t stride = interleaved ? 2 : 1;
      const std::size_t partner = interleaved ? 1 : plan.pair_offset();
      const std::size_t first = interleaved ? 2 * j0 : j0;
      for (std::size_t r = 0; r < n_rows; ++r) {
        T* a = rows[r] + first;
        for (std::size_t k = 0; k < n; ++k) {
          T* x = a + k * stride;
          const float sk = sign * s[k];
          const float u = load_as<float>(x[0]), v = load_as<float>(x[partner]);
          x[0] = store_as<T>(rounded_to<R>(u * c[k]) - rounded_to<R>(v * sk));
          x[partner] = store_as<T>(rounded_to<R>(u * sk) + rounded_to<R>(v * c[k]));
        }
      }
    }
  };
};

// Without its own rotation the driver would rotate in float, one rounding: another formulation.
static_assert(RotatesRows<float, BFloat16, Rotation16<BFloat16>::Backend<HfRopeSinCos>>);

}  // namespace pe::detail

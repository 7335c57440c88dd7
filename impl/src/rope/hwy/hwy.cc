// rope.hwy (the best target this CPU has) and rope.hwy@<TARGET> (each compiled Highway
// target this CPU supports), a backend of the RoPE driver (pe/detail/rope_driver.h): sin/cos of each
// chunk of pairs as sinusoidal.hwy (angle and reduction in double, Highway float Sin/Cos on
// |r| <= π), once per token for every head; the rotation in float, rounded once into bfloat16/float16.
//
// Contract (derived), per output element of a pair (a, b), N = |a| + |b|:
//   angle 2.03·2^-53·|φ|; sin/cos within 6.16·2^-24 (see sinusoidal/hwy/hwy.cc), moving the output
//   by N times that; rotation fl(fl(a·c) - fl(b·s)) in float: 2·2^-24·N (+ second order);
//   output: float32 is the compute type; bfloat16/float16 round once (c0 = 1).
//   Budget: N·(c0·u_out + 8.2·2^-24 + 2.03·2^-53·|φ|). |input| <= 2^126. Largest position: 2^31.
//   Scaling: the plan's θ'_j; cos and sin times the attention factor in float (ca = 3: A rounded to double,
//   to the compute type, the product).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "rope/hwy/hwy.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "detail/hwy_register.h"
#include "detail/hwy_sincos-inl.h"
#include "pe/detail/convert.h"
#include "pe/detail/rope_driver.h"

#ifndef PE_ROPE_HWY_CONTRACT_
#define PE_ROPE_HWY_CONTRACT_
namespace pe::rope_hwy {
inline const Contract kContract{
    .layouts = {Layout::Interleaved, Layout::HalfSplit},
    .outputs = {DType::F32, DType::BF16, DType::F16},
    .angle_type = DType::F64,
    .compute_type = DType::F32,
    .max_position = std::int64_t{1} << 31,
    .max_input_abs = 0x1p126,
    .depends_on =
        "Highway 1.0.3 contrib/math Sin/Cos <= 3 ULP on |x| <= 39000, any compiled target; "
        "x86-64 long double (64-bit significand) for the plan frequencies",
    .c0 = 1,
    .ck = 8.2,
    .c1 = 2.03,
};
}  // namespace pe::rope_hwy
#endif

HWY_BEFORE_NAMESPACE();
namespace pe::rope_hwy::HWY_NAMESPACE {

using detail::HWY_NAMESPACE::kChunk;
using detail::HWY_NAMESPACE::SinCosChunk;

// The driver's backend (pe/detail/rope_driver.h): sin/cos of a chunk in float, and the rotation in
// float compiled for this target.
struct Backend {
  const RopePlan& plan;
  void sincos(std::int64_t p, std::size_t j0, std::size_t n, float* s, float* c) const {
    SinCosChunk(plan.inv_freq().data() + j0, n, p, s, c);
  }
  // float32 data in vectors; 16-bit data takes the driver's rotation (the same float arithmetic).
  void rotate(float* const* rows, std::size_t n_rows, std::size_t j0, std::size_t n,
              const float* HWY_RESTRICT s, const float* HWY_RESTRICT c, float sign) const {
    const std::size_t first = plan.pair_first(j0), offset = plan.pair_offset();
    const bool interleaved = plan.pairs_interleaved();
    for (std::size_t r = 0; r < n_rows; ++r) {
      if (interleaved) {
        RotateFloat<true>(rows[r] + first, rows[r] + first + offset, s, c, sign, n);
      } else {
        RotateFloat<false>(rows[r] + first, rows[r] + first + offset, s, c, sign, n);
      }
    }
  }

  // Float32 pairs (a[k·stride], b[k·stride]) in Highway vectors: products rounded, then the sum (no
  // fused multiply-add, as the scalar tail), so every target gives the scalar loop's bits.
  template <bool kInterleaved>
  static HWY_INLINE void RotateFloat(float* HWY_RESTRICT a, float* HWY_RESTRICT b,
                                     const float* HWY_RESTRICT s, const float* HWY_RESTRICT c, float sign,
                                     std::size_t n) {
    namespace hn = hwy::HWY_NAMESPACE;
    const hn::ScalableTag<float> df;
    const std::size_t lanes = hn::Lanes(df);
    const auto vsign = hn::Set(df, sign);
    const std::size_t stride = kInterleaved ? 2 : 1;
    // Scalar pairs until a is vector-aligned: caller rows are only element-aligned, and on wide
    // targets loads and stores that split cache lines cost more than the peel (interleaved: only
    // when a whole number of pairs gets there).
    const std::size_t misaligned = (reinterpret_cast<std::uintptr_t>(a) / sizeof(float)) % (stride * lanes);
    std::size_t peel = misaligned == 0 ? 0 : (stride * lanes - misaligned) / stride;
    if (kInterleaved && misaligned % 2 != 0) peel = 0;
    peel = std::min(n, peel);
    const auto scalar_pair = [&](std::size_t k) {
      const float x = a[stride * k], y = b[stride * k], sk = sign * s[k];
      a[stride * k] = x * c[k] - y * sk;
      b[stride * k] = x * sk + y * c[k];
    };
    std::size_t k = 0;
    for (; k < peel; ++k) scalar_pair(k);
    for (; k + lanes <= n; k += lanes) {
      hn::Vec<decltype(df)> x, y;
      if constexpr (kInterleaved) {
        hn::LoadInterleaved2(df, a + 2 * k, x, y);
      } else {
        x = hn::LoadU(df, a + k);
        y = hn::LoadU(df, b + k);
      }
      const auto vc = hn::LoadU(df, c + k), vs = hn::Mul(vsign, hn::LoadU(df, s + k));
      const auto ra = hn::Sub(hn::Mul(x, vc), hn::Mul(y, vs));
      const auto rb = hn::Add(hn::Mul(x, vs), hn::Mul(y, vc));
      if constexpr (kInterleaved) {
        hn::StoreInterleaved2(ra, rb, df, a + 2 * k);
      } else {
        hn::StoreU(ra, df, a + k);
        hn::StoreU(rb, df, b + k);
      }
    }
    for (; k < n; ++k) scalar_pair(k);
  }
};

PE_HWY_ROPE_ROTATE(float, kChunk, Backend);

}  // namespace pe::rope_hwy::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

// Outside the target region: registration code is compiled for the baseline only.
namespace pe::rope_hwy::HWY_NAMESPACE {
namespace {
PE_REGISTER_HWY_ROPE("rope.hwy", kContract, Rotate);
}  // namespace
}  // namespace pe::rope_hwy::HWY_NAMESPACE

// sinusoidal.hwy (the best target this CPU has) and sinusoidal.hwy@<TARGET> (each compiled
// Highway target this CPU supports, so that a bug in one cannot hide behind another).
// The angle fl(fl(t·ω)·scale) is formed in double (t an integer or real position, exact in double) and
// reduced modulo 2π there; sin and cos are Highway's float Sin/Cos on |r| <= π; the table is written in
// float and rounded once into bfloat16/float16.
//
// Contract (derived):
//   angle: ω from the plan (1.02·2^-53) times t exact in double, one rounding: c1 = 2.03; the scale's
//   product (scaled or real): c1_scale = 1; |φ| = |scale·t·ω|;
//   reduction: exact but for the third part and its subtraction, < 0.01·2^-24;
//   r rounded to float moves sin/cos by <= π·2^-24; Highway's Sin/Cos: 3 ULP (math-inl.h) <= 3·2^-24;
//   output: float32 is the compute type; bfloat16/float16 round once (c0 = 1).
//   Budget: c0·u_out + 6.16·2^-24 + 2.03·2^-53·|φ|, + 2^-53·|φ| scaled or real. Largest |scale·t|: 2^31 (the
//   reduction's k < 2^29).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sinusoidal/hwy/hwy.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "detail/hwy_register.h"
#include "detail/hwy_sincos-inl.h"
#include "pe/detail/convert.h"

#ifndef PE_SINUSOIDAL_HWY_CONTRACT_
#define PE_SINUSOIDAL_HWY_CONTRACT_
namespace pe::sinusoidal_hwy {
inline const Contract kContract{
    .layouts = {Layout::Interleaved, Layout::Concatenated},
    .outputs = {DType::F32, DType::BF16, DType::F16},
    .angle_type = DType::F64,
    .compute_type = DType::F32,
    .max_position = std::int64_t{1} << 31,
    .max_input_abs = 1e30,
    .depends_on =
        "Highway 1.0.3 contrib/math Sin/Cos <= 3 ULP on |x| <= 39000, any compiled target; "
        "x86-64 long double (64-bit significand) for the plan frequencies",
    .c0 = 1,
    .ck = 6.16,
    .c1 = 2.03,
    .c1_scale = 1,
};
}  // namespace pe::sinusoidal_hwy
#endif

HWY_BEFORE_NAMESPACE();
namespace pe::sinusoidal_hwy::HWY_NAMESPACE {

using detail::HWY_NAMESPACE::kChunk;
using detail::HWY_NAMESPACE::SinCosChunkAt;

// P: std::int64_t (Table, Add) or double (TableAt); either reaches the angle as the double it is exactly.
template <bool kAdd, class Out, class P>
void Rows(const SinusoidalPlan& plan, std::span<const P> positions, std::span<const std::uint8_t> padding,
          Out* out) {
  const std::size_t d = plan.dim(), h = plan.n_pairs();
  HWY_ALIGN float s[kChunk];
  HWY_ALIGN float c[kChunk];
  for (std::size_t r = 0; r < positions.size(); ++r) {
    if (kAdd && !padding.empty() && padding[r] != 0) continue;
    Out* row = out + r * d;
    for (std::size_t i0 = 0; i0 < h; i0 += kChunk) {
      const std::size_t n = h - i0 < kChunk ? h - i0 : kChunk;
      SinCosChunkAt(plan.inv_freq().data() + i0, n, static_cast<double>(positions[r]), plan.scale(), s, c);
      for (std::size_t k = 0; k < n; ++k) {
        Out& ys = row[plan.sin_index(i0 + k)];  // the plan's channels: its layout and flip_sin_to_cos
        Out& yc = row[plan.cos_index(i0 + k)];
        if constexpr (kAdd) {
          ys = detail::store_as<Out>(detail::load_as<float>(ys) + s[k]);
          yc = detail::store_as<Out>(detail::load_as<float>(yc) + c[k]);
        } else {
          ys = detail::store_as<Out>(s[k]);
          yc = detail::store_as<Out>(c[k]);
        }
      }
    }
  }
}

template <class Out>
void RowsAt(const SinusoidalPlan& plan, std::span<const double> positions, Out* out) {
  Rows<false>(plan, positions, {}, out);
}

PE_HWY_SINUSOIDAL_TABLE_ADD

}  // namespace pe::sinusoidal_hwy::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

// Outside the target region: registration code is compiled for the baseline only.
namespace pe::sinusoidal_hwy::HWY_NAMESPACE {
namespace {
PE_REGISTER_HWY_SINUSOIDAL("sinusoidal.hwy", kContract, Table, TableAt, Add);
}  // namespace
}  // namespace pe::sinusoidal_hwy::HWY_NAMESPACE

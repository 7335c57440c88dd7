// sinusoidal.numpy_f64: MAE's get_1d_sincos_pos_embed_from_grid (util/pos_embed.py) in NumPy float64:
//   omega = np.arange(embed_dim // 2, dtype=np.float64); omega /= embed_dim / 2.
//   omega = 1. / 10000**omega
//   out = np.einsum('m,d->md', pos, omega); cat([np.sin(out), np.cos(out)])
// With downscale_freq_shift s the divisor is D/2 - s (exact in double). Each step one float64 rounding:
// fl(i/m), pow, fl(1/that), fl(t·ω) (pos a float64 array: t exact), fl(scale·that) (diffusers' numpy
// `emb = scale * emb`), sin/cos; the plan's layout and flip place them (MAE's own: concatenated, unflipped).
// This variant calls glibc; the contract is NumPy's, whose float64 sin and cos on AVX-512 machines are SVML's
// (within 4 ULP by NumPy's own accuracy tests; 3 ULP from glibc's measured here on NumPy 1.24), so that a
// table NumPy computed passes under it.
//
// Contract (derived), base <= 1e7, downscale_freq_shift <= 1 (x = i/m <= 1):
//   x = fl(i/m): relative 2^-53, so b^x moves by x·ln b·2^-53 <= ln b·2^-53 relative; pow <= 1 ULP
//   (2·2^-53 relative); the reciprocal 2^-53: ω within (ln b + 3.0001)·2^-53 relative;
//   angle: t exact (a double), the product one rounding: (ln b + 4.0001)·2^-53·|φ| <= 20.2·2^-53·|φ|
//   (ln 1e7 = 16.1181): c1 = 20.2; the scale's product (scale exact in float64; scaled or real):
//   c1_scale = 1; |φ| = |scale·t·ω|;
//   kernel: NumPy's sin/cos 4 ULP <= 4·2^-53 (ck = 4); float32, bfloat16 and float16 round once from double
//   (c0 = 1), float64 is the compute type.
//   Budget: float64 (4 + 20.2·|φ|)·2^-53; float32 2^-24 + (4 + 20.2·|φ|)·2^-53; + 2^-53·|φ| scaled or
//   real. Largest |scale·t| promised:
//   2^31.
#include <cmath>

#include "pe/detail/pairwise_variant.h"
#include "pe/register.h"

namespace pe {
namespace {

struct NumpyMaeSinCos {
  explicit NumpyMaeSinCos(const SinusoidalPlan& plan)
      : base(plan.params().base),
        half(static_cast<double>(plan.n_pairs()) - plan.params().downscale_freq_shift),
        scale(plan.scale()) {}
  void operator()(double t, std::size_t i, double& s, double& c) const noexcept {
    const double omega = 1.0 / std::pow(base, static_cast<double>(i) / half);
    const double angle = scale * (t * omega);
    s = std::sin(angle);
    c = std::cos(angle);
  }
  double base;
  double half;
  double scale;
};

const Contract kNumpyContract{
    .layouts = {Layout::Interleaved, Layout::Concatenated},
    .outputs = {DType::F32, DType::F64, DType::BF16, DType::F16},
    .angle_type = DType::F64,
    .compute_type = DType::F64,
    .max_position = std::int64_t{1} << 31,
    .max_base = 1e7,
    .max_input_abs = 1e30,
    .depends_on = "pow <= 1 ULP, sin and cos <= 4 ULP (NumPy's SVML on AVX-512); downscale_freq_shift <= 1",
    .c0 = 1,
    .ck = 4,
    .c1 = 20.2,
    .c1_scale = 1,
};

PE_REGISTER_SINUSOIDAL("sinusoidal.numpy_f64", kNumpyContract,
                       detail::PairwiseSinusoidal<double, NumpyMaeSinCos>);

}  // namespace
}  // namespace pe

// sinusoidal.scalar_f32: the PyTorch tutorial's arithmetic in float32. The frequency is rounded to
// float, the angle fl(fl(p)·ω) formed in float, and sinf/cosf evaluated on it.
//
// Contract (derived):
//   angle: fl(ω) carries 2^-24 + 1.02·2^-53, fl(p) 2^-24 (exact for p <= 2^24), the product 2^-24:
//          |φ̂ - φ| <= 3.001·2^-24·|φ|, and |sin'| <= 1 carries it unchanged into the output;
//   kernel: glibc's sinf/cosf are within 1 ULP (libm-test-ulps), <= 2^-24 absolute below 1;
//   output: float32 is the compute type (nothing rounded after sinf/cosf); bfloat16/float16 round
//   once (c0 = 1).
//   Budget: (1 + 3.001·|φ|)·2^-24. Largest position promised: 2^24, beyond which fl(p) merges
//   neighbouring positions.
#include "detail/pairwise_variant.h"
#include "detail/scalar_sincos.h"

namespace pe {
namespace {

Contract declared_contract() {
  Contract c;
  c.family = Family::Sinusoidal;
  c.layouts = {Layout::Interleaved, Layout::Concatenated};
  c.outputs = {DType::F32, DType::BF16, DType::F16};
  c.angle_type = DType::F32;
  c.compute_type = DType::F32;
  c.max_position = std::int64_t{1} << 24;
  c.max_input_abs = 1e30;
  c.depends_on = "glibc sinf/cosf <= 1 ULP";
  c.kernel_ulps = 1;
  c.c0 = 1, c.ck = 1, c.c1 = 3.001;
  return c;
}

using Variant = detail::PairwiseSinusoidal<float, detail::LibmSinCos<float, SinusoidalPlan>>;
const Registrar registrar{std::make_unique<Variant>("sinusoidal.scalar_f32", declared_contract())};

}  // namespace
}  // namespace pe

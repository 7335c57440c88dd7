// sinusoidal.scalar_f64: double throughout (frequency, angle, sin/cos, the fused add), rounded once
// into the output type.
//
// Contract (derived):
//   angle: ω_i from the plan carries 1.02·2^-53 (plan.cc), p is exact in double (p <= 2^53), the
//          product 2^-53: |φ̂ - φ| <= 2.03·2^-53·|φ|;
//   kernel: glibc's sin/cos (double) are within 1 ULP (libm-test-ulps): <= 2^-53 absolute below 1;
//   output: float32, bfloat16 and float16 round once from double (c0 = 1; bfloat16 through a
//   round-to-odd float, half.h), float64 is the compute type (nothing rounded).
//   Budget: float64 (1 + 2.03·|φ|)·2^-53; float32 2^-24 + (1 + 2.03·|φ|)·2^-53.
//   Largest position promised: 2^31 (the long-context range; the budget holds to 2^53).
#include "detail/pairwise_variant.h"
#include "detail/scalar_sincos.h"
#include "pe/register.h"

namespace pe {
namespace {

const Contract kContract{
    .layouts = {Layout::Interleaved, Layout::Concatenated},
    .outputs = {DType::F32, DType::F64, DType::BF16, DType::F16},
    .angle_type = DType::F64,
    .compute_type = DType::F64,
    .max_position = std::int64_t{1} << 31,
    .max_input_abs = 1e30,
    .depends_on = "glibc sin/cos <= 1 ULP; x87 long double for the plan frequencies",
    .c0 = 1,
    .ck = 1,
    .c1 = 2.03,
};

PE_REGISTER_SINUSOIDAL("sinusoidal.scalar_f64", kContract,
                       detail::PairwiseSinusoidal<double, detail::LibmSinCos<double, SinusoidalPlan>>);

}  // namespace
}  // namespace pe

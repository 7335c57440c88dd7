// sinusoidal.scalar_f64: double throughout (frequency, angle fl(fl(t·ω)·scale), sin/cos, the fused add),
// rounded once into the output type.
//
// Contract (derived; shared steps in docs/contracts.md): double angle (§2a, §2b): t and scale exact, ω
//   1.02·2^-53, the product: c1 = 2.03; the scale's product (scaled or real): c1_scale = 1; |φ| =
//   |scale·t·ω|;
//   glibc sin/cos 1 ULP, <= 2^-53 (§2c); float32, bfloat16 and float16 round once from double (c0 = 1,
//   bfloat16 through a round-to-odd float, §2e), float64 is the compute type.
//   Budget: float64 (1 + 2.03·|φ|)·2^-53; float32 2^-24 + (1 + 2.03·|φ|)·2^-53; + 2^-53·|φ| scaled or real.
//   Largest |scale·t| promised: 2^31 (the long-context range; the budget holds to 2^53).
#include "detail/scalar_sincos.h"
#include "pe/detail/pairwise_variant.h"
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
    .depends_on = "glibc sin/cos <= 1 ULP; x86-64 long double (64-bit significand) for the plan frequencies",
    .c0 = 1,
    .ck = 1,
    .c1 = 2.03,
    .c1_scale = 1,
};

PE_REGISTER_SINUSOIDAL("sinusoidal.scalar_f64", kContract,
                       detail::PairwiseSinusoidal<double, detail::TableLibmSinCos<double>>);

}  // namespace
}  // namespace pe

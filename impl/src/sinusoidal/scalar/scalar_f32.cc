// sinusoidal.scalar_f32: the PyTorch tutorial's arithmetic in float32. The frequency is rounded to
// float, the angle fl(fl(fl(t)·ω)·fl(scale)) formed in float (t an integer or real position, scale the
// plan's), and sinf/cosf evaluated on it.
//
// Contract (derived; shared steps in docs/contracts.md): float32 angle (§2a): fl(t) (charged though exact
//   for an integer <= 2^24), fl(ω) (and ω's 1.02·2^-53), the product: c1 = 3.001; scaled or at real
//   positions, fl(scale) and its product: c1_scale = 2; |φ| = |scale·t·ω|; glibc sinf/cosf 1 ULP, <= 2^-24
//   (§2c); float32 is the compute type, bfloat16/float16 round once (c0 = 1, §2e). Budget: c0·u_out +
//   (1 + 3.001·|φ|)·2^-24, + 2·2^-24·|φ| scaled or real (+ the underflow floor). Largest |scale·t| promised:
//   2^24, beyond which fl(t) merges neighbouring positions; t and scale normal float32 magnitudes (pe/api.h
//   refuses the others: their fl() is not a relative rounding).
#include "detail/scalar_sincos.h"
#include "pe/detail/pairwise_variant.h"
#include "pe/register.h"

namespace pe {
namespace {

const Contract kContract{
    .layouts = {Layout::Interleaved, Layout::Concatenated},
    .outputs = {DType::F32, DType::BF16, DType::F16},
    .angle_type = DType::F32,
    .compute_type = DType::F32,
    .max_position = std::int64_t{1} << 24,
    .max_input_abs = 1e30,
    .depends_on = "glibc sinf/cosf <= 1 ULP",
    .c0 = 1,
    .ck = 1,
    .c1 = 3.001,
    .c1_scale = 2,
};

PE_REGISTER_SINUSOIDAL("sinusoidal.scalar_f32", kContract,
                       detail::PairwiseSinusoidal<float, detail::TableLibmSinCos<float>>);

}  // namespace
}  // namespace pe

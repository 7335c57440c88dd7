// alibi.scalar_f64: alibi.scalar_f32's formulation in float64 (vLLM's _get_alibi_slopes and HF's
// computed in double): m0 = pow(2, -b/den), slope = pow(m0, k); the distance is exact in double.
//
// Contract (derived): b/den rounded moves the exponent E by u, the slope by ln2·E·u (c1 = 11.1
// covers E <= 16: max_base 2^16, ALiBi's base being 2^max_bias); pow <= 1 ULP (glibc, 2u) makes m0
// 2u off and m0^k 2ku(1 + ku) off (c1_pair = 2.6); pow(m0, k) itself 2u, the product u (ck = 3);
// other outputs round once (c0 = 1). Relative to the exact bias |m·s| (pe/contract.h).
#include "detail/alibi_scalar.h"
#include "pe/register.h"

namespace pe {
namespace {

const Contract kContract{
    .layouts = {Layout::Hqk},
    .outputs = {DType::F64, DType::F32, DType::BF16, DType::F16},
    .angle_type = DType::F64,
    .compute_type = DType::F64,
    .max_position = kMaxPosition,
    .max_base = 65536,
    .depends_on = "glibc pow <= 1 ULP",
    .c0 = 1,
    .ck = 3,
    .c1 = 11.1,
    .c1_pair = 2.6,
};

PE_REGISTER_ALIBI("alibi.scalar_f64", kContract, detail::ScalarAlibi<detail::PowArith<double>>);

}  // namespace
}  // namespace pe

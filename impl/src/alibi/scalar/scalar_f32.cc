// alibi.scalar_f32: the slopes as ggml (ggml_soft_max_ext's max_bias) and HF's build_alibi_tensor
// compute them in float32, m0 = powf(2, -b/n'), slope = powf(m0, k), and the bias as the slope times
// the distance converted to float.
//
// Contract (derived): b and b/den rounded to float move the exponent E by 2u, the slope by
// 2·ln2·E·u (c1 = 22.2 covers E <= 16: max_base 2^16, ALiBi's base being 2^max_bias); powf <= 1 ULP
// (glibc, 2u) makes m0 2u off and m0^k 2ku(1 + ku) off (c1_pair = 2.6 while ku <= 1/8, n <= 2^20
// heads); powf(m0, k) itself 2u, the distance to float u, the product u (ck = 4); bfloat16/float16
// round once more (c0 = 1). Relative to the exact bias |m·s| (pe/contract.h).
#include "detail/alibi_scalar.h"
#include "pe/register.h"

namespace pe {
namespace {

const Contract kContract{
    .layouts = {Layout::Hqk},
    .outputs = {DType::F32, DType::BF16, DType::F16},
    .angle_type = DType::F32,
    .compute_type = DType::F32,
    .max_position = kMaxPosition,
    .max_base = 65536,
    .depends_on = "glibc powf <= 1 ULP",
    .c0 = 1,
    .ck = 4,
    .c1 = 22.2,
    .c1_pair = 2.6,
};

PE_REGISTER_ALIBI("alibi.scalar_f32", kContract, detail::ScalarAlibi<detail::PowArith<float>>);

}  // namespace
}  // namespace pe

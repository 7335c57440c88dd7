// rope.cache_bf16: HF's float32 cos/sin (as rope.torch_f32) stored in a bf16 cache, as engines that
// keep the table in the model's dtype do, read back as float for a float32 rotation.
//
// Contract (derived in cache_contract.h with u_T = 2^-8): |y - exact| <=
// N·(c0·u_out + 2^-8 + (3.001 + 22.2·|φ|)·2^-24), N = |a| + |b|, base <= 1e7, positions <= 2^24.
#include "detail/framework_sincos.h"
#include "pe/detail/pairwise_variant.h"
#include "pe/register.h"
#include "rope/framework/cache_contract.h"

namespace pe {
namespace {

const Contract kContract = detail::hf_rope_contract("glibc powf, sinf, cosf <= 1 ULP", DType::BF16);

PE_REGISTER_ROPE("rope.cache_bf16", kContract,
                 detail::PairwiseRope<float, detail::CachedHfRopeSinCos<BFloat16>>);

}  // namespace
}  // namespace pe

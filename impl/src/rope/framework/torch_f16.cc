// rope.torch_f16: Hugging Face's RoPE in a float16 model (LlamaRotaryEmbedding.forward and
// apply_rotary_pos_emb): cos and sin of the float32 angle, times the attention factor, in float32, cast
// to the data's dtype (`.to(x.dtype)`), then q * cos + rotate_half(q) * sin on float16 tensors, each product
// and the sum rounded to float16. vLLM's _apply_rotary_emb (cos/sin `.to(x.dtype)`, v0.6.6) computes the
// same.
//
// Contract (derived in rotation16_contract.h, docs/contracts.md §2k): |y - exact| <=
// A·N·((1 + 2.002)·2^-11 + 22.2·2^-24·|φ|) + 2·denorm_min + denorm_min of the data's type, N = |a| + |b|,
// base <= 1e7, positions <= 2^24 (float32 angles).
#include "detail/framework_sincos.h"
#include "detail/rotation16.h"
#include "pe/detail/pairwise_variant.h"
#include "pe/register.h"
#include "rope/framework/rotation16_contract.h"

namespace pe {
namespace {

const Contract kContract = detail::rotation16_contract(
    DType::F16, true, "glibc powf, sinf, cosf <= 1 ULP; GCC _Float16 conversions");

PE_REGISTER_ROPE(
    "rope.torch_f16", kContract,
    detail::PairwiseRope<float, detail::CachedHfRopeSinCos<Float16>, detail::Rotation16<Float16>::Backend>);

}  // namespace
}  // namespace pe

// rope.torch_bf16: Hugging Face's RoPE in a bfloat16 model (LlamaRotaryEmbedding.forward and
// apply_rotary_pos_emb): cos and sin of the float32 angle, times the attention factor, in float32, cast
// to the data's dtype (`.to(x.dtype)`), then q * cos + rotate_half(q) * sin on bfloat16 tensors, each product
// and the sum rounded to bfloat16. vLLM's _apply_rotary_emb (cos/sin `.to(x.dtype)`, v0.6.6) computes the
// same.
//
// Contract (derived in rotation16_contract.h, docs/contracts.md §2k): |y - exact| <=
// A·N·((1 + 2.012)·2^-8 + 22.2·2^-24·|φ|) + 2·denorm_min + denorm_min of the data's type, N = |a| + |b|,
// base <= 1e7, positions <= 2^24 (float32 angles).
#include "detail/framework_sincos.h"
#include "detail/rotation16.h"
#include "pe/detail/pairwise_variant.h"
#include "pe/register.h"
#include "rope/framework/rotation16_contract.h"

namespace pe {
namespace {

const Contract kContract = detail::rotation16_contract(DType::BF16, true, "glibc powf, sinf, cosf <= 1 ULP");

PE_REGISTER_ROPE(
    "rope.torch_bf16", kContract,
    detail::PairwiseRope<float, detail::CachedHfRopeSinCos<BFloat16>, detail::Rotation16<BFloat16>::Backend>);

}  // namespace
}  // namespace pe

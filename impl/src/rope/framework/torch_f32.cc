// rope.torch_f32: Hugging Face's default rotary embedding in float32 (LlamaRotaryEmbedding and
// apply_rotary_pos_emb): inv_freq = 1.0 / base ** (arange(0, dim, 2).float() / dim),
// freqs = inv_freq @ position (float32), cos/sin of it, q·cos + rotate_half(q)·sin in float32.
//
// Contract (derived), base <= 1e7, N = |a| + |b|:
//   inv_freq: fl(2j/d) moves b^e by ln b·2^-24, fl(base) by 2^-24, powf 2·2^-24, the reciprocal
//   2^-24: (ln b + 4)·2^-24; fl(p) and the product: c1 = ln(1e7) + 6 = 22.2;
//   kernel: cosf/sinf 1 ULP, the rotation 2·2^-24: ck = 3.001; bfloat16/float16 data round once.
//   Budget: N·(c0·u_out + (3.001 + 22.2·|φ|)·2^-24). |input| <= 2^126. Largest position: 2^24.
// Scaling (pe/rope_scaling.h): the formula runs on the plan's base' (NTK, dynamic; at most max_base)
// and multiplies each rescaled frequency by fl(g_j) in float: 2 more roundings of the angle
// (c1_gain = 2.001); cos and sin times the attention factor in float (ca = 3: A rounded to double, to the
// compute type, the product).
#include "detail/framework_sincos.h"
#include "pe/detail/pairwise_variant.h"
#include "pe/register.h"
#include "rope/framework/cache_contract.h"

namespace pe {
namespace {

const Contract kContract = detail::hf_rope_contract("glibc powf, sinf, cosf <= 1 ULP");

PE_REGISTER_ROPE("rope.torch_f32", kContract, detail::PairwiseRope<float, detail::HfRopeSinCos>);

}  // namespace
}  // namespace pe

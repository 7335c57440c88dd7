// rope.ggml_f32: llama.cpp's CPU rope (ggml_rope_cache_init + rotate_pairs) with no scaling:
// theta = p, theta *= powf(base, -2.0f/n_dims) after every pair, cosf/sinf, the rotation in float.
//
// Contract (derived), base <= 1e7, pair j, N = |a| + |b|: the angle as sinusoidal.ggml_f32,
// (18.2 + 3.01·j)·2^-24·|φ|; cosf/sinf 1 ULP and the rotation 2·2^-24: ck = 3.001.
// Budget: N·(c0·u_out + (3.001 + (18.2 + 3.01·j)·|φ|)·2^-24). Largest position: 2^24.
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

// rope.torch_f32's contract (cache_contract.h) with this angle's terms.
const Contract kContract = [] {
  Contract c = detail::hf_rope_contract("glibc powf, sinf, cosf <= 1 ULP");
  c.c1 = 18.2;
  c.c1_pair = 3.01;
  return c;
}();

PE_REGISTER_ROPE("rope.ggml_f32", kContract, detail::PairwiseRope<float, detail::GgmlSinCos<RopePlan>>);

}  // namespace
}  // namespace pe

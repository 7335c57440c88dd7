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
#include "detail/pairwise_variant.h"

namespace pe {
namespace {

Contract declared_contract() {
  Contract c;
  c.family = Family::Rope;
  c.layouts = {Layout::Interleaved, Layout::HalfSplit};
  c.outputs = {DType::F32, DType::BF16, DType::F16};
  c.angle_type = DType::F32;
  c.compute_type = DType::F32;
  c.max_position = std::int64_t{1} << 24;
  c.max_base = 1e7;
  c.max_input_abs = 0x1p126;
  c.depends_on = "glibc powf, sinf, cosf <= 1 ULP";
  c.kernel_ulps = 1;
  c.c0 = 1, c.ck = 3.001, c.c1 = 18.2, c.c1_pair = 3.01, c.c1_gain = 2.001;
  return c;
}

using Variant = detail::PairwiseRope<float, detail::GgmlSinCos<RopePlan>>;
const Registrar registrar{std::make_unique<Variant>("rope.ggml_f32", declared_contract())};

}  // namespace
}  // namespace pe

// rope.cache_f16: HF's float32 cos/sin (as rope.torch_f32) stored in a f16 cache, as engines that
// keep the table in the model's dtype do, read back as float for a float32 rotation.
//
// Contract (derived), base <= 1e7, N = |a| + |b|: the angle as rope.torch_f32, 22.2·2^-24·|φ|;
// cosf/sinf and the rotation 3.001·2^-24; the cache's rounding of |cos|, |sin| <= 1 moves the output
// by at most N·2^-11 (ct = 1, table type f16); f16 or float16 data round once more (c0 = 1).
// Budget: N·(c0·u_out + 2^-11 + (3.001 + 22.2·|φ|)·2^-24). Largest position: 2^24.
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
  c.table_type = DType::F16;
  c.max_position = std::int64_t{1} << 24;
  c.max_base = 1e7;
  c.max_input_abs = 0x1p126;
  c.depends_on = "glibc powf, sinf, cosf <= 1 ULP; GCC _Float16 conversions";
  c.kernel_ulps = 1;
  c.c0 = 1, c.ck = 3.001, c.ct = 1, c.c1 = 22.2, c.c1_gain = 2.001;
  return c;
}

using Variant = detail::PairwiseRope<float, detail::CachedHfRopeSinCos<Float16>>;
const Registrar registrar{std::make_unique<Variant>("rope.cache_f16", declared_contract())};

}  // namespace
}  // namespace pe

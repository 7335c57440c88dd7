// sinusoidal.ggml_f32: the table built the way llama.cpp's CPU rope builds its angles: theta = p,
// then theta *= powf(base, -2.0f/d) after every pair, all in float32 (ggml_rope_cache_init). A real
// position t starts the recurrence at fl(t); a plan's scale is ggml's freq_scale, fl(fl(scale)·theta).
//
// Contract (derived), base <= 1e7, pair i:
//   theta_scale: fl(-2/d) and fl(base) move it by (2·ln b + 2)/d·2^-24, powf by 2·2^-24;
//   theta_i = fl(p)·theta_scale^i with i roundings: (2 + ln b + 3.01·i)·2^-24 relative
//   (i·(2·ln b + 2)/d <= ln b + 1 because i < d/2), fl(t) included: c1 = 18.2, c1_pair = 3.01; fl(scale)
//   and the freq_scale product (scaled or real): c1_scale = 2; |φ| = |scale·t·ω|;
//   kernel: sinf/cosf 1 ULP; float32 is the compute type, bfloat16/float16 round once.
//   Budget: c0·u_out + (1 + (18.2 + 3.01·i)·|φ|)·2^-24, + 2·2^-24·|φ| scaled or real. Largest |scale·t|:
//   2^24; t and scale normal float32 magnitudes (pe/api.h).
#include "detail/framework_sincos.h"
#include "pe/detail/pairwise_variant.h"
#include "pe/register.h"

namespace pe {
namespace {

const Contract kContract = detail::framework_table_contract("glibc powf, sinf, cosf <= 1 ULP", 18.2, 3.01, 2);

PE_REGISTER_SINUSOIDAL("sinusoidal.ggml_f32", kContract,
                       detail::PairwiseSinusoidal<float, detail::GgmlTableSinCos>);

}  // namespace
}  // namespace pe

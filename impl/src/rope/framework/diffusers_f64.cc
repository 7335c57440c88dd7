// rope.diffusers_f64: diffusers' RoPE of image and video transformers as CUDA and CPU run it (FluxPosEmbed's
// EmbedND, HunyuanVideoRotaryPosEmbed, WanRotaryPosEmbed): get_1d_rotary_pos_embed with
// freqs_dtype=torch.float64, freqs = 1.0 / theta ** (arange(0, dim, 2, float64) / dim) over each axis's own
// dim, the angle outer(pos, freqs) in float64 (pos = ids.float(): a float32 position), cos and sin in float64
// cast to float32 (.float()), then apply_rotary_emb's (x.float()·cos + x_rotated.float()·sin).to(x.dtype).
// Wan on MPS and NPU builds its table in float32: rope.torch_f32's arithmetic.
//
// Contract (derived), base <= 1e7, N = |a| + |b|:
//   angle in double: fl(2k/d) moves b^e by ln b·2^-53, fl(base) exact, pow 2·2^-53, the reciprocal 2^-53,
//   the product 2^-53 (fl(p) exact below 2^24): c1 = ln(1e7) + 5 = 21.2 in units of 2^-53;
//   cos and sin (glibc, below 1 ULP of double) rounded to float32: ct = 1.001 (a float32 table);
//   the rotation fl(fl(a·c) + fl(b·s)) in float32: ck = 2.001; bfloat16/float16 data round once (c0 = 1).
//   Scaling (diffusers' linear_factor and ntk_factor, and every method of pe/rope_scaling.h): the plan's
//   base' and each pair's gain one more rounding in double (c1_gain = 2.001); the attention factor in float
//   (ca = 3). Largest position: 2^24 (ids.float()).
#include <cmath>

#include "detail/framework_sincos.h"
#include "pe/detail/pairwise_variant.h"
#include "pe/register.h"

namespace pe {
namespace {

struct DiffusersF64SinCos {
  const RopePlan& plan;
  void operator()(std::int64_t p, std::size_t j, float& s, float& c) const noexcept {
    const FrequencyIndex f = plan.frequency_index(j);
    const double exponent = static_cast<double>(2 * f.index) / static_cast<double>(f.dim);
    double freq = 1.0 / std::pow(detail::formula_base(plan), exponent);
    if (const double gain = plan.gain()[j]; gain != 1.0) freq *= gain;
    const double angle = static_cast<double>(static_cast<float>(p)) * freq;
    s = static_cast<float>(std::sin(angle));
    c = static_cast<float>(std::cos(angle));
  }
};

const Contract kContract{.layouts = {Layout::Interleaved, Layout::HalfSplit},
                         .outputs = {DType::F32, DType::BF16, DType::F16},
                         .angle_type = DType::F64,
                         .compute_type = DType::F32,
                         .max_position = std::int64_t{1} << 24,
                         .max_base = 1e7,
                         .max_input_abs = 0x1p126,
                         .table_type = DType::F32,
                         .depends_on = "glibc pow, sin, cos <= 1 ULP",
                         .c0 = 1,
                         .ck = 2.001,
                         .ct = 1.001,
                         .c1 = 21.2,
                         .c1_gain = 2.001};

PE_REGISTER_ROPE("rope.diffusers_f64", kContract, detail::PairwiseRope<float, DiffusersF64SinCos>);

}  // namespace
}  // namespace pe

// sinusoidal.diffusers_f32: diffusers' get_timestep_embedding (models/embeddings.py) in its float32
// arithmetic, at integer or real timesteps t:
//   exponent = -math.log(max_period) * torch.arange(0, half_dim, dtype=torch.float32)
//   exponent = exponent / (half_dim - downscale_freq_shift)
//   emb = timesteps[:, None].float() * torch.exp(exponent)[None, :]
//   emb = scale * emb
//   cat([sin(emb), cos(emb)]), halves swapped with flip_sin_to_cos; an odd embedding_dim zero-padded last
// Each Python scalar meets a float32 tensor and is rounded to float32 first: fl(fl(-ln P)·i), then
// fl(that / fl(half - shift)), expf, fl(fl(t)·ω), fl(fl(scale)·that), sinf/cosf; the plan's layout and flip
// place them.
//
// Contract (derived), base <= 1e7, downscale_freq_shift <= 1 (so i/(half - shift) <= 1, |exponent| <= ln P;
// Contract::max_freq_shift):
//   exponent: fl(-ln P) (math.log in double, then float: (1 + 2^-24)(1 + 2^-53)), fl(·i), fl(/m) (m exact
//   in float32 for half < 2^24): relative 3.0001·2^-24, so within 3.0001·ln P·2^-24 absolutely;
//   expf (<= 1 ULP, 2·2^-24 relative): ω within (3.0001·ln P + 2.0001)·2^-24 relative;
//   angle: fl(p) exact for an integer p <= 2^24, the product one rounding: (3.0001·ln P + 3.0002)·2^-24·|φ|
//   <= 51.4·2^-24·|φ| (ln 1e7 = 16.1181): c1 = 51.4; scaled or at real positions fl(t) (exact for a float32
//   timestep, charged), fl(scale) and its product: c1_scale = 3 (second-order terms in c1's slack);
//   |φ| = |scale·t·ω|;
//   kernel: sinf/cosf 1 ULP <= 2^-24 (ck = 1); float32 is the compute type, bfloat16/float16 round once.
//   Budget: c0·u_out + (1 + 51.4·|φ|)·2^-24, + 3·2^-24·|φ| scaled or real. Largest |scale·t|: 2^24; t and
//   scale normal float32 magnitudes (pe/api.h).
#include <cmath>

#include "detail/framework_sincos.h"
#include "pe/detail/pairwise_variant.h"
#include "pe/register.h"

namespace pe {
namespace {

struct DiffusersTimestepSinCos {
  explicit DiffusersTimestepSinCos(const SinusoidalPlan& plan)
      : neg_log_period(static_cast<float>(-std::log(plan.params().base))),
        // half_dim - downscale_freq_shift: a Python float, rounded to float32 by the tensor division.
        denominator(
            static_cast<float>(static_cast<double>(plan.n_pairs()) - plan.params().downscale_freq_shift)),
        scale(static_cast<float>(plan.scale())) {}
  void operator()(double t, std::size_t i, float& s, float& c) const noexcept {
    const float exponent = neg_log_period * static_cast<float>(i);
    const float omega = std::exp(exponent / denominator);
    const float angle = scale * (static_cast<float>(t) * omega);
    s = std::sin(angle);
    c = std::cos(angle);
  }
  float neg_log_period;
  float denominator;
  float scale;  // a Python float times a float32 tensor: rounded to float32 first
};

const Contract kDiffusersContract = detail::framework_table_contract(
    "glibc expf, sinf, cosf <= 1 ULP; downscale_freq_shift <= 1", 51.4, 0, 3);

PE_REGISTER_SINUSOIDAL("sinusoidal.diffusers_f32", kDiffusersContract,
                       detail::PairwiseSinusoidal<float, DiffusersTimestepSinCos>);

}  // namespace
}  // namespace pe

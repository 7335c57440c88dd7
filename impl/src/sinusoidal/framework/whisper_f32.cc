// sinusoidal.whisper_f32: openai/whisper's `sinusoids` (whisper/model.py), as written:
//   log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)
//   inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
//   scaled_time = torch.arange(length)[:, np.newaxis] * inv_timescales[np.newaxis, :]
//   cat([sin(scaled_time), cos(scaled_time)])
// The increment is a float64 scalar; times an int64 arange it gives float32 (the default dtype), the scalar
// rounded to float32 first: fl(fl(-inc)·i); expf; fl(fl(p)·ω); sinf/cosf. Whisper's denominator
// channels/2 - 1 is downscale_freq_shift 1; for a plan of another shift this variant takes
// inc = ln(base)/(dim/2 - shift) in double (the same formula over the plan's frequency dim), and places
// the channels by the plan's layout and flip (Whisper's own: concatenated, unflipped). A real position t is
// what `torch.arange(length)` would hold as a float32 tensor, fl(t); Whisper has no scale: a plan's is
// applied as PyTorch multiplies a float32 tensor by a Python float, fl(fl(scale)·angle).
//
// Contract (derived), base <= 1e7, downscale_freq_shift <= 1 (i/(dim/2 - shift) <= 1):
//   exponent: inc in double (np.log and the division, 2·2^-53 relative), fl(-inc), fl(·i): relative
//   2.0001·2^-24, within 2.0001·ln b·2^-24 absolutely; expf (<= 1 ULP, 2·2^-24 relative): ω within
//   (2.0001·ln b + 2.0001)·2^-24 relative; angle: fl(p) exact (p <= 2^24), the product one rounding:
//   (2.0001·ln b + 3.0002)·2^-24·|φ| <= 35.3·2^-24·|φ| (ln 1e7 = 16.1181): c1 = 35.3; scaled or at real
//   positions fl(t) (charged), fl(scale) and its product: c1_scale = 3; |φ| = |scale·t·ω|;
//   kernel: sinf/cosf 1 ULP <= 2^-24 (ck = 1); float32 is the compute type, bfloat16/float16 round once.
//   Budget: c0·u_out + (1 + 35.3·|φ|)·2^-24, + 3·2^-24·|φ| scaled or real. Largest |scale·t|: 2^24; t and
//   scale normal float32 magnitudes (pe/api.h).
#include <cmath>

#include "detail/framework_sincos.h"
#include "pe/detail/pairwise_variant.h"
#include "pe/register.h"

namespace pe {
namespace {

struct WhisperSinusoidsSinCos {
  explicit WhisperSinusoidsSinCos(const SinusoidalPlan& plan)
      : neg_increment(
            static_cast<float>(-(std::log(plan.params().base) / (static_cast<double>(plan.n_pairs()) -
                                                                 plan.params().downscale_freq_shift)))),
        scale(static_cast<float>(plan.scale())) {}
  void operator()(double t, std::size_t i, float& s, float& c) const noexcept {
    const float inv_timescale = std::exp(neg_increment * static_cast<float>(i));
    const float angle = scale * (static_cast<float>(t) * inv_timescale);
    s = std::sin(angle);
    c = std::cos(angle);
  }
  float neg_increment;
  float scale;
};

const Contract kWhisperContract = detail::framework_table_contract(
    "glibc expf, sinf, cosf <= 1 ULP; downscale_freq_shift <= 1", 35.3, 0, 3);

PE_REGISTER_SINUSOIDAL("sinusoidal.whisper_f32", kWhisperContract,
                       detail::PairwiseSinusoidal<float, WhisperSinusoidsSinCos>);

}  // namespace
}  // namespace pe

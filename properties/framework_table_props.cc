// The framework variants of issue 49 reproduce their published code bit for bit: each expectation below is
// transcribed from the Python source (line by line, in the tensor types that code computes in), not from the
// variant, at the compute type's own output (float32 for the float32 formulations, float64 for NumPy's).

#include "support/property_util.h"

namespace pe::testing {
namespace {

// (sin, cos) of pair i at position p, as the published code computes them.
using Transcription = void (*)(const SinusoidalParams&, std::int64_t p, std::size_t i, double& s, double& c);

// diffusers models/embeddings.py get_timestep_embedding (max_period = base):
//   exponent = -math.log(max_period) * torch.arange(0, half_dim, dtype=torch.float32)
//   exponent = exponent / (half_dim - downscale_freq_shift)
//   emb = timesteps[:, None].float() * torch.exp(exponent)[None, :]; sin, cos
// A Python float times a float32 tensor: the scalar is rounded to float32 and the product is float32's.
void diffusers_transcription(const SinusoidalParams& q, std::int64_t p, std::size_t i, double& s, double& c) {
  const std::int64_t half_dim = q.dim / 2;
  const float exponent_i = static_cast<float>(-std::log(q.base)) * static_cast<float>(i);
  const float divided =
      exponent_i / static_cast<float>(static_cast<double>(half_dim) - q.downscale_freq_shift);
  const float emb = static_cast<float>(p) * std::exp(divided);
  s = std::sin(emb);
  c = std::cos(emb);
}

// openai/whisper model.py sinusoids (channels // 2 - 1 is the shift-1 denominator: dim/2 - shift in general):
//   log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)
//   inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
//   scaled_time = torch.arange(length)[:, np.newaxis] * inv_timescales[np.newaxis, :]
void whisper_transcription(const SinusoidalParams& q, std::int64_t p, std::size_t i, double& s, double& c) {
  const double log_timescale_increment =
      std::log(q.base) / (static_cast<double>(q.dim / 2) - q.downscale_freq_shift);
  const float inv_timescale = std::exp(static_cast<float>(-log_timescale_increment) * static_cast<float>(i));
  const float scaled_time = static_cast<float>(p) * inv_timescale;
  s = std::sin(scaled_time);
  c = std::cos(scaled_time);
}

// MAE util/pos_embed.py get_1d_sincos_pos_embed_from_grid (embed_dim / 2. less the shift):
//   omega = np.arange(embed_dim // 2, dtype=np.float64); omega /= embed_dim / 2.; omega = 1. / 10000**omega
//   out = np.einsum('m,d->md', pos, omega); np.sin(out), np.cos(out)
void numpy_transcription(const SinusoidalParams& q, std::int64_t p, std::size_t i, double& s, double& c) {
  double omega = static_cast<double>(i);
  omega /= static_cast<double>(q.dim) / 2. - q.downscale_freq_shift;
  omega = 1. / std::pow(q.base, omega);
  const double out = static_cast<double>(p) * omega;
  s = std::sin(out);
  c = std::cos(out);
}

struct Framework {
  const char* variant;
  DType compute;
  Transcription transcription;
};
constexpr Framework kFrameworks[] = {{"sinusoidal.diffusers_f32", DType::F32, diffusers_transcription},
                                     {"sinusoidal.whisper_f32", DType::F32, whisper_transcription},
                                     {"sinusoidal.numpy_f64", DType::F64, numpy_transcription}};

// Each framework variant's instances in its compute type (the other outputs round those values once more).
std::vector<Instance> framework_instances() {
  std::vector<Instance> out;
  for (const Instance& in : selected(Family::Sinusoidal)) {
    for (const Framework& f : kFrameworks) {
      if (in.variant->name() == f.variant && in.dtype == f.compute) out.push_back(in);
    }
  }
  return out;
}

class FrameworkTableProps : public InstanceTest {};

TEST_P(FrameworkTableProps, ReproducesThePublishedCodeBitForBit) {
  const Framework* f = nullptr;
  for (const Framework& g : kFrameworks) {
    if (in().variant->name() == g.variant) f = &g;
  }
  ASSERT_NE(f, nullptr);
  PE_RC_CHECK("table == the published code's values, every element", [&] {
    SinusoidalParams params{*gen_dim(1024).as("dim"), *gen_base().as("base"), in().layout};
    draw_table_switches(params, in().contract());
    const SinusoidalPlan plan(params);
    const auto positions = *gen_positions(max_position(), 8).as("positions");
    const std::vector<double> y = run_table(in(), plan, positions).values();
    for (std::size_t r = 0; r < positions.size(); ++r) {
      for (std::size_t i = 0; i < plan.n_pairs(); ++i) {
        double s = 0, c = 0;
        f->transcription(params, positions[r], i, s, c);
        const double got_s = y[r * plan.dim() + plan.sin_index(i)],
                     got_c = y[r * plan.dim() + plan.cos_index(i)];
        if (got_s != s || got_c != c) {
          RC_FAIL(
              fmt::format("position {} pair {}: (sin, cos) = ({:.17g}, {:.17g}), the published code's "
                          "({:.17g}, {:.17g})",
                          positions[r], i, got_s, got_c, s, c));
        }
      }
    }
  });
}

PE_INSTANTIATE(FrameworkTableProps, framework_instances());

}  // namespace
}  // namespace pe::testing

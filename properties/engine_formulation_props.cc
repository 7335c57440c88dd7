// The engines' own formulations registered as variants (issue 50, item 3), each against its published
// definition transcribed here: diffusers' float64 axial RoPE (FluxPosEmbed's get_1d_rotary_pos_embed with
// freqs_dtype=torch.float64 per axis, apply_rotary_emb in float32) bit for bit, and vLLM's linear scaling on
// positions (t = arange(max_len, float) / scaling_factor), which rounds apart from HF's inv_freq / factor
// while meaning the same angle, and is HF's own arithmetic for every other method.

#include <cmath>
#include <cstdint>
#include <vector>

#include "pe/pe.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

std::vector<float> rotated(const char* name, const RopePlan& plan, const RopeBatch& batch,
                           std::vector<float> x) {
  rope_apply(*find_variant(name), plan, batch, buffer(std::span<float>(x)));
  return x;
}

// n positions from `first`, `step` apart.
std::vector<std::int64_t> positions_from(std::int64_t first, std::int64_t step, std::size_t n) {
  std::vector<std::int64_t> p(n);
  for (std::size_t t = 0; t < n; ++t) p[t] = first + step * static_cast<std::int64_t>(t);
  return p;
}

std::vector<float> inputs(std::size_t n) {
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = static_cast<float>(std::sin(0.61 * static_cast<double>(i) + 0.3));
  return x;
}

// Flux's EmbedND at axes_dim (16, 56, 56), theta 10000, over a 3 × 5 × 7 grid of (frame, row, column) ids
// offset as a video's later chunk: each axis's freqs = 1 / theta ** (arange(0, d, 2, float64) / d), its
// angles outer(ids.float(), freqs) in float64, cos and sin cast to float32 and interleaved
// (repeat_interleave_real), the rotation (x·cos + x_rotated·sin) in float32 with x_rotated = (−x1, x0).
TEST(EngineFormulations, DiffusersF64IsFluxEmbedNdBitForBit) {
  const std::vector<std::int64_t> axes_dim = {16, 56, 56};
  RopeParams params{128, 128, 10000.0, Layout::Interleaved};
  params.form.axes_dim = axes_dim;
  const RopePlan plan(params);
  std::vector<std::int64_t> ids;  // [3, T]
  const std::int64_t frames = 3, rows = 5, cols = 7, first_frame = 40;
  for (std::int64_t axis = 0; axis < 3; ++axis)
    for (std::int64_t f = 0; f < frames; ++f)
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t c = 0; c < cols; ++c)
          ids.push_back(axis == 0 ? first_frame + f : axis == 1 ? r : c);
  const std::size_t tokens = ids.size() / 3, heads = 2;
  const RopeBatch batch{ids, 3, heads, heads * 128, 128};
  const std::vector<float> x = inputs(tokens * heads * 128);
  const std::vector<float> got = rotated("rope.diffusers_f64", plan, batch, x);
  for (std::size_t t = 0; t < tokens; ++t) {
    std::size_t channel = 0;
    for (std::size_t a = 0; a < 3; ++a) {
      const auto d = static_cast<double>(axes_dim[a]);
      const double pos = static_cast<double>(static_cast<float>(ids[a * tokens + t]));
      for (std::size_t k = 0; 2 * k < static_cast<std::size_t>(axes_dim[a]); ++k, channel += 2) {
        const double freq = 1.0 / std::pow(10000.0, static_cast<double>(2 * k) / d);
        const auto cos = static_cast<float>(std::cos(pos * freq)),
                   sin = static_cast<float>(std::sin(pos * freq));
        for (std::size_t h = 0; h < heads; ++h) {
          const std::size_t at = (t * heads + h) * 128 + channel;
          const float x0 = x[at], x1 = x[at + 1];
          const float y0 = x0 * cos + -x1 * sin, y1 = x1 * cos + x0 * sin;
          ASSERT_EQ(got[at], y0) << "token " << t << " head " << h << " channel " << channel;
          ASSERT_EQ(got[at + 1], y1) << "token " << t << " head " << h << " channel " << channel + 1;
        }
      }
    }
  }
}

// vLLM's LinearScalingRotaryEmbedding: fl(fl(p) / fl(s)) · inv_freq in float32, inv_freq HF's unscaled
// 1 / base ** (arange(0, d, 2).float() / d); rope.vllm_f32 gives exactly that, and rounds apart from
// rope.torch_f32 (HF: fl(inv_freq / s) · p) in some elements at a factor that is not a power of two.
TEST(EngineFormulations, VllmLinearDividesPositionsAndRoundsApartFromHf) {
  RopeParams params{64, 64, 10000.0, Layout::HalfSplit};
  params.scaling.type = RopeScalingType::Linear;
  params.scaling.factor = 3.0;
  const RopePlan plan(params);
  const std::vector<std::int64_t> positions = positions_from(1000, 37, 512);
  const RopeBatch batch = RopeBatch::tokens_first(positions, 1, 64);
  const std::vector<float> x = inputs(positions.size() * 64);
  const std::vector<float> vllm = rotated("rope.vllm_f32", plan, batch, x);
  const std::vector<float> hf = rotated("rope.torch_f32", plan, batch, x);
  std::size_t apart = 0;
  for (std::size_t t = 0; t < positions.size(); ++t) {
    const float time = static_cast<float>(positions[t]) / 3.0f;
    for (std::size_t j = 0; j < 32; ++j) {
      const float inv_freq = 1.0f / std::pow(10000.0f, static_cast<float>(2 * j) / 64.0f);
      const float angle = time * inv_freq, c = std::cos(angle), s = std::sin(angle);
      const float a = x[t * 64 + j], b = x[t * 64 + 32 + j];
      ASSERT_EQ(vllm[t * 64 + j], a * c - b * s) << "token " << t << " pair " << j;
      ASSERT_EQ(vllm[t * 64 + 32 + j], b * c + a * s) << "token " << t << " pair " << j;
      apart += vllm[t * 64 + j] != hf[t * 64 + j];
    }
  }
  EXPECT_GT(apart, 0u) << "vLLM's division of the positions rounds as HF's inv_freq / factor everywhere";
}

// Unscaled and under every other method vLLM's inv_freq and cache are HF's: the same bits.
TEST(EngineFormulations, VllmIsHfBitForBitBeyondLinear) {
  for (const RopeScalingType type :
       {RopeScalingType::None, RopeScalingType::Yarn, RopeScalingType::Dynamic}) {
    RopeParams params{64, 64, 500000.0, Layout::HalfSplit};
    params.scaling.type = type;
    params.scaling.factor = type == RopeScalingType::None ? 1.0 : 4.0;
    params.scaling.original_max_position = 4096;
    params.scaling.seq_len = 9000;
    const RopePlan plan(params);
    const std::vector<std::int64_t> positions = positions_from(8000, 3, 256);
    const RopeBatch batch = RopeBatch::tokens_first(positions, 1, 64);
    const std::vector<float> x = inputs(positions.size() * 64);
    EXPECT_EQ(rotated("rope.vllm_f32", plan, batch, x), rotated("rope.torch_f32", plan, batch, x))
        << to_string(type);
  }
}

}  // namespace
}  // namespace pe::testing

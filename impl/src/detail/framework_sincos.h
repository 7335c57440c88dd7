// sin/cos rules that reproduce frameworks' float32 arithmetic, for the pairwise variants.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>

#include "pe/contract.h"
#include "pe/detail/convert.h"
#include "pe/detail/frequency.h"
#include "pe/plan.h"

namespace pe::detail {

// The PyTorch tutorial's table: div_term = exp(arange(0, d, 2) * (-log(base) / d)) in float32,
// the Python scalar -log(base)/d (double) converted to float by the multiplication.
// A position t (double) as a float32 tensor holds it, fl(t); a scale as PyTorch multiplies a float32
// tensor by a Python float, fl(fl(scale)·angle) (exact for scale 1).
struct TorchTutorialSinCos {
  explicit TorchTutorialSinCos(const SinusoidalPlan& p) : plan(p), scale(static_cast<float>(p.scale())) {}
  void operator()(double t, std::size_t i, float& s, float& c) const noexcept {
    // diffusers' exp(-ln(P)·i/(d/2 - shift)) is this formula over d' = d - 2·shift (frequency_dim).
    const auto exponent_scale =
        static_cast<float>(-std::log(plan.params().base) / static_cast<double>(frequency_dim(plan)));
    const float div_term = std::exp(static_cast<float>(2 * i) * exponent_scale);
    const float angle = scale * (static_cast<float>(t) * div_term);
    s = std::sin(angle);
    c = std::cos(angle);
  }
  const SinusoidalPlan& plan;
  float scale;
};

// Hugging Face's default rotary embedding: inv_freq = 1 / base ** (arange(0, dim, 2).float() / dim)
// in float32, freqs = inv_freq · position in float32, then cos/sin in float32. Scaled plans: base is
// the NTK/dynamic base', and the gain (HF: `inv_freq /= factor`, YaRN's blend, Llama-3's smoothing,
// LongRoPE's 1/ext_factors, two or three float ops each) is one float32 multiplication by fl(g_j).
struct HfRopeSinCos {
  const RopePlan& plan;
  float inv_freq(std::size_t j) const noexcept {
    const FrequencyIndex f = plan.frequency_index(j);
    const float exponent = static_cast<float>(2 * f.index) / static_cast<float>(f.dim);
    const float inv_freq = 1.0f / std::pow(static_cast<float>(formula_base(plan)), exponent);
    const float gain = formula_gain(plan, j);
    return gain != 1.0f ? inv_freq * gain : inv_freq;
  }
  void operator()(std::int64_t p, std::size_t j, float& s, float& c) const noexcept {
    const float angle = inv_freq(j) * static_cast<float>(p);
    s = std::sin(angle);
    c = std::cos(angle);
  }
};

// HF's cos/sin (Rule: HfRopeSinCos's, or a variation of its angle) times the attention factor (in
// float32, before the cast, as HF does), stored in a 16-bit cache (T = BFloat16 or Float16) and read
// back as float.
template <class T, class Rule = HfRopeSinCos>
struct CachedHfRopeSinCos {
  static constexpr bool kAppliesAttention = true;
  const RopePlan& plan;
  void operator()(std::int64_t p, std::size_t j, float& s, float& c) const noexcept {
    Rule{plan}(p, j, s, c);
    const auto attention = static_cast<float>(plan.attention_factor());
    if (attention != 1.0f) {
      s *= attention;
      c *= attention;
    }
    s = load_as<float>(store_as<T>(s));
    c = load_as<float>(store_as<T>(c));
  }
};

// llama.cpp's CPU rope (ggml_rope_cache_init): theta_scale = powf(base, -2.0f/n_dims), theta = p,
// and theta *= theta_scale after each pair, all in float. Called with ascending pairs per position
// it follows the recurrence; any other call order replays it from pair 0 (a vision form's pairs
// replay from their own frequency index: ggml's VISION mode restarts the recurrence per axis). Scaled RoPE
// plans: the NTK/dynamic base' as llama.cpp's rope_freq_base, and the gain as its freq_factors path
// (theta/freq_factor, here one float multiplication by fl(g_j)) for every method; llama.cpp's own
// YaRN blends extrapolated and interpolated angles per position instead (same value in exact
// arithmetic).
// An axial form's axes each have their own dim: theta_scale follows the pair's, and each axis's first pair
// (frequency index 0) starts the recurrence over.
template <class Plan>
struct GgmlSinCos {
  explicit GgmlSinCos(const Plan& p) : plan(p) { scale_for(frequency_dim(p, 0)); }
  void scale_for(std::size_t frequency_dim) noexcept {
    dim = frequency_dim;
    theta_scale = std::pow(static_cast<float>(formula_base(plan)), -2.0f / static_cast<float>(dim));
  }
  void operator()(std::int64_t p, std::size_t i, float& s, float& c) noexcept {
    const std::size_t k_i = frequency_of(plan, i), dim_i = frequency_dim(plan, i);
    if (dim_i != dim) scale_for(dim_i);
    if (p != position || k_i != next) {
      theta = static_cast<float>(p);
      for (std::size_t k = 0; k < k_i; ++k) theta *= theta_scale;
      position = p;
    }
    const float gain = formula_gain(plan, i);
    const float angle = gain != 1.0f ? theta * gain : theta;
    s = std::sin(angle);
    c = std::cos(angle);
    theta *= theta_scale;
    next = k_i + 1;
  }

  const Plan& plan;
  std::size_t dim = 0;
  float theta_scale = 0;
  float theta = 0;
  std::int64_t position = -1;
  std::size_t next = 0;
};

// GgmlSinCos for the sinusoidal table at a position t given as a double: theta = fl(t), the same
// recurrence, and the scale as llama.cpp's freq_scale, fl(fl(scale)·theta) (ggml_rope_cache_init's
// theta_interp; exact for scale 1).
struct GgmlTableSinCos {
  explicit GgmlTableSinCos(const SinusoidalPlan& p)
      : theta_scale(
            std::pow(static_cast<float>(p.params().base), -2.0f / static_cast<float>(frequency_dim(p)))),
        scale(static_cast<float>(p.scale())) {}
  void operator()(double t, std::size_t i, float& s, float& c) noexcept {
    if (!(t == position) || i != next) {
      theta = static_cast<float>(t);
      for (std::size_t k = 0; k < i; ++k) theta *= theta_scale;
      position = t;
    }
    const float angle = scale * theta;
    s = std::sin(angle);
    c = std::cos(angle);
    theta *= theta_scale;
    next = i + 1;
  }

  float theta_scale;
  float scale;
  float theta = 0;
  double position = std::numeric_limits<double>::quiet_NaN();  // equal to no t: the first call starts over
  std::size_t next = 0;
};

// The contract of a framework's float32 sinusoidal table (sinusoidal.torch_f32, sinusoidal.ggml_f32; each
// file derives its own angle terms c1, c1_pair, c1_scale): sinf/cosf 1 ULP (ck = 1), bfloat16/float16 round
// once.
inline Contract framework_table_contract(const char* depends_on, double c1, double c1_pair = 0,
                                         double c1_scale = 0) {
  return {.layouts = {Layout::Interleaved, Layout::Concatenated},
          .outputs = {DType::F32, DType::BF16, DType::F16},
          .angle_type = DType::F32,
          .compute_type = DType::F32,
          .max_position = std::int64_t{1} << 24,
          .max_base = 1e7,
          .max_input_abs = 1e30,
          .depends_on = depends_on,
          .c0 = 1,
          .ck = 1,
          .c1 = c1,
          .c1_pair = c1_pair,
          .c1_scale = c1_scale};
}

}  // namespace pe::detail

// sin/cos rules that reproduce frameworks' float32 arithmetic, for the pairwise variants.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "detail/convert.h"
#include "pe/plan.h"

namespace pe::detail {

inline std::size_t frequency_dim(const SinusoidalPlan& plan) noexcept { return plan.dim(); }
inline std::size_t frequency_dim(const RopePlan& plan) noexcept { return plan.rotary_dim(); }

// The PyTorch tutorial's table: div_term = exp(arange(0, d, 2) * (-log(base) / d)) in float32,
// the Python scalar -log(base)/d (double) converted to float by the multiplication.
struct TorchTutorialSinCos {
  const SinusoidalPlan& plan;
  void operator()(std::int64_t p, std::size_t i, float& s, float& c) const noexcept {
    const auto scale = static_cast<float>(-std::log(plan.params().base) / static_cast<double>(plan.dim()));
    const float div_term = std::exp(static_cast<float>(2 * i) * scale);
    const float angle = static_cast<float>(p) * div_term;
    s = std::sin(angle);
    c = std::cos(angle);
  }
};

// Hugging Face's default rotary embedding: inv_freq = 1 / base ** (arange(0, dim, 2).float() / dim)
// in float32, freqs = inv_freq · position in float32, then cos/sin in float32.
struct HfRopeSinCos {
  const RopePlan& plan;
  void operator()(std::int64_t p, std::size_t j, float& s, float& c) const noexcept {
    const float exponent = static_cast<float>(2 * j) / static_cast<float>(plan.rotary_dim());
    const float inv_freq = 1.0f / std::pow(static_cast<float>(plan.params().base), exponent);
    const float angle = inv_freq * static_cast<float>(p);
    s = std::sin(angle);
    c = std::cos(angle);
  }
};

// HF's cos/sin, stored in a 16-bit cache (T = BFloat16 or Float16) and read back as float.
template <class T>
struct CachedHfRopeSinCos {
  const RopePlan& plan;
  void operator()(std::int64_t p, std::size_t j, float& s, float& c) const noexcept {
    HfRopeSinCos{plan}(p, j, s, c);
    s = load_as<float>(store_as<T>(s));
    c = load_as<float>(store_as<T>(c));
  }
};

// llama.cpp's CPU rope (ggml_rope_cache_init): theta_scale = powf(base, -2.0f/n_dims), theta = p,
// and theta *= theta_scale after each pair, all in float. Called with ascending pairs per position
// it follows the recurrence; any other call order replays it from pair 0.
template <class Plan>
struct GgmlSinCos {
  explicit GgmlSinCos(const Plan& p)
      : plan(p),
        theta_scale(
            std::pow(static_cast<float>(p.params().base), -2.0f / static_cast<float>(frequency_dim(p)))) {}
  void operator()(std::int64_t p, std::size_t i, float& s, float& c) noexcept {
    if (p != position || i != next) {
      theta = static_cast<float>(p);
      for (std::size_t k = 0; k < i; ++k) theta *= theta_scale;
      position = p;
    }
    s = std::sin(theta);
    c = std::cos(theta);
    theta *= theta_scale;
    next = i + 1;
  }

  const Plan& plan;
  float theta_scale;
  float theta = 0;
  std::int64_t position = -1;
  std::size_t next = 0;
};

}  // namespace pe::detail

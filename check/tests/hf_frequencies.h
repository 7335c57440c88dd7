// Kernels for the frequency recovery and fit tests, built from the published formulas (HF transformers'
// modeling_rope_utils: _compute_default_rope_parameters, _compute_llama3_parameters,
// _compute_yarn_parameters, _compute_dynamic_ntk_parameters), re-derived here rather than taken from the
// plans under test, and rounded to float32 as a kernel's inv_freq buffer is.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numbers>
#include <random>
#include <vector>

#include "explain/convention_fit.h"

namespace pe::check::testing {

inline constexpr std::size_t kDim = 128, kPairs = 64, kHeads = 4;

// base^(-2j/d).
inline std::vector<double> default_inv_freq(double base) {
  std::vector<double> w(kPairs);
  for (std::size_t j = 0; j < kPairs; ++j) w[j] = std::pow(base, -2.0 * static_cast<double>(j) / kDim);
  return w;
}

// Wavelengths above original/low_freq_factor divided by the factor, below original/high_freq_factor kept,
// between a smooth blend.
inline std::vector<double> llama3_inv_freq(double base, double factor, double low, double high,
                                           double original) {
  std::vector<double> w = default_inv_freq(base);
  for (double& f : w) {
    const double wavelen = 2 * std::numbers::pi / f;
    if (wavelen > original / low) {
      f /= factor;
    } else if (wavelen >= original / high) {
      const double smooth = (original / wavelen - low) / (high - low);
      f = (1 - smooth) * f / factor + smooth * f;
    }
  }
  return w;
}

// Truncated YaRN: the ramp between find_correction_dim(beta_fast) floored and find_correction_dim(beta_slow)
// ceiled blends θ_j (fast pairs) into θ_j / factor (slow pairs) by extrapolation = 1 - ramp; `inverted`
// blends by the ramp itself (the bug).
inline std::vector<double> yarn_inv_freq(double base, double factor, double beta_fast, double beta_slow,
                                         double original, bool inverted = false) {
  const auto correction_dim = [&](double rotations) {
    return kDim * std::log(original / (rotations * 2 * std::numbers::pi)) / (2 * std::log(base));
  };
  const double low = std::max(0.0, std::floor(correction_dim(beta_fast)));
  double high = std::min(static_cast<double>(kDim - 1), std::ceil(correction_dim(beta_slow)));
  if (low == high) high += 0.001;
  std::vector<double> w = default_inv_freq(base);
  for (std::size_t j = 0; j < kPairs; ++j) {
    const double ramp = std::clamp((static_cast<double>(j) - low) / (high - low), 0.0, 1.0);
    const double extrapolation = inverted ? ramp : 1 - ramp;
    w[j] = w[j] / factor * (1 - extrapolation) + w[j] * extrapolation;
  }
  return w;
}

// Dynamic NTK at length n: base·(s·n/L - (s - 1))^(d/(d-2)).
inline double dynamic_base(double base, double factor, double original, double n) {
  return base * std::pow(factor * n / original - (factor - 1), static_cast<double>(kDim) / (kDim - 2));
}

// A batch rotated by `inv_freq` (each rounded to float32) at positions divided by `position_scale`, times
// `gain` (an attention factor on cos and sin), in double, rounded to float32 (a half-split kernel):
// positions 0..31, then spread up to 200000.
struct Kernel {
  std::vector<std::int64_t> positions;
  std::vector<double> x, y;
  explicit Kernel(const std::vector<double>& inv_freq, double gain = 1, double position_scale = 1) {
    for (std::int64_t p = 0; p < 32; ++p) positions.push_back(p);
    for (std::int64_t k = 1; k <= 32; ++k) positions.push_back(k * 6151);
    std::mt19937_64 g(20261202);
    std::normal_distribution<double> normal;
    x.resize(positions.size() * kHeads * kDim);
    for (double& v : x) v = static_cast<float>(normal(g));
    y.resize(x.size());
    for (std::size_t t = 0; t < positions.size(); ++t)
      for (std::size_t h = 0; h < kHeads; ++h)
        for (std::size_t j = 0; j < kPairs; ++j) {
          const std::size_t row = (t * kHeads + h) * kDim;  // half-split: (j, j + 64)
          const double phi = static_cast<double>(positions[t]) / position_scale *
                             static_cast<double>(static_cast<float>(inv_freq[j]));
          const double a = x[row + j], b = x[row + j + kPairs];
          y[row + j] = static_cast<float>(gain * (a * std::cos(phi) - b * std::sin(phi)));
          y[row + j + kPairs] = static_cast<float>(gain * (a * std::sin(phi) + b * std::cos(phi)));
        }
  }
  RopeData data() const { return {x, y, RopeBatch::tokens_first(positions, kHeads, kDim), kDim, kDim, {}}; }
};

}  // namespace pe::check::testing

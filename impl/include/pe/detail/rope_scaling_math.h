// The RoPE scaling formulas, written once for any real type R: the plan instantiates them in long
// double, the reference (reference/) in MPFR at ~334 bits. R needs +, -, *, /, comparisons and
// log, pow, sqrt, floor, ceil found by argument-dependent lookup or in std. Parameters are assumed
// valid (RopePlan checks them first).
//
// Every rule is ω'_j = ω_j·g_j with ω_j = base'^(-2j/d) (d = rotary_dim, base' the NTK/dynamic
// base or the given one) and a per-pair gain g_j; cos and sin are multiplied by an attention factor.
// Gains are written as 1 - r·(1 - 1/s) so that s = 1 gives g = 1 exactly in any type.
// HF's modeling_rope_utils.py is quoted by function name next to each rule.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "pe/rope_scaling.h"

namespace pe {

template <class R>
class ScalingRule {
 public:
  // `pi` at R's precision; `dim` is the rotary dimension.
  ScalingRule(const RopeScaling& s, std::int64_t dim, double base, const R& pi)
      : s_(s),
        dim_(dim),
        base_(base),
        pi_(pi),
        effective_base_(effective_base_of(s, dim, base)),
        rotating_pairs_(s.type == RopeScalingType::Proportional ? proportional_pairs(s, dim) : dim / 2) {
    if (s.type == RopeScalingType::Yarn) yarn_correction_range();
    attention_ = attention_of(s);
    // The per-pair gains' constants, once, not divided again at the reference's precision for every pair of
    // every drawn config: the same operations on the same operands as in each gain, so the same bits.
    if (s.type == RopeScalingType::Linear || s.type == RopeScalingType::Yarn ||
        s.type == RopeScalingType::Proportional)
      inv_factor_ = R(1) / R(s.factor);
    if (s.type == RopeScalingType::Llama3) llama3_ = Llama3Terms(s);
  }

  const R& effective_base() const noexcept { return effective_base_; }
  const R& attention() const noexcept { return attention_; }
  // YaRN's clamped correction range (HF find_correction_range), before the lo == hi nudge.
  const R& correction_low() const noexcept { return low_; }
  const R& correction_high() const noexcept { return high_; }

  // ω_j at the effective base, before the per-pair gain.
  R unscaled(std::size_t j) const {
    using std::pow;
    const R e = -R(static_cast<long long>(2 * j)) / R(static_cast<long long>(dim_));
    return pow(effective_base_, e);
  }
  // g_j for the frequency ω_j of pair j: the method's, over the position scale.
  R gain(std::size_t j, const R& omega) const {
    const R g = method_gain(j, omega);
    return s_.position_scale == 1.0 ? g : g / R(s_.position_scale);
  }
  R method_gain(std::size_t j, const R& omega) const {
    const R one(1);
    switch (s_.type) {
      case RopeScalingType::Linear:  // _compute_linear_scaling_rope_parameters: inv_freq /= factor
        return inv_factor_;
      case RopeScalingType::Yarn:
        return one - yarn_ramp(j) * (one - inv_factor_);
      case RopeScalingType::Llama3:
        return llama3_gain(R(2) * pi_ / omega, s_, llama3_);
      case RopeScalingType::LongRope:  // 1 / (ext_factors * base**(2j/d))
        return one / R(longrope_uses_long(s_) ? s_.long_factor[j] : s_.short_factor[j]);
      // _compute_proportional_rope_parameters: 1/base**(2j/head_dim) for j < rope_angles, zeros past them,
      // all / factor. A zero frequency turns by nothing: its pair passes through (cos 0 = 1, sin 0 = 0).
      case RopeScalingType::Proportional:
        return static_cast<std::int64_t>(j) < rotating_pairs_ ? inv_factor_ : R(0);
      default:
        return one;
    }
  }
  R inv_freq(std::size_t j) const {
    const R w = unscaled(j);
    return w * gain(j, w);
  }

  // HF _compute_llama3_parameters as a function of the wavelength λ = 2π/ω: λ < L/high keeps ω,
  // λ > L/low divides by s, between them smooth = (L/λ - low)/(high - low) and
  // ω' = (1 - smooth)·ω/s + smooth·ω. Both branch tests are HF's (strict), so λ exactly at a
  // boundary takes the smooth formula, which equals the neighbouring branch there.
  static R llama3_gain(const R& wavelength, const RopeScaling& s) {
    return llama3_gain(wavelength, s, Llama3Terms(s));
  }

  // HF _compute_dynamic_ntk_parameters: n = max(seq_len, L); b·(s·n/L - (s - 1))^(d/(d-2)), written
  // as b·(1 + s·(n - L)/L)^(d/(d-2)) so that n = L is exactly b and the inner term is >= 1 for any
  // s > 0 (the form that goes negative in some engines is never evaluated). NTK-aware: b·s^(d/(d-2)).
  // vLLM's DynamicNTKScalingRotaryEmbedding (static): n = max_len = s·L, so the inner term is
  // s·s - (s - 1) = 1 + s·(s - 1) (> 0 for any s); its DynamicNTKAlphaRotaryEmbedding: b·alpha^(d/(d-2)).
  static R effective_base_of(const RopeScaling& s, std::int64_t dim, double base) {
    using std::pow;
    const R b(base), d(static_cast<long long>(dim));
    if (s.type == RopeScalingType::Ntk) return b * pow(R(s.factor), d / (d - R(2)));
    if (s.type == RopeScalingType::Dynamic && s.alpha) return b * pow(R(*s.alpha), d / (d - R(2)));
    if (s.type == RopeScalingType::Dynamic && s.dynamic_semantics == DynamicSemantics::Static) {
      const R f(s.factor);
      return b * pow(R(1) + f * (f - R(1)), d / (d - R(2)));
    }
    if (s.type != RopeScalingType::Dynamic || s.seq_len <= s.original_max_position) return b;
    const R L(static_cast<long long>(s.original_max_position));
    const R inner = R(1) + R(s.factor) * R(static_cast<long long>(s.seq_len - s.original_max_position)) / L;
    return b * pow(inner, d / (d - R(2)));
  }

  // HF: "if seq_len and seq_len > original_max_position_embeddings" picks long_factor.
  static bool longrope_uses_long(const RopeScaling& s) noexcept {
    return s.seq_len > 0 && s.seq_len > s.original_max_position;
  }

  // HF get_mscale: 1 for s <= 1, else 0.1·m·ln s + 1. DeepSeek multiplies its softmax scale by
  // mscale_of(mscale_all_dim)², outside cos and sin.
  R mscale_of(const R& m) const {
    using std::log;
    if (!(s_.factor > 1.0)) return R(1);
    return R(0.1) * m * log(R(s_.factor)) + R(1);
  }

 private:
  // llama3_gain's constants of the scaling alone.
  struct Llama3Terms {
    R L{}, low_wavelen{}, high_wavelen{}, inv_s{};
    Llama3Terms() = default;
    explicit Llama3Terms(const RopeScaling& s)
        : L(static_cast<long long>(s.original_max_position)),
          low_wavelen(L / R(s.low_freq_factor)),
          high_wavelen(L / R(s.high_freq_factor)),
          inv_s(R(1) / R(s.factor)) {}
  };
  static R llama3_gain(const R& wavelength, const RopeScaling& s, const Llama3Terms& t) {
    const R one(1);
    if (wavelength < t.high_wavelen) return one;
    if (wavelength > t.low_wavelen) return t.inv_s;
    // low == high: λ exactly at the step, where HF's smooth factor is 0/0 (NaN); λ = 2π·b^(2j/d) never
    // equals a rational L/low, so this keeps θ rather than produce a NaN.
    if (!(t.high_wavelen < t.low_wavelen)) return one;
    const R smooth =
        (t.L / wavelength - R(s.low_freq_factor)) / (R(s.high_freq_factor) - R(s.low_freq_factor));
    return one - (one - smooth) * (one - t.inv_s);
  }

  R attention_of(const RopeScaling& s) const {
    using std::log;
    using std::sqrt;
    const bool multiply = s.type == RopeScalingType::Yarn && s.yarn_attention == YarnAttention::Multiply;
    if (s.attention_factor && !multiply) return R(*s.attention_factor);  // any method's, when given
    if (s.type == RopeScalingType::Yarn) {
      // vLLM's DeepseekScalingRotaryEmbedding: the ratio (times attn_factor); YaRNScalingRotaryEmbedding:
      // yarn_get_mscale(s) * attn_factor. HF: the ratio or get_mscale(s), replaced by attention_factor.
      const R own = s.mscale && s.mscale_all_dim ? mscale_of(R(*s.mscale)) / mscale_of(R(*s.mscale_all_dim))
                                                 : mscale_of(R(1));
      return s.attention_factor ? own * R(*s.attention_factor) : own;
    }
    if (s.type == RopeScalingType::LongRope) {
      if (!(s.factor > 1.0)) return R(1);
      return sqrt(R(1) + log(R(s.factor)) / log(R(static_cast<long long>(s.original_max_position))));
    }
    return R(1);
  }
  // HF find_correction_dim / find_correction_range, on the given base (not an NTK one).
  R correction_dim(double rotations) const {
    using std::log;
    const R d(static_cast<long long>(dim_)), L(static_cast<long long>(s_.original_max_position));
    return d * log(L / (R(rotations) * R(2) * pi_)) / (R(2) * log(R(base_)));
  }
  void yarn_correction_range() {
    using std::ceil;
    using std::floor;
    R low = correction_dim(s_.beta_fast), high = correction_dim(s_.beta_slow);
    if (s_.truncate) {
      low = floor(low);
      high = ceil(high);
    }
    low_ = low < R(0) ? R(0) : low;
    const R top(static_cast<long long>(dim_ - 1));  // HF clamps to dim - 1, not dim/2 - 1
    high_ = high > top ? top : high;
    ramp_span_ = (low_ == high_ ? high_ + R(0.001) : high_) - low_;
  }
  // HF linear_ramp_factor: clamp((j - low)/(high - low), 0, 1), high += 0.001 when low == high.
  R yarn_ramp(std::size_t j) const {
    const R r = (R(static_cast<long long>(j)) - low_) / ramp_span_;
    if (r < R(0)) return R(0);
    if (r > R(1)) return R(1);
    return r;
  }

  RopeScaling s_;
  std::int64_t dim_;
  double base_;
  R pi_;
  R effective_base_;
  std::int64_t rotating_pairs_;  // proportional's pairs with a frequency (every pair for other methods)
  R attention_ = R(1);
  R low_ = R(0), high_ = R(0);
  R ramp_span_ = R(0);  // yarn_ramp's high − low
  R inv_factor_{};      // 1 / factor (linear, YaRN, proportional)
  Llama3Terms llama3_;
};

}  // namespace pe

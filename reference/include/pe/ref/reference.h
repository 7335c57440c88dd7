// The exact reference: sinusoidal values and RoPE rotations in MPFR at a precision chosen from the
// largest position, with the correctly rounded result in every output type (Ziv's test, retried
// at the wider tier when a rounding cannot be decided).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "pe/detail/rope_scaling_math.h"
#include "pe/plan.h"
#include "pe/ref/double_double.h"
#include "pe/ref/fast_trig.h"
#include "pe/ref/real.h"
#include "pe/types.h"

namespace pe::ref {

// ω_i = base^(-2i/dim) at the wide tier, the whole table computed on the first read (the powers together,
// pe/ref/frequency_ladder.h, ~1 µs each rather than a pow's ~10 µs). Not thread-safe (one object); the values
// are kept process-wide per (base, dim, scaling, form), so the next object of the same parameters (the next
// check of a drawn config, a shard's next batch) reads them instead of recomputing. With a RoPE scaling,
// ω'_i by the formulas of pe/detail/rope_scaling_math.h evaluated at the wide tier. A rotary form
// (pe/rope_form.h) picks each pair's frequency index; `dim` is then the form's frequency dimension.
class Frequencies {
 public:
  Frequencies(std::size_t n_pairs, std::int64_t dim, double base, const RopeScaling& scaling = {},
              RopeForm form = {});
  std::size_t size() const noexcept { return w_.size(); }
  const Real& operator[](std::size_t i) const;
  // ω_i rounded to a double-double (relative error <= 2^-105, fast_trig.h's to_dd), kept like the values.
  dd::DD omega(std::size_t i) const;
  // The scaling's rule at the wide tier, built once per parameters like the values.
  const ScalingRule<Real>& rule() const noexcept;
  bool scaled() const noexcept { return scaled_; }

 private:
  bool scaled_;
  RopeForm form_;
  mutable std::vector<const Real*> w_;  // the shared values read so far (set once, never moved)
  std::shared_ptr<const struct FrequencyTable> shared_;  // the process-wide values of these parameters
};

// A high-precision value with a bound on its distance to the exact value.
struct Enclosure {
  Real value;
  Real radius;
};

// A value from the fast path (pe/ref/fast_trig.h): a double-double within `radius` of the exact one.
struct FastValue {
  dd::DD value;
  double radius = 0;
};

// A position that is a real number (a diffusion timestep, a grid coordinate): the exact binary value of t.
struct RealPosition {
  double t = 0;
};

// The sinusoidal table of SinusoidalParams, every switch read (flip_sin_to_cos, downscale_freq_shift, scale;
// an odd dim's last channel is 0, as diffusers and fairseq pad it), at integer or real positions: a real
// position is the exact binary value of the double given.
class Sinusoidal {
 public:
  // Throws InvalidArgument naming dim, base, layout, downscale_freq_shift or scale. Positions up to
  // max_position in magnitude pick the precision.
  Sinusoidal(const SinusoidalParams& params, std::int64_t max_position);
  Sinusoidal(const SinusoidalParams& params, RealPosition max_abs_position);

  long precision_bits() const noexcept { return bits_; }
  const SinusoidalParams& params() const noexcept { return params_; }
  std::size_t n_pairs() const noexcept { return inv_freq_.size(); }
  // Whether a channel is an odd dim's zero pad (its exact value is 0 at every position).
  bool is_pad(std::size_t channel) const noexcept { return channel >= 2 * n_pairs(); }
  // The exact angle scale·p·ω_i of a channel, rounded to double (for budgets and reports).
  double angle(std::int64_t position, std::size_t channel) const;
  double angle(RealPosition position, std::size_t channel) const;
  // The pair a channel belongs to in the layout (a pad channel: none, 0 returned).
  std::size_t pair_of(std::size_t channel) const noexcept;
  // out[position, channel] in the plan's layout, to within the enclosure's radius.
  Enclosure exact(std::int64_t position, std::size_t channel) const;
  Enclosure exact(RealPosition position, std::size_t channel) const;
  // The same from the fast path; nullopt when it is off or |p·ω| >= 2^52.
  std::optional<FastValue> fast_exact(std::int64_t position, std::size_t channel) const;
  std::optional<FastValue> fast_exact(RealPosition position, std::size_t channel) const;
  // Both channels of a pair at once (sin, cos) from the fast path.
  std::optional<FastSinCos> fast_pair(std::int64_t position, std::size_t pair) const;
  std::optional<FastSinCos> fast_pair(RealPosition position, std::size_t pair) const;
  // A pair's scale·ω as a double-double (relative error <= 2^-105, 2^-103 with a scale), on first use.
  const dd::DD& omega(std::size_t pair) const;
  // The correctly rounded out[position, channel] in `type`, as a double: the fast path
  // (pe/ref/fast_trig.h) where Ziv's test decides it, MPFR otherwise.
  double rounded(std::int64_t position, std::size_t channel, DType type) const;
  double rounded(RealPosition position, std::size_t channel, DType type) const;

 private:
  template <class R>
  Enclosure evaluate(RealPosition position, std::size_t channel) const;
  bool is_sin(std::size_t channel) const noexcept;

  SinusoidalParams params_;
  Frequencies inv_freq_;
  long bits_;
  bool wide_;
  mutable std::vector<std::optional<dd::DD>> omega_dd_;
};

class Rope {
 public:
  Rope(const RopeParams& params, std::int64_t max_position);
  // For real positions (a video grid's fractional coordinates) up to max_abs_position in magnitude: the
  // precision is that of the integer ceil(|t|).
  Rope(const RopeParams& params, RealPosition max_abs_position);

  long precision_bits() const noexcept { return bits_; }
  const RopeParams& params() const noexcept { return params_; }
  std::size_t n_pairs() const noexcept { return inv_freq_.size(); }
  // The exact angle p·θ_j of pair j, rounded to double.
  double angle(std::int64_t position, std::size_t pair) const;
  // At a real position t, the exact binary value of the double given: t·θ_j exactly, then rounded.
  double angle(RealPosition position, std::size_t pair) const;
  // Pair j's (a, b) rotated by ±p·θ_j exactly: (a cos - b sin, a sin + b cos).
  std::pair<Enclosure, Enclosure> rotate(std::int64_t position, std::size_t pair, double a, double b,
                                         RopeDirection direction = RopeDirection::Forward) const;
  std::pair<Enclosure, Enclosure> rotate(RealPosition position, std::size_t pair, double a, double b,
                                         RopeDirection direction = RopeDirection::Forward) const;
  // The same rotation from the fast path; nullopt when it is off or |p·θ_j| >= 2^52.
  std::optional<std::pair<FastValue, FastValue>> fast_rotate(
      std::int64_t position, std::size_t pair, double a, double b,
      RopeDirection direction = RopeDirection::Forward) const;
  // fast_rotate in two steps, for many (a, b) at one (position, pair) (every head of a token): the
  // double-double sin and cos of p·θ_j with their radius (nullopt when the fast path declines), then the
  // rotation by them. fast_rotate(p, j, a, b) == fast_rotate_by(*fast_sincos(p, j), a, b).
  std::optional<FastSinCos> fast_sincos(std::int64_t position, std::size_t pair) const;
  std::optional<FastSinCos> fast_sincos(RealPosition position, std::size_t pair) const;
  // Inline: it runs for every element a check compares. Each product's relative error <= 2u², each sum's
  // <= 3u² (u = 2^-53) of |a| + |b| at most, so (|a| + |b|)·2^-100 covers them; the attention factor
  // (relative error 2^-105 from to_dd, 4u² from the product) another |A·y|·2^-100.
  std::optional<std::pair<FastValue, FastValue>> fast_rotate_by(
      const FastSinCos& sc, double a, double b, RopeDirection direction = RopeDirection::Forward) const {
    const double n = std::fabs(a) + std::fabs(b);
    if (!(n < 0x1p900)) return std::nullopt;
    const dd::DD s = direction == RopeDirection::Inverse ? dd::neg(sc.sin) : sc.sin;
    FastValue y0{dd::sub(dd::mul(sc.cos, a), dd::mul(s, b)), n * (sc.radius + 0x1p-100)};
    FastValue y1{dd::add(dd::mul(s, a), dd::mul(sc.cos, b)), y0.radius};
    if (scaled_) {
      const dd::DD& g = attention_dd_;
      for (FastValue* y : {&y0, &y1}) {
        y->value = dd::mul(y->value, g);
        y->radius = std::fabs(g.hi) * y->radius * (1 + 0x1p-50) + std::fabs(y->value.hi) * 0x1p-100;
      }
    }
    return std::pair{y0, y1};
  }
  // The attention factor fast_rotate_by multiplies by, as a double-double; null when the plan has none.
  const dd::DD* fast_attention() const noexcept { return scaled_ ? &attention_dd_ : nullptr; }
  // Pair j's θ_j as a double-double (relative error <= 2^-105 plus the scaling's condition).
  const dd::DD& omega(std::size_t pair) const;
  // The correctly rounded rotation in `type`: the fast path where Ziv's test decides both, else MPFR.
  std::pair<double, double> rounded(std::int64_t position, std::size_t pair, double a, double b, DType type,
                                    RopeDirection direction = RopeDirection::Forward) const;
  std::pair<double, double> rounded(RealPosition position, std::size_t pair, double a, double b, DType type,
                                    RopeDirection direction = RopeDirection::Forward) const;
  // rounded() with fast_sincos(position, pair) given (once per token for all its heads): the same bits.
  std::pair<double, double> rounded_by(const std::optional<FastSinCos>& sc, std::int64_t position,
                                       std::size_t pair, double a, double b, DType type,
                                       RopeDirection direction = RopeDirection::Forward) const {
    if (sc && fast_path_enabled()) {
      if (const auto r = fast_rounded(*sc, a, b, type, direction)) return *r;
    }
    return rounded_by_mpfr(position, pair, a, b, type, direction);
  }
  // (cos, sin) of pair j's angle times the attention factor, correctly rounded in `type`: the table
  // `export` writes (HF's cos and sin include attention_scaling).
  std::pair<double, double> cos_sin(std::int64_t position, std::size_t pair, DType type) const;
  // The scaled frequency θ'_j and the attention factor at the wide tier, and the scaling's rule.
  const Real& inv_freq(std::size_t pair) const { return inv_freq_[pair]; }
  const Real& attention() const noexcept { return inv_freq_.rule().attention(); }
  const ScalingRule<Real>& rule() const noexcept { return inv_freq_.rule(); }

 private:
  Rope(const RopePlan& plan, std::int64_t max_position);
  // P: std::int64_t or RealPosition.
  template <class R, class P>
  std::pair<Enclosure, Enclosure> evaluate(P position, std::size_t pair, double a, double b,
                                           RopeDirection direction) const;
  std::optional<std::pair<double, double>> fast_rounded(const FastSinCos& sc, double a, double b, DType type,
                                                        RopeDirection direction) const {
    if (!(std::fabs(a) + std::fabs(b) > 0)) return std::nullopt;  // zeros: the sign is MPFR's to decide
    const auto y = fast_rotate_by(sc, a, b, direction);
    if (!y) return std::nullopt;
    const auto v0 = fast_rounding(y->first.value, y->first.radius, type);
    if (!v0) return std::nullopt;
    const auto v1 = fast_rounding(y->second.value, y->second.radius, type);
    if (!v1) return std::nullopt;
    return std::pair{*v0, *v1};
  }
  // The MPFR path of rounded_by (counted as a fallback when the fast path is on).
  std::pair<double, double> rounded_by_mpfr(std::int64_t position, std::size_t pair, double a, double b,
                                            DType type, RopeDirection direction) const;

  RopeParams params_;
  Frequencies inv_freq_;
  long bits_;
  bool wide_;
  double frequency_slack_ = 1;  // see evaluate()
  mutable std::vector<std::optional<dd::DD>> omega_dd_;
  bool scaled_;          // the plan scales its frequencies: cos and sin carry the attention factor
  dd::DD attention_dd_;  // that factor (1 unscaled)
};

// |y - exact| as a double (rounded up is not needed: the metric is reported, not proved).
double abs_error(double y, const Real& exact);
// |y - exact| / ulp_of(exact, type): SLEEF's fractional ULP error.
double ulp_error(double y, const Real& exact, DType type);

// Nearest `type` value of an enclosed number, decided by Ziv's test: the ends of the enclosure
// must round alike. nullopt when they do not.
std::optional<double> decided_rounding(const Enclosure& e, DType type);

// How many roundings stayed undecided even at the wide tier (expected: 0), and one more of them.
std::uint64_t undecided_roundings() noexcept;
// The same count for the calling thread alone (a check of one's own roundings while others run).
std::uint64_t undecided_roundings_in_this_thread() noexcept;
void record_undecided() noexcept;

}  // namespace pe::ref

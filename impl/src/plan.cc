#include "pe/plan.h"

#include <algorithm>
#include <cmath>

#include "detail/check.h"
#include "pe/detail/rope_scaling_math.h"
#include "plan_cache.h"

namespace pe {
namespace {

void check_base(double base) {
  if (!std::isfinite(base) || !(base > 1.0)) {
    detail::fail("base", "base must be finite and > 1, got " + detail::show(base));
  }
}

void check_layout(Layout layout, Family family) {
  if (!layout_belongs_to(layout, family)) {
    detail::fail("layout", "layout " + std::string(to_string(layout)) + " is not a " +
                               std::string(to_string(family)) + " layout");
  }
}

// The exponent and the power are formed in long double (64-bit significand on x86-64): after the
// final rounding to double (relative 2^-53) what is left is 2^-64·(|ln base|·|e| + 2) relative,
// below 0.02·2^-53 for base <= 1e12. Contracts rely on the total 1.02·2^-53. Where long double is
// double (MSVC, some ARM ABIs) this bound does not hold and neither do the contracts built on it.
// Computed once per plan: the double frequencies and the turn steps both come from it.
std::vector<long double> powers(std::size_t n_pairs, std::size_t dim, long double b) {
  std::vector<long double> w(n_pairs);
  for (std::size_t i = 0; i < n_pairs; ++i) {
    const long double e = -static_cast<long double>(2 * i) / static_cast<long double>(dim);
    w[i] = std::pow(b, e);
  }
  return w;
}

// powers() over each pair's frequency index (pe/rope_form.h): the identity for text and M-RoPE.
std::vector<long double> form_powers(const RopeForm& form, std::size_t n_pairs, long double b) {
  std::vector<long double> w(n_pairs);
  for (std::size_t j = 0; j < n_pairs; ++j) {
    const FrequencyIndex f = frequency_index(form, n_pairs, j);
    const long double e = -static_cast<long double>(2 * f.index) / static_cast<long double>(f.dim);
    w[j] = std::pow(b, e);
  }
  return w;
}

// form_powers, kept per base, form and pair count (plan_cache.h).
std::vector<long double> kept_form_powers(const RopeForm& form, std::size_t n_pairs, long double b) {
  const std::string key = detail::powers_key(form, n_pairs, b);
  if (const auto kept = detail::kept_powers(key)) return *kept;
  std::vector<long double> w = form_powers(form, n_pairs, b);
  detail::keep_powers(key, w);
  return w;
}

// The axial form's dims cover the rotary channels exactly, each axis a whole number of pairs, unscaled: the
// diffusion models' ladders are plain, and a scaling's per-pair rules are defined over one ladder.
void check_axes_dim(const RopeParams& p) {
  const auto& a = p.form.axes_dim;
  const std::string given = " (axes_dim " + show_list(a) + ")";
  if (!p.form.mrope_section.empty() || p.form.vision != VisionRope::None) {
    detail::fail("axes_dim",
                 "axes_dim is a form of its own: give it without mrope_section or vision" + given);
  }
  if (a.size() > kMaxAxialAxes) {
    detail::fail("axes_dim", "axes_dim may have at most " + std::to_string(kMaxAxialAxes) + " axes, got " +
                                 std::to_string(a.size()) + given);
  }
  std::int64_t sum = 0;
  for (std::int64_t x : a) {
    if (x < 2 || x % 2 != 0 || x > p.rotary_dim) {
      detail::fail("axes_dim", "axes_dim entries must be even and in [2, rotary_dim = " +
                                   std::to_string(p.rotary_dim) + "], got " + std::to_string(x) + given);
    }
    sum += x;
  }
  if (sum != p.rotary_dim) {
    detail::fail("axes_dim", "axes_dim must sum to rotary_dim = " + std::to_string(p.rotary_dim) + ", got " +
                                 std::to_string(sum) + given);
  }
  if (scales(p.scaling)) {
    detail::fail("scaling", "axial RoPE (axes_dim " + show_list(a) + ") takes no scaling, got " +
                                (p.scaling.type == RopeScalingType::None
                                     ? std::string("a position scale or attention factor")
                                     : std::string(to_string(p.scaling.type))));
  }
}

// M-RoPE sections must cover the rotary pairs exactly; vision rotates the whole head, unscaled.
void check_form(const RopeParams& p) {
  const RopeForm& f = p.form;
  const std::int64_t pairs = p.rotary_dim / 2;
  if (!f.axes_dim.empty()) return check_axes_dim(p);
  if (f.vision != VisionRope::None) {
    const std::string v = "vision " + std::string(to_string(f.vision));
    if (!f.mrope_section.empty()) {
      detail::fail("vision", v + " takes no mrope_section, got " + show_list(f.mrope_section));
    }
    if (p.head_dim % 4 != 0) {
      detail::fail("head_dim", "head_dim must be a multiple of 4 for " + v + " (D/4 pairs per axis), got " +
                                   std::to_string(p.head_dim));
    }
    if (p.rotary_offset != 0 || p.rotary_dim != p.head_dim) {
      detail::fail("rotary_dim", v + " rotates the whole head: rotary_dim must be head_dim = " +
                                     std::to_string(p.head_dim) + " at rotary_offset 0, got " +
                                     std::to_string(p.rotary_dim) + " at " + std::to_string(p.rotary_offset));
    }
    if (scales(p.scaling)) {
      detail::fail("scaling", v + " takes no scaling, got " +
                                  (p.scaling.type == RopeScalingType::None
                                       ? std::string("a position scale or attention factor")
                                       : std::string(to_string(p.scaling.type))));
    }
    return;
  }
  if (f.mrope_section.empty()) return;
  const auto& s = f.mrope_section;
  if (s.size() != 3 && s.size() != 4) {
    detail::fail("mrope_section", "mrope_section must have 3 or 4 entries (t, h, w[, e]), got " +
                                      std::to_string(s.size()) + " (" + show_list(s) + ")");
  }
  std::int64_t sum = 0;
  for (std::int64_t x : s) {
    if (x < 0 || x > pairs) {
      detail::fail("mrope_section", "mrope_section entries must be in [0, rotary_dim/2 = " +
                                        std::to_string(pairs) + "], got " + show_list(s));
    }
    sum += x;
  }
  if (sum != pairs) {
    detail::fail("mrope_section", "mrope_section must sum to rotary_dim/2 = " + std::to_string(pairs) +
                                      ", got " + std::to_string(sum) + " (" + show_list(s) + ")");
  }
  // ERNIE's [h w h w … t t]: h and w alternate, so they hold the same number of pairs.
  if (f.mrope_layout == MropeLayout::Ernie && (s.size() != 3 || s[1] != s[2])) {
    detail::fail("mrope_section",
                 "the ernie layout takes three sections (t, h, w) with h == w, got " + show_list(s));
  }
}

std::vector<double> inverse_frequencies(const std::vector<long double>& w) { return {w.begin(), w.end()}; }

// step_i = round(ω_i·2^64/(2π)) from the long double ω_i (relative error <= 1.6·2^-60 with the
// exponent's rounding, base <= 1e7) times 2^64/(2π) (2^-64): |error| <= 0.5 + 2^62·1.7·2^-60 < 4.5.
TurnSteps make_turn_steps(const std::vector<long double>& w) {
  constexpr long double kTurnsPerRadian = 0xa2f9836e4e44152ap-2L;    // 2^64/(2π), 64 bits
  constexpr long double kRadiansPerUnit = 0xc90fdaa22168c235p-125L;  // 2π/2^64, 64 bits
  TurnSteps t;
  t.step.resize(w.size());
  t.cos_step.resize(w.size());
  t.sin_step.resize(w.size());
  constexpr long double kTurn = 0x1p64L;
  for (std::size_t i = 0; i < w.size(); ++i) {
    // Scaled frequencies can exceed a turn per position (factor < 1): only ω mod 2π matters for an
    // integer p, and a step past 2^63 is stored as its two's-complement wrap.
    long double units = std::fmod(w[i] * kTurnsPerRadian, kTurn);
    if (units >= kTurn / 2) units -= kTurn;
    t.step[i] = static_cast<std::uint64_t>(std::llround(units));
    long double sin_angle = 0, cos_angle = 0;
    ::sincosl(static_cast<long double>(t.step[i]) * kRadiansPerUnit, &sin_angle, &cos_angle);
    t.cos_step[i] = static_cast<double>(cos_angle);
    t.sin_step[i] = static_cast<double>(sin_angle);
  }
  return t;
}

void check_dim(const char* name, std::int64_t dim) {
  if (dim <= 0 || dim % 2 != 0) {
    detail::fail(name, std::string(name) + " must be even and positive, got " + std::to_string(dim));
  }
  if (dim > kMaxDim) {
    detail::fail(name, std::string(name) + " must be at most " + std::to_string(kMaxDim) + ", got " +
                           std::to_string(dim));
  }
}

constexpr long double kPi = 0xc.90fdaa22168c235p-2L;  // π to 64 bits

// Largest scaled frequency a plan accepts, in radians per position (unscaled ones are <= 1). Above a
// turn per position a frequency only aliases; 1024 leaves the reference's angles (<= 2^63 at 2^53)
// hundreds of bits of precision to resolve them.
constexpr long double kMaxFrequency = 1024;

void check_positive(const char* name, double v) {
  if (!std::isfinite(v) || !(v > 0.0)) {
    detail::fail(name, std::string(name) + " must be finite and > 0, got " + detail::show(v));
  }
}

void check_factors(const char* name, const std::vector<double>& f, std::size_t n_pairs) {
  if (f.size() != n_pairs) {
    detail::fail(name, std::string(name) + " must have rotary_dim/2 = " + std::to_string(n_pairs) +
                           " entries, got " + std::to_string(f.size()));
  }
  for (std::size_t j = 0; j < f.size(); ++j) {
    if (!std::isfinite(f[j]) || !(f[j] > 0.0)) {
      detail::fail(name, std::string(name) + "[" + std::to_string(j) + "] must be finite and > 0, got " +
                             detail::show(f[j]));
    }
  }
}

// HF's rope_proportion: in (0, 1] (HF takes any), and at least one pair rotating (else the method is NoPE).
void check_proportional(const RopeScaling& s, std::int64_t rotary_dim) {
  const double f = s.partial_rotary_factor;
  if (!std::isfinite(f) || !(f > 0.0) || f > 1.0)
    detail::fail("partial_rotary_factor",
                 "partial_rotary_factor must be in (0, 1] for proportional, got " + detail::show(f));
  if (proportional_pairs(s, rotary_dim) < 1)
    detail::fail("partial_rotary_factor", "partial_rotary_factor " + detail::show(f) +
                                              " leaves no rotating pair: int(" + detail::show(f) + " * " +
                                              std::to_string(rotary_dim) + " // 2) = 0");
}

// Each method's own parameters; the factor, L and seq_len for every method that reads them.
void check_scaling(const RopeScaling& s, std::int64_t rotary_dim) {
  using T = RopeScalingType;
  check_positive("position_scale", s.position_scale);  // any method's, none's too
  if (s.attention_factor) check_positive("attention_factor", *s.attention_factor);
  if (s.type == T::None) return;
  check_positive("factor", s.factor);
  if (s.seq_len < 0) detail::fail("seq_len", "seq_len must be >= 0, got " + std::to_string(s.seq_len));
  // Hunyuan's alpha fixes dynamic's base without a length: L is unread then.
  const bool alpha = s.type == T::Dynamic && s.alpha.has_value();
  if (requires_field(s.type, "original_max_position") && !alpha && s.original_max_position <= 0) {
    detail::fail("original_max_position", "original_max_position must be > 0 for " +
                                              std::string(to_string(s.type)) + ", got " +
                                              std::to_string(s.original_max_position));
  }
  if ((s.type == T::Ntk || s.type == T::Dynamic) && rotary_dim < 4) {
    detail::fail("rotary_dim", "rotary_dim must be >= 4 for " + std::string(to_string(s.type)) +
                                   " (the exponent d/(d-2)), got " + std::to_string(rotary_dim));
  }
  if (alpha) check_positive("alpha", *s.alpha);
  if (s.type == T::Proportional) check_proportional(s, rotary_dim);
  if (s.type == T::Yarn) {
    check_positive("beta_fast", s.beta_fast);
    check_positive("beta_slow", s.beta_slow);
    // Either order, as HF (which only warns): beta_fast < beta_slow runs the ramp backwards, dividing the
    // fast pairs and keeping the slow ones (torchtitan PR #3787 shipped it).
    if (s.mscale) check_positive("mscale", *s.mscale);
    if (s.mscale_all_dim) check_positive("mscale_all_dim", *s.mscale_all_dim);
  }
  if (s.type == T::Llama3) {
    check_positive("low_freq_factor", s.low_freq_factor);
    check_positive("high_freq_factor", s.high_freq_factor);
    // Equal factors (Llama-4 Scout's 1 and 1) leave no smooth band: a step at λ = L/low, as in HF.
    if (!(s.low_freq_factor <= s.high_freq_factor)) {
      detail::fail("low_freq_factor",
                   "low_freq_factor must be <= high_freq_factor=" + detail::show(s.high_freq_factor) +
                       ", got " + detail::show(s.low_freq_factor));
    }
  }
  if (s.type == T::LongRope) {
    if (s.original_max_position < 2) {
      detail::fail(
          "original_max_position",
          "original_max_position must be >= 2 for longrope (ln L divides the attention factor), got " +
              std::to_string(s.original_max_position));
    }
    const auto n_pairs = static_cast<std::size_t>(rotary_dim / 2);
    check_factors("short_factor", s.short_factor, n_pairs);
    check_factors("long_factor", s.long_factor, n_pairs);
  }
}

// A bound on |θ̂'_j - θ'_j|/θ'_j for the long double evaluation above, in units of 2^-64 before the
// final rounding to double (which adds 2^-53). The power: (ln base' + 2) as in powers(), plus the
// base' itself: 4 roundings of the inner term and the power, and the rounded exponent d/(d-2) moving
// s^e (or inner^e) by ln(base'/base) units. The gain: one reciprocal and one product (4) plus what an
// error δr in a ramp does to g = 1 - r·(1 - 1/s): δr·|1 - 1/s| / min(1, 1/s). YaRN's ramp
// r = (j - lo)/(hi - lo) has lo and hi within 4·(|lo| + d/(2 ln b) + 1) units (a log of a quotient
// times d/(2 ln b)), exact when truncated (unless a correction dim lies within ~2^-60 of an integer,
// where floor/ceil may differ from the exact value's: not covered); Llama-3's smooth =
// (L/λ - low)/(high - low) carries θ_j's own error and 3 more roundings through L/λ <= high:
// within (ln base' + 10)·high/(high - low) units.
double frequency_error_bound(const ScalingRule<long double>& rule, const RopeScaling& s, std::int64_t dim,
                             double base) {
  using T = RopeScalingType;
  const long double ln_base = std::log(rule.effective_base());
  const long double base_units =
      ln_base + 2 + 4 + std::fabs(ln_base - std::log(static_cast<long double>(base)));
  long double gain_units = s.type == T::None || s.type == T::Ntk || s.type == T::Dynamic ? 0 : 4;
  if (s.position_scale != 1) gain_units += 1;  // its division
  long double ramp_units = 0;
  if (s.type == T::Yarn && !s.truncate) {
    const long double scale = static_cast<long double>(dim) / (2 * std::log(static_cast<long double>(base)));
    const long double lo = rule.correction_low(), hi = rule.correction_high();
    const long double width = lo == hi ? 0.001L : std::fabs(hi - lo);
    ramp_units = 4 * (std::fabs(lo) + std::fabs(hi) + scale + 1) / width;
  } else if (s.type == T::Llama3 && s.low_freq_factor < s.high_freq_factor) {
    ramp_units = (ln_base + 10) * s.high_freq_factor / (s.high_freq_factor - s.low_freq_factor);
  }
  const long double inv_s = 1.0L / s.factor;
  gain_units += ramp_units * std::fabs(1 - inv_s) / std::min(1.0L, inv_s);
  return 0x1p-53 + static_cast<double>((base_units + gain_units) * 0x1p-64L);
}

}  // namespace

std::int64_t sinusoidal_frequency_dim(const SinusoidalParams& params) noexcept {
  const double d = static_cast<double>(params.dim / 2 * 2) - 2 * params.downscale_freq_shift;
  if (!(d >= 1) || d > static_cast<double>(kMaxDim) || d != std::floor(d)) return -1;
  return static_cast<std::int64_t>(d);
}

void validate_table_params(const SinusoidalParams& params) {
  if (params.dim < 2 || params.dim > kMaxDim) {
    detail::fail("dim",
                 "dim must be in [2, " + std::to_string(kMaxDim) + "], got " + std::to_string(params.dim));
  }
  check_base(params.base);
  check_layout(params.layout, Family::Sinusoidal);
  if (sinusoidal_frequency_dim(params) < 1) {
    detail::fail("downscale_freq_shift",
                 "downscale_freq_shift must be a multiple of 1/2 below floor(dim/2) (dim " +
                     std::to_string(params.dim) + "), got " + detail::show(params.downscale_freq_shift));
  }
  if (!std::isfinite(params.scale) || params.scale == 0) {
    detail::fail("scale", "scale must be finite and nonzero, got " + detail::show(params.scale));
  }
}

SinusoidalPlan::SinusoidalPlan(const SinusoidalParams& params) : params_(params) {
  validate_table_params(params);
  const std::int64_t d = sinusoidal_frequency_dim(params);
  frequency_dim_ = static_cast<std::size_t>(d);
  const auto w = powers(n_pairs(), frequency_dim_, params.base);
  inv_freq_ = inverse_frequencies(w);
  turns_ = make_turn_steps(w);
}

// Validated and computed once per parameters (plan_cache.h): a copy of the kept plan after.
RopePlan::RopePlan(const RopeParams& params) : params_(params) {
  const std::string key = detail::rope_plan_key(params);
  if (const std::shared_ptr<const RopePlan> kept = detail::kept_rope_plan(key)) {
    *this = *kept;
    return;
  }
  build(params);
  detail::keep_rope_plan(key, *this);
}

void RopePlan::build(const RopeParams& params) {
  check_dim("head_dim", params.head_dim);
  if (params.rotary_offset < 0 || params.rotary_offset >= params.head_dim) {
    detail::fail("rotary_offset", "rotary_offset must be in [0, head_dim=" + std::to_string(params.head_dim) +
                                      "), got " + std::to_string(params.rotary_offset));
  }
  if (params_.rotary_dim == 0) params_.rotary_dim = params_.head_dim - params_.rotary_offset;
  const std::int64_t room = params_.head_dim - params_.rotary_offset;
  if (params_.rotary_dim < 0 || params_.rotary_dim % 2 != 0 || params_.rotary_dim > room ||
      params_.rotary_dim == 0) {
    detail::fail("rotary_dim",
                 "rotary_dim must be even and in [2, head_dim - rotary_offset = " + std::to_string(room) +
                     "] (0: all of them), got " + std::to_string(params.rotary_dim));
  }
  if (params.layout == Layout::Deinterleave && params_.rotary_dim > kMaxDeinterleaveDim) {
    detail::fail("rotary_dim", "rotary_dim must be at most " + std::to_string(kMaxDeinterleaveDim) +
                                   " for layout deinterleave, got " + std::to_string(params_.rotary_dim));
  }
  check_base(params.base);
  check_layout(params.layout, Family::Rope);
  check_scaling(params.scaling, params_.rotary_dim);
  check_form(params_);
  // powers() at the effective base (the given one unless NTK/dynamic), then the gain (exactly 1
  // unscaled, so an unscaled plan is SinusoidalPlan's evaluation).
  const ScalingRule<long double> rule(params.scaling, params_.rotary_dim, params.base, kPi);
  effective_base_ = static_cast<double>(rule.effective_base());
  if (!std::isfinite(effective_base_) || !(effective_base_ > 1.0)) {
    detail::fail("factor", "factor " + detail::show(params.scaling.factor) + " makes the " +
                               std::string(to_string(params.scaling.type)) + " base " +
                               detail::show(effective_base_) + "; it must be finite and > 1");
  }
  attention_ = static_cast<double>(rule.attention());
  if (!std::isfinite(attention_) || !(attention_ > 0.0)) {
    detail::fail("attention_factor",
                 "the attention factor must be finite and > 0, got " + detail::show(attention_));
  }
  std::vector<long double> w = kept_form_powers(params.form, n_pairs(), rule.effective_base());
  gain_.resize(n_pairs());
  for (std::size_t j = 0; j < w.size(); ++j) {
    const long double g = rule.gain(j, w[j]);
    gain_[j] = static_cast<double>(g);
    w[j] *= g;
    // Proportional's pairs past its rotating ones have gain 0 exactly: frequency 0, the identity.
    const bool still = g == 0 && params.scaling.type == RopeScalingType::Proportional;
    if (!(w[j] > 0 || still) || !(w[j] <= kMaxFrequency)) {
      // LongRoPE's gain is a list entry, every other method's comes from the factor.
      const bool list = params.scaling.type == RopeScalingType::LongRope;
      const char* name = !list                                                          ? "factor"
                         : ScalingRule<long double>::longrope_uses_long(params.scaling) ? "long_factor"
                                                                                        : "short_factor";
      detail::fail(name, std::string(name) + " makes frequency " + std::to_string(j) + " " +
                             detail::show(static_cast<double>(w[j])) +
                             " rad per position; it must be in (0, 1024] (factor " +
                             detail::show(params.scaling.factor) + ")");
    }
  }
  inv_freq_ = inverse_frequencies(w);
  turns_ = make_turn_steps(w);
  if (scales(params.scaling)) {
    frequency_error_ = frequency_error_bound(rule, params.scaling, params_.rotary_dim, params.base);
  }
  n_axes_ = pe::n_axes(params.form);
  if (n_axes_ > 1) {
    axis_.resize(n_pairs());
    run_.resize(n_pairs());
    for (std::size_t j = 0; j < n_pairs(); ++j)
      axis_[j] = static_cast<std::uint8_t>(pe::axis_of_pair(params.form, n_pairs(), j));
    for (std::size_t j = n_pairs(); j-- > 0;) {
      run_[j] = j + 1 < n_pairs() && axis_[j + 1] == axis_[j] ? run_[j + 1] + 1 : 1;
    }
  }
}

}  // namespace pe

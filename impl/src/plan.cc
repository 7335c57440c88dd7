#include "pe/plan.h"

#include <cmath>

#include "detail/check.h"

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
std::vector<long double> powers(std::size_t n_pairs, std::size_t dim, double base) {
  std::vector<long double> w(n_pairs);
  const long double b = base;
  for (std::size_t i = 0; i < n_pairs; ++i) {
    const long double e = -static_cast<long double>(2 * i) / static_cast<long double>(dim);
    w[i] = std::pow(b, e);
  }
  return w;
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
  for (std::size_t i = 0; i < w.size(); ++i) {
    t.step[i] = static_cast<std::uint64_t>(std::llround(w[i] * kTurnsPerRadian));
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

}  // namespace

SinusoidalPlan::SinusoidalPlan(const SinusoidalParams& params) : params_(params) {
  check_dim("dim", params.dim);
  check_base(params.base);
  check_layout(params.layout, Family::Sinusoidal);
  const auto w = powers(n_pairs(), dim(), params.base);
  inv_freq_ = inverse_frequencies(w);
  turns_ = make_turn_steps(w);
}

RopePlan::RopePlan(const RopeParams& params) : params_(params) {
  check_dim("head_dim", params.head_dim);
  if (params_.rotary_dim == 0) params_.rotary_dim = params_.head_dim;
  if (params_.rotary_dim < 0 || params_.rotary_dim % 2 != 0 || params_.rotary_dim > params_.head_dim) {
    detail::fail("rotary_dim",
                 "rotary_dim must be even and in [2, head_dim=" + std::to_string(params_.head_dim) +
                     "], got " + std::to_string(params.rotary_dim));
  }
  check_base(params.base);
  check_layout(params.layout, Family::Rope);
  const auto w = powers(n_pairs(), rotary_dim(), params.base);
  inv_freq_ = inverse_frequencies(w);
  turns_ = make_turn_steps(w);
}

}  // namespace pe

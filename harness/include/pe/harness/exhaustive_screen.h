// The exhaustive census's screen: one position, every pair of an instance, in vectors. The reference's
// double tier (pe/ref/fast_trig.h: sin and cos of p·ω within double_tier_radius) bounds each output
// element's error from above; an element is settled when that bound is below its budget and strictly
// below its band's running maxima (absolute, ulp and err/budget), so that it can change the band's
// result only by its count. Every other element goes to the precise path (double-double, then MPFR).
// The screen is conservative by construction: it may send a settled element to the precise path,
// never the reverse, so the census's result does not depend on it (the tests compare runs with and
// without it). Compiled for every Highway target; the best one the CPU has is dispatched at run time.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "pe/ref/double_double.h"
#include "pe/types.h"

namespace pe::exhaustive {

// The chord b0 + b1·|φ| of budget(·, j) from |φ| = 0 to `top` (>= 1), the budget's lower bound where the
// chord, less 2^-40 relative, is below it at five points (contract.h's budgets are affine in |φ|); {0, 0}
// (nothing settles) where it is not.
struct BudgetChord {
  double b0 = 0, b1 = 0;
};
BudgetChord budget_chord(const std::function<double(double, std::size_t)>& budget, std::size_t j, double top);

// Per pair, padded with inert pairs (never settled) to a multiple of kLanes: the widest vector of
// doubles any target uses.
struct ScreenPlan {
  static constexpr std::size_t kLanes = 8;
  std::size_t pairs = 0;
  // The double tier's pieces of ω_j, and the budget's lower bound b0 + b1·|φ| (0, 0 for a pair whose
  // budget the screen cannot bound: it is never settled).
  std::vector<double> w1, w2, w3, b0, b1;
  double c1 = 0, c2 = 0, c3 = 0, c4 = 0;  // π/2 in pieces (ref::half_pi_pieces)
  double ulp_scale = 0, ulp_floor = 0;  // the output type's ulp: 2^(1 - precision), 2^(emin + 1 - precision)

  // `omegas`: the exact frequencies (ω_j <= 1); `budget(|φ|, j)`: the element budget of pair j, which
  // contract.h's formula makes affine in |φ|. The screen takes its chord from 0 to the largest |φ|
  // (max_position·ω_j), less 2^-40 relative, as the lower bound; a pair where the chord is above the
  // budget at one of five points (a convex budget) is never settled.
  ScreenPlan(std::span<const ref::dd::DD> omegas, const std::function<double(double, std::size_t)>& budget,
             double max_position, DType out);
  std::size_t padded() const noexcept { return w1.size(); }
};

// The band's running maxima; 0 before its first element (nothing settles then).
struct ScreenLimits {
  double max_abs = 0, max_ulp = 0, max_ratio = 0;
};

// The sin and cos values of pair j at position p in ys[j] and yc[j] (as doubles, padded like the
// plan), 0 <= p < 2^32. Writes unsettled[j] = 1·(sin element not settled) + 2·(cos element not
// settled) and returns whether any element is unsettled.
bool screen_row(const ScreenPlan& plan, std::int64_t p, const double* ys, const double* yc,
                const ScreenLimits& limits, double* unsettled);

// sin[j] and cos[j] of p·ω_j for every padded pair (ref::double_tier_sincos's bits, within its radius) on
// the best target the CPU has, 0 <= p < 2^32; a pair with ω_j > 1 gets 0 and 1 (not its values).
void double_tier_row(const ScreenPlan& plan, std::int64_t p, double* sin, double* cos);

// The row at p + 1 from the row at p: each (sin, cos) rotated by (step_sin, step_cos), the tier's row at 1,
// two products and a sum per value, unfused. n values each. After up to k such steps from the tier's row,
// each value lies within the tier's radius at that row plus rotation_radius(k) (below).
void rotate_row(double* sin, double* cos, const double* step_sin, const double* step_cos, std::size_t n);

// How far k rotations (rotate_row, or the table kernel's fused one: fewer roundings) may carry (sin, cos)
// beyond e0, the tier's radius at the first row, in the Euclidean norm, for ω_j <= 1 and positions under
// 2^32 (e0 <= 2^-47). With (sin ω, cos ω) each within δ <= 2^-48·(1 + 2^-40) (the tier at 1), the computed
// rotation R' has |R' − R| <= 2δ and |R'| <= 1 + 2δ; a step's roundings (two products and a sum per value, of
// a unit vector) add at most 2^-51; so after k steps the error is at most (1 + 2δ)^k·(√2·e0 + k·(2δ +
// 2^-51)): here (√2 − 1)·2^-47 + k·(2δ + 2^-51), times (1 + g) with g >= (1 + 2δ)^k − 1 (e^x − 1 <= 1.01·x
// for x <= 2^-6), plus g·2^-47. Pinned by static_asserts where a pass takes its limit (sinusoidal_screen.h,
// the RoPE pass).
// Where a pass's row of sin and cos stands against the tier (the table pass's rows, RoPE's tokens): the
// position it holds (-1: none) and the rotations since the tier's row.
struct TierRun {
  std::int64_t at = -1;
  std::size_t steps = 0;
  // The row for `rows` consecutive positions from p: whether the first continues the run, rotated from the
  // row at p − 1 with every one of them within `max` rotations of the tier's row (counted), or the tier's row
  // at p starts a new run (the caller computes it); at is p.
  bool advance(std::int64_t p, std::size_t rows, std::size_t max) {
    const bool rotate = at >= 0 && p == at + 1 && steps + rows <= max;
    steps = rotate ? steps + 1 : 0;
    at = p;
    return rotate;
  }
  void reset() { at = -1, steps = 0; }
};

constexpr double rotation_radius(std::size_t k) {
  const double two_delta = 0x1p-47 * (1 + 0x1p-40);
  const double g = 1.01 * static_cast<double>(k) * two_delta;  // k <= 2^40: x <= 2^-6
  return (0.41422 * 0x1p-47 + static_cast<double>(k) * (two_delta + 0x1p-51)) * (1 + g) + g * 0x1p-47;
}

// Every compiled target the CPU supports, for the tests: its screen and its double tier (sin and cos
// of p·ω_j for every padded pair, bit for bit ref::double_tier_sincos).
struct ScreenTarget {
  std::string name;
  bool (*screen)(const ScreenPlan&, std::int64_t, const double*, const double*, const ScreenLimits&, double*);
  void (*sincos)(const ScreenPlan&, std::int64_t, double*, double*);
};
std::vector<ScreenTarget> screen_targets();

}  // namespace pe::exhaustive

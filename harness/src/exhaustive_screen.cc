// The screen of pe/harness/exhaustive_screen.h: ref::double_tier_sincos in vectors over the pairs,
// the same operations in the same order (built with -ffp-contract=off, so that no target fuses
// them), and the element's upper bounds against its budget and the band's maxima.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "exhaustive_screen.cc"
#include "pe/harness/exhaustive_screen.h"

#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#ifndef PE_EXHAUSTIVE_SCREEN_ONCE_
#define PE_EXHAUSTIVE_SCREEN_ONCE_
namespace pe::exhaustive::detail {
bool add_screen_target(std::int64_t target, decltype(ScreenTarget::screen) screen,
                       decltype(ScreenTarget::sincos) sincos);
}  // namespace pe::exhaustive::detail
#endif

HWY_BEFORE_NAMESPACE();
namespace pe::exhaustive::HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

// (hi, lo) with hi + t added by TwoSum: hi the rounded sum, its error added to lo.
template <class V>
HWY_INLINE void AccumulateTwoSum(V& hi, V& lo, V t) {
  const V s = hn::Add(hi, t);
  const V bb = hn::Sub(s, hi);
  lo = hn::Add(lo, hn::Add(hn::Sub(hi, hn::Sub(s, bb)), hn::Sub(t, bb)));
  hi = s;
}

// ref::double_tier_sincos for the lanes' ω pieces at position pd; phi = p·(w1 + w2), within
// 2^-40 relative of |φ|; ok: the reduced angle is within the polynomials' range.
template <class D, class V = hn::Vec<D>>
HWY_INLINE void DoubleTier(D d, const ScreenPlan& plan, V pd, std::size_t j, V& sin, V& cos, V& phi,
                           hn::Mask<D>& ok) {
  const V a = hn::Mul(pd, hn::LoadU(d, plan.w1.data() + j));
  const V b = hn::Mul(pd, hn::LoadU(d, plan.w2.data() + j));
  phi = hn::Add(a, b);
  const V k = hn::Round(hn::Mul(phi, hn::Set(d, 0.6366197723675814)));
  // The first TwoSum starts the low word itself (the scalar tier's two_sum: no 0 + err, whose zero's
  // sign could differ).
  const V a_k = hn::Sub(a, hn::Mul(k, hn::Set(d, plan.c1)));
  V hi = hn::Add(a_k, b);
  const V bb = hn::Sub(hi, a_k);
  V lo = hn::Add(hn::Sub(a_k, hn::Sub(hi, bb)), hn::Sub(b, bb));
  const V minus_k = hn::Neg(k);
  AccumulateTwoSum(hi, lo, hn::Mul(minus_k, hn::Set(d, plan.c2)));
  AccumulateTwoSum(hi, lo, hn::Mul(minus_k, hn::Set(d, plan.c3)));
  AccumulateTwoSum(hi, lo, hn::Mul(pd, hn::LoadU(d, plan.w3.data() + j)));
  AccumulateTwoSum(hi, lo, hn::Mul(minus_k, hn::Set(d, plan.c4)));
  const V x = hn::Add(hi, lo);
  ok = hn::Lt(hn::Abs(x), hn::Set(d, 1.0));
  const V x2 = hn::Mul(x, x);
  const auto c = [d](double v) { return hn::Set(d, v); };
  V sp = hn::Mul(x2, c(1.0 / 355687428096000));
  sp = hn::Mul(x2, hn::Add(c(-1.0 / 1307674368000), sp));
  sp = hn::Mul(x2, hn::Add(c(1.0 / 6227020800), sp));
  sp = hn::Mul(x2, hn::Add(c(-1.0 / 39916800), sp));
  sp = hn::Mul(x2, hn::Add(c(1.0 / 362880), sp));
  sp = hn::Mul(x2, hn::Add(c(-1.0 / 5040), sp));
  sp = hn::Mul(x2, hn::Add(c(1.0 / 120), sp));
  sp = hn::Mul(x2, hn::Add(c(-1.0 / 6), sp));
  V cp = hn::Mul(x2, c(-1.0 / 6402373705728000));
  cp = hn::Mul(x2, hn::Add(c(1.0 / 20922789888000), cp));
  cp = hn::Mul(x2, hn::Add(c(-1.0 / 87178291200), cp));
  cp = hn::Mul(x2, hn::Add(c(1.0 / 479001600), cp));
  cp = hn::Mul(x2, hn::Add(c(-1.0 / 3628800), cp));
  cp = hn::Mul(x2, hn::Add(c(1.0 / 40320), cp));
  cp = hn::Mul(x2, hn::Add(c(-1.0 / 720), cp));
  cp = hn::Mul(hn::Mul(x2, x2), hn::Add(c(1.0 / 24), cp));
  const V sr = hn::Add(x, hn::Mul(x, sp));
  const V cr = hn::Add(hn::Sub(c(1.0), hn::Mul(c(0.5), x2)), cp);
  // Quadrant q = k mod 4: sin is (sr, cr, -sr, -cr)[q], cos is (cr, -sr, -cr, sr)[q].
  const V q = hn::Sub(k, hn::Mul(c(4.0), hn::Floor(hn::Mul(k, c(0.25)))));
  const auto odd = hn::Or(hn::Eq(q, c(1.0)), hn::Eq(q, c(3.0)));
  const V s = hn::IfThenElse(odd, cr, sr), co = hn::IfThenElse(odd, sr, cr);
  sin = hn::IfThenElse(hn::Ge(q, c(2.0)), hn::Neg(s), s);
  cos = hn::IfThenElse(hn::Or(hn::Eq(q, c(1.0)), hn::Eq(q, c(2.0))), hn::Neg(co), co);
}

void DoubleTierRow(const ScreenPlan& plan, std::int64_t p, double* HWY_RESTRICT sin,
                   double* HWY_RESTRICT cos) {
  const hn::CappedTag<double, ScreenPlan::kLanes> d;  // never wider than the plan's padding
  const auto pd = hn::Set(d, static_cast<double>(p));
  for (std::size_t j = 0; j < plan.padded(); j += hn::Lanes(d)) {
    hn::Vec<decltype(d)> s, c, phi;
    hn::Mask<decltype(d)> ok;
    DoubleTier(d, plan, pd, j, s, c, phi, ok);
    hn::StoreU(s, d, sin + j);
    hn::StoreU(c, d, cos + j);
  }
}

// Whether |y - e| stays below the budget and the limits for every exact value within r of e.
template <class D, class V = hn::Vec<D>>
HWY_INLINE hn::Mask<D> Settled(D d, const ScreenPlan& plan, const ScreenLimits& limits, V y, V e, V r,
                               V budget_lo) {
  const auto c = [d](double v) { return hn::Set(d, v); };
  const V err_hi = hn::Mul(hn::Add(hn::Abs(hn::Sub(y, e)), r), c(1 + 0x1p-50));
  // The exact value is at least |e| - r in magnitude; its ulp at least that of |e| - 2r, whose
  // exponent bits give the binade.
  const V magnitude = hn::Max(hn::Zero(d), hn::Sub(hn::Abs(e), hn::Add(r, r)));
  const V binade =
      hn::And(magnitude, hn::BitCast(d, hn::Set(hn::RebindToUnsigned<D>(), 0x7ff0000000000000ULL)));
  const V ulp_lo = hn::Max(hn::Mul(binade, c(plan.ulp_scale)), c(plan.ulp_floor));
  const V shrink = c(1 - 0x1p-50);
  auto settled = hn::And(hn::Lt(err_hi, budget_lo), hn::Lt(err_hi, c(limits.max_abs)));
  settled = hn::And(settled, hn::Lt(err_hi, hn::Mul(hn::Mul(c(limits.max_ulp), ulp_lo), shrink)));
  return hn::And(settled, hn::Lt(err_hi, hn::Mul(hn::Mul(c(limits.max_ratio), budget_lo), shrink)));
}

bool ScreenRow(const ScreenPlan& plan, std::int64_t p, const double* HWY_RESTRICT ys,
               const double* HWY_RESTRICT yc, const ScreenLimits& limits, double* HWY_RESTRICT unsettled) {
  const hn::CappedTag<double, ScreenPlan::kLanes> d;  // never wider than the plan's padding
  const auto c = [d](double v) { return hn::Set(d, v); };
  const auto pd = c(static_cast<double>(p));
  auto any = hn::Zero(d);
  for (std::size_t j = 0; j < plan.padded(); j += hn::Lanes(d)) {
    hn::Vec<decltype(d)> s, co, phi;
    hn::Mask<decltype(d)> ok;
    DoubleTier(d, plan, pd, j, s, co, phi, ok);
    const auto radius = hn::Add(c(0x1p-48), hn::Mul(hn::Mul(phi, c(1 + 0x1p-39)), c(0x1p-88)));
    const auto budget_lo =
        hn::Mul(hn::Add(hn::LoadU(d, plan.b0.data() + j),
                        hn::Mul(hn::LoadU(d, plan.b1.data() + j), hn::Mul(phi, c(1 - 0x1p-39)))),
                c(1 - 0x1p-40));
    const auto sin_ok = hn::And(ok, Settled(d, plan, limits, hn::LoadU(d, ys + j), s, radius, budget_lo));
    const auto cos_ok = hn::And(ok, Settled(d, plan, limits, hn::LoadU(d, yc + j), co, radius, budget_lo));
    auto flags = hn::Add(hn::IfThenZeroElse(sin_ok, c(1.0)), hn::IfThenZeroElse(cos_ok, c(2.0)));
    // The padding's lanes are no elements: they must not keep a row from being settled whole.
    if (j + hn::Lanes(d) > plan.pairs) flags = hn::IfThenElseZero(hn::FirstN(d, plan.pairs - j), flags);
    hn::StoreU(flags, d, unsettled + j);
    any = hn::Or(any, flags);
  }
  return !hn::AllTrue(d, hn::Eq(any, hn::Zero(d)));
}

}  // namespace pe::exhaustive::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

namespace pe::exhaustive::HWY_NAMESPACE {
namespace {
[[maybe_unused]] const bool registered = detail::add_screen_target(HWY_TARGET, &ScreenRow, &DoubleTierRow);
}  // namespace
}  // namespace pe::exhaustive::HWY_NAMESPACE

#if HWY_ONCE
#include <hwy/targets.h>

#include <algorithm>
#include <cmath>

#include "pe/ref/fast_trig.h"
#include "pe/ref/real.h"

namespace pe::exhaustive {

HWY_EXPORT(ScreenRow);
HWY_EXPORT(DoubleTierRow);

namespace detail {
std::vector<ScreenTarget>& targets() {
  static std::vector<ScreenTarget> list;
  return list;
}

bool add_screen_target(std::int64_t target, decltype(ScreenTarget::screen) screen,
                       decltype(ScreenTarget::sincos) sincos) {
  if ((hwy::SupportedTargets() & target) == 0) return false;
  targets().push_back({hwy::TargetName(target), screen, sincos});
  return true;
}
}  // namespace detail

std::vector<ScreenTarget> screen_targets() { return detail::targets(); }

void double_tier_row(const ScreenPlan& plan, std::int64_t p, double* sin, double* cos) {
  HWY_DYNAMIC_DISPATCH(DoubleTierRow)(plan, p, sin, cos);
}

void rotate_row(double* sin, double* cos, const double* step_sin, const double* step_cos, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) {
    const double s = sin[j], c = cos[j];
    sin[j] = s * step_cos[j] + c * step_sin[j];
    cos[j] = c * step_cos[j] - s * step_sin[j];
  }
}

bool screen_row(const ScreenPlan& plan, std::int64_t p, const double* ys, const double* yc,
                const ScreenLimits& limits, double* unsettled) {
  return HWY_DYNAMIC_DISPATCH(ScreenRow)(plan, p, ys, yc, limits, unsettled);
}

ScreenPlan::ScreenPlan(std::span<const ref::dd::DD> omegas,
                       const std::function<double(double, std::size_t)>& budget, double max_position,
                       DType out)
    : pairs(omegas.size()) {
  const std::size_t padded = (pairs + kLanes - 1) / kLanes * kLanes;
  for (auto* v : {&w1, &w2, &w3, &b0, &b1}) v->assign(padded, 0.0);
  const ref::HalfPiPieces& h = ref::half_pi_pieces();
  c1 = h.c1, c2 = h.c2, c3 = h.c3, c4 = h.c4;
  const ref::FormatBits f = ref::format_bits(out);
  ulp_scale = std::ldexp(1.0, 1 - f.precision);
  ulp_floor = std::ldexp(1.0, f.emin + 1 - f.precision);
  for (std::size_t j = 0; j < pairs; ++j) {
    const ref::OmegaSplit s = ref::split_omega(omegas[j]);
    if (!(omegas[j].hi <= 1)) continue;  // beyond the tier's exact products: never settled
    w1[j] = s.w1, w2[j] = s.w2, w3[j] = s.w3;
    const BudgetChord chord = budget_chord(budget, j, std::max(1.0, max_position * omegas[j].hi));
    b0[j] = chord.b0, b1[j] = chord.b1;
  }
}

BudgetChord budget_chord(const std::function<double(double, std::size_t)>& budget, std::size_t j,
                         double top) {
  const double at0 = budget(0, j), slope = (budget(top, j) - at0) / top;
  bool affine = at0 >= 0 && slope >= 0;
  for (const double t : {0.0, top / 7, top / 3, top / 2, top})
    affine = affine && (at0 + slope * t) * (1 - 0x1p-40) <= budget(t, j);
  return affine ? BudgetChord{at0, slope} : BudgetChord{};
}

}  // namespace pe::exhaustive
#endif  // HWY_ONCE

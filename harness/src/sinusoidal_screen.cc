// pe/harness/sinusoidal_screen.h: a table row's elements against the double tier's sin and cos, each error
// bounded above, in vectors. With r = the pair's radius (|e − exact| <= r, the double tier's and the exact
// path's double-double's together), the exact path's error is at most (|y − e| + r)·(1 + 2^-50) (the rounding
// of |y − e| and of the exact path's own |(y − hi) − lo|); the driver folds that factor into the line, the
// kernel into max_ulp. The exact value lies within r of e, so its ulp is e's where |e| − 2r stays in e's
// binade or |e| + r lies below the type's least normal (else the element is loud): rope_screen.cc's Judge.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sinusoidal_screen.cc"
#include "pe/harness/sinusoidal_screen.h"

#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#ifndef PE_SINUSOIDAL_SCREEN_ONCE_
#define PE_SINUSOIDAL_SCREEN_ONCE_
#include "target_list.h"
namespace pe::harness::detail {
TargetList<TableScreenTarget>& table_screen_list();
}  // namespace pe::harness::detail
#endif

HWY_BEFORE_NAMESPACE();
namespace pe::harness::HWY_NAMESPACE {

#if HWY_NATIVE_FMA
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::CappedTag<double, ScreenToken::kLanes>;  // never wider than the row's padding
using V = hn::Vec<D>;
using M = hn::Mask<D>;

#include "screen_lanes-inl.h"  // IWYU pragma: keep

struct Consts {
  V max_ulp, abs_floor, ulp_floor, least_binade, huge, one, two, three;
  hn::Vec<hn::RebindToUnsigned<D>> exponent, bias;
  explicit Consts(const TableScreenBars& b) {
    const D d;
    const hn::RebindToUnsigned<D> du;
    max_ulp = hn::Set(d, b.max_ulp * (1 - 0x1p-49));
    abs_floor = hn::Set(d, b.abs_floor), ulp_floor = hn::Set(d, b.ulp_floor);
    least_binade = hn::Set(d, std::ldexp(1.0, b.emin)), huge = hn::Set(d, HUGE_VAL), one = hn::Set(d, 1.0);
    two = hn::Set(d, 2.0), three = hn::Set(d, 3.0);
    exponent = hn::Set(du, 0x7ff0000000000000ULL);
    // 1/ulp(v) = 2^(precision − 1 − E) for v's binade 2^E (E >= emin): these bits less the binade's.
    bias = hn::Set(du, static_cast<std::uint64_t>(2045 + b.precision) << 52);
  }
};

// Pairs [k, k + N) of the row, the lanes of `valid` (all of them but in the last group); adds the quiet
// elements per lane to `quiet`.
template <ScreenType kType, bool kLast>
HWY_INLINE void Group(const void* y, std::size_t k, M valid, const ScreenChannels& ch,
                      const TableScreenRow& row, const Consts& c, TableScreenResult& res, V& quiet,
                      std::size_t& all_quiet) {
  const D d;
  V ys, yc;
  LoadPairs<kType>(y, ch, k, ys, yc);
  const V r = hn::LoadU(d, row.radius + k), rr = hn::Add(r, r), line = hn::LoadU(d, row.line + k);
  const Element js = Judge(ys, hn::LoadU(d, row.sin + k), r, rr, line, c);
  const Element jc = Judge(yc, hn::LoadU(d, row.cos + k), r, rr, line, c);
  M qs = js.quiet, qc = jc.quiet;
  if constexpr (kLast) qs = hn::And(qs, valid), qc = hn::And(qc, valid);
  if (!kLast && hn::AllTrue(d, hn::And(qs, qc))) {
    all_quiet += 2 * hn::Lanes(d);
    hn::StoreU(hn::Zero(d), d, res.flags + k);
  } else {
    quiet = hn::Add(quiet, hn::Add(hn::IfThenElseZero(qs, c.one), hn::IfThenElseZero(qc, c.one)));
    const V flags = hn::Sub(c.three, hn::Add(hn::IfThenElseZero(qs, c.one), hn::IfThenElseZero(qc, c.two)));
    hn::StoreU(kLast ? hn::IfThenElseZero(valid, flags) : flags, d, res.flags + k);
  }
  M as = hn::Gt(js.estimate, c.abs_floor), ac = hn::Gt(jc.estimate, c.abs_floor);
  M us = hn::Gt(js.ulp_estimate, c.ulp_floor), uc = hn::Gt(jc.ulp_estimate, c.ulp_floor);
  if constexpr (kLast)
    as = hn::And(as, valid), ac = hn::And(ac, valid), us = hn::And(us, valid), uc = hn::And(uc, valid);
  if (hn::AllFalse(d, hn::Or(hn::Or(as, ac), hn::Or(us, uc)))) return;
  res.abs_kept += Keep(js.estimate, as, res.abs_tail + res.abs_kept);
  res.abs_kept += Keep(jc.estimate, ac, res.abs_tail + res.abs_kept);
  res.ulp_kept += Keep(js.ulp_estimate, us, res.ulp_tail + res.ulp_kept);
  res.ulp_kept += Keep(jc.ulp_estimate, uc, res.ulp_tail + res.ulp_kept);
}

template <ScreenType kType>
HWY_NOINLINE void TableRowOf(const void* y, std::size_t n, const ScreenChannels& ch,
                             const TableScreenRow& row, const TableScreenBars& bars, TableScreenResult& res) {
  const D d;
  const std::size_t N = hn::Lanes(d);
  const Consts c(bars);
  V quiet = hn::Zero(d);
  std::size_t all_quiet = 0;
  res.abs_kept = res.ulp_kept = 0;
  std::size_t k = 0;
  for (; k + N <= n; k += N) Group<kType, false>(y, k, hn::FirstN(d, N), ch, row, c, res, quiet, all_quiet);
  if (k < n) Group<kType, true>(y, k, hn::FirstN(d, n - k), ch, row, c, res, quiet, all_quiet);
  res.loud = 2 * n - (static_cast<std::size_t>(hn::GetLane(hn::SumOfLanes(d, quiet))) + all_quiet);
}

void TableRow(ScreenType type, const void* y, std::size_t n, const ScreenChannels& ch,
              const TableScreenRow& row, const TableScreenBars& bars, TableScreenResult& res) {
  switch (type) {
    case ScreenType::F32:
      return TableRowOf<ScreenType::F32>(y, n, ch, row, bars, res);
    case ScreenType::BF16:
      return TableRowOf<ScreenType::BF16>(y, n, ch, row, bars, res);
    case ScreenType::F16:
      return TableRowOf<ScreenType::F16>(y, n, ch, row, bars, res);
    case ScreenType::F64:
      return TableRowOf<ScreenType::F64>(y, n, ch, row, bars, res);
  }
}

namespace {
[[maybe_unused]] const bool registered =
    detail::table_screen_list().add(HWY_TARGET, {hwy::TargetName(HWY_TARGET), &TableRow});
}  // namespace
#endif  // HWY_NATIVE_FMA

}  // namespace pe::harness::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <hwy/targets.h>

#include <algorithm>

namespace pe::harness {
namespace detail {
TargetList<TableScreenTarget>& table_screen_list() {
  static TargetList<TableScreenTarget> list;
  return list;
}
}  // namespace detail

const std::vector<TableScreenTarget>& table_screen_targets() {
  return detail::table_screen_list().best_first();
}

}  // namespace pe::harness
#endif  // HWY_ONCE

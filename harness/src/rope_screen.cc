// pe/harness/rope_screen.h: a row's rotation in double, its error bounded above, and the bars it must stay
// under, in vectors. Margins: radius (per unit of s = |x_a| + |x_b|) covers the double tier's sin and cos,
// the products, the multiply-add and the factor A (ScreenToken); the upper bound of an element's error is
// (|y − e| + s·radius)·(1 + 2^-50), which covers the rounding of |y − e| and of the exact path's own
// |(y − hi) − lo| (relative 2^-52 at most); the exact value's magnitude is at least |e| − 2·s·radius, so its
// ulp at least the ulp of that (rope_screen's bound on the exact path's ulp error).
//
// Before the judge, a pre-test on the same err_hi = fl(|y − e| + r) and binade 2^E: err_hi <= the least of
// the pair's line, the abs tail's floor, the largest double and 2^E·U·2^(1 − p), U = min(max_ulp·(1 − 2^-49),
// ulp_floor). Where every element of a vector of pairs passes, the judge would have found each quiet
// (err_hi <= line, and err_hi·2^(p − 1 − E) <= U <= max_ulp, exact: a power of two) and kept no estimate
// (|y − e| <= err_hi, so under both floors), which is all it writes (flags 0): the pre-test changes no
// outcome. 2^E·U·2^(1 − p) is exact where it stays normal (FastUlp gives −1 for U·2^(1 − p) otherwise, and
// for U below 2^-600, 0 and −∞ among them: a band whose every error was 0, or a floor not presumed: the
// pre-test is then off); past the largest double it is +∞, above the exact product, and the bar stays finite
// through the largest double. A NaN err_hi fails the comparison, and a NaN line makes the bar NaN (LeastOf).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "rope_screen.cc"
#include "pe/harness/rope_screen.h"

#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#ifndef PE_ROPE_SCREEN_ONCE_
#define PE_ROPE_SCREEN_ONCE_
#include <hwy/cache_control.h>

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>

#include "spread_prefetch.h"
#include "target_list.h"
#endif

HWY_BEFORE_NAMESPACE();
namespace pe::harness::HWY_NAMESPACE {

#if HWY_NATIVE_FMA
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::CappedTag<double, ScreenToken::kLanes>;  // never wider than the token's padding
using V = hn::Vec<D>;
using M = hn::Mask<D>;

#include "screen_lanes-inl.h"  // IWYU pragma: keep

// The pre-test's U·2^(1 − p) (above), or −1 (nothing passes) where a product 2^E·U·2^(1 − p), 2^E >=
// least_binade, could leave the normal range, or U is below 2^-600, 0, NaN or −∞. precision <= 53.
inline double FastUlp(const ScreenBars& b, double bound, double least_binade) {
  const double u = std::min(b.max_ulp * bound, b.ulp_floor);  // max_ulp's NaN kept (std::min's first)
  if (!(u >= 0x1p-600)) return -1;
  // u·2^(1 − p), 2^(1 − p) from its bits (std::ldexp is a call per row); DBL_MIN / least_binade is exact.
  const double scaled = u * std::bit_cast<double>(static_cast<std::uint64_t>(1024 - b.precision) << 52);
  return scaled >= DBL_MIN / least_binade ? scaled : -1;
}

// The lesser of a and b, NaN where b is NaN (b is a line that may be ∞·0): x86's min gives its second operand
// where either is NaN; Arm's and RVV's give the number, so they test b.
HWY_INLINE V LeastOf(V a, V b) {
#if HWY_ARCH_X86
  return hn::Min(a, b);
#else
  return hn::IfThenElse(hn::IsNaN(b), b, hn::Min(a, b));
#endif
}

// The row's constants as vectors.
struct Consts {
  V attention, budget_floor, ratio_bar, max_abs, max_ulp, reach_floor, reach_factor, abs_floor, ulp_floor;
  V least_binade, huge, one, two, three, bound, fast_ulp, fast_abs;
  hn::Vec<hn::RebindToUnsigned<D>> exponent, bias;
  explicit Consts(const ScreenBars& b) {
    const D d;
    const hn::RebindToUnsigned<D> du;
    attention = hn::Set(d, b.attention), budget_floor = hn::Set(d, b.budget_floor);
    // (|y − e| + r)·(1 + 2^-50) <= bar: |y − e| + r <= bar·(1 − 2^-49), rounded down by its margin.
    constexpr double kBound = 1 - 0x1p-49;
    ratio_bar = hn::Set(d, b.ratio_bar * kBound), max_abs = hn::Set(d, b.max_abs * kBound);
    max_ulp = hn::Set(d, b.max_ulp * kBound);
    reach_floor = hn::Set(d, b.reach_floor), reach_factor = hn::Set(d, b.reach_factor);
    abs_floor = hn::Set(d, b.abs_floor), ulp_floor = hn::Set(d, b.ulp_floor);
    // 2^emin from its bits (emin >= -1022, the output type's): std::ldexp here was a call per row.
    const double least = std::bit_cast<double>(static_cast<std::uint64_t>(b.emin + 1023) << 52);
    least_binade = hn::Set(d, least), huge = hn::Set(d, HUGE_VAL), one = hn::Set(d, 1.0);
    two = hn::Set(d, 2.0), three = hn::Set(d, 3.0), bound = hn::Set(d, kBound);
    fast_ulp = hn::Set(d, FastUlp(b, kBound, least));
    // The pre-test's flat bars in one, finite (an infinite err_hi never passes).
    fast_abs = hn::Set(d, std::min({b.max_abs * kBound, b.abs_floor, DBL_MAX}));
    exponent = hn::Set(du, 0x7ff0000000000000ULL);
    // 1/ulp(v) = 2^(precision − 1 − E) for v's binade 2^E (E >= emin): these bits less the binade's.
    bias = hn::Set(du, static_cast<std::uint64_t>(2045 + b.precision) << 52);
  }
};

// Per lane, how many elements were quiet and how many of those carry the encoding, in the groups judged
// element by element (a loud element in them, or the last group); the least s of the wholly quiet groups
// (where it is 0, IdleOf counts their pairs of s = 0 after).
struct Counts {
  V quiet, encoding, least;
  std::size_t all_quiet;  // the elements of the groups whose every element was quiet
};

// An element's error |y − e|, err_hi = |y − e| + r, and the binade 2^E of its exact value's lower end
// |e| − 2r (the type's least binade below its least normal), with r = s·radius and rr = 2r. A NaN e (a
// non-finite x) makes any binade here, but err NaN: the element is loud.
struct Error {
  V err, err_hi, binade;
};
HWY_INLINE Error ErrorOf(V y, V e, V r, V rr, const Consts& c) {
  const V err = hn::Abs(hn::Sub(y, e));
  const V lower = hn::Max(hn::Sub(hn::Abs(e), rr), c.least_binade);
  return {err, hn::Add(err, r), hn::And(lower, hn::BitCast(D(), c.exponent))};
}

// The pre-test's (above) element: err_hi under the least of `bar` (the pair's line and the flat bars, NaN
// where the line is) and 2^E·U·2^(1 − p) (never NaN: 2^E > 0, the factor −1 or above 0).
HWY_INLINE M Fast(const Error& v, V bar, const Consts& c) {
  return hn::Le(v.err_hi, LeastOf(hn::Mul(v.binade, c.fast_ulp), bar));
}

// The element's verdict: quiet under the pair's line and max_ulp, err_hi times 1/ulp of its binade (inv) the
// bound on its ulp error (the factor 1 + 2^-50 folded into `line` and max_ulp: Consts). The estimates
// |y − e| and |y − e|·inv are the percentiles' (a ulp estimate twice the exact one where |e| lies within 2r
// above a power of two).
HWY_INLINE Element Judge(const Error& v, V line, const Consts& c) {
  const D d;
  const hn::RebindToUnsigned<D> du;
  const V inv = hn::BitCast(d, hn::Sub(c.bias, hn::BitCast(du, v.binade)));
  const M quiet = hn::And(hn::Le(v.err_hi, line), hn::Le(hn::Mul(v.err_hi, inv), c.max_ulp));
  const V estimate = Estimate(v.err, c);
  return {quiet, estimate, hn::Mul(estimate, inv)};
}

// A wholly quiet group's counts and flags (its s never NaN: a NaN s makes e, and so the error, NaN).
HWY_INLINE void AllQuiet(V s, std::size_t k, ScreenResult& res, Counts& counts) {
  const D d;
  counts.all_quiet += 2 * hn::Lanes(d);
  counts.least = hn::Min(counts.least, s);
  hn::StoreU(hn::Zero(d), d, res.flags + k);
}

// The elements of pairs with s = 0 (no encoding) in the row's wholly quiet groups: the whole groups whose
// flags are all 0 (a group with a loud element flags it). Run only where such a pair exists (rare: an
// input pair of exact zeros), so that the usual group pays one Min for the count.
template <ScreenType kType>
HWY_NOINLINE std::size_t IdleOf(const void* x, std::size_t n, const ScreenChannels& in, const double* flags) {
  const D d;
  std::size_t idle = 0;
  for (std::size_t k = 0; k + hn::Lanes(d) <= n; k += hn::Lanes(d)) {
    if (!hn::AllTrue(d, hn::Eq(hn::LoadU(d, flags + k), hn::Zero(d)))) continue;
    V a, b;
    LoadPairs<kType>(x, in, k, a, b);
    idle += 2 * hn::CountTrue(d, hn::Eq(hn::Add(hn::Abs(a), hn::Abs(b)), hn::Zero(d)));
  }
  return idle;
}

// Pairs [k, k + N) of the row, the lanes of `valid` (all of them but in the last group).
template <ScreenType kType, bool kLast, bool kReach, bool kAttention>
HWY_INLINE void Group(const void* x, const void* y, std::size_t k, M valid, const ScreenChannels& in,
                      const ScreenChannels& out, const ScreenToken& tk, const Consts& c, ScreenResult& res,
                      Counts& counts) {
  const D d;
  V a, b, y0, y1;
  LoadPairs<kType>(x, in, k, a, b);
  LoadPairs<kType>(y, out, k, y0, y1);
  const V s = hn::Add(hn::Abs(a), hn::Abs(b));
  const V sn = hn::LoadU(d, tk.sin + k), cs = hn::LoadU(d, tk.cos + k);
  V e0 = hn::MulSub(cs, a, hn::Mul(sn, b)), e1 = hn::MulAdd(sn, a, hn::Mul(cs, b));
  if constexpr (kAttention) e0 = hn::Mul(e0, c.attention), e1 = hn::Mul(e1, c.attention);
  const V r = hn::Mul(s, hn::LoadU(d, tk.radius + k)), rr = hn::Add(r, r);
  const V budget = hn::MulAdd(hn::LoadU(d, tk.budget_slope + k), s, c.budget_floor);
  const V tally = hn::MulAdd(hn::LoadU(d, tk.tally_slope + k), s, hn::LoadU(d, tk.tally_floor + k));
  // The tally's line carries its own margin (ContractTally::screen_line), the bound's factor the others.
  // A NaN anywhere (∞·0 in a line) must make the element loud: the NaN-prone tally comes second to LeastOf,
  // and a NaN line fails Judge's comparison.
  const V ratio = hn::Mul(budget, c.ratio_bar), capped = hn::Mul(tally, c.bound);
  const Error v0 = ErrorOf(y0, e0, r, rr, c), v1 = ErrorOf(y1, e1, r, rr, c);
  M decided;  // kReach: where the pair's budget is decidable
  if constexpr (kReach) {
    const V top = hn::MulAdd(hn::LoadU(d, tk.reach_slope + k), s, c.reach_floor);
    decided = hn::Or(hn::Eq(s, hn::Zero(d)), hn::Lt(top, hn::Mul(s, c.reach_factor)));
  }
  if constexpr (!kLast) {  // most groups: every element quiet, no estimate kept
    const V bar = LeastOf(hn::Min(ratio, c.fast_abs), capped);  // the line under the flat bars
    M fast = hn::And(Fast(v0, bar, c), Fast(v1, bar, c));
    if constexpr (kReach) fast = hn::And(fast, decided);
    if (hn::AllTrue(d, fast)) return AllQuiet(s, k, res, counts);
  }
  const V line = LeastOf(hn::Min(ratio, c.max_abs), capped);
  const Element j0 = Judge(v0, line, c), j1 = Judge(v1, line, c);
  M q0 = j0.quiet, q1 = j1.quiet;
  if constexpr (kReach) q0 = hn::And(q0, decided), q1 = hn::And(q1, decided);
  if constexpr (kLast) q0 = hn::And(q0, valid), q1 = hn::And(q1, valid);
  if (!kLast && hn::AllTrue(d, hn::And(q0, q1))) {  // every element quiet, an estimate perhaps kept
    AllQuiet(s, k, res, counts);
  } else {
    const V quiet = hn::Add(hn::IfThenElseZero(q0, c.one), hn::IfThenElseZero(q1, c.one));
    counts.quiet = hn::Add(counts.quiet, quiet);
    counts.encoding = hn::Add(counts.encoding, hn::IfThenElseZero(hn::Gt(s, hn::Zero(d)), quiet));
    // Flags: 1·(a loud) + 2·(b loud), as 3 − (1·quiet a + 2·quiet b).
    const V flags = hn::Sub(c.three, hn::Add(hn::IfThenElseZero(q0, c.one), hn::IfThenElseZero(q1, c.two)));
    hn::StoreU(kLast ? hn::IfThenElseZero(valid, flags) : flags, d, res.flags + k);
  }
  // Estimates are never NaN (Judge): where neither of the pair's clears its floor, none is kept (most groups,
  // once the tails are compacted).
  if (hn::AllFalse(d, hn::Or(hn::Gt(hn::Max(j0.estimate, j1.estimate), c.abs_floor),
                             hn::Gt(hn::Max(j0.ulp_estimate, j1.ulp_estimate), c.ulp_floor))))
    return;
  // No estimate where the pair has no bound (the double tier declined it: r infinite or NaN); the exact path
  // puts its values in the tails (measure_rope_screened.cc's loud()).
  const M bounded = hn::Lt(r, c.huge);
  M a0 = hn::And(bounded, hn::Gt(j0.estimate, c.abs_floor)),
    a1 = hn::And(bounded, hn::Gt(j1.estimate, c.abs_floor));
  M u0 = hn::And(bounded, hn::Gt(j0.ulp_estimate, c.ulp_floor)),
    u1 = hn::And(bounded, hn::Gt(j1.ulp_estimate, c.ulp_floor));
  if constexpr (kLast)
    a0 = hn::And(a0, valid), a1 = hn::And(a1, valid), u0 = hn::And(u0, valid), u1 = hn::And(u1, valid);
  res.abs_kept += Keep(j0.estimate, a0, res.abs_tail + res.abs_kept);
  res.abs_kept += Keep(j1.estimate, a1, res.abs_tail + res.abs_kept);
  res.ulp_kept += Keep(j0.ulp_estimate, u0, res.ulp_tail + res.ulp_kept);
  res.ulp_kept += Keep(j1.ulp_estimate, u1, res.ulp_tail + res.ulp_kept);
}

// One row at x and y: its counts and flags in `res`, its estimates at res's tails (abs_kept, ulp_kept).
template <ScreenType kType, bool kReach, bool kAttention>
HWY_INLINE void RowOf(const void* x, const void* y, std::size_t n, const ScreenChannels& in,
                      const ScreenChannels& out, const ScreenToken& tk, const Consts& c, ScreenResult& res,
                      detail::SpreadPrefetch& ahead) {
  const D d;
  const std::size_t N = hn::Lanes(d);
  Counts counts{hn::Zero(d), hn::Zero(d), c.huge, 0};
  res.abs_kept = res.ulp_kept = 0;
  std::size_t k = 0;
  for (; k + N <= n; k += N, ahead.group())
    Group<kType, false, kReach, kAttention>(x, y, k, hn::FirstN(d, N), in, out, tk, c, res, counts);
  // The last group reads past n within the row's extent: the caller pads a copy of a row whose last vector
  // would pass its end, and reads in place only the rows whose padding lies inside them.
  if (k < n)
    Group<kType, true, kReach, kAttention>(x, y, k, hn::FirstN(d, n - k), in, out, tk, c, res, counts);
  const auto sum = [&](V v) { return static_cast<std::size_t>(hn::GetLane(hn::SumOfLanes(d, v))); };
  res.loud = 2 * n - (sum(counts.quiet) + counts.all_quiet);
  const bool idle = hn::GetLane(hn::MinOfLanes(d, counts.least)) == 0;
  res.quiet_encoding =
      sum(counts.encoding) + counts.all_quiet - (idle ? IdleOf<kType>(x, n, in, res.flags) : 0);
}

template <ScreenType kType, bool kReach, bool kAttention>
HWY_NOINLINE void ScreenRowsOf(const void* x, const void* y, std::size_t n, const ScreenChannels& in,
                               const ScreenChannels& out, const ScreenToken& tk, const ScreenBars& bars,
                               const ScreenRows& rows, ScreenResult& out_result) {
  const Consts c(bars);
  // Local copies: the counts' stores could otherwise alias the channels' offsets, reloaded every group.
  const ScreenChannels ci = in, co = out;
  const ScreenToken t = tk;
  ScreenResult res = out_result;
  res.before = {};
  const std::size_t step = rows.stride * kSize<kType>;
  const auto* xr = static_cast<const char*>(x);
  const auto* yr = static_cast<const char*>(y);
  const std::size_t groups = std::max<std::size_t>(1, n / hn::Lanes(D()));  // whole vectors (Group's calls)
  const std::size_t per_group = detail::SpreadPrefetch::per_group(rows.ahead_bytes, groups);
  for (std::size_t r = 0;; ++r, xr += step, yr += step) {
    // The row `ahead` on, on its way from memory, spread over this row's groups (all at its start: 4-7%
    // slower, alternating within one process).
    detail::SpreadPrefetch ahead;
    if (r < rows.ahead_rows)
      ahead = detail::SpreadPrefetch(xr + rows.ahead * kSize<kType>, yr + rows.ahead * kSize<kType>,
                                     rows.ahead_bytes, per_group, false);
    RowOf<kType, kReach, kAttention>(xr, yr, n, ci, co, t, c, res, ahead);
    ahead.rest();
    if (res.loud != 0 || r + 1 >= rows.rows) break;
    res.before.rows += 1, res.before.quiet_encoding += res.quiet_encoding;
    res.before.abs_kept += res.abs_kept, res.before.ulp_kept += res.ulp_kept;
    res.abs_tail += res.abs_kept, res.ulp_tail += res.ulp_kept;
  }
  res.abs_tail = out_result.abs_tail, res.ulp_tail = out_result.ulp_tail;
  out_result = res;
}

template <ScreenType kType>
void ScreenRowsOf(const void* x, const void* y, std::size_t n, const ScreenChannels& in,
                  const ScreenChannels& out, const ScreenToken& tk, const ScreenBars& bars,
                  const ScreenRows& rows, ScreenResult& res) {
  const bool attention = bars.attention != 1.0;
  if (bars.check_reach) {
    return attention ? ScreenRowsOf<kType, true, true>(x, y, n, in, out, tk, bars, rows, res)
                     : ScreenRowsOf<kType, true, false>(x, y, n, in, out, tk, bars, rows, res);
  }
  return attention ? ScreenRowsOf<kType, false, true>(x, y, n, in, out, tk, bars, rows, res)
                   : ScreenRowsOf<kType, false, false>(x, y, n, in, out, tk, bars, rows, res);
}

void ScreenRow(ScreenType type, const void* x, const void* y, std::size_t n, const ScreenChannels& in,
               const ScreenChannels& out, const ScreenToken& tk, const ScreenBars& bars,
               const ScreenRows& rows, ScreenResult& res) {
  switch (type) {
    case ScreenType::F32:
      return ScreenRowsOf<ScreenType::F32>(x, y, n, in, out, tk, bars, rows, res);
    case ScreenType::BF16:
      return ScreenRowsOf<ScreenType::BF16>(x, y, n, in, out, tk, bars, rows, res);
    case ScreenType::F16:
      return ScreenRowsOf<ScreenType::F16>(x, y, n, in, out, tk, bars, rows, res);
    case ScreenType::F64:
      return ScreenRowsOf<ScreenType::F64>(x, y, n, in, out, tk, bars, rows, res);
  }
}

namespace {
[[maybe_unused]] const bool registered =
    detail::target_list<ScreenRowTarget>().add(HWY_TARGET, {hwy::TargetName(HWY_TARGET), &ScreenRow});
}  // namespace
#endif  // HWY_NATIVE_FMA

}  // namespace pe::harness::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <hwy/targets.h>

#include <algorithm>
#include <atomic>

namespace pe::harness {
const std::vector<ScreenRowTarget>& screen_row_targets() {
  return detail::target_list<ScreenRowTarget>().best_first();
}

namespace {
std::atomic<bool> screen_on{true};
}  // namespace
bool rope_screen_enabled() noexcept { return screen_on.load(std::memory_order_relaxed); }
void set_rope_screen(bool enabled) noexcept { screen_on.store(enabled, std::memory_order_relaxed); }

namespace {
PresumeTuning tuning{.presume_from = std::size_t{1} << 21};
std::atomic<std::size_t> reruns{0};
}  // namespace
void tune_rope_screen(const PresumeTuning& t) noexcept { tuning = t; }
const PresumeTuning& rope_screen_tuning() noexcept { return tuning; }
std::size_t rope_screen_reruns() noexcept { return reruns.load(std::memory_order_relaxed); }
void count_rope_screen_rerun() noexcept { reruns.fetch_add(1, std::memory_order_relaxed); }

}  // namespace pe::harness
#endif  // HWY_ONCE

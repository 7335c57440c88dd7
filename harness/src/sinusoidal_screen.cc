// pe/harness/sinusoidal_screen.h: a table row's elements against the double tier's sin and cos, each error
// bounded above, in vectors, in one pass over the pairs: the row's e rotated from the last row's (SinCos),
// each pair's line (the driver's, its radius already taken off) and the element's own test (TableJudge). With
// r the pair's radius (|e − exact| <= r, the double tier's, the rotation's and the exact path's
// double-double's together), the exact path's error is at most (|y − e| + r)·(1 + 2^-50) (the rounding of
// |y − e| and of the exact path's own |(y − hi) − lo|); the driver folds that factor into the line, the
// kernel into ulp_line. TableJudge replaces rope_screen.cc's Judge here: one comparison against the
// smaller of the two lines, the ulp line in the binade of |e| − 2r with the radius taken off.
//
// Before it, a pre-test (table_fast_bars) that folds the floors' tests into the same comparison: where a
// whole vector of pairs passes, the judge would have found every element quiet and kept no estimate, which is
// all it would have written (flags 0), so the pre-test changes no outcome, only how fast the usual one comes.
// Its err and binade 2^E (LowerBinade) are the judge's, bit for bit; its bar is the least of the pair's
// min(line, abs_floor) (a NaN line: -1) and fl(2^E·min(U, ulp_line) − radius), U = min(ulp_floor·2^(1 − p),
// 2^100): that is at most the judge's fl(2^E·ulp_line − radius) (rounding is monotone), so err under it is
// quiet; under min(line, abs_floor), no abs estimate is kept; and it is at most 2^E·U: where that product is
// a double, the exact 2^E·min(U, ulp_line) − radius lies below it, and so does its rounding; where it is not
// (below 2^-1022), that exact value is below −radius/2 and the bar negative. So err·2^(p − 1 − E) is at most
// U·2^(p − 1), at most ulp_floor, and the judge's ulp estimate (e's own binade, at least 2^E) no more: none
// kept. A NaN err fails every comparison; a NaN U (no floor to pass) is −∞.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sinusoidal_screen.cc"
#include "pe/harness/sinusoidal_screen.h"

#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#ifndef PE_SINUSOIDAL_SCREEN_ONCE_
#define PE_SINUSOIDAL_SCREEN_ONCE_
#include <algorithm>
#include <cfloat>
#include <cmath>

#include "spread_prefetch.h"
#include "target_list.h"

namespace pe::harness::detail {
// x rounded to a float32 at most x (0 where x is not positive: a NaN included), and at least x (+inf where x
// is NaN or past the largest float32).
inline float down32(double x) {
  if (!(x > 0)) return 0.0f;
  if (x >= FLT_MAX) return FLT_MAX;
  const auto f = static_cast<float>(x);
  return static_cast<double>(f) > x ? std::nextafter(f, 0.0f) : f;
}
inline float up32(double x) {
  if (!(x <= FLT_MAX)) return INFINITY;
  const auto f = static_cast<float>(x);
  return static_cast<double>(f) < x ? std::nextafter(f, INFINITY) : f;
}
// Quiet32's factor and offset from CheapQuiet's U' and C (above): U32 <= U_a·(1 − 4u), U_a = (1 − u)·((1 −
// u)·U' − u), and C32 >= C_a + 2^-120, C_a = (1 − u)·(C + η·(1 + U')), u = 2^-24, η = 2^-124. The doubles'
// own roundings: at most 5·2^-53·(U' + u) in U_a (taken off as 2^-48·(U' + u)), a factor 1 + 2^-48 on C_a's
// positive terms.
struct Cheap32 {
  float u, c;
};
inline Cheap32 cheap32(double half_scale, double offset) {
  constexpr double u = 0x1p-24, eta = 0x1p-124;
  const double ua = (1 - u) * ((1 - u) * half_scale - u) * (1 - 4 * u) - 0x1p-48 * (half_scale + u);
  const double ca = ((1 - u) * (offset + eta * (1 + half_scale)) + 0x1p-120) * (1 + 0x1p-48);
  return {down32(ua), up32(ca)};
}
// The float32 pre-test's passes, counted once a call (table_screen_float32_passes).
void count_float32_passes(std::size_t n) noexcept;
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
  V radius, twice_radius, ulp_line, abs_floor, ulp_floor, least_binade, huge, one, two, three;
  hn::Vec<hn::RebindToUnsigned<D>> exponent, bias;
  V fast_scale;                // the pre-test's min(U, ulp_line)
  V half_scale, cheap_offset;  // the first pre-test's (CheapQuiet)
  bool cheap = false;
  hn::Vec<hn::Rebind<float, D>> u32, c32;  // the float32 pre-test's (Quiet32), where `f32`
  bool f32 = false;
  Consts(const TableScreenRow& row, const TableScreenBars& b) {
    const D d;
    const hn::RebindToUnsigned<D> du;
    radius = hn::Set(d, row.radius), twice_radius = hn::Set(d, 2 * row.radius);
    // err_hi·2^(precision − 1 − E) <= max_ulp·(1 − 2^-49) as err_hi <= 2^E·ulp_line: scaling by powers of two
    // is exact (short of underflow, far below any radius). NaN: nothing is quiet; +inf: a finite line.
    const double u = b.max_ulp * (1 - 0x1p-49) * b.ulp_scale;
    const double line = std::isnan(u) ? 0.0 : std::min(u, DBL_MAX);
    ulp_line = hn::Set(d, line);
    const double scale = std::isnan(row.fast_ulp) ? -HUGE_VAL : std::min(row.fast_ulp, line);
    fast_scale = hn::Set(d, scale);
    cheap = scale > 0 && row.radius < 0x1p-20;  // CheapQuiet's U >= 0; its 2^-50·U covers 2^-54·U·(1 + r)
    half_scale = hn::Set(d, scale / 2 * (1 - 0x1p-20));
    const double offset = (row.radius * (scale + 1) * (1 + 0x1p-40) + 0x1p-50 * scale) * (1 + 0x1p-40);
    cheap_offset = hn::Set(d, offset);
    const detail::Cheap32 q = detail::cheap32(scale / 2 * (1 - 0x1p-20), offset);
    f32 = cheap && row.fast_line != nullptr && row.fast_line32 != nullptr && q.u > 0 && q.c < INFINITY;
    u32 = hn::Set(hn::Rebind<float, D>(), q.u), c32 = hn::Set(hn::Rebind<float, D>(), q.c);
    abs_floor = hn::Set(d, b.abs_floor), ulp_floor = hn::Set(d, b.ulp_floor);
    least_binade = hn::Set(d, b.least_binade), huge = hn::Set(d, HUGE_VAL), one = hn::Set(d, 1.0);
    two = hn::Set(d, 2.0), three = hn::Set(d, 3.0);
    exponent = hn::Set(du, 0x7ff0000000000000ULL);
    // 1/ulp(v) = 2^(precision − 1 − E) for v's binade 2^E (E >= emin): these bits less the binade's.
    bias = hn::Set(du, static_cast<std::uint64_t>(2045 + b.precision) << 52);
  }
};

// std::min(a, b): a where either is NaN (x86's min gives its second operand then).
HWY_INLINE V MinOr(V a, V b) {
#if HWY_ARCH_X86
  return hn::Min(b, a);
#else
  return hn::IfThenElse(hn::Lt(b, a), b, a);
#endif
}

// The binade 2^E of the exact value's lower end |e| − 2r (the type's least binade below its least normal).
// The exact value lies within r of e; |e| − 2r as computed (its rounding, 2^-53·|e| at most, is far below
// r >= 2^-48: TableScreenRow::radius) stays under |e| − r, so the exact value's magnitude lies at or above
// 2^E and its ulp is at least 2^E·2^(1 − p). A NaN e makes any binade here, but err NaN: the element is loud.
HWY_INLINE V LowerBinade(V e, const Consts& c) {
  const V lower = hn::Max(hn::Sub(hn::Abs(e), c.twice_radius), c.least_binade);
  return hn::And(lower, hn::BitCast(D(), c.exponent));
}

// One output element: y against e, with r = c.radius at least its pair's radius, against `line` (the pair's,
// its radius taken off). Its ulp error is at most (|y − e| + r)/(2^E·2^(1 − p)), 2^E the LowerBinade: under
// max_ulp where |y − e| <= 2^E·ulp_line − r (one rounding, as the sum's it replaces; the factor 1 + 2^-50 of
// sinusoidal_screen.h folded into ulp_line). One comparison against the smaller line does both bars (a NaN
// line stays NaN: MinOr). The estimates |y − e| and |y − e|/ulp(e), ulp(e) from the binade of |e| itself (at
// least 2^E), are the percentiles' (a ulp estimate half or twice the exact one where the exact value lies
// across a power of two from e; rope_screen.cc's Judge takes its own in the lower binade).
HWY_INLINE Element TableJudge(V y, V e, V line, const Consts& c) {
  const D d;
  const hn::RebindToUnsigned<D> du;
  const V err = hn::Abs(hn::Sub(y, e));
  const M quiet = hn::Le(err, MinOr(line, hn::MulSub(LowerBinade(e, c), c.ulp_line, c.radius)));
  const V own = hn::And(hn::Max(hn::Abs(e), c.least_binade), hn::BitCast(d, c.exponent));
  const V inv = hn::BitCast(d, hn::Sub(c.bias, hn::BitCast(du, own)));
  const V estimate = Estimate(err, c);
  return {quiet, estimate, hn::Mul(estimate, inv)};
}

// A cheaper pre-test, tried first. FastQuiet's ulp bar fl(2^E·U − r) (U >= 0; 2^E the binade of
// fl(|e| − 2r), or the least normal's: above (|e| − 2r)·(1 − 2^-53)/2) is at least fl(|e|·U' − C), with
// U' = fl(U/2·(1 − 2^-20)) and C >= r·(U + 1) + 2^-54·U·(1 + r) (cheap_offset; its roundings covered by its
// factors 1 + 2^-40; |e| <= 1 + r): |e|·U' − C <= |e|·U/2 − r·(U + 1) − 2^-54·U·(1 + r) <= 2^E·U − r, and
// rounding is monotone. So a vector that passes it passes FastQuiet, for one multiply-add where the binade
// takes four operations; it fails where an error lies within a factor of two of the ulp bar, and FastQuiet
// then decides.
HWY_INLINE bool CheapQuiet(V ys, V yc, V es, V ec, V line, const Consts& c) {
  const D d;
  const auto passes = [&](V y, V e) {
    const V err = hn::Abs(hn::Sub(y, e));
    return hn::Le(err, hn::Min(line, hn::MulSub(hn::Abs(e), c.half_scale, c.cheap_offset)));
  };
  return hn::AllTrue(d, hn::And(passes(ys, es), passes(yc, ec)));
}

// A pre-test before CheapQuiet, on float32 rows as read (no widening, half the width): e32 = fl32(e), a =
// |fl32(y − e32)|, u = 2^-24. Then |y − e| <= a/(1 − u) + u·|e32| + η and |e| >= (1 − u)·|e32| − η, η =
// 2^-124 (with |e32| < 2; η also covers subnormals a caller's FTZ or DAZ flushes, three at most). So a <=
// line32 (table_fast_line32) gives |y − e| <= L, the pair's fast_line, and a <= fl32(|e32|·U32 − C32)
// (cheap32) gives |y − e| <= |e|·U' − C, CheapQuiet's bar: U32 and C32 leave room for the product's own
// rounding (up by u at most), and a bar rounded to ±0 from below needs a = 0 while |e32|·U_a − C_a > 0
// (C32 − C_a >= 2^-120, above any flushed value). Both hold exactly, so for the doubles CheapQuiet compares
// (rounding is monotone): a vector that passes here passes CheapQuiet, with its outcome. A NaN y or e fails.
using DF = hn::Rebind<float, D>;
using VF = hn::Vec<DF>;
HWY_INLINE hn::Mask<DF> Quiet32(const void* y, const ScreenChannels& ch, std::size_t k, V es, V ec, VF line,
                                const Consts& c) {
  const DF df;
  const auto* f = static_cast<const float*>(y);
  VF ys, yc;
  if (ch.interleaved) {
    const VF lo = hn::LoadU(df, f + ch.a0 + 2 * k), hi = hn::LoadU(df, f + ch.a0 + 2 * k + hn::Lanes(df));
    ys = hn::ConcatEven(df, hi, lo), yc = hn::ConcatOdd(df, hi, lo);
  } else {
    ys = hn::LoadU(df, f + ch.a0 + k), yc = hn::LoadU(df, f + ch.b0 + k);
  }
  const auto passes = [&](VF yv, V e) {
    const VF e32 = hn::DemoteTo(df, e);
    return hn::Le(hn::Abs(hn::Sub(yv, e32)), hn::Min(line, hn::MulSub(hn::Abs(e32), c.u32, c.c32)));
  };
  return hn::And(passes(ys, es), passes(yc, ec));
}

// The pre-test (above): whether pairs [k, k + N) are all quiet with no estimate kept.
HWY_INLINE bool FastQuiet(V ys, V yc, V es, V ec, const double* fast_line, const Consts& c) {
  const D d;
  const V line = hn::LoadU(d, fast_line);
  const auto passes = [&](V y, V e) {
    const V err = hn::Abs(hn::Sub(y, e));
    return hn::Le(err, hn::Min(line, hn::MulSub(LowerBinade(e, c), c.fast_scale, c.radius)));
  };
  return hn::AllTrue(d, hn::And(passes(ys, es), passes(yc, ec)));
}

// (s, c) rotated by ω: (ss, sc) = (sin ω, cos ω).
HWY_INLINE void Rotate(V& s, V& c, V ss, V sc) {
  const V s1 = hn::MulAdd(s, sc, hn::Mul(c, ss)), c1 = hn::MulSub(c, sc, hn::Mul(s, ss));
  s = s1, c = c1;
}

// The row's e at pairs [k, k + N): the stored ones, or (kRotate) those rotated by ω, stored back.
template <bool kRotate>
HWY_INLINE void SinCos(const TableScreenRow& row, std::size_t k, V& s, V& c) {
  const D d;
  s = hn::LoadU(d, row.sin + k), c = hn::LoadU(d, row.cos + k);
  if constexpr (!kRotate) return;
  Rotate(s, c, hn::LoadU(d, row.step_sin + k), hn::LoadU(d, row.step_cos + k));
  hn::StoreU(s, d, row.sin + k), hn::StoreU(c, d, row.cos + k);
}

// v's lanes of `keep` written from `out` on; past them. AVX-512 stores a whole vector whatever it keeps (no
// branch on the count: the tails have room for 2·padded(n) + kLanes values); other targets
// keep_lanes-inl.h's.
HWY_INLINE double* KeepAt(V v, M keep, double* out) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX3
  hn::StoreU(V{_mm512_maskz_compress_pd(keep.raw, v.raw)}, D(), out);
  return out + hn::CountTrue(D(), keep);
#else
  return out + Keep(v, keep, out);
#endif
}

// What the pass keeps: the tails' next free values, how many elements were loud; and how Quiet32 fares.
struct Kept {
  double *abs, *ulp;
  std::size_t loud = 0;
  // Quiet32's tries (vectors of one row or two) and failures, counted per step and on its failing path: a
  // count of passes, held in memory through the compressing stores, cost the check 1% (measured dropped).
  std::size_t tried32 = 0, failed32 = 0;
  // Whether Quiet32 still runs this call (TableRowsOf clears it after a step it mostly failed).
  bool try32 = true;
};

// How a vector fared in Quiet32: not tried, passed, or failed (then FastQuiet is skipped, Screen).
enum class AsRead { kNotTried, kPassed, kFailed };

// Pairs [k, k + N) of a row, its outputs (ys, yc) against its e (es, ec), the lanes of `valid` (all of them
// but in the last group). Its flags are written only where an element is loud (the caller's stay 0
// elsewhere).
// A vector (in a step of two rows, the pair of them) that failed Quiet32 (as_read) skips FastQuiet after
// CheapQuiet (Quiet32 runs only where CheapQuiet does, c.f32): there an element lies near a bar or a floor,
// and FastQuiet passed 11% of CheapQuiet's failures on the benchmark's table (4538 of 40038 vectors a check),
// for its binade's four operations an element on them all (0.9–1.3% of the check).
template <bool kLast>
HWY_INLINE void Screen(V ys, V yc, V es, V ec, std::size_t k, M valid, const TableScreenRow& row,
                       const Consts& c, double* flags, Kept& kept, AsRead as_read) {
  const D d;
  if (!kLast && row.fast_line != nullptr) {
    if (c.cheap && CheapQuiet(ys, yc, es, ec, hn::LoadU(d, row.fast_line + k), c)) return;
    if (as_read != AsRead::kFailed && FastQuiet(ys, yc, es, ec, row.fast_line + k, c)) return;
  }
  const V line = hn::LoadU(d, row.line + k);
  const Element js = TableJudge(ys, es, line, c);
  const Element jc = TableJudge(yc, ec, line, c);
  M qs = js.quiet, qc = jc.quiet;
  if constexpr (kLast) qs = hn::And(qs, valid), qc = hn::And(qc, valid);
  if (!hn::AllTrue(d, hn::And(qs, qc))) {
    kept.loud += hn::CountTrue(d, hn::AndNot(qs, valid)) + hn::CountTrue(d, hn::AndNot(qc, valid));
    const V f = hn::Sub(c.three, hn::Add(hn::IfThenElseZero(qs, c.one), hn::IfThenElseZero(qc, c.two)));
    hn::StoreU(kLast ? hn::IfThenElseZero(valid, f) : f, d, flags + k);
  }
  M as = hn::Gt(js.estimate, c.abs_floor), ac = hn::Gt(jc.estimate, c.abs_floor);
  M us = hn::Gt(js.ulp_estimate, c.ulp_floor), uc = hn::Gt(jc.ulp_estimate, c.ulp_floor);
  if constexpr (kLast)
    as = hn::And(as, valid), ac = hn::And(ac, valid), us = hn::And(us, valid), uc = hn::And(uc, valid);
  if (hn::AllFalse(d, hn::Or(hn::Or(as, ac), hn::Or(us, uc)))) return;
  kept.abs = KeepAt(jc.estimate, ac, KeepAt(js.estimate, as, kept.abs));
  kept.ulp = KeepAt(jc.ulp_estimate, uc, KeepAt(js.ulp_estimate, us, kept.ulp));
}

// Whether pairs [k, k + N) of one row, or (kTwo) of two y_stride apart (the second's e s1 and c1), all pass
// Quiet32, where it runs (float32 rows, whole vectors, c.f32, kept.try32); a failure counted.
template <ScreenType kType, bool kLast, bool kTwo>
HWY_INLINE AsRead PassesAsRead(const char* y, std::size_t y_stride, std::size_t k, const ScreenChannels& ch,
                               V s0, V c0, V s1, V c1, const TableScreenRow& row, const Consts& c,
                               Kept& kept) {
  if constexpr (kType != ScreenType::F32 || kLast) {
    return AsRead::kNotTried;
  } else {
    if (!c.f32 || !kept.try32) return AsRead::kNotTried;
    const VF line = hn::LoadU(DF(), row.fast_line32 + k);
    hn::Mask<DF> quiet = Quiet32(y, ch, k, s0, c0, line, c);
    if constexpr (kTwo) quiet = hn::And(quiet, Quiet32(y + y_stride, ch, k, s1, c1, line, c));
    if (HWY_LIKELY(hn::AllTrue(DF(), quiet))) return AsRead::kPassed;
    ++kept.failed32;
    return AsRead::kFailed;
  }
}

// One row's pairs [k, k + N).
template <ScreenType kType, bool kRotate, bool kLast>
HWY_INLINE void Group(const void* y, std::size_t k, M valid, const ScreenChannels& ch,
                      const TableScreenRow& row, const Consts& c, double* flags, Kept& kept) {
  V es, ec;
  SinCos<kRotate>(row, k, es, ec);
  const AsRead as_read =
      PassesAsRead<kType, kLast, false>(static_cast<const char*>(y), 0, k, ch, es, ec, es, ec, row, c, kept);
  if (as_read == AsRead::kPassed) return;
  V ys, yc;
  LoadPairs<kType>(y, ch, k, ys, yc);
  Screen<kLast>(ys, yc, es, ec, k, valid, row, c, flags, kept, as_read);
}

// Two rows' pairs [k, k + N), y_stride bytes apart, the second's flags `stride` after the first's: the
// first's e rotated from the stored one, the second's from the first's in registers, the second's stored.
// Per row, half the loads of e and of the steps and half the stores of two calls of Group: 0.26 against
// 0.31 ns an element with the rows in L1 (three or four rows a step measured slower, 0.28-0.35: their
// vectors spill).
template <ScreenType kType, bool kLast>
HWY_INLINE void GroupOfTwoRows(const char* y, std::size_t y_stride, std::size_t k, M valid,
                               const ScreenChannels& ch, const TableScreenRow& row, const Consts& c,
                               double* flags, std::size_t stride, Kept& kept) {
  const D d;
  const V ss = hn::LoadU(d, row.step_sin + k), sc = hn::LoadU(d, row.step_cos + k);
  V s0 = hn::LoadU(d, row.sin + k), c0 = hn::LoadU(d, row.cos + k);
  Rotate(s0, c0, ss, sc);
  V s1 = s0, c1 = c0;
  Rotate(s1, c1, ss, sc);
  hn::StoreU(s1, d, row.sin + k), hn::StoreU(c1, d, row.cos + k);
  const AsRead as_read = PassesAsRead<kType, kLast, true>(y, y_stride, k, ch, s0, c0, s1, c1, row, c, kept);
  if (as_read == AsRead::kPassed) return;
  V ys0, yc0, ys1, yc1;
  LoadPairs<kType>(y, ch, k, ys0, yc0);
  LoadPairs<kType>(y + y_stride, ch, k, ys1, yc1);
  Screen<kLast>(ys0, yc0, s0, c0, k, valid, row, c, flags, kept, as_read);
  Screen<kLast>(ys1, yc1, s1, c1, k, valid, row, c, flags + stride, kept, as_read);
}

// One row's pairs, whole vectors, then the last one's lanes.
template <ScreenType kType, bool kRotate>
HWY_INLINE void RowOf(const void* y, std::size_t n, const ScreenChannels& channels, const TableScreenRow& at,
                      const Consts& c, double* flags, Kept& kept, detail::SpreadPrefetch& ahead) {
  const D d;
  const std::size_t N = hn::Lanes(d);
  std::size_t k = 0;
  for (; k + N <= n; k += N, ahead.group())
    Group<kType, kRotate, false>(y, k, hn::FirstN(d, N), channels, at, c, flags, kept);
  if (k < n) Group<kType, kRotate, true>(y, k, hn::FirstN(d, n - k), channels, at, c, flags, kept);
}

// Two rows, both rotated (GroupOfTwoRows).
template <ScreenType kType>
HWY_INLINE void TwoRowsOf(const char* y, std::size_t y_stride, std::size_t n, const ScreenChannels& channels,
                          const TableScreenRow& at, const Consts& c, double* flags, std::size_t stride,
                          Kept& kept, detail::SpreadPrefetch& ahead) {
  const D d;
  const std::size_t N = hn::Lanes(d);
  std::size_t k = 0;
  for (; k + N <= n; k += N, ahead.group())
    GroupOfTwoRows<kType, false>(y, y_stride, k, hn::FirstN(d, N), channels, at, c, flags, stride, kept);
  if (k < n)
    GroupOfTwoRows<kType, true>(y, y_stride, k, hn::FirstN(d, n - k), channels, at, c, flags, stride, kept);
}

// How far ahead of the rows it reads the kernel prefetches (whole rows, at least a step's two). Alternating
// within one process on 131072 rows of 128 float32: 3 KiB (six rows) about 1% faster than 2 and 4 KiB, 4-5%
// faster than 1 and 8 KiB. With the prefetches spread (SpreadPrefetch) and into L1, the check ran 6-10%
// faster than with each step's 16 rows on prefetched at its start into L2 (prefetcht2). Rows wider than
// kWideRow still go to L2: two rows read and two asked for would not stay in L1 (32 KiB here).
constexpr std::size_t kAheadBytes = 3072, kWideRow = 4096;

// Up to row.rows rows, one set of constants: the first rotated or not (row.rotate), each later one rotated,
// two at a time where two remain (TwoRowsOf); it stops after a step (one row or two) that holds a loud
// element (res.rows: how many rows it took). The rows' flags must be 0 on entry: only a vector that holds a
// loud element writes its own.
template <ScreenType kType, bool kInterleaved>
HWY_NOINLINE void TableRowsOf(const void* y, std::size_t n, const ScreenChannels& ch,
                              const TableScreenRow& row, const TableScreenBars& bars,
                              TableScreenResult& res) {
  const Consts c(row, bars);
  // Locals: the stores below may alias any memory as far as the compiler knows (res, row, ch included).
  const TableScreenRow at = row;
  const ScreenChannels channels{ch.a0, ch.b0, kInterleaved};  // a constant: no branch per group
  const std::size_t stride = ScreenToken::padded(n);
  double* flags = res.flags;
  Kept kept{res.abs_tail, res.ulp_tail};
  const auto* p = static_cast<const char*>(y);
  const std::size_t ahead_rows = at.y_stride == 0 ? 0 : std::max<std::size_t>(2, kAheadBytes / at.y_stride);
  const std::size_t groups = std::max<std::size_t>(1, n / hn::Lanes(D()));  // whole vectors (Group's calls)
  const std::size_t per_group[2] = {detail::SpreadPrefetch::per_group(at.y_stride, groups),
                                    detail::SpreadPrefetch::per_group(2 * at.y_stride, groups)};
  // Quiet32's tries a step: a vector a whole group of pairs (where it runs at all).
  const std::size_t tries = kType == ScreenType::F32 && c.f32 ? n / hn::Lanes(D()) : 0;
  std::size_t i = 0;
  while (i < at.rows) {
    const std::size_t step = i + 2 <= at.rows && (i != 0 || at.rotate) ? 2 : 1;
    const std::size_t failed = kept.failed32;
    // The step's rows ahead_rows on (within the table): a long call's rows stream in ahead of it.
    detail::SpreadPrefetch ahead;
    if (ahead_rows != 0 && i + ahead_rows < at.table_rows) {
      const std::size_t rows = std::min(i + ahead_rows + step, at.table_rows) - (i + ahead_rows);
      ahead = detail::SpreadPrefetch(p + ahead_rows * at.y_stride, nullptr, rows * at.y_stride,
                                     per_group[rows - 1], at.y_stride > kWideRow);
    }
    if (step == 2) {
      TwoRowsOf<kType>(p, at.y_stride, n, channels, at, c, flags, stride, kept, ahead);
    } else if (i == 0 && !at.rotate) {
      RowOf<kType, false>(p, n, channels, at, c, flags, kept, ahead);
    } else {
      RowOf<kType, true>(p, n, channels, at, c, flags, kept, ahead);
    }
    ahead.rest();
    // Where Quiet32 failed most of a step's vectors (errors at a float32 ulp's scale, whose bars it cannot
    // resolve: the table's first thousands of rows), the call's later steps go to the doubles at once. The
    // outcomes are the judge's either way. Alternating in one process, a 16384-row table's check ran 4.6%
    // faster than trying every vector and 4% faster than stopping only where a step failed all of them; a
    // 131072-row one within 0.2% of both.
    if (kept.try32) {
      kept.tried32 += tries;
      if (2 * (kept.failed32 - failed) > tries) kept.try32 = false;
    }
    i += step, p += step * at.y_stride, flags += step * stride;
    if (kept.loud != 0) break;  // measured exactly before the next step: the bars may rise
  }
  res.rows = i;
  res.abs_kept = static_cast<std::size_t>(kept.abs - res.abs_tail);
  res.ulp_kept = static_cast<std::size_t>(kept.ulp - res.ulp_tail);
  res.loud = kept.loud;
  if (kept.tried32 != kept.failed32) detail::count_float32_passes(kept.tried32 - kept.failed32);
}

template <ScreenType kType>
void TableRowIn(const void* y, std::size_t n, const ScreenChannels& ch, const TableScreenRow& row,
                const TableScreenBars& bars, TableScreenResult& res) {
  if (ch.interleaved) return TableRowsOf<kType, true>(y, n, ch, row, bars, res);
  TableRowsOf<kType, false>(y, n, ch, row, bars, res);
}

void TableRow(ScreenType type, const void* y, std::size_t n, const ScreenChannels& ch,
              const TableScreenRow& row, const TableScreenBars& bars, TableScreenResult& res) {
  switch (type) {
    case ScreenType::F32:
      return TableRowIn<ScreenType::F32>(y, n, ch, row, bars, res);
    case ScreenType::BF16:
      return TableRowIn<ScreenType::BF16>(y, n, ch, row, bars, res);
    case ScreenType::F16:
      return TableRowIn<ScreenType::F16>(y, n, ch, row, bars, res);
    case ScreenType::F64:
      return TableRowIn<ScreenType::F64>(y, n, ch, row, bars, res);
  }
}

namespace {
[[maybe_unused]] const bool registered =
    detail::target_list<TableScreenTarget>().add(HWY_TARGET, {hwy::TargetName(HWY_TARGET), &TableRow});
}  // namespace
#endif  // HWY_NATIVE_FMA

}  // namespace pe::harness::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <hwy/targets.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>

namespace pe::harness {
const std::vector<TableScreenTarget>& table_screen_targets() {
  return detail::target_list<TableScreenTarget>().best_first();
}

namespace {
// Quiet32's |y − e| <= a/(1 − u) + u·|e32| + η <= L (its header) where a <= (L − 2u − η)·(1 − u), |e32| < 2:
// x = (L − 2u − η)·(1 − u)·(1 − 2^-50) (the doubles' four roundings, 2^-53 of each result at most, within
// the last factor), then fl32(fl(x·(1 − 2^-23))) <= x·(1 − 2^-23)·(1 + 2^-53)·(1 + 2^-24) < x where x is a
// normal float32. Only x >= 2^-100 is taken: where L − 2u is positive at all, L being a double above 2^-23,
// it is at least 2^-75, so the cut drops no line that passes anything. No branch: it vectorizes, as the
// lines change with the bars.
inline float line32_of(double fast_line) {
  constexpr double u = 0x1p-24, eta = 0x1p-124;
  const double x = (fast_line - 2 * u - eta) * (1 - u) * (1 - 0x1p-50);
  return x >= 0x1p-100 ? static_cast<float>(std::min(x * (1 - 0x1p-23), double{FLT_MAX})) : -1.0f;
}
}  // namespace

TableFastBars table_fast_bars(const TableScreenBars& bars, std::span<const double> line, double* fast_line,
                              float* fast_line32) {
  for (std::size_t j = 0; j < line.size(); ++j)
    fast_line[j] = std::isnan(line[j]) ? -1.0 : std::min(line[j], bars.abs_floor);
  bool passes = false;
  if (fast_line32 != nullptr)
    for (std::size_t j = 0; j < line.size(); ++j) {
      fast_line32[j] = line32_of(fast_line[j]);
      passes = passes || fast_line32[j] > 0;
    }
  return {std::min(bars.ulp_floor * bars.ulp_scale, 0x1p100), passes};  // -inf (no floor): nothing passes
}

float table_fast_line32(double fast_line) { return line32_of(fast_line); }

namespace {
std::atomic<std::size_t> float32_passes{0};
}  // namespace
void detail::count_float32_passes(std::size_t n) noexcept {
  float32_passes.fetch_add(n, std::memory_order_relaxed);
}
std::size_t table_screen_float32_passes() noexcept { return float32_passes.load(std::memory_order_relaxed); }

std::size_t table_sample_block(std::size_t dim) {
  return std::bit_floor(std::max<std::size_t>(1, kTableSampleElements / std::max<std::size_t>(dim, 1)));
}

}  // namespace pe::harness
#endif  // HWY_ONCE

// pe/harness/alibi_rows_vector.h: the exact bias and its metrics in vectors (built with -ffp-contract=off:
// only the explicit multiply-subtract fuses, the exact product's error term), then Ziv's test per lane.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "alibi_rows_vector.cc"
#include "pe/harness/alibi_rows_vector.h"

#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#ifndef PE_ALIBI_ROWS_VECTOR_ONCE_
#define PE_ALIBI_ROWS_VECTOR_ONCE_
#include "target_list.h"
#endif

HWY_BEFORE_NAMESPACE();
namespace pe::harness::HWY_NAMESPACE {

#if HWY_NATIVE_FMA
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::CappedTag<double, AlibiLanes::kLanes>;
using V = hn::Vec<D>;
using M = hn::Mask<D>;

struct DD {
  V hi, lo;
};
HWY_INLINE DD TwoSum(V a, V b) {
  const V s = hn::Add(a, b);
  const V bb = hn::Sub(s, a);
  return {s, hn::Add(hn::Sub(a, hn::Sub(s, bb)), hn::Sub(b, bb))};
}

constexpr std::uint64_t kExponent = 0x7ff0000000000000ULL, kMantissa = (std::uint64_t{1} << 52) - 1;

HWY_INLINE M PowerOfTwo(V x) {
  const hn::RebindToUnsigned<D> du;
  return hn::RebindMask(D(), hn::Eq(hn::And(hn::BitCast(du, x), hn::Set(du, kMantissa)), hn::Zero(du)));
}

// hi + lo within eta of a value whose nearest double is hi: |lo| + eta below the distance to the nearer
// midpoint (half an ULP of hi; a quarter below a power of two, the binade under it being finer), hi a
// normal double; or hi = 0 exactly (eta = 0). The sum's own rounding is inside the 2^-48 margin.
HWY_INLINE M Decided(V hi, V lo, V eta) {
  const D d;
  const hn::RebindToUnsigned<D> du;
  const auto expo = hn::And(hn::BitCast(du, hi), hn::Set(du, kExponent));
  const V half =
      hn::Mul(hn::BitCast(d, expo), hn::IfThenElse(PowerOfTwo(hi), hn::Set(d, 0x1p-54), hn::Set(d, 0x1p-53)));
  const V spread = hn::Mul(hn::Add(hn::Abs(lo), eta), hn::Set(d, 1 + 0x1p-48));
  const M normal =
      hn::RebindMask(d, hn::And(hn::Ne(expo, hn::Zero(du)), hn::Ne(expo, hn::Set(du, kExponent))));
  const M zero = hn::And(hn::Eq(hi, hn::Zero(d)), hn::Eq(eta, hn::Zero(d)));
  return hn::Or(hn::And(normal, hn::Lt(spread, half)), zero);
}

// 2^(23 - e), e = max(binade of x, -126): 1 / ref::ulp_of(x, float32) for x = 0 or a normal double (scaling
// by it is exact, as ulp_of's division is).
HWY_INLINE V InverseUlpF32(V x) {
  const D d;
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const auto biased = hn::ShiftRight<52>(hn::And(hn::BitCast(du, x), hn::Set(du, kExponent)));
  const auto e = hn::Max(hn::Sub(hn::BitCast(di, biased), hn::Set(di, 1023)), hn::Set(di, -126));
  return hn::BitCast(d, hn::ShiftLeft<52>(hn::Add(hn::Sub(hn::Set(di, 23), e), hn::Set(di, 1023))));
}

struct Out {
  double *y, *exact, *err, *ulp, *budget, *scale, *reach;
};

// One vector of keys; returns the lanes undecided.
HWY_INLINE std::size_t Block(const AlibiLanes& l, const float* yp, const double* sp, const Out& o) {
  const D d;
  const hn::Rebind<float, D> df;
  const V s = hn::LoadU(d, sp), y = hn::PromoteTo(d, hn::LoadU(df, yp));
  const V c1 = hn::Set(d, l.exact_slope ? 0.0 : 0x1p-102), c2 = hn::Set(d, l.exact_slope ? 0.0 : 0x1p-51);
  // V = m·s ≈ p + pe + q: p + pe = hi·s exactly, q = lo·s.
  const V mh = hn::Set(d, l.slope_hi);
  const V p = hn::Mul(mh, s), pe = hn::MulSub(mh, s, p), q = hn::Mul(hn::Set(d, l.slope_lo), s);
  const V w = hn::Add(pe, q);
  const V vh = hn::Add(p, w), vl = hn::Sub(w, hn::Sub(vh, p));  // fast two-sum: |w| < 2^-51·|p|
  const V eta_v = hn::Add(hn::Mul(c1, hn::Abs(p)), hn::Mul(c2, hn::Add(hn::Abs(pe), hn::Abs(q))));
  // V rounds to vh, in vh's binade (ulp_of reads V's), below float32's overflow.
  const M exact_v =
      hn::Or(hn::Not(PowerOfTwo(vh)), hn::And(hn::Eq(vl, hn::Zero(d)), hn::Eq(eta_v, hn::Zero(d))));
  M decided = hn::And(hn::And(Decided(vh, vl, eta_v), exact_v), hn::Lt(hn::Abs(vh), hn::Set(d, 0x1p127)));
  // y - V ≈ dd.hi + dd.lo: (y - p) exactly, less pe and q.
  const DD d1 = TwoSum(y, hn::Neg(p));
  const DD dd = TwoSum(d1.hi, hn::Sub(hn::Sub(d1.lo, pe), q));
  const V eta_d = hn::Add(hn::Mul(c1, hn::Add(hn::Abs(p), hn::Abs(dd.hi))),
                          hn::Mul(c2, hn::Add(hn::Add(hn::Abs(d1.lo), hn::Abs(pe)), hn::Abs(q))));
  decided = hn::And(decided, Decided(dd.hi, dd.lo, eta_d));
  const V err = hn::Abs(dd.hi);
  const V magnitude = hn::Abs(vh);
  const M nonzero = hn::Gt(magnitude, hn::Zero(d));
  const V scale = hn::IfThenElse(nonzero, magnitude, hn::Set(d, l.slope_hi));
  V budget = hn::Set(d, l.max_abs);
  if (l.members != 0) {
    budget = hn::Zero(d);
    for (std::size_t m = 0; m < l.members; ++m)
      budget = hn::Max(budget, hn::Add(hn::Mul(hn::Set(d, l.relative[m]), scale), hn::Set(d, l.floor[m])));
    budget = hn::Add(budget, hn::Set(d, l.extra));
  }
  hn::StoreU(y, d, o.y);
  hn::StoreU(vh, d, o.exact);
  hn::StoreU(hn::IfThenElse(decided, err, hn::Set(d, -1.0)), d, o.err);
  hn::StoreU(hn::Mul(err, InverseUlpF32(vh)), d, o.ulp);
  hn::StoreU(budget, d, o.budget);
  hn::StoreU(scale, d, o.scale);
  hn::StoreU(hn::IfThenElse(nonzero, hn::Add(magnitude, magnitude), hn::Set(d, HUGE_VAL)), d, o.reach);
  return hn::CountTrue(d, hn::Not(decided));
}

std::size_t AlibiRun(const AlibiLanes& l, std::size_t n) {
  const std::size_t N = hn::Lanes(D());
  std::size_t undecided = 0, j = 0;
  for (; j + N <= n; j += N)
    undecided +=
        Block(l, l.y + j, l.s + j,
              {l.y_out + j, l.exact + j, l.abs_error + j, l.ulp + j, l.budget + j, l.scale + j, l.reach + j});
  if (j == n) return undecided;
  // The last keys through a padded copy (s = 0, y = 0: decided, and never read back).
  float y[AlibiLanes::kLanes] = {};
  double s[AlibiLanes::kLanes] = {}, out[7][AlibiLanes::kLanes];
  const std::size_t rest = n - j;
  for (std::size_t k = 0; k < rest; ++k) y[k] = l.y[j + k], s[k] = l.s[j + k];
  Block(l, y, s, {out[0], out[1], out[2], out[3], out[4], out[5], out[6]});
  double* dest[7] = {l.y_out, l.exact, l.abs_error, l.ulp, l.budget, l.scale, l.reach};
  for (std::size_t a = 0; a < 7; ++a)
    for (std::size_t k = 0; k < rest; ++k) dest[a][j + k] = out[a][k];
  for (std::size_t k = 0; k < rest; ++k) undecided += out[2][k] < 0 ? 1 : 0;
  return undecided;
}

// The screen (AlibiScreen in alibi_rows_vector.h): the run's constants as vectors, the bars shrunk already.
struct ScreenConsts {
  V query, slope_hi, slope_lo, budget_slope, floor_lo, floor_hi, ratio_bar, tally, max_abs, max_ulp,
      abs_floor, ulp_floor;
  V least_binade, huge, largest, up, radius, below, in_binade, reach_up, two;
  explicit ScreenConsts(const AlibiScreen& r) {
    const D d;
    query = hn::Set(d, r.query), slope_hi = hn::Set(d, r.slope_hi), slope_lo = hn::Set(d, r.slope_lo);
    budget_slope = hn::Set(d, r.budget_slope), floor_lo = hn::Set(d, r.floor_lo),
    floor_hi = hn::Set(d, r.floor_hi);
    ratio_bar = hn::Set(d, r.ratio_bar);
    tally = hn::Set(d, r.tally), max_abs = hn::Set(d, r.max_abs), max_ulp = hn::Set(d, r.max_ulp);
    abs_floor = hn::Set(d, r.abs_floor), ulp_floor = hn::Set(d, r.ulp_floor);
    least_binade = hn::Set(d, 0x1p-126), huge = hn::Set(d, HUGE_VAL), largest = hn::Set(d, 0x1p127);
    up = hn::Set(d, 1 + 0x1p-50), radius = hn::Set(d, r.exact_slope ? 0.0 : 0x1p-50),
    below = hn::Set(d, 1 - 0x1p-50);
    in_binade = r.exact_slope ? hn::Set(d, 1.0) : below;  // |V| >= |e|·in_binade
    reach_up = hn::Set(d, 1 + 0x1p-40), two = hn::Set(d, 2.0);
  }
};

#include "keep_lanes-inl.h"  // IWYU pragma: keep

// Where a run's screen writes next: its loud keys' offsets and the tails' values (locals, not the
// AlibiScreen's counts: a compressing store may alias any memory as far as the compiler knows, and would
// have each count reloaded and stored again around it).
struct Cursor {
  std::uint32_t* loud;
  double *abs, *ulp;
};

// Keys [j, j + N) of the run, the lanes of `valid` (the keys of a run's first or last group may be fewer);
// returns the quiet lanes' encoding count (|e| > 0).
template <AlibiScreen::Multiplier kForm, bool kReach>
HWY_INLINE std::size_t ScreenGroup(Cursor& out, const float* yp, const double* kp, std::size_t j, M valid,
                                   const ScreenConsts& c) {
  const D d;
  const hn::Rebind<float, D> df;
  const V key = hn::LoadU(d, kp), y = hn::PromoteTo(d, hn::LoadU(df, yp));
  V s = key;
  if constexpr (kForm == AlibiScreen::Multiplier::KeyMinusQuery) s = hn::Sub(key, c.query);
  if constexpr (kForm == AlibiScreen::Multiplier::MinusDistance) s = hn::Neg(hn::Abs(hn::Sub(key, c.query)));
  const V p = hn::Mul(c.slope_hi, s), pe = hn::MulSub(c.slope_hi, s, p), q = hn::Mul(c.slope_lo, s);
  const V e = hn::Add(p, hn::Add(pe, q));
  const V magnitude = hn::Abs(e);
  const V err = hn::Abs(hn::Sub(y, e));
  const V err_hi = hn::MulAdd(magnitude, c.radius, hn::Mul(err, c.up));
  const V budget = hn::MulAdd(c.budget_slope, magnitude, c.floor_lo);  // at most the exact path's
  const V line = hn::Min(hn::Min(hn::Mul(c.ratio_bar, budget), hn::Mul(c.tally, magnitude)), c.max_abs);
  const V inv = InverseUlpF32(e);
  const hn::RebindToUnsigned<D> du;
  const V binade = hn::BitCast(d, hn::And(hn::BitCast(du, magnitude), hn::Set(du, kExponent)));
  const M same_ulp = hn::Or(hn::Ge(hn::Mul(magnitude, c.in_binade), binade),
                            hn::Le(hn::Mul(magnitude, c.up), c.least_binade));
  M quiet = hn::And(hn::And(hn::Le(err_hi, line), hn::Le(hn::Mul(err_hi, inv), c.max_ulp)),
                    hn::And(same_ulp, hn::Lt(magnitude, c.largest)));
  const M encoding = hn::Gt(magnitude, hn::Zero(d));
  if constexpr (kReach) {  // budget·(1 + 2^-40) bounds the exact path's above; 2·|e|·(1 − 2^-50) its reach
                           // below
    const V top = hn::MulAdd(c.budget_slope, magnitude, c.floor_hi);
    const M decided = hn::Lt(hn::Mul(top, c.reach_up), hn::Mul(hn::Mul(magnitude, c.two), c.below));
    quiet = hn::And(quiet, hn::Or(decided, hn::Not(encoding)));
  }
  quiet = hn::And(quiet, valid);
  const M loud = hn::AndNot(quiet, valid);
  if (HWY_UNLIKELY(!hn::AllFalse(d, loud))) {
    std::uint8_t bits[8] = {};
    hn::StoreMaskBits(d, loud, bits);
    for (std::size_t i = 0; i < hn::Lanes(d); ++i)
      if ((bits[i / 8] >> (i % 8)) & 1) *out.loud++ = static_cast<std::uint32_t>(j + i);
  }
#if HWY_ARCH_X86
  const V estimate = hn::Min(err, c.huge);  // x86's min gives its second operand for a NaN
#else
  const V estimate = hn::IfThenElse(hn::IsNaN(err), c.huge, err);
#endif
  const V ulp_estimate = hn::Mul(estimate, inv);
  const M a = hn::And(quiet, hn::Gt(estimate, c.abs_floor)),
          u = hn::And(quiet, hn::Gt(ulp_estimate, c.ulp_floor));
  if (HWY_UNLIKELY(!hn::AllFalse(d, hn::Or(a, u)))) {
    out.abs += Keep(estimate, a, out.abs);
    out.ulp += Keep(ulp_estimate, u, out.ulp);
  }
  return hn::CountTrue(d, hn::And(quiet, encoding));
}

// Keys [j, j + 2N) (a float vector of the doubles' width twice over) against their quiet bounds: the lanes
// of `valid` outside them (masked: loads that read nothing beyond the valid lanes on x86; Highway 1.0.3's
// MaskedLoad reads the whole vector on NEON).
template <class DF, class MF>
HWY_INLINE MF Outside(const float* y, const float* lo, const float* hi, DF df, MF valid, bool masked) {
  const auto load = [&](const float* p) { return masked ? hn::MaskedLoad(valid, df, p) : hn::LoadU(df, p); };
  const auto v = load(y);
  return hn::AndNot(hn::And(hn::Ge(v, load(lo)), hn::Le(v, load(hi))), valid);
}

// A run's screen, its keys' groups (N keys) screened by ScreenGroup: the quiet encoding ones counted, and
// the keys screened (the others lay within their quiet bounds).
template <AlibiScreen::Multiplier kForm, bool kReach>
struct RunScreen {
  const ScreenConsts& c;
  const float* y;
  const double* keys;
  std::size_t n;
  Cursor out;
  std::size_t encoding = 0, screened = 0;

  // Keys [at, at + count), count <= N: the group's lanes past them not counted; through a padded copy
  // where the run ends within the group (nothing read beyond n).
  HWY_INLINE void Group(std::size_t at, std::size_t count) {
    const D d;
    screened += count;
    if (at + hn::Lanes(d) <= n) {
      encoding += ScreenGroup<kForm, kReach>(out, y + at, keys + at, at, hn::FirstN(d, count), c);
      return;
    }
    float py[AlibiLanes::kLanes] = {};
    double pk[AlibiLanes::kLanes] = {};
    for (std::size_t i = 0; i < count; ++i) py[i] = y[at + i], pk[i] = keys[at + i];
    encoding += ScreenGroup<kForm, kReach>(out, py, pk, at, hn::FirstN(d, count), c);
  }

  // Keys [at, at + count), count <= 2N, with `outside` the lanes outside their quiet bounds: each half (N
  // keys) that holds one screened whole.
  template <class DF, class MF>
  HWY_INLINE void Halves(DF df, std::size_t at, MF outside, std::size_t count) {
    const std::size_t N = hn::Lanes(D());
    const MF first = hn::FirstN(df, N);
    if (!hn::AllFalse(df, hn::And(outside, first))) Group(at, std::min(N, count));
    if (count > N && !hn::AllFalse(df, hn::AndNot(first, outside))) Group(at + N, count - N);
  }
};

// The keys with quiet bounds, a float vector (2N keys) at a time, from y's vector boundary on: first the
// keys before it (a whole vector loaded, within n, the lanes past the boundary not counted), so that each
// later load of the row reads one cache line, where a row 16 bytes past a 64-byte boundary (as malloc places
// large blocks) would have every AVX-512 load read two (the 128 MiB check on such a buffer, with and without
// this alternating in one process: 2.8% slower without). A vector whose keys all lie within their bounds
// costs a test; one holding a key outside has its halves that hold one screened in place, and the vectors go
// on from the next boundary. The last keys through masked loads (Outside).
template <AlibiScreen::Multiplier kForm, bool kReach>
HWY_INLINE void BoundedRun(RunScreen<kForm, kReach>& s, const float* y, const float* lo, const float* hi,
                           std::size_t n) {
  const hn::Repartition<float, D> df;
  const std::size_t N2 = hn::Lanes(df);
  std::size_t j = 0;
  if (const std::size_t skew = reinterpret_cast<std::uintptr_t>(y) / sizeof(float) % N2;
      skew != 0 && N2 <= n) {
    j = N2 - skew;
    const auto outside = Outside(y, lo, hi, df, hn::FirstN(df, j), false);
    if (!hn::AllFalse(df, outside)) s.Halves(df, 0, outside, j);
  }
  // No software prefetch: the hardware's follows the outputs, row after row (the bounds' tables stay in the
  // cache). 2 KiB ahead into L1 (prefetcht0) ran 3.4-4.7% slower, alternating within one process (six
  // medians; a wash before the halves were screened in place, where prefetcht1 was 15% slower).
  for (; j + N2 <= n; j += N2) {
    const auto outside = Outside(y + j, lo + j, hi + j, df, hn::FirstN(df, N2), false);
    if (HWY_UNLIKELY(!hn::AllFalse(df, outside))) s.Halves(df, j, outside, N2);
  }
  if (j < n) {
    const auto outside = Outside(y + j, lo + j, hi + j, df, hn::FirstN(df, n - j), true);
    if (!hn::AllFalse(df, outside)) s.Halves(df, j, outside, n - j);
  }
}

template <AlibiScreen::Multiplier kForm, bool kReach>
HWY_NOINLINE void ScreenRunOf(AlibiScreen& r, std::size_t n) {
  const D d;
  const std::size_t N = hn::Lanes(d);
  const ScreenConsts c(r);
  RunScreen<kForm, kReach> s{c, r.y, r.keys, n, {r.loud, r.abs_tail, r.ulp_tail}};
  if (r.quiet_lo != nullptr && n >= N) {  // (fewer keys than a group: the padded copy, no bounds read)
    BoundedRun(s, r.y, r.quiet_lo, r.quiet_hi, n);
  } else {
    for (std::size_t j = 0; j < n; j += N) s.Group(j, std::min(N, n - j));
  }
  r.loud_count = static_cast<std::size_t>(s.out.loud - r.loud);
  r.abs_kept = static_cast<std::size_t>(s.out.abs - r.abs_tail);
  r.ulp_kept = static_cast<std::size_t>(s.out.ulp - r.ulp_tail);
  r.bounded = n - s.screened;
  r.quiet_encoding = s.encoding + r.bounded;
}

template <AlibiScreen::Multiplier kForm>
void ScreenRunForm(AlibiScreen& r, std::size_t n) {
  return r.check_reach ? ScreenRunOf<kForm, true>(r, n) : ScreenRunOf<kForm, false>(r, n);
}

void AlibiScreenRun(AlibiScreen& r, std::size_t n) {
  switch (r.multiplier) {
    case AlibiScreen::Multiplier::KeyMinusQuery:
      return ScreenRunForm<AlibiScreen::Multiplier::KeyMinusQuery>(r, n);
    case AlibiScreen::Multiplier::MinusDistance:
      return ScreenRunForm<AlibiScreen::Multiplier::MinusDistance>(r, n);
    case AlibiScreen::Multiplier::Key:
      return ScreenRunForm<AlibiScreen::Multiplier::Key>(r, n);
  }
}

// std::nextafter(x, up ? +inf : −inf) for floats not NaN (nor +inf stepped up): the bits one step away
// from 0 or towards it, 0's neighbour the least subnormal.
template <class DF, class VF = hn::Vec<DF>>
HWY_INLINE VF Step(DF df, VF x, bool up) {
  const hn::RebindToUnsigned<DF> du;
  const auto bits = hn::BitCast(du, x), one = hn::Set(du, 1u);
  // Away from 0 (one more) for a positive x stepped up and a negative one stepped down.
  const auto away = hn::RebindMask(du, up ? hn::Gt(x, hn::Zero(df)) : hn::Lt(x, hn::Zero(df)));
  const VF stepped = hn::BitCast(df, hn::IfThenElse(away, hn::Add(bits, one), hn::Sub(bits, one)));
  return hn::IfThenElse(hn::Eq(x, hn::Zero(df)), hn::Set(df, up ? 0x1p-149f : -0x1p-149f), stepped);
}

// alibi_quiet_bounds (alibi_rows_vector.h) for a vector of multipliers: ScreenGroup's operations on an
// error err, the largest err found to pass (the bars solved for it, then stepped down until it passes) and
// the float32 ends whose RN(y − e) stays within it.
HWY_INLINE void QuietBoundsGroup(const AlibiScreen& r, const ScreenConsts& c, const double* sp, float* lo,
                                 float* hi) {
  const D d;
  const hn::Rebind<float, D> df;
  const hn::RebindToUnsigned<D> du;
  const V s = hn::LoadU(d, sp);
  const V p = hn::Mul(c.slope_hi, s), pe = hn::MulSub(c.slope_hi, s, p), q = hn::Mul(c.slope_lo, s);
  const V e = hn::Add(p, hn::Add(pe, q));
  const V magnitude = hn::Abs(e), inv = InverseUlpF32(e);
  // 1/inv: 2^(binade − 23), built as InverseUlpF32 builds its inverse.
  const hn::RebindToSigned<D> di;
  const auto biased = hn::ShiftRight<52>(hn::And(hn::BitCast(du, e), hn::Set(du, kExponent)));
  const auto exponent = hn::Max(hn::Sub(hn::BitCast(di, biased), hn::Set(di, 1023)), hn::Set(di, -126));
  const V ulp =
      hn::BitCast(d, hn::ShiftLeft<52>(hn::Add(hn::Sub(exponent, hn::Set(di, 23)), hn::Set(di, 1023))));
  const V budget = hn::MulAdd(c.budget_slope, magnitude, c.floor_lo);
  const V ratio_line = hn::Mul(c.ratio_bar, budget), tally_line = hn::Mul(c.tally, magnitude);
  const V line = hn::Min(hn::Min(ratio_line, tally_line), c.max_abs);
  const V binade = hn::BitCast(d, hn::And(hn::BitCast(du, magnitude), hn::Set(du, kExponent)));
  const M same_ulp = hn::Or(hn::Ge(hn::Mul(magnitude, c.in_binade), binade),
                            hn::Le(hn::Mul(magnitude, c.up), c.least_binade));
  M fixed = hn::And(hn::And(same_ulp, hn::Lt(magnitude, c.largest)), hn::Gt(magnitude, hn::Zero(d)));
  // A NaN line: none (targets' min differ there).
  fixed =
      hn::AndNot(hn::Or(hn::Or(hn::IsNaN(ratio_line), hn::IsNaN(tally_line)), hn::IsNaN(c.max_abs)), fixed);
  if (r.check_reach) {
    const V top = hn::MulAdd(c.budget_slope, magnitude, c.floor_hi);
    fixed = hn::And(fixed, hn::Lt(hn::Mul(top, c.reach_up), hn::Mul(hn::Mul(magnitude, c.two), c.below)));
  }
  const auto passes = [&](V err) {
    const V err_hi = hn::MulAdd(magnitude, c.radius, hn::Mul(err, c.up));
    const M quiet = hn::And(hn::Le(err_hi, line), hn::Le(hn::Mul(err_hi, inv), c.max_ulp));
    const M kept = hn::Or(hn::Gt(err, c.abs_floor), hn::Gt(hn::Mul(err, inv), c.ulp_floor));
    return hn::AndNot(kept, hn::And(fixed, quiet));
  };
  const V margin = hn::Mul(c.radius, magnitude);
  V t = hn::Min(hn::Div(hn::Min(hn::Sub(line, margin), hn::Sub(hn::Mul(c.max_ulp, ulp), margin)), c.up),
                hn::Min(c.abs_floor, hn::Mul(c.ulp_floor, ulp)));
  for (int i = 0; i < 8; ++i) {
    const M fail = hn::AndNot(passes(t), hn::Ge(t, hn::Zero(d)));
    if (hn::AllFalse(d, fail)) break;
    t = hn::IfThenElse(fail, hn::Sub(t, hn::Max(hn::Mul(t, hn::Set(d, 0x1p-50)), hn::Set(d, 0x1p-1074))), t);
  }
  const M ok = hn::And(hn::Ge(t, hn::Zero(d)), passes(t));
  // The ends as floats held in doubles (exactly), stepped as floats.
  const auto within = [&](V y) { return hn::Le(hn::Abs(hn::Sub(y, e)), t); };
  const auto as_float = [&](V x) { return hn::PromoteTo(d, hn::DemoteTo(df, x)); };
  const auto step = [&](V x, bool up) { return hn::PromoteTo(d, Step(df, hn::DemoteTo(df, x), up)); };
  V a = as_float(hn::Sub(e, t)), b = as_float(hn::Add(e, t));
  for (int k = 0; k < 4; ++k) {
    const M out_a = hn::AndNot(within(a), ok), out_b = hn::AndNot(within(b), ok);
    if (hn::AllFalse(d, hn::Or(out_a, out_b))) break;
    a = hn::IfThenElse(out_a, step(a, true), a);
    b = hn::IfThenElse(out_b, step(b, false), b);
  }
  const M valid = hn::And(hn::And(ok, hn::Le(a, b)), hn::And(within(a), within(b)));
  const V none = hn::Set(d, NAN);
  hn::StoreU(hn::DemoteTo(df, hn::IfThenElse(valid, a, none)), df, lo);
  hn::StoreU(hn::DemoteTo(df, hn::IfThenElse(valid, b, none)), df, hi);
}

void QuietBoundsRun(const AlibiScreen& r, const double* s, std::size_t n, float* lo, float* hi) {
  const std::size_t N = hn::Lanes(D());
  const ScreenConsts c(r);
  std::size_t j = 0;
  for (; j + N <= n; j += N) QuietBoundsGroup(r, c, s + j, lo + j, hi + j);
  if (j == n) return;
  // The last multipliers through a padded copy (s = 0: e = 0, no bounds), nothing written beyond n.
  double ps[AlibiLanes::kLanes] = {};
  float plo[AlibiLanes::kLanes], phi[AlibiLanes::kLanes];
  for (std::size_t i = 0; i < n - j; ++i) ps[i] = s[j + i];
  QuietBoundsGroup(r, c, ps, plo, phi);
  for (std::size_t i = 0; i < n - j; ++i) lo[j + i] = plo[i], hi[j + i] = phi[i];
}

namespace {
[[maybe_unused]] const bool registered = detail::target_list<AlibiTarget>().add(
    HWY_TARGET, {hwy::TargetName(HWY_TARGET), &AlibiRun, &AlibiScreenRun, &QuietBoundsRun});
}  // namespace
#endif  // HWY_NATIVE_FMA

}  // namespace pe::harness::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <hwy/targets.h>

#include <atomic>
#include <cmath>

namespace pe::harness {
const std::vector<AlibiTarget>& alibi_targets() { return detail::target_list<AlibiTarget>().best_first(); }

namespace {
std::atomic<std::size_t> chosen{0};
}  // namespace
void use_alibi_target(std::size_t index) noexcept { chosen.store(index, std::memory_order_relaxed); }

std::size_t alibi_lanes(const AlibiLanes& lanes, std::size_t n) {
  return alibi_targets()[chosen.load(std::memory_order_relaxed)].run(lanes, n);
}

void alibi_screen(AlibiScreen& run, std::size_t n) {
  alibi_targets()[chosen.load(std::memory_order_relaxed)].screen(run, n);
}

void alibi_quiet_bounds(const AlibiScreen& bars, const double* s, std::size_t n, float* lo, float* hi) {
  alibi_targets()[chosen.load(std::memory_order_relaxed)].bounds(bars, s, n, lo, hi);
}

}  // namespace pe::harness
#endif  // HWY_ONCE

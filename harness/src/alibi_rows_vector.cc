// pe/harness/alibi_rows_vector.h: the exact bias and its metrics in vectors (built with -ffp-contract=off:
// only the explicit multiply-subtract fuses, the exact product's error term), then Ziv's test per lane.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "alibi_rows_vector.cc"
#include "pe/harness/alibi_rows_vector.h"

#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#ifndef PE_ALIBI_ROWS_VECTOR_ONCE_
#define PE_ALIBI_ROWS_VECTOR_ONCE_
#include <cstdint>
namespace pe::harness::detail {
bool add_alibi_target(std::int64_t target, decltype(AlibiTarget::run) run);
}  // namespace pe::harness::detail
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

namespace {
[[maybe_unused]] const bool registered = detail::add_alibi_target(HWY_TARGET, &AlibiRun);
}  // namespace
#endif  // HWY_NATIVE_FMA

}  // namespace pe::harness::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <hwy/targets.h>

#include <algorithm>
#include <atomic>

namespace pe::harness {
namespace detail {
namespace {
struct Entry {
  std::int64_t target;
  AlibiTarget t;
};
std::vector<Entry>& entries() {
  static std::vector<Entry> list;
  return list;
}
}  // namespace

bool add_alibi_target(std::int64_t target, decltype(AlibiTarget::run) run) {
  if ((hwy::SupportedTargets() & target) == 0) return false;
  entries().push_back({target, {hwy::TargetName(target), run}});
  return true;
}
}  // namespace detail

const std::vector<AlibiTarget>& alibi_targets() {
  // Highway's better targets have the lower bits.
  static const std::vector<AlibiTarget> sorted = [] {
    std::vector<detail::Entry> e = detail::entries();
    std::sort(e.begin(), e.end(), [](const auto& a, const auto& b) { return a.target < b.target; });
    std::vector<AlibiTarget> out;
    for (auto& x : e) out.push_back(std::move(x.t));
    return out;
  }();
  return sorted;
}

namespace {
std::atomic<std::size_t> chosen{0};
}  // namespace
void use_alibi_target(std::size_t index) noexcept { chosen.store(index, std::memory_order_relaxed); }

std::size_t alibi_lanes(const AlibiLanes& lanes, std::size_t n) {
  return alibi_targets()[chosen.load(std::memory_order_relaxed)].run(lanes, n);
}

}  // namespace pe::harness
#endif  // HWY_ONCE

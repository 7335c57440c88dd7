// pe/harness/rope_rows_vector.h: ref::dd's operations in vectors, in the scalar order (built with
// -ffp-contract=off: only the explicit multiply-adds fuse, as std::fma does), then the metrics of
// ref::abs_error and ref::in_ulps from the exact value's bits.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "rope_rows_vector.cc"
#include "pe/harness/rope_rows_vector.h"

#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#ifndef PE_ROPE_ROWS_VECTOR_ONCE_
#define PE_ROPE_ROWS_VECTOR_ONCE_
#include "target_list.h"
#endif

HWY_BEFORE_NAMESPACE();
namespace pe::harness::HWY_NAMESPACE {

#if HWY_NATIVE_FMA
namespace hn = hwy::HWY_NAMESPACE;
using D = hn::CappedTag<double, RotationLanes::kLanes>;  // never wider than the arrays' padding
using V = hn::Vec<D>;

struct DD {
  V hi, lo;
};

HWY_INLINE DD TwoSum(V a, V b) {
  const V s = hn::Add(a, b);
  const V bb = hn::Sub(s, a);
  return {s, hn::Add(hn::Sub(a, hn::Sub(s, bb)), hn::Sub(b, bb))};
}
HWY_INLINE DD FastTwoSum(V a, V b) {
  const V s = hn::Add(a, b);
  return {s, hn::Sub(b, hn::Sub(s, a))};
}
// dd::add (AccurateDWPlusDW).
HWY_INLINE DD Add(DD a, DD b) {
  DD s = TwoSum(a.hi, b.hi);
  const DD t = TwoSum(a.lo, b.lo);
  s.lo = hn::Add(s.lo, t.hi);
  s = FastTwoSum(s.hi, s.lo);
  s.lo = hn::Add(s.lo, t.lo);
  return FastTwoSum(s.hi, s.lo);
}
HWY_INLINE DD Neg(DD a) { return {hn::Neg(a.hi), hn::Neg(a.lo)}; }
// dd::mul(DD, double) (DWTimesFP3): fma(a, b, -p) is MulSub(a, b, p), the same rounding.
HWY_INLINE DD Mul(DD a, V b) {
  const V p = hn::Mul(a.hi, b);
  const V e = hn::MulSub(a.hi, b, p);
  return FastTwoSum(p, hn::MulAdd(a.lo, b, e));
}
// dd::mul(DD, DD) (DWTimesDW3).
HWY_INLINE DD Mul(DD a, DD b) {
  const V p = hn::Mul(a.hi, b.hi);
  const V e = hn::MulSub(a.hi, b.hi, p);
  const V tl0 = hn::Mul(a.lo, b.lo);
  const V tl1 = hn::MulAdd(a.hi, b.lo, tl0);
  const V cl2 = hn::MulAdd(a.lo, b.hi, tl1);
  return FastTwoSum(p, hn::Add(e, cl2));
}

// ref::in_ulps(err, exact, type) for types whose ULP exponent k keeps 2^-k a normal double.
HWY_INLINE V InUlps(V err, DD exact, int precision, int emin) {
  const hn::RebindToUnsigned<D> du;
  const hn::RebindToSigned<D> di;
  const auto bits = hn::BitCast(du, exact.hi);
  const auto biased = hn::And(hn::ShiftRight<52>(bits), hn::Set(du, 0x7ff));
  auto e = hn::Sub(hn::BitCast(di, biased), hn::Set(di, 1023));
  // hi a power of two with lo of the other sign: the value lies in the binade below.
  const auto power_of_two = hn::Eq(hn::And(bits, hn::Set(du, (std::uint64_t{1} << 52) - 1)), hn::Zero(du));
  const auto signs_differ =
      hn::Ne(hn::ShiftRight<63>(hn::Xor(bits, hn::BitCast(du, exact.lo))), hn::Zero(du));
  const auto lo_nonzero = hn::RebindMask(du, hn::Ne(exact.lo, hn::Zero(D())));
  const auto below = hn::And(hn::And(power_of_two, signs_differ), lo_nonzero);
  e = hn::Sub(e, hn::IfThenElseZero(hn::RebindMask(di, below), hn::Set(di, 1)));
  e = hn::Max(e, hn::Set(di, emin));
  e = hn::IfThenElse(hn::RebindMask(di, hn::Eq(exact.hi, hn::Zero(D()))), hn::Set(di, emin), e);
  // 2^-k with k = e - precision + 1, from its exponent bits.
  const auto minus_k = hn::Sub(hn::Set(di, precision - 1), e);
  const V scale = hn::BitCast(D(), hn::ShiftLeft<52>(hn::Add(minus_k, hn::Set(di, 1023))));
  return hn::Mul(err, scale);
}

bool RotateAndMeasure(const RotationLanes& l, std::size_t n, const ref::dd::DD* attention, int precision,
                      int emin) {
  const D d;
  auto fine = hn::Eq(hn::Zero(d), hn::Zero(d));  // all true
  for (std::size_t j = 0; j < n; j += hn::Lanes(d)) {
    const V a = hn::LoadU(d, l.xa + j), b = hn::LoadU(d, l.xb + j);
    fine = hn::And(fine, hn::Lt(hn::Add(hn::Abs(a), hn::Abs(b)), hn::Set(d, 0x1p900)));
    const DD s{hn::LoadU(d, l.sin_hi + j), hn::LoadU(d, l.sin_lo + j)};
    const DD c{hn::LoadU(d, l.cos_hi + j), hn::LoadU(d, l.cos_lo + j)};
    DD e0 = Add(Mul(c, a), Neg(Mul(s, b)));
    DD e1 = Add(Mul(s, a), Mul(c, b));
    if (attention != nullptr) {
      const DD g{hn::Set(d, attention->hi), hn::Set(d, attention->lo)};
      e0 = Mul(e0, g);
      e1 = Mul(e1, g);
    }
    const V err0 = hn::Abs(hn::Sub(hn::Sub(hn::LoadU(d, l.y0 + j), e0.hi), e0.lo));
    const V err1 = hn::Abs(hn::Sub(hn::Sub(hn::LoadU(d, l.y1 + j), e1.hi), e1.lo));
    hn::StoreU(e0.hi, d, l.exact0 + j);
    hn::StoreU(e1.hi, d, l.exact1 + j);
    hn::StoreU(err0, d, l.err0 + j);
    hn::StoreU(err1, d, l.err1 + j);
    hn::StoreU(InUlps(err0, e0, precision, emin), d, l.ulp0 + j);
    hn::StoreU(InUlps(err1, e1, precision, emin), d, l.ulp1 + j);
  }
  return hn::AllTrue(d, fine);
}

namespace {
[[maybe_unused]] const bool registered =
    detail::target_list<RotationTarget>().add(HWY_TARGET, {hwy::TargetName(HWY_TARGET), &RotateAndMeasure});
}  // namespace
#endif  // HWY_NATIVE_FMA

}  // namespace pe::harness::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <hwy/targets.h>

#include <algorithm>
#include <atomic>

#include "pe/ref/real.h"

namespace pe::harness {
const std::vector<RotationTarget>& rotation_targets() {
  return detail::target_list<RotationTarget>().best_first();
}

bool rotation_lanes_cover(DType out) { return out != DType::F64; }

namespace {
std::atomic<bool> vector_rows{true};
}  // namespace
bool vector_rows_enabled() noexcept { return vector_rows.load(std::memory_order_relaxed); }
void set_vector_rows(bool enabled) noexcept { vector_rows.store(enabled, std::memory_order_relaxed); }

bool rotate_and_measure(const RotationLanes& lanes, std::size_t n, const ref::dd::DD* attention, DType out) {
  const ref::FormatBits f = ref::format_bits(out);
  return rotation_targets().front().run(lanes, n, attention, f.precision, f.emin);
}

}  // namespace pe::harness
#endif  // HWY_ONCE

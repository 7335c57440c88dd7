// The direct evaluation of detail/exact_phase.h, vectorised with Highway for the target being
// compiled: p·step mod 2^64 from 32-bit multiplies (MulEven), the quarter-turn split in 64-bit
// lanes, polynomials in double lanes. Same arithmetic, same error bound as phase_sincos.
//
// Per-target code: included once per target through foreach_target.h (the toggling guard below).
#if defined(PE_DETAIL_EXACT_PHASE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PE_DETAIL_EXACT_PHASE_INL_H_
#undef PE_DETAIL_EXACT_PHASE_INL_H_
#else
#define PE_DETAIL_EXACT_PHASE_INL_H_
#endif

#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

#include "detail/exact_phase.h"

HWY_BEFORE_NAMESPACE();
namespace pe::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// s[k], c[k] of position p for the n pairs whose steps start at `step` (as direct_sincos).
HWY_INLINE void DirectSinCos(std::int64_t p, const std::uint64_t* HWY_RESTRICT step, std::size_t n,
                             double* HWY_RESTRICT s, double* HWY_RESTRICT c) {
#if HWY_TARGET == HWY_SCALAR  // one lane: nothing to repartition into 32-bit halves
  direct_sincos(p, step, n, s, c);
#else
  const hn::ScalableTag<std::uint64_t> du;
  const hn::RebindToSigned<decltype(du)> di;
  const hn::RebindToFloat<decltype(du)> dd;
  const hn::Repartition<std::uint32_t, decltype(du)> d32;
  const std::size_t lanes = hn::Lanes(du);
  const auto up = static_cast<std::uint64_t>(p);
  const auto p_lo = hn::BitCast(d32, hn::Set(du, up & 0xffffffffu));
  const auto p_hi = hn::BitCast(d32, hn::Set(du, up >> 32));
  const auto eighth = hn::Set(du, std::uint64_t{1} << 61);
  const auto low62 = hn::Set(du, (std::uint64_t{1} << 62) - 1);
  const auto one = hn::Set(du, 1), two = hn::Set(du, 2);
  std::size_t k = 0;
  for (; k + lanes <= n; k += lanes) {
    const auto f = hn::LoadU(du, step + k);
    // p·f mod 2^64 = p_lo·f_lo + ((p_lo·f_hi + p_hi·f_lo) << 32), each product 32 x 32 -> 64 bits.
    const auto lolo = hn::MulEven(hn::BitCast(d32, f), p_lo);
    const auto cross = hn::Add(hn::MulEven(hn::BitCast(d32, hn::ShiftRight<32>(f)), p_lo),
                               hn::MulEven(hn::BitCast(d32, f), p_hi));
    const auto x = hn::Add(hn::Add(lolo, hn::ShiftLeft<32>(cross)), eighth);
    const auto quarter = hn::ShiftRight<62>(x);
    const auto rem = hn::Sub(hn::BitCast(di, hn::And(x, low62)), hn::BitCast(di, eighth));
    const auto a = hn::Mul(hn::ConvertTo(dd, rem), hn::Set(dd, 0x1.921fb54442d18p-62));
    const auto a2 = hn::Mul(a, a);
    auto ps = hn::Set(dd, -1.0 / 39916800);
    ps = hn::MulAdd(ps, a2, hn::Set(dd, 1.0 / 362880));
    ps = hn::MulAdd(ps, a2, hn::Set(dd, -1.0 / 5040));
    ps = hn::MulAdd(ps, a2, hn::Set(dd, 1.0 / 120));
    ps = hn::MulAdd(ps, a2, hn::Set(dd, -1.0 / 6));
    const auto sa = hn::MulAdd(hn::Mul(a, a2), ps, a);
    auto pc = hn::Set(dd, 1.0 / 479001600);
    pc = hn::MulAdd(pc, a2, hn::Set(dd, -1.0 / 3628800));
    pc = hn::MulAdd(pc, a2, hn::Set(dd, 1.0 / 40320));
    pc = hn::MulAdd(pc, a2, hn::Set(dd, -1.0 / 720));
    pc = hn::MulAdd(pc, a2, hn::Set(dd, 1.0 / 24));
    pc = hn::MulAdd(pc, a2, hn::Set(dd, -0.5));
    const auto ca = hn::MulAdd(pc, a2, hn::Set(dd, 1.0));
    // sin, cos of quarter·π/2 + a: odd quarters swap them; quarters 2, 3 negate sin; 1, 2 cos.
    const auto swap = hn::RebindMask(dd, hn::Eq(hn::And(quarter, one), one));
    const auto neg_s = hn::RebindMask(dd, hn::Eq(hn::And(quarter, two), two));
    const auto neg_c = hn::RebindMask(dd, hn::Eq(hn::And(hn::Add(quarter, one), two), two));
    const auto s0 = hn::IfThenElse(swap, ca, sa), c0 = hn::IfThenElse(swap, sa, ca);
    hn::StoreU(hn::IfThenElse(neg_s, hn::Neg(s0), s0), dd, s + k);
    hn::StoreU(hn::IfThenElse(neg_c, hn::Neg(c0), c0), dd, c + k);
  }
  direct_sincos(p, step + k, n - k, s + k, c + k);
#endif
}

}  // namespace pe::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PE_DETAIL_EXACT_PHASE_INL_H_

// bfloat16 bits (in 32-bit lanes) of doubles, one correct rounding (half.h's to_bfloat16 in vectors), for
// the exact variants' outputs.
// The callers' values are finite and within float's range (sines, cosines, and rotations of inputs
// within a contract's max_input_abs): no NaN and no overflow to handle.
//
// Per-target code: included once per target through foreach_target.h (the toggling guard below).
#if defined(PE_DETAIL_BFLOAT16_BITS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PE_DETAIL_BFLOAT16_BITS_INL_H_
#undef PE_DETAIL_BFLOAT16_BITS_INL_H_
#else
#define PE_DETAIL_BFLOAT16_BITS_INL_H_
#endif

#include <hwy/highway.h>

#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace pe::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// The general path: round to odd into float32 (exact below float's normal range too), then to
// nearest-even into bfloat16.
template <class D>
HWY_INLINE hn::Vec<hn::Rebind<std::uint32_t, D>> BFloat16BitsViaOdd(D dd, hn::Vec<D> v) {
  const hn::Rebind<float, D> df;
  const hn::Rebind<std::int32_t, D> di;
  const hn::Rebind<std::uint32_t, D> du;
  const auto f = hn::DemoteTo(df, v);
  const auto back = hn::PromoteTo(dd, f);
  const auto one = hn::Set(dd, 1.0);
  // Round to odd: one step toward zero where f rounded up in magnitude, the last bit set if inexact.
  const auto rounded_up =
      hn::BitCast(du, hn::DemoteTo(di, hn::IfThenElseZero(hn::Gt(hn::Abs(back), hn::Abs(v)), one)));
  const auto inexact = hn::BitCast(du, hn::DemoteTo(di, hn::IfThenElseZero(hn::Ne(back, v), one)));
  const auto odd = hn::Or(hn::Sub(hn::BitCast(du, f), rounded_up), inexact);
  const auto lsb = hn::And(hn::ShiftRight<16>(odd), hn::Set(du, 1u));
  return hn::ShiftRight<16>(hn::Add(hn::Add(odd, hn::Set(du, 0x7FFFu)), lsb));
}

// Where every |v| is 2^-126 or more (bfloat16's normal range, the common case): rounded to nearest-even
// at bfloat16's last bit within the double's own bits (bit 45 of 52; a carry moves into the exponent
// as it should), after which the value is a bfloat16 and its conversion to float32 exact. The rounding
// of targets with fewer than four doubles a vector (SSE4, SSSE3, scalar), where BFloat16Bits' float
// lanes fill only part of a vector and ran 1.2-2x slower.
template <class D>
HWY_INLINE hn::Vec<hn::Rebind<std::uint32_t, D>> BFloat16BitsAtBit45(D dd, hn::Vec<D> v) {
  if (HWY_UNLIKELY(!hn::AllFalse(dd, hn::Lt(hn::Abs(v), hn::Set(dd, 0x1p-126))))) {
    return BFloat16BitsViaOdd(dd, v);
  }
  const hn::Rebind<float, D> df;
  const hn::Rebind<std::uint32_t, D> du;
  const hn::RebindToUnsigned<D> d64;
  constexpr std::uint64_t kDropped = (std::uint64_t{1} << 45) - 1;
  const auto bits = hn::BitCast(d64, v);
  const auto lsb = hn::And(hn::ShiftRight<45>(bits), hn::Set(d64, std::uint64_t{1}));
  const auto rounded =
      hn::AndNot(hn::Set(d64, kDropped), hn::Add(hn::Add(bits, hn::Set(d64, kDropped >> 1)), lsb));
  return hn::ShiftRight<16>(hn::BitCast(du, hn::DemoteTo(df, hn::BitCast(dd, rounded))));
}

// Rounded to float32 first (one conversion), then to nearest-even at bfloat16's last bit. Both formats'
// grids are nested and bfloat16's midpoints are floats (subnormals included: same exponent range), so the
// float lies on the same side of every bfloat16 midpoint as v, or on one: the second rounding can differ
// from the single one only where the float is a bfloat16 midpoint (its low 16 bits 0x8000) that v is not.
// A vector with such a lane (about one lane in 2^16) takes the round-to-odd path. Targets with fewer than
// four doubles a vector round at bit 45 instead (BFloat16BitsAtBit45).
template <class D>
HWY_INLINE hn::Vec<hn::Rebind<std::uint32_t, D>> BFloat16Bits(D dd, hn::Vec<D> v) {
  if constexpr (hn::MaxLanes(dd) < 4) {
    return BFloat16BitsAtBit45(dd, v);
  } else {
    const hn::Rebind<float, D> df;
    const hn::Rebind<std::uint32_t, D> du;
    const auto bits = hn::BitCast(du, hn::DemoteTo(df, v));
    if (HWY_UNLIKELY(!hn::AllFalse(du, hn::Eq(hn::And(bits, hn::Set(du, 0xFFFFu)), hn::Set(du, 0x8000u))))) {
      return BFloat16BitsViaOdd(dd, v);
    }
    const auto lsb = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
    return hn::ShiftRight<16>(hn::Add(hn::Add(bits, hn::Set(du, 0x7FFFu)), lsb));
  }
}

// One vector's bfloat16 values (BFloat16Bits) stored at `to`.
template <class D>
HWY_INLINE void StoreBFloat16(D dd, hn::Vec<D> v, void* HWY_RESTRICT to) {
  const hn::Rebind<std::int32_t, D> di;
  const hn::Rebind<std::uint16_t, D> d16;
  hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, BFloat16Bits(dd, v))), d16, static_cast<std::uint16_t*>(to));
}

// 4·lanes bfloat16 values, v0's lanes first, stored at `to` with the rounding of BFloat16Bits: where a
// vector holds at least four doubles (AVX2, AVX-512), the four vectors' floats are rounded as two full
// vectors and their top halves gathered by one permutation (ConcatOdd) into one store, about half the
// operations of four BFloat16Bits; elsewhere, and for the rare vectors with a float on a midpoint, one
// vector at a time.
template <class D>
HWY_INLINE void StoreBFloat16x4(D dd, hn::Vec<D> v0, hn::Vec<D> v1, hn::Vec<D> v2, hn::Vec<D> v3,
                                std::uint16_t* HWY_RESTRICT to) {
  const auto one_at_a_time = [&] {
    std::size_t at = 0;
    for (const hn::Vec<D> v : {v0, v1, v2, v3}) {
      StoreBFloat16(dd, v, to + at);
      at += hn::Lanes(dd);
    }
  };
#if HWY_TARGET != HWY_SCALAR  // (no Combine or ConcatOdd there)
  if constexpr (hn::MaxLanes(dd) >= 4 && !HWY_HAVE_SCALABLE) {
    const hn::Repartition<float, D> df;  // twice the lanes of dd: two vectors' floats
    const hn::Half<decltype(df)> dh;
    const hn::RebindToUnsigned<decltype(df)> du;
    const hn::Repartition<std::uint16_t, D> dw;  // four vectors' bfloat16 values
    const auto a = hn::BitCast(du, hn::Combine(df, hn::DemoteTo(dh, v1), hn::DemoteTo(dh, v0)));
    const auto b = hn::BitCast(du, hn::Combine(df, hn::DemoteTo(dh, v3), hn::DemoteTo(dh, v2)));
    const auto low = hn::Set(du, 0xFFFFu), midpoint = hn::Set(du, 0x8000u);
    if (HWY_UNLIKELY(!hn::AllFalse(
            du, hn::Or(hn::Eq(hn::And(a, low), midpoint), hn::Eq(hn::And(b, low), midpoint))))) {
      return one_at_a_time();
    }
    const auto bias = hn::Set(du, 0x7FFFu), one = hn::Set(du, 1u);
    const auto ra = hn::Add(hn::Add(a, bias), hn::And(hn::ShiftRight<16>(a), one));
    const auto rb = hn::Add(hn::Add(b, bias), hn::And(hn::ShiftRight<16>(b), one));
    hn::StoreU(hn::ConcatOdd(dw, hn::BitCast(dw, rb), hn::BitCast(dw, ra)), dw, to);
    return;
  }
#endif
  one_at_a_time();
}

}  // namespace pe::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PE_DETAIL_BFLOAT16_BITS_INL_H_

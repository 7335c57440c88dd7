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
// as it should), after which the value is a bfloat16 and its conversion to float32 exact.
template <class D>
HWY_INLINE hn::Vec<hn::Rebind<std::uint32_t, D>> BFloat16Bits(D dd, hn::Vec<D> v) {
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

}  // namespace pe::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PE_DETAIL_BFLOAT16_BITS_INL_H_

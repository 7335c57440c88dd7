// The screens' lanes (rope_screen.cc, sinusoidal_screen.cc): reading a row in its own type, an element's
// verdict and the percentiles' estimates it carries (kept: keep_lanes-inl.h); each screen judges in its own
// file. Included inside each file's per-target namespace, once per Highway target (hence no include guard),
// after `hn`, D, V and M are declared; Estimate reads `huge` from the caller's Consts.

// N values of the element type at p, as doubles (exact: every float32, bfloat16 and float16 is a double).
template <ScreenType kType>
HWY_INLINE V LoadAs(const void* p) {
  const D d;
  const hn::Rebind<float, D> df;
  if constexpr (kType == ScreenType::F32) {
    return hn::PromoteTo(d, hn::LoadU(df, static_cast<const float*>(p)));
  } else if constexpr (kType == ScreenType::BF16) {
    const hn::Rebind<std::uint16_t, D> d16;
    const hn::Rebind<std::uint32_t, D> d32;
    const auto bits =
        hn::ShiftLeft<16>(hn::PromoteTo(d32, hn::LoadU(d16, static_cast<const std::uint16_t*>(p))));
    return hn::PromoteTo(d, hn::BitCast(df, bits));
  } else if constexpr (kType == ScreenType::F16) {
    const hn::Rebind<hwy::float16_t, D> dh;
    return hn::PromoteTo(d, hn::PromoteTo(df, hn::LoadU(dh, static_cast<const hwy::float16_t*>(p))));
  } else {
    return hn::LoadU(d, static_cast<const double*>(p));
  }
}

template <ScreenType kType>
constexpr std::size_t kSize = screen_size(kType);

// Pairs [k, k + N) of a row: (a, b).
template <ScreenType kType>
HWY_INLINE void LoadPairs(const void* row, const ScreenChannels& c, std::size_t k, V& a, V& b) {
  const D d;
  const auto at = [&](std::size_t i) { return static_cast<const char*>(row) + i * kSize<kType>; };
  if (!c.interleaved) {
    a = LoadAs<kType>(at(c.a0 + k));
    b = LoadAs<kType>(at(c.b0 + k));
    return;
  }
  const V lo = LoadAs<kType>(at(c.a0 + 2 * k)), hi = LoadAs<kType>(at(c.a0 + 2 * k + hn::Lanes(d)));
  a = hn::ConcatEven(d, hi, lo);
  b = hn::ConcatOdd(d, hi, lo);
}

struct Element {
  M quiet;
  V estimate, ulp_estimate;
};

// The percentiles' estimate of an error: |y − e|, a NaN taken as +∞ (worse than any number, as the exact
// path's tails take it).
template <class Consts>
HWY_INLINE V Estimate(V err, const Consts& c) {
#if HWY_ARCH_X86
  return hn::Min(err, c.huge);  // x86's min gives its second operand for a NaN
#else
  return hn::IfThenElse(hn::IsNaN(err), c.huge, err);
#endif
}

#include "keep_lanes-inl.h"  // IWYU pragma: keep

// sin and cos of p·ω for a chunk of pairs, vectorised with Highway for the target being compiled.
// The angle is formed in double and reduced modulo 2π there (Cody-Waite, three parts), so that
// Highway's float Sin/Cos (3 ULP on [-39000, 39000], hwy/contrib/math) only ever see |r| <= π.
//
// Per-target code: included once per target through foreach_target.h (the toggling guard below).
#if defined(PE_DETAIL_HWY_SINCOS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef PE_DETAIL_HWY_SINCOS_INL_H_
#undef PE_DETAIL_HWY_SINCOS_INL_H_
#else
#define PE_DETAIL_HWY_SINCOS_INL_H_
#endif

#include <hwy/contrib/math/math-inl.h>
#include <hwy/highway.h>

#include <cstddef>
#include <cstdint>

HWY_BEFORE_NAMESPACE();
namespace pe::detail::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Pairs per chunk: a multiple of every target's lane count, small enough for the stack.
inline constexpr std::size_t kChunk = 64;

// 2π = kTwoPi1 + kTwoPi2 + kTwoPi3 + O(3.4e-31). kTwoPi1 and kTwoPi2 have 24 significant bits, so
// k·kTwoPi1 and k·kTwoPi2 are exact for k < 2^29 (positions below 2^31 with ω <= 1), and
// φ - k·kTwoPi1 is exact (Sterbenz).
inline constexpr double kTwoPi1 = 0x1.921fb6p+2;
inline constexpr double kTwoPi2 = -0x1.777a5cp-23;
inline constexpr double kTwoPi3 = -0x1.ee59d9cceba4p-48;
inline constexpr double kInvTwoPi = 0x1.45f306dc9c883p-3;

// s[i], c[i] = sin, cos of fl(fl(t·omega[i])·scale) for i < n <= kChunk (the scale's product skipped at 1,
// where it is exact).
HWY_INLINE void SinCosChunkAt(const double* HWY_RESTRICT omega, std::size_t n, double t, double scale,
                              float* HWY_RESTRICT s, float* HWY_RESTRICT c) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const std::size_t lanes = hn::Lanes(dd);
  HWY_ALIGN double w[kChunk];
  HWY_ALIGN float vs[kChunk];
  HWY_ALIGN float vc[kChunk];
  for (std::size_t i = 0; i < n; ++i) w[i] = omega[i];
  const std::size_t padded = (n + lanes - 1) / lanes * lanes;
  for (std::size_t i = n; i < padded; ++i) w[i] = 0.0;
  const auto vp = hn::Set(dd, t), vscale = hn::Set(dd, scale);
  const bool scaled = scale != 1.0;
  for (std::size_t i = 0; i < padded; i += lanes) {
    auto phi = hn::Mul(vp, hn::Load(dd, w + i));
    if (scaled) phi = hn::Mul(phi, vscale);
    const auto k = hn::Round(hn::Mul(phi, hn::Set(dd, kInvTwoPi)));
    auto r = hn::NegMulAdd(k, hn::Set(dd, kTwoPi1), phi);
    r = hn::NegMulAdd(k, hn::Set(dd, kTwoPi2), r);
    r = hn::NegMulAdd(k, hn::Set(dd, kTwoPi3), r);
    const auto rf = hn::DemoteTo(df, r);
    // Highway's polynomials can overshoot 1 by an ulp (seen on AVX2 with FMA at r = 1); the exact
    // values lie in [-1, 1], so clamping only ever moves a result towards them.
    const auto one = hn::Set(df, 1.0f), minus_one = hn::Set(df, -1.0f);
    hn::Store(hn::Min(hn::Max(hn::Sin(df, rf), minus_one), one), df, vs + i);
    hn::Store(hn::Min(hn::Max(hn::Cos(df, rf), minus_one), one), df, vc + i);
  }
  for (std::size_t i = 0; i < n; ++i) {
    s[i] = vs[i];
    c[i] = vc[i];
  }
}

// s[i], c[i] = sin, cos of p·omega[i] for i < n <= kChunk (p exact in double: p <= 2^53).
HWY_INLINE void SinCosChunk(const double* HWY_RESTRICT omega, std::size_t n, std::int64_t p,
                            float* HWY_RESTRICT s, float* HWY_RESTRICT c) {
  SinCosChunkAt(omega, n, static_cast<double>(p), 1.0, s, c);
}

}  // namespace pe::detail::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#endif  // PE_DETAIL_HWY_SINCOS_INL_H_

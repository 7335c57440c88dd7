// The reference's fast exact path: sin and cos of φ = p·ω in double-double arithmetic with a proven
// error radius, and Ziv's rounding test on that enclosure. When the test cannot decide (the exact
// value lies too near a rounding boundary, is zero or tiny, or φ is out of range) the caller falls
// back to MPFR; both paths return the correctly rounded value, so they agree bit for bit wherever the
// fast one decides. The bound is derived in docs/fast_reference.md and checked against MPFR by
// reference/tests (fast_path_test.cc).
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

#include "pe/ref/double_double.h"
#include "pe/ref/real.h"
#include "pe/types.h"

namespace pe::ref {

struct FastSinCos {
  dd::DD sin, cos;
  double radius = 0;  // |sin - sin φ| and |cos - cos φ| are both at most this
};

// sin and cos of p·ω for ω = omega.hi + omega.lo within relative `omega_relative` of the exact
// frequency. nullopt when |p| >= 2^53 or |p·ω| >= 2^52 (the reduction's exact range).
std::optional<FastSinCos> fast_sincos(std::int64_t p, dd::DD omega, double omega_relative);
// The same at a real position p (exact as given): nullopt when |p·ω| >= 2^52 or p is not finite.
std::optional<FastSinCos> fast_sincos(double p, dd::DD omega, double omega_relative);

// A first, cheaper tier in plain double arithmetic (no FMA needed), for sweeps that only need to
// know an element is far from its budget and from the running maxima: ω split in three 21-bit pieces
// so that p·ω1 and p·ω2 are exact for |p| < 2^32, a Cody-Waite reduction with π/2 in 21-bit pieces
// summed by TwoSum, and Taylor polynomials on the reduced angle. |sin - sin φ| and |cos - cos φ| are
// within double_tier_radius(|φ|) (docs/fast_reference.md).
struct OmegaSplit {
  double w1 = 0, w2 = 0, w3 = 0;
};
OmegaSplit split_omega(dd::DD omega);
// false when |p| >= 2^32 or ω >= 2 (the pieces' exact range).
bool double_tier_sincos(std::int64_t p, const OmegaSplit& omega, double& sin_phi, double& cos_phi);
inline double double_tier_radius(double abs_phi) { return 0x1p-48 + abs_phi * 0x1p-88; }
// π/2 = c1 + c2 + c3 + c4 within 2^-100, c1..c3 of 21 bits: the double tier's reduction constants
// (vector versions of the tier, as the exhaustive census's screen, use the same ones).
struct HalfPiPieces {
  double c1, c2, c3, c4;
};
const HalfPiPieces& half_pi_pieces();

// Inline: each runs for every element a check or a reference rounding visits.
namespace detail {
// 2^k, from its bits in the normal range (ldexp is a library call in every element's rounding).
inline double pow2(int k) {
  if (k < -1022 || k > 1023) return std::ldexp(1.0, k);
  return std::bit_cast<double>(static_cast<std::uint64_t>(k + 1023) << 52);
}
// The neighbours of a finite double (|v| well inside the range: fast_rounding's 2^±900) by its bits.
inline double next_up(double v) {
  if (v == 0) return std::numeric_limits<double>::denorm_min();
  const auto b = std::bit_cast<std::uint64_t>(v);
  return std::bit_cast<double>(v > 0 ? b + 1 : b - 1);
}
inline double next_down(double v) { return -next_up(-v); }
}  // namespace detail

// x rounded to nearest-even in `type` (subnormals, overflow to infinity), as the double holding it.
inline double round_double_to(double x, DType type) {
  if (x == 0 || !std::isfinite(x) || type == DType::F64) return x;
  if (type == DType::F32) return static_cast<float>(x);  // the hardware's round-to-nearest-even
  const auto [precision, emin, emax] = format_bits(type);
  // x's binade from its exponent field (a subnormal double lies far below every narrower type's emin).
  const int binade = static_cast<int>((std::bit_cast<std::uint64_t>(x) >> 52) & 0x7ff) - 1023;
  // The quantum of that binade in the type (the subnormal step below emin): scaling by it is exact, and
  // |x / quantum| < 2^precision + 1 <= 2^52, where adding and subtracting 1.5·2^52 rounds to the nearest
  // integer, ties to even, under the default rounding mode.
  const int e = std::max(binade, emin) - precision + 1;
  constexpr double kRound = 0x1.8p52;
  const double scaled = std::fabs(x) * detail::pow2(-e);
  const double r = std::copysign(((scaled + kRound) - kRound) * detail::pow2(e), x);  // a zero keeps x's sign
  const double largest = (2.0 - detail::pow2(1 - precision)) * detail::pow2(emax);
  return std::fabs(r) > largest ? std::copysign(std::numeric_limits<double>::infinity(), r) : r;
}

// The value `type` rounds every number within `radius` of v to (round to nearest, ties to even), or
// nullopt when the ends of that interval round apart, when the interval reaches zero (the sign of a
// zero is MPFR's to decide) or when |v| is below 2^-900 or above 2^900. radius 0 with v.lo = 0: v.hi
// itself is exact and is rounded.
inline std::optional<double> fast_rounding(dd::DD v, double radius, DType type) {
  if (radius == 0 && v.lo == 0) return round_double_to(v.hi, type);
  const double m = std::fabs(v.hi);
  if (!(m >= 0x1p-900 && m <= 0x1p900)) return std::nullopt;
  // The ends v ∓ radius, widened by the rounding of v.lo ∓ radius (then TwoSum is exact): each end
  // as an unevaluated sum whose .hi is its nearest double.
  const double r = radius * (1 + 0x1p-50) + m * 0x1p-104;
  const dd::DD lo = dd::two_sum(v.hi, v.lo - r);
  const dd::DD hi = dd::two_sum(v.hi, v.lo + r);
  double a = 0, b = 0;
  if (type == DType::F64) {
    a = lo.hi, b = hi.hi;
  } else {
    // Outward to doubles, then into the narrower type: rounding is monotone, so equal ends decide.
    const double l = lo.lo < 0 ? detail::next_down(lo.hi) : lo.hi;
    const double h = hi.lo > 0 ? detail::next_up(hi.hi) : hi.hi;
    a = round_double_to(l, type), b = round_double_to(h, type);
  }
  if (a != b || a == 0) return std::nullopt;
  return a;
}

// |y - exact| and SLEEF's ulp of the exact value (ulp_of in real.h) for an exact value held as a
// double-double: the metrics `measure` reports, to double precision.
inline double abs_error(double y, dd::DD exact) { return std::fabs((y - exact.hi) - exact.lo); }

// ulp_of(exact, type) = 2^ulp_exponent(exact, type).
inline int ulp_exponent(dd::DD exact, DType type) {
  const FormatBits f = format_bits(type);
  int e = f.emin;
  if (exact.hi != 0) {
    const std::uint64_t bits = std::bit_cast<std::uint64_t>(exact.hi);
    e = static_cast<int>((bits >> 52) & 0x7ff) - 1023;  // a subnormal double: far below emin
    // hi a power of two with lo of the other sign: the value lies in the binade below.
    const bool power_of_two = (bits & ((std::uint64_t{1} << 52) - 1)) == 0;
    if (power_of_two && exact.lo != 0 && std::signbit(exact.lo) != std::signbit(exact.hi)) --e;
    e = std::max(e, f.emin);
  }
  return e - f.precision + 1;
}

inline double ulp_of(dd::DD exact, DType type) { return detail::pow2(ulp_exponent(exact, type)); }

// abs_error / ulp_of(exact, type), the same bits: a product by the exact reciprocal 2^-k where it is a
// normal double (no division in every element's metric), the division otherwise.
inline double in_ulps(double abs_error, dd::DD exact, DType type) {
  const int k = ulp_exponent(exact, type);
  return k > -1023 && k < 1023 ? abs_error * detail::pow2(-k) : abs_error / detail::pow2(k);
}

// The double-double nearest a high-precision value: |v - (hi + lo)| <= 2^-105·|v|.
dd::DD to_dd(const Real& v);

// The fast path is on unless PE_REFERENCE=mpfr is set in the environment or a caller turns it off
// (a test comparing both paths). Process-wide.
bool fast_path_enabled() noexcept;
void set_fast_path(bool enabled) noexcept;

// How many roundings the fast path left to MPFR since the process started (not thread-exact: a count
// for reports).
std::uint64_t mpfr_fallbacks() noexcept;
void record_fallback() noexcept;

}  // namespace pe::ref

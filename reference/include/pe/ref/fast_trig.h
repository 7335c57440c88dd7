// The reference's fast exact path: sin and cos of φ = p·ω in double-double arithmetic with a proven
// error radius, and Ziv's rounding test on that enclosure. When the test cannot decide (the exact
// value lies too near a rounding boundary, is zero or tiny, or φ is out of range) the caller falls
// back to MPFR; both paths return the correctly rounded value, so they agree bit for bit wherever the
// fast one decides. The bound is derived in docs/fast_reference.md and checked against MPFR by
// reference/tests (fast_path_test.cc).
#pragma once

#include <cstdint>
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

// The value `type` rounds every number within `radius` of v to (round to nearest, ties to even), or
// nullopt when the ends of that interval round apart, when the interval reaches zero (the sign of a
// zero is MPFR's to decide) or when |v| is below 2^-900 or above 2^900. radius 0 with v.lo = 0: v.hi
// itself is exact and is rounded.
std::optional<double> fast_rounding(dd::DD v, double radius, DType type);

// x rounded to nearest-even in `type` (subnormals, overflow to infinity), as the double holding it.
double round_double_to(double x, DType type);

// |y - exact| and SLEEF's ulp of the exact value (ulp_of in real.h) for an exact value held as a
// double-double: the metrics `measure` reports, to double precision.
double abs_error(double y, dd::DD exact);
double ulp_of(dd::DD exact, DType type);

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

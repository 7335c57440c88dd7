// The phase of a real position (a diffusion timestep t, times the plan's scale) as a 64-bit fraction of a
// turn, exact by construction as p·step is for an integer p (pe/plan.h's TurnSteps): t is m·2^e exactly
// (|m| < 2^53), scale·t is held exactly as hi + lo (two_prod), and each part's m·step is formed in 128
// bits and shifted by its exponent. Only the bits below 2^-64 turn are lost (truncated): < 1 unit of 2^-64
// turn a part, 2·2π·2^-64 = 6.9e-19 rad in all, beside the step's own 4.5 units per unit of |scale·t|.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "detail/exact_phase.h"

namespace pe::detail {

__extension__ typedef unsigned __int128 PhaseProduct;  // GCC's 128-bit integer; -Wpedantic knows it not

// scale·t = hi + lo exactly: hi = fl(scale·t), lo the product's error by a fused multiply-add (exact unless
// it underflows, below 2^-969·|scale·t|: no phase bit reaches that far). lo = 0 at scale 1.
struct ScaledPosition {
  double hi, lo;
};
inline ScaledPosition scaled_position(double t, double scale) noexcept {
  if (scale == 1.0) return {t, 0.0};
  const double hi = scale * t;
  return {hi, std::fma(scale, t, -hi)};
}

// x·step mod 2^64 in units of 2^-64 turn for a finite x: |x| = m·2^(e-53), (m·step) << (e-53) or >> (53-e)
// in 128 bits (bits below the unit truncated), negated modulo 2^64 for a negative x.
inline std::uint64_t real_phase(double x, std::uint64_t step) noexcept {
  if (x == 0.0) return 0;
  int e = 0;
  const double f = std::frexp(std::fabs(x), &e);  // |x| = f·2^e, f in [1/2, 1)
  const auto m = static_cast<std::uint64_t>(std::ldexp(f, 53));
  const int shift = e - 53;
  const PhaseProduct product = static_cast<PhaseProduct>(m) * step;  // < 2^117
  std::uint64_t phase = 0;
  if (shift >= 0 && shift < 64) {
    phase = static_cast<std::uint64_t>(product << shift);
  } else if (shift < 0 && shift > -128) {
    phase = static_cast<std::uint64_t>(product >> -shift);
  }  // shift >= 64: a multiple of 2^64, no phase; shift <= -128: below the unit
  return x < 0 ? std::uint64_t{0} - phase : phase;
}

// s[k], c[k] of the scaled position for the n pairs whose steps start at `step`, in double
// (phase_sincos: < 8e-12 beside the phase).
inline void real_sincos(ScaledPosition x, const std::uint64_t* step, std::size_t n, double* s,
                        double* c) noexcept {
  for (std::size_t k = 0; k < n; ++k) {
    phase_sincos(real_phase(x.hi, step[k]) + real_phase(x.lo, step[k]), s[k], c[k]);
  }
}

// Whether the scaled position is an integer the integer path (p·step) takes as is: the same phase.
inline bool integral_position(ScaledPosition x) noexcept {
  return x.lo == 0.0 && std::fabs(x.hi) < 0x1p63 && x.hi == std::trunc(x.hi);
}

}  // namespace pe::detail

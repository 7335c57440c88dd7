// sin and cos of a phase held as a 64-bit fraction of a turn (TurnSteps in pe/plan.h): split at the
// nearest quarter turn, so only |a| <= π/4 is left, and evaluate short Taylor polynomials in double.
// No large-argument reduction exists to get wrong: the position's size never reaches the float
// arithmetic.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pe::detail {

// Rows between two direct evaluations when positions are consecutive; in between each pair's
// (sin, cos) is rotated by its one-step (sin, cos) in double: 256 steps add < 256·4·2^-53 = 1.2e-13,
// against the 2^-25 = 3e-8 of rounding into float.
inline constexpr int kRefreshRows = 256;

// Error: |a| <= π/4 has the truncation a^13/13! < 7.1e-12 (sin) and a^14/14! < 4e-13 (cos); the
// quarter-turn split is exact and a = rem·2π/2^64 is within 2·2^-53·|a|; Horner in double adds
// < 3·2^-53. Total < 8e-12.
inline void phase_sincos(std::uint64_t phase, double& s, double& c) noexcept {
  constexpr std::uint64_t kEighth = std::uint64_t{1} << 61;
  const std::uint64_t x = phase + kEighth;
  const unsigned quarter = static_cast<unsigned>(x >> 62);
  const auto rem =
      static_cast<std::int64_t>(x & ((std::uint64_t{1} << 62) - 1)) - static_cast<std::int64_t>(kEighth);
  const double a = static_cast<double>(rem) * 0x1.921fb54442d18p-62;  // 2π/2^64
  const double a2 = a * a;
  const double sa =
      a +
      a * a2 *
          (-1.0 / 6 + a2 * (1.0 / 120 + a2 * (-1.0 / 5040 + a2 * (1.0 / 362880 + a2 * (-1.0 / 39916800)))));
  const double ca =
      1.0 +
      a2 * (-0.5 + a2 * (1.0 / 24 + a2 * (-1.0 / 720 + a2 * (1.0 / 40320 + a2 * (-1.0 / 3628800 +
                                                                                 a2 * (1.0 / 479001600))))));
  // sin and cos of quarter·π/2 + a.
  const double table_s[4] = {sa, ca, -sa, -ca}, table_c[4] = {ca, -sa, -ca, sa};
  s = table_s[quarter];
  c = table_c[quarter];
}

// s[k], c[k] of position p for the n pairs whose steps start at `step`.
inline void direct_sincos(std::int64_t p, const std::uint64_t* step, std::size_t n, double* s,
                          double* c) noexcept {
  const auto up = static_cast<std::uint64_t>(p);
  for (std::size_t k = 0; k < n; ++k) phase_sincos(up * step[k], s[k], c[k]);
}

// Advances every pair by one position: (s, c) rotated by (sin_step, cos_step).
inline void advance_sincos(const double* cos_step, const double* sin_step, std::size_t n, double* s,
                           double* c) noexcept {
  for (std::size_t k = 0; k < n; ++k) {
    const double s1 = s[k] * cos_step[k] + c[k] * sin_step[k];
    const double c1 = c[k] * cos_step[k] - s[k] * sin_step[k];
    s[k] = s1;
    c[k] = c1;
  }
}

}  // namespace pe::detail

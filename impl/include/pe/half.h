// 16-bit storage types: bfloat16 and IEEE binary16. Values are computed in float or double and
// rounded once, to nearest, ties to even, subnormals kept, overflow to infinity, NaN kept a NaN.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>
#include <span>

#include "pe/types.h"

namespace pe {

struct BFloat16 {
  std::uint16_t bits = 0;
};
struct Float16 {
  std::uint16_t bits = 0;
};

namespace detail {

// float -> bfloat16 keeps float's exponent range, so rounding the top 16 bits to nearest-even is
// the whole conversion (carries roll into the exponent and up to infinity as IEEE requires).
inline std::uint16_t bfloat16_bits(float v) noexcept {
  const auto u = std::bit_cast<std::uint32_t>(v);
  if (std::isnan(v)) return static_cast<std::uint16_t>((u >> 16) | 0x40);  // stay a quiet NaN
  return static_cast<std::uint16_t>((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

// double -> float rounding toward zero with the last bit set when inexact ("round to odd"): a
// second rounding to any format at least 2 bits narrower is then the correct single rounding.
inline float round_to_odd_float(double v) noexcept {
  float f = static_cast<float>(v);
  if (!std::isfinite(f) && std::isfinite(v)) [[unlikely]]
    f = std::copysign(0x1.fffffep127f, static_cast<float>(v));
  if (std::isnan(v)) [[unlikely]]
    return f;
  // Branch-free (whether a value rounded up is as good as random): one step toward zero when f rounded
  // up in magnitude (f != 0 then; a float's bits are sign-magnitude, so that is the bits minus one),
  // then the last bit set when inexact.
  const double back = f;
  const auto toward_zero =
      std::bit_cast<std::uint32_t>(f) - static_cast<std::uint32_t>(std::fabs(back) > std::fabs(v));
  return std::bit_cast<float>(toward_zero | static_cast<std::uint32_t>(back != v));
}

}  // namespace detail

inline BFloat16 to_bfloat16(float v) noexcept { return {detail::bfloat16_bits(v)}; }
inline BFloat16 to_bfloat16(double v) noexcept {
  return {detail::bfloat16_bits(detail::round_to_odd_float(v))};
}
// GCC's _Float16 conversions (libgcc soft-fp on x86-64 without AVX512-FP16) round once, to nearest-even.
inline Float16 to_float16(float v) noexcept {
  return {std::bit_cast<std::uint16_t>(static_cast<_Float16>(v))};
}
inline Float16 to_float16(double v) noexcept {
  return {std::bit_cast<std::uint16_t>(static_cast<_Float16>(v))};
}

inline float to_float(BFloat16 v) noexcept { return std::bit_cast<float>(std::uint32_t{v.bits} << 16); }
inline float to_float(Float16 v) noexcept { return static_cast<float>(std::bit_cast<_Float16>(v.bits)); }

inline Buffer buffer(std::span<BFloat16> s) noexcept { return {s.data(), s.size(), DType::BF16}; }
inline Buffer buffer(std::span<Float16> s) noexcept { return {s.data(), s.size(), DType::F16}; }

}  // namespace pe

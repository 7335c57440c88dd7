// High-precision numbers for the reference: MPFR through Boost.Multiprecision, fixed precision per
// type (Boost 1.74's variable precision is one process-wide setting, so we avoid it), expression
// templates off (an `auto` bound to an expression would dangle).
#pragma once

#include <boost/multiprecision/mpfr.hpp>

#include "pe/types.h"

namespace pe::ref {

namespace bmp = boost::multiprecision;

// Tier for positions below 2^40: ~168 bits, so p·ω keeps > 64 bits beyond float64's 53.
using RealNarrow = bmp::number<bmp::mpfr_float_backend<50>, bmp::et_off>;
// Tier for positions up to 2^53 and for Ziv's retry when a rounding is undecided: ~334 bits.
using Real = bmp::number<bmp::mpfr_float_backend<100>, bmp::et_off>;

template <class R>
long precision_bits() {
  return static_cast<long>(mpfr_get_prec(R().backend().data()));
}

// A binary format: significand bits (the implicit one included), the exponents of the smallest normal
// (2^emin) and of the largest finite binade (< 2^(emax+1)).
struct FormatBits {
  int precision, emin, emax;
};
constexpr FormatBits format_bits(DType type) noexcept {
  switch (type) {
    case DType::F32:
      return {24, -126, 127};
    case DType::F64:
      return {53, -1022, 1023};
    case DType::BF16:
      return {8, -126, 127};
    case DType::F16:
      return {11, -14, 15};
  }
  return {53, -1022, 1023};
}

// Round-to-nearest-even into `type`, subnormals and overflow to infinity included, returned as
// the double holding that value exactly. One rounding from the full-precision value.
double round_to(const Real& v, DType type);

// SLEEF's ulp of an exact value: 2^(max(floor(log2|x|), emin) - p + 1); for 0, the subnormal step.
double ulp_of(const Real& exact, DType type);

}  // namespace pe::ref

#include "pe/ref/real.h"

#include <cmath>
#include <limits>

namespace pe::ref {
namespace {

struct Format {
  long precision;  // significand bits, the implicit one included
  long emin;       // exponent of the smallest normal: 2^emin
  long emax;       // exponent of the largest finite: < 2^(emax+1)
};

Format format_of(DType type) {
  const FormatBits f = format_bits(type);
  return {f.precision, f.emin, f.emax};
}

}  // namespace

double round_to(const Real& v, DType type) {
  mpfr_srcptr x = v.backend().data();
  if (mpfr_zero_p(x)) return mpfr_signbit(x) ? -0.0 : 0.0;
  if (!mpfr_number_p(x)) return mpfr_get_d(x, MPFR_RNDN);
  const Format f = format_of(type);
  // MPFR writes x = m·2^e with m in [1/2, 1): floor(log2|x|) = e - 1.
  const long e = static_cast<long>(mpfr_get_exp(x)) - 1;
  // Below the normal range the format has fewer significand bits: one fewer per binade.
  const long bits = e >= f.emin ? f.precision : f.precision - (f.emin - e);
  const double step = std::ldexp(1.0, static_cast<int>(f.emin - f.precision + 1));  // smallest subnormal
  if (bits <= 0) {
    // |x| < 2^(emin - p + 1): the candidates are 0 and the smallest subnormal; the tie at half
    // goes to 0 (even).
    mpfr_t twice;
    mpfr_init2(twice, mpfr_get_prec(x));
    mpfr_mul_2si(twice, x, 1, MPFR_RNDN);  // exact
    mpfr_abs(twice, twice, MPFR_RNDN);
    const bool above_half = mpfr_cmp_d(twice, step) > 0;
    mpfr_clear(twice);
    const double r = above_half ? step : 0.0;
    return mpfr_signbit(x) ? -r : r;
  }
  mpfr_t r;
  mpfr_init2(r, bits);
  mpfr_set(r, x, MPFR_RNDN);              // the one rounding
  double out = mpfr_get_d(r, MPFR_RNDN);  // exact: bits <= 53
  mpfr_clear(r);
  const double largest =
      std::ldexp(2.0 - std::ldexp(1.0, static_cast<int>(1 - f.precision)), static_cast<int>(f.emax));
  if (std::fabs(out) > largest) out = std::copysign(std::numeric_limits<double>::infinity(), out);
  return out;
}

double ulp_of(const Real& exact, DType type) {
  const Format f = format_of(type);
  mpfr_srcptr x = exact.backend().data();
  long e = f.emin;
  if (!mpfr_zero_p(x)) e = std::max(e, static_cast<long>(mpfr_get_exp(x)) - 1);
  return std::ldexp(1.0, static_cast<int>(e - f.precision + 1));
}

}  // namespace pe::ref

#include "pe/ref/alibi.h"

namespace pe::ref {
namespace {

double rounded(const Enclosure& e, DType type) {
  if (auto r = decided_rounding(e, type)) return *r;
  record_undecided();  // ~334 bits is the widest tier: export refuses to write such a value
  return round_to(e.value, type);
}

}  // namespace

Alibi::Alibi(const AlibiParams& params) : plan_(params), slopes_(plan_.n_heads()) {}

const Slope& Alibi::slope_of(std::size_t h) const {
  if (!slopes_[h]) {
    const Real exponent = Real(plan_.max_bias()) * static_cast<long long>(plan_.power(h)) /
                          static_cast<long long>(plan_.denominator(h));
    // An integral exponent gives a power of two, exact: its products with s can be ties, which
    // only a zero radius rounds right. Otherwise exp2 and the quotient round once each at ~334
    // bits, and the product with s (< 2^54) once more.
    const bool exact = exponent == floor(exponent) && abs(exponent) < 16000;
    slopes_[h] = Slope{exp2(Real(-exponent)),
                       exact ? Real(0) : ldexp(Real(1), static_cast<int>(4 - precision_bits<Real>()))};
  }
  return *slopes_[h];
}

Enclosure Alibi::bias(std::size_t h, std::int64_t i, std::int64_t j) const {
  const Slope& m = slope_of(h);
  Real v = m.value * static_cast<long long>(plan_.multiplier(i, j));
  Real r = abs(v) * m.relative_radius;
  return {std::move(v), std::move(r)};
}

Enclosure Alibi::slope_enclosure(std::size_t h) const {
  const Slope& m = slope_of(h);
  return {m.value, m.value * m.relative_radius};
}

double Alibi::rounded_bias(std::size_t h, std::int64_t i, std::int64_t j, DType type) const {
  return rounded(bias(h, i, j), type);
}

double Alibi::rounded_slope(std::size_t h, DType type) const { return rounded(slope_enclosure(h), type); }

}  // namespace pe::ref

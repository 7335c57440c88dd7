#include "pe/ref/xpos.h"

#include <string>

#include "pe/errors.h"

namespace pe::ref {

XPosGain::XPosGain(const XPos& spec, std::int64_t rotary_dim) : spec_(spec), rotary_dim_(rotary_dim) {
  validate(spec);
  if (rotary_dim <= 0 || rotary_dim % 2 != 0)
    throw InvalidArgument("rotary_dim",
                          "xPos needs an even rotary_dim > 0, got " + std::to_string(rotary_dim));
}

Enclosure XPosGain::exact(std::int64_t position, std::int64_t pair) const {
  if (!spec_.enabled() || position == spec_.centre) return {Real(1), Real(0)};
  // ζ, w, ln ζ, their product and exp each rounded once (2^-P relative): ζ's rounding moves ln ζ by 2^-P, the
  // others e = w·ln ζ by |e|·2^-P each, so e within (3|e| + |w|)·2^-P and exp within that plus 2^-P relative,
  // to first order; doubled for the rest.
  const Real zeta = Real(static_cast<long long>(10 * pair + 2 * rotary_dim_)) /
                    Real(static_cast<long long>(7 * rotary_dim_));
  Real w = Real(static_cast<long long>(position - spec_.centre)) / Real(spec_.scale_base);
  if (spec_.keys) w = -w;
  const Real e = w * log(zeta);
  const Real g = exp(e);
  const Real relative =
      (3 * abs(e) + abs(w) + 1) * ldexp(Real(1), static_cast<int>(1 - precision_bits<Real>()));
  return {g, Real(g * relative)};
}

}  // namespace pe::ref

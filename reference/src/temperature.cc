#include "pe/ref/temperature.h"

namespace pe::ref {
namespace {

// ⌊(p + 1)/floor_scale⌋ (HF Llama4TextAttention) or ⌊p/original_max_position⌋ (HF Ministral3),
// p >= 0: integer division is the floor.
std::int64_t step_of(const AttnTemperature& s, std::int64_t p) {
  switch (s.type) {
    case AttnTemperatureType::Llama4:
      return (p + 1) / s.floor_scale;
    case AttnTemperatureType::Mistral:
      return p / s.original_max_position;
    case AttnTemperatureType::None:
      break;
  }
  return 0;
}

double scale_of(const AttnTemperature& s) {
  return s.type == AttnTemperatureType::Llama4 ? s.attn_scale : s.beta;
}

}  // namespace

Temperature::Temperature(const AttnTemperature& spec) : spec_(spec) { validate(spec); }

Enclosure Temperature::exact(std::int64_t position) const {
  const std::int64_t k = step_of(spec_, position);
  if (k == 0 || spec_.type == AttnTemperatureType::None) return {Real(1), Real(0)};
  // ln correctly rounded (2^-P relative), the product by the exact double scale and the sum each
  // rounded once: within (2·s·ln + t)·2^-P <= t·2^(2-P).
  const Real ln = log(Real(static_cast<long long>(k) + 1));
  const Real t = Real(1) + Real(scale_of(spec_)) * ln;
  return {t, Real(t * ldexp(Real(1), static_cast<int>(2 - precision_bits<Real>())))};
}

double Temperature::rounded(std::int64_t position, DType type) const {
  const Enclosure e = exact(position);
  if (auto r = decided_rounding(e, type)) return *r;
  return round_to(e.value, type);  // no wider tier: t is then within 2^-330 of a rounding boundary
}

Enclosure times(const Enclosure& a, const Enclosure& b) {
  const Real v = a.value * b.value;
  const Real r = abs(a.value) * b.radius + abs(b.value) * a.radius + a.radius * b.radius +
                 abs(v) * ldexp(Real(1), static_cast<int>(1 - precision_bits<Real>()));
  return {v, r};
}

}  // namespace pe::ref

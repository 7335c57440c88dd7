#include "pe/attn_temperature.h"

#include <array>
#include <cmath>
#include <string>

#include "detail/check.h"

namespace pe {
namespace {

void check_scale(const char* name, double v) {
  if (!std::isfinite(v) || !(v >= 0.0)) {
    detail::fail(name, std::string(name) + " must be finite and >= 0, got " + detail::show(v));
  }
}

void check_period(const char* name, std::int64_t v) {
  if (v <= 0) detail::fail(name, std::string(name) + " must be > 0, got " + std::to_string(v));
}

}  // namespace

TemperatureSteps validate(const AttnTemperature& t) {
  switch (t.type) {
    case AttnTemperatureType::None:
      return {};
    case AttnTemperatureType::Llama4:
      check_scale("attn_scale", t.attn_scale);
      check_period("floor_scale", t.floor_scale);
      return {t.attn_scale, t.floor_scale, 1};
    case AttnTemperatureType::Mistral:
      check_scale("beta", t.beta);
      check_period("original_max_position", t.original_max_position);
      return {t.beta, t.original_max_position, 0};
  }
  return {};
}

std::int64_t temperature_step(const TemperatureSteps& s, std::int64_t position) noexcept {
  return (position + s.offset) / s.period;  // both non-negative: truncation is the floor
}

std::int64_t temperature_boundary(const TemperatureSteps& s, std::int64_t k) noexcept {
  return k == 0 ? 0 : k * s.period - s.offset;
}

// k + 1 <= 2^53 + 2 is exact in long double; logl is within 2 ulp (2^-62 relative), the product
// and the sum add 2^-64 each: below 1.5·2^-62·t before the one rounding to double (2^-53), so
// |t̂ - t| <= (1 + 2^-8)·2^-53·t < kTemperatureError·t.
double attn_temperature(const TemperatureSteps& s, std::int64_t position) noexcept {
  const std::int64_t k = temperature_step(s, position);
  if (k == 0 || s.scale == 0) return 1.0;
  const long double ln = std::log(static_cast<long double>(k) + 1.0L);
  return static_cast<double>(1.0L + static_cast<long double>(s.scale) * ln);
}

double gain_relative_error(DType out) noexcept { return 6 * 0x1p-24 + 2 * unit_roundoff(out); }

double gain_floor(DType out) noexcept { return denorm_min(DType::F32) + denorm_min(out); }

}  // namespace pe

// The exact attention temperature (pe/attn_temperature.h) in MPFR: each type's formula written from
// its definition (llama4 reads ⌊(p + 1)/floor_scale⌋, mistral ⌊p/original_max_position⌋, both in
// integers), ln at ~334 bits, with an error radius; and the gain times a rotated value.
#pragma once

#include <cstdint>

#include "pe/attn_temperature.h"
#include "pe/ref/reference.h"

namespace pe::ref {

class Temperature {
 public:
  // Throws InvalidArgument like pe::validate.
  explicit Temperature(const AttnTemperature& spec);

  const AttnTemperature& spec() const noexcept { return spec_; }
  // t(p) for 0 <= p <= 2^53, within the radius; exactly 1 (radius 0) below the first step.
  Enclosure exact(std::int64_t position) const;
  // The correctly rounded t(p) in `type`.
  double rounded(std::int64_t position, DType type) const;

 private:
  AttnTemperature spec_;
};

// a·b with a radius covering both radii and the product's rounding.
Enclosure times(const Enclosure& a, const Enclosure& b);

}  // namespace pe::ref

// The exact xPos gain (pe/xpos.h) in MPFR: ζ_j = (10j + 2d)/(7d) and w = (p − centre)/scale_base from
// integers and the double scale_base, exp(w·ln ζ_j) at ~334 bits, with an error radius.
#pragma once

#include <cstdint>

#include "pe/ref/reference.h"
#include "pe/xpos.h"

namespace pe::ref {

class XPosGain {
 public:
  // Throws InvalidArgument like pe::validate; rotary_dim > 0 and even.
  XPosGain(const XPos& spec, std::int64_t rotary_dim);

  const XPos& spec() const noexcept { return spec_; }
  // g_j(p), or its reciprocal for keys, for 0 <= p <= 2^53 and pair 0 <= j < rotary_dim/2, within the radius.
  Enclosure exact(std::int64_t position, std::int64_t pair) const;

 private:
  XPos spec_;
  std::int64_t rotary_dim_;
};

}  // namespace pe::ref

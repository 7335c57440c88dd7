// The exact ALiBi reference: each head's slope 2^(-b·k/den) from the exact rational exponent (b the
// double it is) at ~334 bits, the bias as its product with the exact integer s, and the correctly
// rounded value in every output type.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "pe/alibi.h"
#include "pe/ref/real.h"
#include "pe/ref/reference.h"

namespace pe::ref {

struct Slope {
  Real value;
  Real relative_radius;  // 0 when the exponent is an integer: the slope is then exact
};

class Alibi {
 public:
  // Throws InvalidArgument like AlibiPlan.
  explicit Alibi(const AlibiParams& params);

  const AlibiPlan& plan() const noexcept { return plan_; }
  // m_h within 2^-330 relative; computed on first use (a property samples a few heads of many).
  const Real& slope(std::size_t h) const { return slope_of(h).value; }
  // m_h·plan().multiplier(i, j) with the radius of the slope's error.
  Enclosure bias(std::size_t h, std::int64_t i, std::int64_t j) const;
  // The slope as the bias at s = 1.
  Enclosure slope_enclosure(std::size_t h) const;
  double rounded_bias(std::size_t h, std::int64_t i, std::int64_t j, DType type) const;
  double rounded_slope(std::size_t h, DType type) const;

 private:
  const Slope& slope_of(std::size_t h) const;

  AlibiPlan plan_;
  mutable std::vector<std::optional<Slope>> slopes_;
};

}  // namespace pe::ref

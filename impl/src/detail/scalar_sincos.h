// sin/cos of p·ω_i evaluated with the C library in one floating type, for either plan.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "pe/plan.h"

namespace pe::detail {

// The angle is formed in C: fl(fl(p)·fl(ω_i)). For C = double, p <= 2^53 and ω_i are exact in C.
template <class C, class Plan>
struct LibmSinCos {
  const Plan& plan;
  void operator()(std::int64_t p, std::size_t i, C& s, C& c) const noexcept {
    const C angle = static_cast<C>(p) * static_cast<C>(plan.inv_freq()[i]);
    s = std::sin(angle);
    c = std::cos(angle);
  }
};

// The sinusoidal table's rule at a position t given as a double (an integer one converted exactly): the
// angle fl(fl(fl(t)·fl(ω_i))·fl(scale)) in C. For C = double fl(t) and fl(scale) are exact; in float each
// is a rounding. Multiplying by a scale of 1 is exact, so the unscaled table's bits are those of the
// angle fl(fl(t)·fl(ω_i)) alone.
template <class C>
struct TableLibmSinCos {
  explicit TableLibmSinCos(const SinusoidalPlan& p) : plan(p), scale(static_cast<C>(p.scale())) {}
  void operator()(double t, std::size_t i, C& s, C& c) const noexcept {
    const C angle = static_cast<C>(t) * static_cast<C>(plan.inv_freq()[i]) * scale;
    s = std::sin(angle);
    c = std::cos(angle);
  }
  const SinusoidalPlan& plan;
  C scale;
};

}  // namespace pe::detail

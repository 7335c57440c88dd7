// sin/cos of p·ω_i evaluated with the C library in one floating type, for either plan.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>

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

}  // namespace pe::detail

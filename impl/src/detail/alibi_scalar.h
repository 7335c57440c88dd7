// The loops every scalar ALiBi variant shares: Arith gives a head's slope in its compute type and
// one bias element from a slope and the exact integer it multiplies (AlibiPlan::multiplier).
#pragma once

#include <cmath>

#include "pe/detail/convert.h"
#include "pe/variant.h"

namespace pe::detail {

// alibi.exact's contract (derived in alibi/exact/exact.cc), which alibi.hwy shares.
inline Contract alibi_exact_contract() {
  return {.layouts = {Layout::Hqk},
          .outputs = {DType::F64, DType::F32, DType::BF16, DType::F16},
          .angle_type = DType::F64,
          .compute_type = DType::F64,
          .max_position = kMaxPosition,
          .max_base = 65536,
          .depends_on = "glibc exp2 < 0.51 ULP",
          .c0 = 1,
          .ck = 2.1,
          .c1 = 22.2};
}

// ggml's and HF's formulation in T: m0 = pow(2, -b/den), slope = pow(m0, k), and the bias as the slope
// times the distance converted to T.
template <class T>
struct PowArith {
  static T slope(const AlibiPlan& plan, std::size_t h) {
    const T m0 = std::pow(T{2}, -static_cast<T>(plan.max_bias()) / static_cast<T>(plan.denominator(h)));
    return std::pow(m0, static_cast<T>(plan.power(h)));
  }
  template <class Out>
  static Out bias(T m, std::int64_t s) {
    return store_as<Out>(m * static_cast<T>(s));
  }
};

template <class Arith>
class ScalarAlibi final : public AlibiVariant {
 public:
  using AlibiVariant::AlibiVariant;

  void slopes(const AlibiPlan& plan, Buffer out) const noexcept override {
    with_typed(out, [&](auto* y) {
      using Out = std::remove_pointer_t<decltype(y)>;
      for (std::size_t h = 0; h < plan.n_heads(); ++h) y[h] = store_as<Out>(Arith::slope(plan, h));
    });
  }

  void bias(const AlibiPlan& plan, std::span<const std::int64_t> queries, std::span<const std::int64_t> keys,
            Buffer out) const noexcept override {
    with_typed(out, [&](auto* y) {
      using Out = std::remove_pointer_t<decltype(y)>;
      for (std::size_t h = 0; h < plan.n_heads(); ++h) {
        const auto m = Arith::slope(plan, h);
        for (const std::int64_t i : queries) {
          for (const std::int64_t j : keys) *y++ = Arith::template bias<Out>(m, plan.multiplier(i, j));
        }
      }
    });
  }
};

}  // namespace pe::detail

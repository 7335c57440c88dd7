// The loops every scalar ALiBi variant shares: Arith gives a head's slope in its compute type and
// one bias element from a slope and the exact integer it multiplies (AlibiPlan::multiplier).
#pragma once

#include "pe/detail/convert.h"
#include "pe/variant.h"

namespace pe::detail {

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

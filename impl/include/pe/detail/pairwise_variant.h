// Variants that compute one (sin, cos) pair at a time in a compute type C: everything but the
// SinCos rule and the contract is shared. SinCos is constructed from the plan and called as
// sincos(t, pair, s, c) with t the position as a double (an integer position converted exactly: the API
// holds it to 2^53), the rule applying the plan's scale its own way. So table(p) and table_at(p) at an
// integer p give the same bits.
#pragma once

#include <string>

#include "pe/detail/loops.h"
#include "pe/variant.h"

namespace pe::detail {

template <class C, class SinCos>
class PairwiseSinusoidal final : public SinusoidalVariant {
 public:
  using SinusoidalVariant::SinusoidalVariant;

  void table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
             Buffer out) const noexcept override {
    SinCos rule{plan};
    with_typed(out, [&](auto* y) { write_table<C>(plan, positions, y, at_integer(rule)); });
  }

  void table_at(const SinusoidalPlan& plan, std::span<const double> positions,
                Buffer out) const noexcept override {
    with_typed(out, [&](auto* y) { write_table<C>(plan, positions, y, SinCos{plan}); });
  }

  void add(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
           std::span<const std::uint8_t> padding, Buffer embeddings) const noexcept override {
    SinCos rule{plan};
    with_typed(embeddings, [&](auto* y) { add_table<C>(plan, positions, padding, y, at_integer(rule)); });
  }

 private:
  static auto at_integer(SinCos& rule) noexcept {
    return [&rule](std::int64_t p, std::size_t i, C& s, C& c) { rule(static_cast<double>(p), i, s, c); };
  }
};

// Backend: the driver's view of the rule (PairwiseBackend, rotating in C), or one with its own rotation.
template <class C, class SinCos, template <class> class Backend = PairwiseBackend>
class PairwiseRope final : public RopeVariant {
 public:
  using RopeVariant::RopeVariant;

  void apply(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction,
             Buffer x) const noexcept override {
    with_typed(x, [&](auto* data) { rotate<C, Backend>(plan, batch, direction, data, SinCos{plan}); });
  }
};

}  // namespace pe::detail

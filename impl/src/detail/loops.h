// The loops every variant that computes one (sin, cos) pair at a time shares: the table layout,
// the fused add, and RoPE's pair rotation parameterised by the pair offset. A variant supplies
// only `sincos(position, pair, s, c)` in its compute type C.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "detail/convert.h"
#include "pe/batch.h"
#include "pe/plan.h"
#include "pe/types.h"

namespace pe::detail {

template <class C, class Out, class SinCos>
void write_table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions, Out* out,
                 SinCos&& sincos) noexcept {
  const std::size_t d = plan.dim(), h = plan.n_pairs();
  for (std::size_t r = 0; r < positions.size(); ++r) {
    Out* row = out + r * d;
    for (std::size_t i = 0; i < h; ++i) {
      C s, c;
      sincos(positions[r], i, s, c);
      row[plan.sin_index(i)] = store_as<Out>(s);
      row[plan.cos_index(i)] = store_as<Out>(c);
    }
  }
}

template <class C, class Out, class SinCos>
void add_table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
               std::span<const std::uint8_t> padding, Out* emb, SinCos&& sincos) noexcept {
  const std::size_t d = plan.dim(), h = plan.n_pairs();
  for (std::size_t r = 0; r < positions.size(); ++r) {
    if (!padding.empty() && padding[r] != 0) continue;
    Out* row = emb + r * d;
    for (std::size_t i = 0; i < h; ++i) {
      C s, c;
      sincos(positions[r], i, s, c);
      Out& ys = row[plan.sin_index(i)];
      Out& yc = row[plan.cos_index(i)];
      ys = store_as<Out>(load_as<C>(ys) + s);
      yc = store_as<Out>(load_as<C>(yc) + c);
    }
  }
}

// A SinCos rule that folds the attention factor in itself (before a cache's rounding, as HF does)
// says so with `static constexpr bool kAppliesAttention = true;`.
template <class SinCos>
constexpr bool applies_attention() {
  if constexpr (requires { std::remove_cvref_t<SinCos>::kAppliesAttention; }) {
    return std::remove_cvref_t<SinCos>::kAppliesAttention;
  }
  return false;
}

// The rotation by (cos, sin)·A, A the plan's attention factor multiplied in C (HF: cos * attention_scaling).
template <class C, class T, class SinCos>
void rotate(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction, T* x,
            SinCos&& sincos) noexcept {
  const std::size_t offset = plan.pair_offset();
  const C sign = direction == RopeDirection::Inverse ? C(-1) : C(1);
  const C attention = static_cast<C>(plan.attention_factor());
  const bool scale = attention != C(1) && !applies_attention<SinCos>();
  for (std::size_t t = 0; t < batch.tokens(); ++t) {
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      C s, c;
      sincos(batch.position(t), j, s, c);
      if (scale) {
        s *= attention;
        c *= attention;
      }
      s *= sign;
      const std::size_t first = plan.pair_first(j);
      for (std::size_t h = 0; h < batch.heads; ++h) {
        T* head = x + batch.row(t, h);
        const C a = load_as<C>(head[first]), b = load_as<C>(head[first + offset]);
        head[first] = store_as<T>(a * c - b * s);
        head[first + offset] = store_as<T>(a * s + b * c);
      }
    }
  }
}

}  // namespace pe::detail

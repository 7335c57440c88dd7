// The loops every variant that computes one (sin, cos) pair at a time shares: the table layout,
// the fused add, and RoPE's pair rotation parameterised by the pair offset. A variant supplies
// only `sincos(position, pair, s, c)` in its compute type C.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "pe/plan.h"
#include "pe/types.h"

namespace pe::detail {

// Calls f with the buffer's data as a typed pointer. Only dtypes the variant declared reach here.
template <class F>
void with_typed(Buffer b, F&& f) noexcept {
  switch (b.dtype) {
    case DType::F32:
      f(static_cast<float*>(b.data));
      return;
    case DType::F64:
      f(static_cast<double*>(b.data));
      return;
    case DType::BF16:
    case DType::F16:
      return;  // no scalar storage type yet: rejected by the contract's outputs
  }
}

template <class C, class Out, class SinCos>
void write_table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions, Out* out,
                 SinCos&& sincos) noexcept {
  const std::size_t d = plan.dim(), h = plan.n_pairs();
  const bool interleaved = plan.layout() == Layout::Interleaved;
  for (std::size_t r = 0; r < positions.size(); ++r) {
    Out* row = out + r * d;
    for (std::size_t i = 0; i < h; ++i) {
      C s, c;
      sincos(positions[r], i, s, c);
      row[interleaved ? 2 * i : i] = static_cast<Out>(s);
      row[interleaved ? 2 * i + 1 : h + i] = static_cast<Out>(c);
    }
  }
}

template <class C, class Out, class SinCos>
void add_table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
               std::span<const std::uint8_t> padding, Out* emb, SinCos&& sincos) noexcept {
  const std::size_t d = plan.dim(), h = plan.n_pairs();
  const bool interleaved = plan.layout() == Layout::Interleaved;
  for (std::size_t r = 0; r < positions.size(); ++r) {
    if (!padding.empty() && padding[r] != 0) continue;
    Out* row = emb + r * d;
    for (std::size_t i = 0; i < h; ++i) {
      C s, c;
      sincos(positions[r], i, s, c);
      Out& ys = row[interleaved ? 2 * i : i];
      Out& yc = row[interleaved ? 2 * i + 1 : h + i];
      ys = static_cast<Out>(static_cast<C>(ys) + s);
      yc = static_cast<Out>(static_cast<C>(yc) + c);
    }
  }
}

template <class C, class T, class SinCos>
void rotate(const RopePlan& plan, std::span<const std::int64_t> positions, std::size_t n_heads,
            RopeDirection direction, T* x, SinCos&& sincos) noexcept {
  const std::size_t hd = plan.head_dim(), offset = plan.pair_offset();
  const C sign = direction == RopeDirection::Inverse ? C(-1) : C(1);
  for (std::size_t t = 0; t < positions.size(); ++t) {
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      C s, c;
      sincos(positions[t], j, s, c);
      s *= sign;
      const std::size_t first = plan.pair_first(j);
      for (std::size_t h = 0; h < n_heads; ++h) {
        T* head = x + (t * n_heads + h) * hd;
        const C a = static_cast<C>(head[first]), b = static_cast<C>(head[first + offset]);
        head[first] = static_cast<T>(a * c - b * s);
        head[first + offset] = static_cast<T>(a * s + b * c);
      }
    }
  }
}

}  // namespace pe::detail

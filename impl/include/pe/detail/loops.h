// The loops every variant that computes one (sin, cos) pair at a time shares: the table layout,
// the fused add, and RoPE through the driver (pe/detail/rope_driver.h). A variant supplies
// only `sincos(position, pair, s, c)` in its compute type C.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <type_traits>

#include "pe/batch.h"
#include "pe/detail/convert.h"
#include "pe/detail/rope_driver.h"
#include "pe/plan.h"
#include "pe/types.h"

namespace pe::detail {

// P: the positions' type, std::int64_t (table) or double (table_at); the rule takes it as given. An odd
// dim's pad channel (the last) is written 0.
template <class C, class Out, class P, class SinCos>
void write_table(const SinusoidalPlan& plan, std::span<const P> positions, Out* out,
                 SinCos&& sincos) noexcept {
  const std::size_t d = plan.dim(), h = plan.n_pairs();
  for (std::size_t r = 0; r < positions.size(); ++r) {
    Out* row = out + r * d;
    if (plan.has_pad()) row[d - 1] = store_as<Out>(C{0});
    for (std::size_t i = 0; i < h; ++i) {
      C s, c;
      sincos(positions[r], i, s, c);
      row[plan.sin_index(i)] = store_as<Out>(s);
      row[plan.cos_index(i)] = store_as<Out>(c);
    }
  }
}

// An odd dim's pad channel (the last) of `rows` table rows set to 0; nothing for an even dim.
template <class Out>
void zero_pad(const SinusoidalPlan& plan, std::size_t rows, Out* out) noexcept {
  if (!plan.has_pad()) return;
  const std::size_t d = plan.dim();
  for (std::size_t r = 0; r < rows; ++r) out[r * d + d - 1] = store_as<Out>(0.0f);
}

// The fused add: an odd dim's pad channel is left as it is (PE is 0 there).
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

// A per-pair rule sincos(position, pair, s, c) as a backend of the RoPE driver. A rule that folds
// the attention factor in itself (before a cache's rounding, as HF does) says so with
// `static constexpr bool kAppliesAttention = true;`.
template <class SinCos>
struct PairwiseBackend {
  static constexpr bool kAppliesAttention = applies_attention<SinCos>();
  SinCos& rule;  // may keep state along a row (ggml's running θ)
  template <class C>
  void sincos(std::int64_t p, std::size_t j0, std::size_t n, C* s, C* c) noexcept {
    for (std::size_t k = 0; k < n; ++k) rule(p, j0 + k, s[k], c[k]);
  }
};

// RoPE with a per-pair rule, rotated in C by the driver, or by the Backend's own rotation where it has
// one (a PairwiseBackend extended with `rotate`, as the 16-bit rotations of detail/rotation16.h).
template <class C, template <class> class Backend = PairwiseBackend, class T, class SinCos>
void rotate(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction, T* x,
            SinCos&& sincos) noexcept {
  drive_rope<C, 64>(plan, batch, direction, x, Backend<std::remove_reference_t<SinCos>>{sincos});
}

}  // namespace pe::detail

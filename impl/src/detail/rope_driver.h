// The one RoPE driver. Every RoPE kernel is this loop: chunks of pairs, then tokens, then heads, with
// the batch view's row offsets (pe/batch.h), the plan's pairing and the gains (the attention factor
// and the direction's sign). A backend supplies, in its compute type C:
//   void sincos(std::int64_t position, std::size_t j0, std::size_t n, C* s, C* c)
//     sin and cos of pairs j0 .. j0+n-1 at the position, unscaled. s and c keep their values
//     between the calls of one chunk (tokens in order), so a backend may advance them along
//     consecutive positions (rope.exact's recurrence).
//   and, where it matters for speed or accuracy, its own rotation of one chunk of pairs in a set of
//   rows (a token's heads):
//   template <class T> void rotate(T* const* rows, std::size_t n_rows, std::size_t j0, std::size_t n,
//                                  const C* s, const C* c, C sign)
//     pair j of a row is (row[pair_first(j)], row[pair_first(j) + pair_offset()]); s and c already
//     carry the attention factor. Without it the driver rotates in C, one rounding into T.
// A backend whose sincos folds the attention factor in itself (a cache rounded after the gain, as
// HF's) declares `static constexpr bool kAppliesAttention = true;`.
// Kernels never allocate: the chunk buffers are on the stack.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "detail/convert.h"
#include "pe/batch.h"
#include "pe/plan.h"
#include "pe/types.h"

namespace pe::detail {

template <class B>
constexpr bool applies_attention() {
  if constexpr (requires { std::remove_cvref_t<B>::kAppliesAttention; }) {
    return std::remove_cvref_t<B>::kAppliesAttention;
  }
  return false;
}

template <class C, class T, class B>
concept RotatesRows = requires(B& b, T* const* rows, const C* s) {
  b.rotate(rows, std::size_t{}, std::size_t{}, std::size_t{}, s, s, C{});
};

// Always inlined: a Highway kernel calls it from its per-target code, which then compiles the loops,
// and inlines the backend, for that target (an out-of-line instantiation would be baseline code
// calling into the target's functions once per token and head).
template <class C, std::size_t kChunk, class T, class Backend>
[[gnu::always_inline]] inline void drive_rope(const RopePlan& plan, const RopeBatch& batch,
                                              RopeDirection direction, T* x, Backend&& backend) noexcept {
  constexpr std::size_t kRows = 64;  // heads handed to a backend's rotation at once
  const std::size_t pairs = plan.n_pairs(), offset = plan.pair_offset(), tokens = batch.tokens();
  const C sign = direction == RopeDirection::Inverse ? C(-1) : C(1);
  const C attention = static_cast<C>(plan.attention_factor());
  const bool gain = attention != C(1) && !applies_attention<Backend>();
  alignas(64) C s[kChunk];
  alignas(64) C c[kChunk];
  alignas(64) C sa[kChunk];  // the gained copies: s and c stay unit-circle values for the backend
  alignas(64) C ca[kChunk];
  T* rows[kRows];
  for (std::size_t j0 = 0; j0 < pairs; j0 += kChunk) {
    const std::size_t n = std::min(kChunk, pairs - j0);
    for (std::size_t t = 0; t < tokens; ++t) {
      backend.sincos(batch.position(t), j0, n, s, c);
      const C* sp = s;
      const C* cp = c;
      if (gain) {
        for (std::size_t k = 0; k < n; ++k) {
          sa[k] = s[k] * attention;
          ca[k] = c[k] * attention;
        }
        sp = sa;
        cp = ca;
      }
      if constexpr (RotatesRows<C, T, Backend>) {
        for (std::size_t h0 = 0; h0 < batch.heads; h0 += kRows) {
          const std::size_t m = std::min(kRows, batch.heads - h0);
          for (std::size_t h = 0; h < m; ++h) rows[h] = x + batch.row(t, h0 + h);
          backend.rotate(rows, m, j0, n, sp, cp, sign);
        }
      } else {
        for (std::size_t h = 0; h < batch.heads; ++h) {
          T* row = x + batch.row(t, h);
          for (std::size_t k = 0; k < n; ++k) {
            const std::size_t first = plan.pair_first(j0 + k);
            const C sk = sign * sp[k];
            const C a = load_as<C>(row[first]), b = load_as<C>(row[first + offset]);
            row[first] = store_as<T>(a * cp[k] - b * sk);
            row[first + offset] = store_as<T>(a * sk + b * cp[k]);
          }
        }
      }
    }
  }
}

}  // namespace pe::detail

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
// Multi-axis plans (M-RoPE, vision) read each pair's position from its axis; the rotary channels start
// at the plan's rotary_offset; Deinterleave reorders the interleaved rotation's output.
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

// The driver's own rotation, in C and rounded once into T: pair k of a chunk is (a[k·stride],
// a[k·stride + partner]). One loop per pairing, so each compiles to a plain strided loop.
template <class C, class T>
inline void rotate_pairs(T* a, std::size_t stride, std::size_t partner, std::size_t n, const C* s, const C* c,
                         C sign) noexcept {
  for (std::size_t k = 0; k < n; ++k) {
    T* first = a + k * stride;
    const C sk = sign * s[k];
    const C u = load_as<C>(first[0]), v = load_as<C>(first[partner]);
    first[0] = store_as<T>(u * c[k] - v * sk);
    first[partner] = store_as<T>(u * sk + v * c[k]);
  }
}

// Deinterleave's output order (pe/types.h): the interleaved rotation's (2j, 2j+1) moved to
// (j, j + r/2) after the rotation, or back before the inverse one. Through a stack copy of the rotary
// channels (r <= kMaxDeinterleaveDim), one row at a time; out of line, so that the copy's stack stays
// off the rotation's frame.
template <class T>
[[gnu::noinline]] void reorder_deinterleave(const RopePlan& plan, const RopeBatch& batch, T* x,
                                            RopeDirection direction) noexcept {
  T copy[kMaxDeinterleaveDim];
  const std::size_t half = plan.n_pairs(), tokens = batch.tokens();
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t h = 0; h < batch.heads; ++h) {
      T* row = x + batch.row(t, h) + plan.rotary_offset();
      std::copy(row, row + 2 * half, copy);
      for (std::size_t j = 0; j < half; ++j) {
        if (direction == RopeDirection::Forward) {
          row[j] = copy[2 * j];
          row[j + half] = copy[2 * j + 1];
        } else {
          row[2 * j] = copy[j];
          row[2 * j + 1] = copy[j + half];
        }
      }
    }
  }
}

// Runs of at least this many pairs on one axis are chunks of their own (one sincos per token, as
// 1-D RoPE: sectioned M-RoPE, vision); shorter runs (interleaved M-RoPE's t/h/w rotation) share a
// chunk whose sin and cos are gathered from one evaluation per axis.
inline constexpr std::size_t kMinAxisRun = 8;
inline constexpr std::size_t kMaxAxes = 4;

// Always inlined: a Highway kernel calls it from its per-target code, which then compiles the loops,
// and inlines the backend, for that target (an out-of-line instantiation would be baseline code
// calling into the target's functions once per token and head).
template <class C, std::size_t kChunk, class T, class Backend>
[[gnu::always_inline]] inline void drive_rope(const RopePlan& plan, const RopeBatch& batch,
                                              RopeDirection direction, T* x, Backend&& backend) noexcept {
  using B = std::remove_cvref_t<Backend>;
  constexpr std::size_t kRows = 64;  // heads handed to a backend's rotation at once
  const std::size_t pairs = plan.n_pairs(), offset = plan.pair_offset(), tokens = batch.tokens();
  const std::size_t first_channel = plan.rotary_offset();
  const bool deinterleave = plan.layout() == Layout::Deinterleave;
  if (deinterleave && direction == RopeDirection::Inverse) reorder_deinterleave(plan, batch, x, direction);
  const C sign = direction == RopeDirection::Inverse ? C(-1) : C(1);
  const C attention = static_cast<C>(plan.attention_factor());
  const bool gain = attention != C(1) && !applies_attention<Backend>();
  alignas(64) C s[kChunk];
  alignas(64) C c[kChunk];
  alignas(64) C sa[kChunk];  // the gained copies: s and c stay unit-circle values for the backend
  alignas(64) C ca[kChunk];
  T* rows[kRows];
  // Mixed chunks (interleaved M-RoPE): one evaluation per axis, each by its own copy of the backend
  // (its own state, e.g. rope.exact's recurrence), gathered pair by pair. No lambdas here: code in a
  // lambda is not the caller's Highway target, and the backend's calls would not inline.
  alignas(64) C axis_s[kMaxAxes][kChunk];
  alignas(64) C axis_c[kMaxAxes][kChunk];
  const std::size_t axes = std::min(plan.n_axes(), kMaxAxes);
  B axis_backends[kMaxAxes] = {backend, backend, backend, backend};
  for (std::size_t j0 = 0; j0 < pairs;) {
    std::size_t n = std::min(kChunk, pairs - j0);
    const std::size_t run = plan.axis_run(j0);
    const bool mixed = run < n && run < kMinAxisRun;
    if (!mixed) n = std::min(n, run);
    const std::int64_t* axis_positions = batch.positions.data() + plan.axis_of_pair(j0) * tokens;
    for (std::size_t t = 0; t < tokens; ++t) {
      if (mixed) {
        for (std::size_t a = 0; a < axes; ++a) {
          axis_backends[a].sincos(batch.positions[a * tokens + t], j0, n, axis_s[a], axis_c[a]);
        }
        for (std::size_t k = 0; k < n; ++k) {
          const std::size_t a = plan.axis_of_pair(j0 + k);
          s[k] = axis_s[a][k];
          c[k] = axis_c[a][k];
        }
      } else {
        backend.sincos(axis_positions[t], j0, n, s, c);
      }
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
          for (std::size_t h = 0; h < m; ++h) rows[h] = x + batch.row(t, h0 + h) + first_channel;
          backend.rotate(rows, m, j0, n, sp, cp, sign);
        }
      } else if (plan.pairs_interleaved()) {
        for (std::size_t h = 0; h < batch.heads; ++h) {
          rotate_pairs<C>(x + batch.row(t, h) + first_channel + 2 * j0, 2, 1, n, sp, cp, sign);
        }
      } else {
        for (std::size_t h = 0; h < batch.heads; ++h) {
          rotate_pairs<C>(x + batch.row(t, h) + first_channel + j0, 1, offset, n, sp, cp, sign);
        }
      }
    }
    j0 += n;
  }
  if (deinterleave && direction == RopeDirection::Forward) reorder_deinterleave(plan, batch, x, direction);
}

}  // namespace pe::detail

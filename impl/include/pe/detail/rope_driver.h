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
#include <new>
#include <type_traits>

#include "pe/detail/convert.h"
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

inline constexpr std::size_t kMaxAxes = 4;
// Plans of up to this many chunks go through the tokens in blocks of kTokenBlock (drive_rope): 16
// tokens of 32 heads x 128 float channels are 256 KiB, within a core's L2.
inline constexpr std::size_t kMaxBlockedChunks = 4;
inline constexpr std::size_t kTokenBlock = 16;

// The chunk of pairs from j0: up to max_chunk pairs, mixed when they read several axes (M-RoPE's
// sections, vision's halves): their sin and cos are then evaluated once per axis over the whole chunk
// and gathered pair by pair. Cutting the chunk at each axis change instead costs more: Qwen2.5-VL's
// sections 16, 24, 24 made three rotations of short, tail-ending chunks per row, 2.7x 1-D RoPE's time
// against 1.2-1.4x gathered (T2048 x 32 heads x 128, rope.hwy and rope.exact).
struct Chunk {
  std::size_t n;
  bool mixed;
};
inline Chunk chunk_at(const RopePlan& plan, std::size_t j0, std::size_t max_chunk) noexcept {
  const std::size_t n = std::min(max_chunk, plan.n_pairs() - j0);
  return {n, plan.axis_run(j0) < n};
}

// Token t's rows rotated by pairs j0 .. j0+n-1 of (s, c), times `attention` (through the scratch sa,
// ca) unless it is 1: the backend's rotation of a set of rows, or the driver's own.
template <class C, class T, class Backend>
[[gnu::always_inline]] inline void rotate_token(const RopePlan& plan, const RopeBatch& batch, T* x,
                                                Backend& backend, std::size_t t, std::size_t j0,
                                                std::size_t n, const C* sp, const C* cp, C sign, C attention,
                                                C* sa, C* ca) noexcept {
  constexpr std::size_t kRows = 64;  // heads handed to a backend's rotation at once
  const std::size_t first_channel = plan.rotary_offset();
  if (attention != C(1)) {
    for (std::size_t k = 0; k < n; ++k) {
      sa[k] = sp[k] * attention;
      ca[k] = cp[k] * attention;
    }
    sp = sa;
    cp = ca;
  }
  if constexpr (RotatesRows<C, T, Backend>) {
    T* rows[kRows];
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
      rotate_pairs<C>(x + batch.row(t, h) + first_channel + j0, 1, plan.pair_offset(), n, sp, cp, sign);
    }
  }
}

// Text RoPE of one chunk (up to 2·kChunk rotary channels, one position axis): drive_rope_text's plain
// loop. Everything else takes drive_rope_forms.
template <std::size_t kChunk>
bool is_plain_text(const RopePlan& plan) noexcept {
  return plan.n_axes() == 1 && plan.n_pairs() <= kChunk;
}

// Both drivers are always inlined: a Highway kernel calls them from its per-target code, which then
// compiles the loops, and inlines the backend, for that target (an out-of-line instantiation would be
// baseline code calling into the target's functions once per token and head). A Highway kernel keeps
// drive_rope_forms in a function of its own (HWY_NOINLINE), so that the text path stays small enough
// for GCC to inline the backend into it.
template <class C, std::size_t kChunk, class T, class Backend>
[[gnu::always_inline]] inline void drive_rope_text(const RopePlan& plan, const RopeBatch& batch,
                                                   RopeDirection direction, T* x,
                                                   Backend&& backend) noexcept {
  const std::size_t pairs = plan.n_pairs(), tokens = batch.tokens();
  const bool deinterleave = plan.layout() == Layout::Deinterleave;
  if (deinterleave && direction == RopeDirection::Inverse) reorder_deinterleave(plan, batch, x, direction);
  const C sign = direction == RopeDirection::Inverse ? C(-1) : C(1);
  const C attention = applies_attention<Backend>() ? C(1) : static_cast<C>(plan.attention_factor());
  alignas(64) C s[kChunk];
  alignas(64) C c[kChunk];
  alignas(64) C sa[kChunk];  // the gained copies: s and c stay unit-circle values for the backend
  alignas(64) C ca[kChunk];
  for (std::size_t t = 0; t < tokens; ++t) {
    backend.sincos(batch.positions[t], 0, pairs, s, c);
    rotate_token<C>(plan, batch, x, backend, t, 0, pairs, s, c, sign, attention, sa, ca);
  }
  if (deinterleave && direction == RopeDirection::Forward) reorder_deinterleave(plan, batch, x, direction);
}

template <class C, std::size_t kChunk, class T, class Backend>
[[gnu::always_inline]] inline void drive_rope_forms(const RopePlan& plan, const RopeBatch& batch,
                                                    RopeDirection direction, T* x,
                                                    Backend&& backend) noexcept {
  using B = std::remove_cvref_t<Backend>;
  const std::size_t pairs = plan.n_pairs(), tokens = batch.tokens();
  const bool deinterleave = plan.layout() == Layout::Deinterleave;
  if (deinterleave && direction == RopeDirection::Inverse) reorder_deinterleave(plan, batch, x, direction);
  const C sign = direction == RopeDirection::Inverse ? C(-1) : C(1);
  const C attention = static_cast<C>(plan.attention_factor());
  const bool gain = attention != C(1) && !applies_attention<Backend>();
  // A plan of several chunks (sectioned M-RoPE, vision, heads past 128 channels) goes through the
  // tokens in blocks, every chunk of a block before the next block, so that a block's rows are still
  // in cache for its next chunk (chunk by chunk over all tokens would stream the rows from memory once
  // per chunk). Each chunk keeps its own backend and sin/cos state across the blocks (rope.exact's
  // recurrence), so the order changes no bit. Past kMaxBlockedChunks chunks: chunk by chunk, one state.
  std::size_t n_chunks = 0;
  for (std::size_t j0 = 0; j0 < pairs; ++n_chunks) j0 += chunk_at(plan, j0, kChunk).n;
  const bool blocked = n_chunks > 1 && n_chunks <= kMaxBlockedChunks;
  const std::size_t block = blocked ? kTokenBlock : std::max<std::size_t>(tokens, 1);
  const std::size_t states = blocked ? n_chunks : 1, axes = std::min(plan.n_axes(), kMaxAxes);
  // Per state: a backend, and for a mixed chunk (interleaved M-RoPE) one backend per axis, whose sin
  // and cos are gathered pair by pair. Copies of the caller's backend, made for the states in use only
  // (a decode call makes one). No lambdas here: code in a lambda is not the caller's Highway target,
  // and the backend's calls would not inline.
  alignas(B) unsigned char storage[kMaxBlockedChunks * (1 + kMaxAxes)][sizeof(B)];
  B* single[kMaxBlockedChunks];
  B* per_axis[kMaxBlockedChunks][kMaxAxes];
  alignas(64) C state_s[kMaxBlockedChunks][kChunk];
  alignas(64) C state_c[kMaxBlockedChunks][kChunk];
  alignas(64) C axis_s[kMaxBlockedChunks][kMaxAxes][kChunk];
  alignas(64) C axis_c[kMaxBlockedChunks][kMaxAxes][kChunk];
  for (std::size_t i = 0, j0 = 0; i < states; ++i) {
    const Chunk chunk = chunk_at(plan, j0, kChunk);
    single[i] = new (storage[i]) B(backend);
    const bool gathers = blocked ? chunk.mixed : plan.n_axes() > 1;  // unblocked: any chunk may be mixed
    for (std::size_t a = 0; gathers && a < axes; ++a) {
      per_axis[i][a] = new (storage[kMaxBlockedChunks + i * kMaxAxes + a]) B(backend);
    }
    j0 += chunk.n;
  }
  alignas(64) C s[kChunk];  // a mixed chunk's gathered sin and cos
  alignas(64) C c[kChunk];
  alignas(64) C sa[kChunk];  // the gained copies: the state stays unit-circle values for the backend
  alignas(64) C ca[kChunk];
  for (std::size_t t0 = 0; t0 < tokens; t0 += block) {
    const std::size_t t1 = std::min(tokens, t0 + block);
    for (std::size_t ci = 0, j0 = 0; j0 < pairs; ++ci) {
      const Chunk chunk = chunk_at(plan, j0, kChunk);
      const std::size_t n = chunk.n, si = blocked ? ci : 0;
      const std::int64_t* axis_positions = batch.positions.data() + plan.axis_of_pair(j0) * tokens;
      for (std::size_t t = t0; t < t1; ++t) {
        const C* sp = state_s[si];
        const C* cp = state_c[si];
        if (chunk.mixed) {
          for (std::size_t a = 0; a < axes; ++a) {
            per_axis[si][a]->sincos(batch.positions[a * tokens + t], j0, n, axis_s[si][a], axis_c[si][a]);
          }
          for (std::size_t k = 0; k < n; ++k) {
            const std::size_t a = plan.axis_of_pair(j0 + k);
            s[k] = axis_s[si][a][k];
            c[k] = axis_c[si][a][k];
          }
          sp = s;
          cp = c;
        } else {
          single[si]->sincos(axis_positions[t], j0, n, state_s[si], state_c[si]);
        }
        rotate_token<C>(plan, batch, x, backend, t, j0, n, sp, cp, sign, gain ? attention : C(1), sa, ca);
      }
      j0 += n;
    }
  }
  if (deinterleave && direction == RopeDirection::Forward) reorder_deinterleave(plan, batch, x, direction);
}

// Either driver, by the plan.
template <class C, std::size_t kChunk, class T, class Backend>
[[gnu::always_inline]] inline void drive_rope(const RopePlan& plan, const RopeBatch& batch,
                                              RopeDirection direction, T* x, Backend&& backend) noexcept {
  if (is_plain_text<kChunk>(plan)) {
    drive_rope_text<C, kChunk>(plan, batch, direction, x, backend);
  } else {
    drive_rope_forms<C, kChunk>(plan, batch, direction, x, backend);
  }
}

}  // namespace pe::detail

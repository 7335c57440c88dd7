// The validated entry points. Every argument is checked before anything is written; on error
// InvalidArgument names the parameter and its value, and the caller's buffers are unchanged.
#pragma once

#include <cstdint>
#include <span>
#include <type_traits>

#include "pe/alibi.h"
#include "pe/batch.h"
#include "pe/half.h"
#include "pe/plan.h"
#include "pe/thread_pool.h"
#include "pe/types.h"
#include "pe/variant.h"

namespace pe {

// out [positions.size(), dim] = PE(scale·positions) in the plan's layout (an odd dim's last channel 0).
// Refused as sinusoidal_table_at's checks say, |scale·p| <= 2^53 named "scale".
void sinusoidal_table(const Variant& variant, const SinusoidalPlan& plan,
                      std::span<const std::int64_t> positions, Buffer out);

// out [positions.size(), dim] = PE(scale·positions) at real positions (diffusion timesteps, t·1000 for t in
// [0, 1)), each the exact binary value given, in the variant's own arithmetic. Checks, naming the parameter:
// every position finite with |t| and |scale·t| <= 2^53 ("positions" with its index and value, or "scale"); a
// variant forming its angle in float32 takes t and scale of normal float32 magnitude (or t = 0); the
// variant's contract must cover every form (Contract::table_switches, max_freq_shift); out's size, layout and
// dtype.
void sinusoidal_table_at(const Variant& variant, const SinusoidalPlan& plan,
                         std::span<const double> positions, Buffer out);

// embeddings [positions.size(), dim] += PE(scale·positions), rows with a nonzero padding flag untouched.
// An empty padding span means no padding.
void sinusoidal_add(const Variant& variant, const SinusoidalPlan& plan,
                    std::span<const std::int64_t> positions, Buffer embeddings,
                    std::span<const std::uint8_t> padding = {});

// x [tokens, n_heads, head_dim] rotated in place; positions are [plan.n_axes()][tokens] (one position
// per token for text RoPE, (t, h, w) for M-RoPE, (h, w) for vision).
void rope_apply(const Variant& variant, const RopePlan& plan, std::span<const std::int64_t> positions,
                std::int64_t n_heads, Buffer x, RopeDirection direction = RopeDirection::Forward);

// The rows of `batch` in x rotated in place, wherever the strides put them ([tokens, heads, head_dim],
// HF's [heads, tokens, head_dim], a slice of a fused QKV tensor). Rejects (naming n_axes, heads,
// token_stride, head_stride or x) a batch whose rows overlap or leave x.
void rope_apply(const Variant& variant, const RopePlan& plan, const RopeBatch& batch, Buffer x,
                RopeDirection direction = RopeDirection::Forward);

// The same over a pool's threads (pe/thread_pool.h): tables, fused adds and text RoPE split by rows
// (tokens) where the variant's contract allows, other RoPE forms by heads; the same bits as the
// single-thread call for any thread count. A call too small to pay for a wake-up (under 32768 elements a
// thread) runs on the caller alone.
void sinusoidal_table(const Variant& variant, const SinusoidalPlan& plan,
                      std::span<const std::int64_t> positions, Buffer out, ThreadPool& pool);
void sinusoidal_add(const Variant& variant, const SinusoidalPlan& plan,
                    std::span<const std::int64_t> positions, Buffer embeddings,
                    std::span<const std::uint8_t> padding, ThreadPool& pool);
void sinusoidal_table_at(const Variant& variant, const SinusoidalPlan& plan,
                         std::span<const double> positions, Buffer out, ThreadPool& pool);
void rope_apply(const Variant& variant, const RopePlan& plan, std::span<const std::int64_t> positions,
                std::int64_t n_heads, Buffer x, ThreadPool& pool,
                RopeDirection direction = RopeDirection::Forward);
void rope_apply(const Variant& variant, const RopePlan& plan, const RopeBatch& batch, Buffer x,
                ThreadPool& pool, RopeDirection direction = RopeDirection::Forward);

// out [n_heads] = each head's ALiBi slope.
void alibi_slopes(const Variant& variant, const AlibiPlan& plan, Buffer out);

// out [n_heads, queries.size(), keys.size()] = the bias of each head, query and key position (the
// plan's form); positions are any in [0, 2^53], in any order (a KV cache's offsets).
void alibi_bias(const Variant& variant, const AlibiPlan& plan, std::span<const std::int64_t> queries,
                std::span<const std::int64_t> keys, Buffer out);

// Typed spans: the same calls with the element type taken from the span (float, double, BFloat16,
// Float16), e.g. `pe::rope_apply(v, plan, positions, 32, std::span<float>(q))`.
template <class T>
concept OutputElement = std::is_same_v<T, float> || std::is_same_v<T, double> ||
    std::is_same_v<T, BFloat16> || std::is_same_v<T, Float16>;

template <OutputElement T>
void sinusoidal_table(const Variant& variant, const SinusoidalPlan& plan,
                      std::span<const std::int64_t> positions, std::span<T> out) {
  sinusoidal_table(variant, plan, positions, buffer(out));
}
template <OutputElement T>
void sinusoidal_table_at(const Variant& variant, const SinusoidalPlan& plan,
                         std::span<const double> positions, std::span<T> out) {
  sinusoidal_table_at(variant, plan, positions, buffer(out));
}
template <OutputElement T>
void sinusoidal_add(const Variant& variant, const SinusoidalPlan& plan,
                    std::span<const std::int64_t> positions, std::span<T> embeddings,
                    std::span<const std::uint8_t> padding = {}) {
  sinusoidal_add(variant, plan, positions, buffer(embeddings), padding);
}
template <OutputElement T>
void rope_apply(const Variant& variant, const RopePlan& plan, std::span<const std::int64_t> positions,
                std::int64_t n_heads, std::span<T> x, RopeDirection direction = RopeDirection::Forward) {
  rope_apply(variant, plan, positions, n_heads, buffer(x), direction);
}

template <OutputElement T>
void alibi_bias(const Variant& variant, const AlibiPlan& plan, std::span<const std::int64_t> queries,
                std::span<const std::int64_t> keys, std::span<T> out) {
  alibi_bias(variant, plan, queries, keys, buffer(out));
}

}  // namespace pe

// Runs an instance through the validated API into owned buffers.
#pragma once

#include <cstdint>
#include <span>

#include "pe/api.h"
#include "pe/harness/instance.h"
#include "pe/harness/typed_buffer.h"

namespace pe::harness {

inline TypedBuffer run_table(const Instance& in, const SinusoidalPlan& plan,
                             std::span<const std::int64_t> positions) {
  TypedBuffer out(in.dtype, positions.size() * plan.dim());
  sinusoidal_table(*in.variant, plan, positions, out.view());
  return out;
}

// x is [tokens, n_heads, head_dim], rotated in place.
inline void rotate_in_place(const Instance& in, const RopePlan& plan, std::span<const std::int64_t> positions,
                            std::int64_t n_heads, TypedBuffer& x,
                            RopeDirection direction = RopeDirection::Forward) {
  rope_apply(*in.variant, plan, positions, n_heads, x.view(), direction);
}

// A buffer of `type` holding `values` (each already representable in `type`).
inline TypedBuffer buffer_of(DType type, std::span<const double> values) {
  TypedBuffer b(type, values.size());
  for (std::size_t i = 0; i < values.size(); ++i) b.set(i, values[i]);
  return b;
}

}  // namespace pe::harness

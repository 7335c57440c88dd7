// The validated entry points. Every argument is checked before anything is written; on error
// InvalidArgument names the parameter and its value, and the caller's buffers are unchanged.
#pragma once

#include <cstdint>
#include <span>

#include "pe/plan.h"
#include "pe/types.h"
#include "pe/variant.h"

namespace pe {

// out [positions.size(), dim] = PE(positions) in the plan's layout.
void sinusoidal_table(const Variant& variant, const SinusoidalPlan& plan,
                      std::span<const std::int64_t> positions, Buffer out);

// embeddings [positions.size(), dim] += PE(positions), rows with a nonzero padding flag untouched.
// An empty padding span means no padding.
void sinusoidal_add(const Variant& variant, const SinusoidalPlan& plan,
                    std::span<const std::int64_t> positions, Buffer embeddings,
                    std::span<const std::uint8_t> padding = {});

// x [positions.size(), n_heads, head_dim] rotated in place, one position per token.
void rope_apply(const Variant& variant, const RopePlan& plan, std::span<const std::int64_t> positions,
                std::int64_t n_heads, Buffer x, RopeDirection direction = RopeDirection::Forward);

}  // namespace pe

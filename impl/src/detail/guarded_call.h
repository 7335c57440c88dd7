// The guarded calls behind pe/kernel_guard.h, used by pe/api.h's entry points after validation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>

#include "pe/batch.h"
#include "pe/plan.h"
#include "pe/types.h"
#include "pe/variant.h"

namespace pe::detail {

// Whether the calling thread's mode guards this variant.
bool guard_applies(const Variant& variant) noexcept;

// The rows of `batch` in x copied into a guarded layout, `call` run on it, checked, and the rotated
// channels copied back; KernelFault (x untouched) when anything outside them changed.
void guarded_rope(const Variant& variant, const RopePlan& plan, const RopeBatch& batch, Buffer x,
                  const std::function<void(const RopeBatch&, Buffer)>& call);

// `data` as `rows` contiguous rows of `dim` elements (a table, embeddings, a bias): canary zones before
// and after, rows whose padding flag is set compared bit for bit. `what` names the buffer in messages.
void guarded_rows(const Variant& variant, std::size_t rows, std::size_t dim,
                  std::span<const std::uint8_t> padding, Buffer data, const char* what,
                  const std::function<void(Buffer)>& call);

}  // namespace pe::detail

// Registering a Highway variant, one macro per family, used once per variant file: the dispatcher
// NAME (the target HWY_DYNAMIC_DISPATCH would call on this CPU) and NAME@TARGET for every compiled
// target the CPU supports, so that every target's code path is registered, listed and tested
// (hwy::SupportedAndGeneratedTargets, as Highway's own tests).
//
// After the kernels, outside HWY_BEFORE_NAMESPACE/HWY_AFTER_NAMESPACE (so compiled for the
// baseline), in an anonymous namespace inside pe::<variant>::HWY_NAMESPACE:
//   PE_REGISTER_HWY_ROPE("rope.exact", kContract, Rotate);
// foreach_target.h compiles that line once per target; the pass whose HWY_TARGET is the dispatched
// one also registers the plain NAME, bound to that target's kernels (detail::register_hwy_target).
// So no HWY_EXPORT table and no HWY_ONCE block: the dispatcher is one of the per-target variants
// under a second name, chosen once when the library loads rather than at its first call.
#pragma once

#include <hwy/targets.h>

#include <memory>
#include <string>
#include <utility>

#include "detail/function_variant.h"
#include "detail/hwy_dispatch.h"
#include "pe/detail/loops.h"

#define PE_REGISTER_HWY_VARIANT(CLASS, NAME, CONTRACT, ...)                                      \
  [[maybe_unused]] const bool pe_registered_target = ::pe::detail::register_hwy_target(          \
      NAME, HWY_TARGET, ::pe::detail::dispatched_target(::hwy::SupportedTargets(), HWY_TARGETS), \
      [](std::string name) -> std::unique_ptr<::pe::Variant> {                                   \
        return std::make_unique<::pe::detail::CLASS>(std::move(name), CONTRACT, __VA_ARGS__);    \
      })
#define PE_REGISTER_HWY_ROPE(NAME, CONTRACT, ROTATE) \
  PE_REGISTER_HWY_VARIANT(FunctionRope, NAME, CONTRACT, &ROTATE)
#define PE_REGISTER_HWY_SINUSOIDAL(NAME, CONTRACT, TABLE, TABLE_AT, ADD) \
  PE_REGISTER_HWY_VARIANT(FunctionSinusoidal, NAME, CONTRACT, &TABLE, &TABLE_AT, &ADD)
#define PE_REGISTER_HWY_ALIBI(NAME, CONTRACT, SLOPES, BIAS) \
  PE_REGISTER_HWY_VARIANT(FunctionAlibi, NAME, CONTRACT, &SLOPES, &BIAS)

// A Highway RoPE kernel's entry point Rotate, written inside the target region after its BACKEND (the
// driver's backend, constructed from the plan): the forms' driver in a function of its own (HWY_NOINLINE), so
// that the text path's stays small enough for GCC to inline the backend into it (pe/detail/rope_driver.h).
#define PE_HWY_ROPE_ROTATE(COMPUTE, CHUNK, BACKEND)                                                    \
  HWY_NOINLINE void RotateForms(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction, \
                                Buffer x) {                                                            \
    ::pe::detail::with_typed(x, [&](auto* data) {                                                      \
      ::pe::detail::drive_rope_forms<COMPUTE, CHUNK>(plan, batch, direction, data, BACKEND{plan});     \
    });                                                                                                \
  }                                                                                                    \
  void Rotate(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction, Buffer x) {       \
    if (!::pe::detail::is_plain_text<CHUNK>(plan)) return RotateForms(plan, batch, direction, x);      \
    ::pe::detail::with_typed(x, [&](auto* data) {                                                      \
      ::pe::detail::drive_rope_text<COMPUTE, CHUNK>(plan, batch, direction, data, BACKEND{plan});      \
    });                                                                                                \
  }

// A Highway sinusoidal kernel's entry points Table, TableAt and Add, written inside the target region
// after its Rows<kAdd>(plan, positions, padding, y) template and RowsAt(plan, real positions, y). The
// tables' pad channel (an odd dim's last) is zeroed after the rows.
#define PE_HWY_SINUSOIDAL_TABLE_ADD                                                                  \
  void Table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions, Buffer out) {      \
    ::pe::detail::with_typed(out, [&](auto* y) {                                                     \
      Rows<false>(plan, positions, {}, y);                                                           \
      ::pe::detail::zero_pad(plan, positions.size(), y);                                             \
    });                                                                                              \
  }                                                                                                  \
  void TableAt(const SinusoidalPlan& plan, std::span<const double> positions, Buffer out) {          \
    ::pe::detail::with_typed(out, [&](auto* y) {                                                     \
      RowsAt(plan, positions, y);                                                                    \
      ::pe::detail::zero_pad(plan, positions.size(), y);                                             \
    });                                                                                              \
  }                                                                                                  \
  void Add(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,                      \
           std::span<const std::uint8_t> padding, Buffer embeddings) {                               \
    ::pe::detail::with_typed(embeddings, [&](auto* y) { Rows<true>(plan, positions, padding, y); }); \
  }

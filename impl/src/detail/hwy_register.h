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

#define PE_REGISTER_HWY_VARIANT(CLASS, NAME, CONTRACT, ...)                                      \
  [[maybe_unused]] const bool pe_registered_target = ::pe::detail::register_hwy_target(          \
      NAME, HWY_TARGET, ::pe::detail::dispatched_target(::hwy::SupportedTargets(), HWY_TARGETS), \
      [](std::string name) -> std::unique_ptr<::pe::Variant> {                                   \
        return std::make_unique<::pe::detail::CLASS>(std::move(name), CONTRACT, __VA_ARGS__);    \
      })
#define PE_REGISTER_HWY_ROPE(NAME, CONTRACT, ROTATE) \
  PE_REGISTER_HWY_VARIANT(FunctionRope, NAME, CONTRACT, &ROTATE)
#define PE_REGISTER_HWY_SINUSOIDAL(NAME, CONTRACT, TABLE, ADD) \
  PE_REGISTER_HWY_VARIANT(FunctionSinusoidal, NAME, CONTRACT, &TABLE, &ADD)
#define PE_REGISTER_HWY_ALIBI(NAME, CONTRACT, SLOPES, BIAS) \
  PE_REGISTER_HWY_VARIANT(FunctionAlibi, NAME, CONTRACT, &SLOPES, &BIAS)

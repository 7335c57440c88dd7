// Registering a Highway variant: the dispatcher NAME (the best target this CPU has, chosen at run
// time) and NAME@TARGET for every compiled target the CPU supports, so that every target's code
// path is registered, listed and tested (hwy::SupportedAndGeneratedTargets, as Highway's own tests).
//
// After the kernels, outside HWY_BEFORE_NAMESPACE/HWY_AFTER_NAMESPACE (so compiled for the
// baseline), in an anonymous namespace inside pe::<variant>::HWY_NAMESPACE:
//   PE_REGISTER_HWY_ROPE_TARGET("rope.exact", kContract, Rotate);
// and once, under #if HWY_ONCE, in an anonymous namespace inside pe::<variant>:
//   PE_REGISTER_HWY_ROPE_DISPATCH("rope.exact", kContract, Rotate);
#pragma once

#include <memory>
#include <string>

#include "detail/function_variant.h"

#define PE_REGISTER_HWY_ROPE_TARGET(NAME, CONTRACT, ROTATE)                                             \
  [[maybe_unused]] const bool pe_registered_target = ::pe::detail::register_hwy_target(                 \
      HWY_TARGET, [](std::string target) -> std::unique_ptr<::pe::Variant> {                            \
        return std::make_unique<::pe::detail::FunctionRope>(std::string(NAME) + "@" + target, CONTRACT, \
                                                            &ROTATE);                                   \
      })

#define PE_REGISTER_HWY_ROPE_DISPATCH(NAME, CONTRACT, ROTATE)                         \
  HWY_EXPORT(ROTATE);                                                                 \
  void pe_dispatch_rotate(const ::pe::RopePlan& plan, const ::pe::RopeBatch& batch,   \
                          ::pe::RopeDirection direction, ::pe::Buffer x) {            \
    HWY_DYNAMIC_DISPATCH(ROTATE)(plan, batch, direction, x);                          \
  }                                                                                   \
  [[maybe_unused]] const ::pe::Registrar pe_registrar_dispatch {                      \
    std::make_unique<::pe::detail::FunctionRope>(NAME, CONTRACT, &pe_dispatch_rotate) \
  }

#define PE_REGISTER_HWY_SINUSOIDAL_TARGET(NAME, CONTRACT, TABLE, ADD)                               \
  [[maybe_unused]] const bool pe_registered_target = ::pe::detail::register_hwy_target(             \
      HWY_TARGET, [](std::string target) -> std::unique_ptr<::pe::Variant> {                        \
        return std::make_unique<::pe::detail::FunctionSinusoidal>(std::string(NAME) + "@" + target, \
                                                                  CONTRACT, &TABLE, &ADD);          \
      })

#define PE_REGISTER_HWY_SINUSOIDAL_DISPATCH(NAME, CONTRACT, TABLE, ADD)                                      \
  HWY_EXPORT(TABLE);                                                                                         \
  HWY_EXPORT(ADD);                                                                                           \
  void pe_dispatch_table(const ::pe::SinusoidalPlan& plan, std::span<const std::int64_t> positions,          \
                         ::pe::Buffer out) {                                                                 \
    HWY_DYNAMIC_DISPATCH(TABLE)(plan, positions, out);                                                       \
  }                                                                                                          \
  void pe_dispatch_add(const ::pe::SinusoidalPlan& plan, std::span<const std::int64_t> positions,            \
                       std::span<const std::uint8_t> padding, ::pe::Buffer embeddings) {                     \
    HWY_DYNAMIC_DISPATCH(ADD)(plan, positions, padding, embeddings);                                         \
  }                                                                                                          \
  [[maybe_unused]] const ::pe::Registrar pe_registrar_dispatch {                                             \
    std::make_unique<::pe::detail::FunctionSinusoidal>(NAME, CONTRACT, &pe_dispatch_table, &pe_dispatch_add) \
  }

#define PE_REGISTER_HWY_ALIBI_TARGET(NAME, CONTRACT, SLOPES, BIAS)                                       \
  [[maybe_unused]] const bool pe_registered_target = ::pe::detail::register_hwy_target(                  \
      HWY_TARGET, [](std::string target) -> std::unique_ptr<::pe::Variant> {                             \
        return std::make_unique<::pe::detail::FunctionAlibi>(std::string(NAME) + "@" + target, CONTRACT, \
                                                             &SLOPES, &BIAS);                            \
      })

#define PE_REGISTER_HWY_ALIBI_DISPATCH(NAME, CONTRACT, SLOPES, BIAS)                          \
  HWY_EXPORT(BIAS);                                                                           \
  void pe_dispatch_bias(const ::pe::AlibiPlan& plan, std::span<const std::int64_t> queries,   \
                        std::span<const std::int64_t> keys, ::pe::Buffer out) {               \
    HWY_DYNAMIC_DISPATCH(BIAS)(plan, queries, keys, out);                                     \
  }                                                                                           \
  [[maybe_unused]] const ::pe::Registrar pe_registrar_dispatch {                              \
    std::make_unique<::pe::detail::FunctionAlibi>(NAME, CONTRACT, &SLOPES, &pe_dispatch_bias) \
  }

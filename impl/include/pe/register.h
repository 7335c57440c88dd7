// Declaring a variant: one macro per family, used once at namespace scope in the variant's file.
//
//   const pe::Contract kContract{.layouts = {...}, .outputs = {...}, ..., .c0 = 1, .c1 = 2.03};
//   PE_REGISTER_ROPE("rope.mine", kContract, MyRope);   // MyRope derives from pe::RopeVariant
//
// The macro fixes the family at compile time (the class must derive from that family's base, so
// the API's downcast cannot be wrong) and the registry checks the name ("<family>.<backend>",
// lower-case backend, optional "@TARGET") when the library loads.
#pragma once

#include <memory>
#include <type_traits>

#include "pe/variant.h"

#define PE_DETAIL_CONCAT_(a, b) a##b
#define PE_DETAIL_CONCAT(a, b) PE_DETAIL_CONCAT_(a, b)

namespace pe::detail {
// One per translation unit: its address says which file (libpe, an executable, a plugin) registered a
// variant (pe::variant_origin).
[[maybe_unused]] static const char module_marker = 0;
}  // namespace pe::detail

#define PE_DETAIL_REGISTER(BASE, WHAT, NAME, CONTRACT, ...)                                       \
  static_assert(std::is_base_of_v<BASE, __VA_ARGS__>, #__VA_ARGS__ " is not a " WHAT " variant"); \
  [[maybe_unused]] const ::pe::Registrar PE_DETAIL_CONCAT(pe_registrar_, __LINE__) {              \
    std::make_unique<__VA_ARGS__>(NAME, CONTRACT), &::pe::detail::module_marker                   \
  }

#define PE_REGISTER_SINUSOIDAL(NAME, CONTRACT, ...) \
  PE_DETAIL_REGISTER(::pe::SinusoidalVariant, "sinusoidal", NAME, CONTRACT, __VA_ARGS__)
#define PE_REGISTER_ROPE(NAME, CONTRACT, ...) \
  PE_DETAIL_REGISTER(::pe::RopeVariant, "rope", NAME, CONTRACT, __VA_ARGS__)
#define PE_REGISTER_ALIBI(NAME, CONTRACT, ...) \
  PE_DETAIL_REGISTER(::pe::AlibiVariant, "alibi", NAME, CONTRACT, __VA_ARGS__)

// The variants a C plugin's kernels become: adapters that hand the plan, batch and buffer to the
// plugin's function as plain C structs (pe/plugin.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "pe/plugin.h"
#include "pe/variant.h"

namespace pe::harness::detail {

std::unique_ptr<Variant> plugin_rope(std::string name, Contract contract, pe_rope_apply_fn apply,
                                     void* user_data);
std::unique_ptr<Variant> plugin_sinusoidal(std::string name, Contract contract, pe_sinusoidal_table_fn table,
                                           pe_sinusoidal_add_fn add, void* user_data);

// The ABI's constants and pe's enumerations; nullopt for a value the ABI does not define.
std::optional<Family> family_of(std::uint32_t family) noexcept;
std::optional<Layout> layout_of(std::uint32_t layout) noexcept;
std::optional<DType> dtype_of(std::uint32_t dtype) noexcept;
std::uint32_t to_c(Layout layout) noexcept;
std::uint32_t to_c(DType dtype) noexcept;

}  // namespace pe::harness::detail

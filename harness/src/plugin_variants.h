// The variants a C plugin's kernels become: adapters that hand the plan, batch and buffer to the
// plugin's function as plain C structs (pe/plugin.h).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "pe/plugin.h"
#include "pe/variant.h"

namespace pe::harness::detail {

// What the C ABI offers a family, one row each: its PE_FAMILY_ constant, the first of the kernel's
// functions the family needs that is null (nullptr when none), and the adapter variant. A family without a
// row has no C ABI yet (ALiBi).
struct PluginFamily {
  std::uint32_t c_family;
  const char* c_name;  // "PE_FAMILY_ROPE"
  Family family;
  const char* (*missing_function)(const pe_kernel& k) noexcept;
  // `abi_version`: the plugin's (pe/plugin.h); a version-2 RoPE kernel gets the raw config (pe_rope_config).
  std::unique_ptr<Variant> (*variant)(std::string name, Contract contract, const pe_kernel& k,
                                      std::uint32_t abi_version);
};
std::span<const PluginFamily> plugin_families() noexcept;
// The row of a PE_FAMILY_ constant; nullptr for a value the ABI does not define.
const PluginFamily* plugin_family(std::uint32_t c_family) noexcept;

// The ABI's constants and pe's enumerations; nullopt for a value the ABI does not define.
std::optional<Layout> layout_of(std::uint32_t layout) noexcept;
std::optional<DType> dtype_of(std::uint32_t dtype) noexcept;
std::uint32_t to_c(Layout layout) noexcept;
std::uint32_t to_c(DType dtype) noexcept;

}  // namespace pe::harness::detail

#include "pe/types.h"

#include <algorithm>
#include <cstdlib>

#include "pe/enum_names.h"

namespace pe {

namespace {
constexpr Layout kSinusoidalLayouts[] = {Layout::Interleaved, Layout::Concatenated};
constexpr Layout kRopeLayouts[] = {Layout::HalfSplit, Layout::Interleaved, Layout::Deinterleave};
constexpr Layout kAlibiLayouts[] = {Layout::Hqk};
constexpr FamilyInfo kFamilies[] = {
    {Family::Sinusoidal, enum_name(Family::Sinusoidal), kSinusoidalLayouts},
    {Family::Rope, enum_name(Family::Rope), kRopeLayouts},
    {Family::Alibi, enum_name(Family::Alibi), kAlibiLayouts},
};
}  // namespace

std::span<const FamilyInfo> families() noexcept { return kFamilies; }

const FamilyInfo& family_info(Family f) noexcept {
  for (const FamilyInfo& i : kFamilies) {
    if (i.family == f) return i;
  }
  std::abort();  // every enumerator has a row: a missing one is a build mistake, not an input
}

// Each enumeration's words: pe/enum_names.h's rows.
#define PE_NAMES(E, parse_name)                                     \
  std::string_view to_string(E v) noexcept { return enum_name(v); } \
  std::optional<E> parse_name(std::string_view s) noexcept { return parse_enum<E>(s); }
PE_NAMES(Family, parse_family)
PE_NAMES(Layout, parse_layout)
PE_NAMES(DType, parse_dtype)
PE_NAMES(RopeScalingType, parse_rope_scaling_type)
PE_NAMES(LongRopeSwitch, parse_longrope_switch)
PE_NAMES(DynamicSemantics, parse_dynamic_semantics)
PE_NAMES(YarnAttention, parse_yarn_attention)
PE_NAMES(MropeLayout, parse_mrope_layout)
PE_NAMES(VisionRope, parse_vision_rope)
PE_NAMES(AlibiSlopes, parse_alibi_slopes)
PE_NAMES(AlibiForm, parse_alibi_form)
PE_NAMES(AttnTemperatureType, parse_attn_temperature_type)
#undef PE_NAMES

bool layout_belongs_to(Layout l, Family f) noexcept {
  const auto layouts = family_info(f).layouts;
  return std::find(layouts.begin(), layouts.end(), l) != layouts.end();
}

}  // namespace pe

#include "pe/types.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

namespace pe {

namespace {
constexpr Layout kSinusoidalLayouts[] = {Layout::Interleaved, Layout::Concatenated};
constexpr Layout kRopeLayouts[] = {Layout::HalfSplit, Layout::Interleaved, Layout::Deinterleave};
constexpr Layout kAlibiLayouts[] = {Layout::Hqk};
constexpr FamilyInfo kFamilies[] = {
    {Family::Sinusoidal, "sinusoidal", kSinusoidalLayouts},
    {Family::Rope, "rope", kRopeLayouts},
    {Family::Alibi, "alibi", kAlibiLayouts},
};
}  // namespace

std::span<const FamilyInfo> families() noexcept { return kFamilies; }

const FamilyInfo& family_info(Family f) noexcept {
  for (const FamilyInfo& i : kFamilies) {
    if (i.family == f) return i;
  }
  std::abort();  // every enumerator has a row: a missing one is a build mistake, not an input
}

std::string_view to_string(Family f) noexcept { return family_info(f).name; }

std::string_view to_string(Layout l) noexcept {
  switch (l) {
    case Layout::Interleaved:
      return "interleaved";
    case Layout::Concatenated:
      return "concatenated";
    case Layout::HalfSplit:
      return "halfsplit";
    case Layout::Deinterleave:
      return "deinterleave";
    case Layout::Hqk:
      return "hqk";
  }
  return "?";
}

std::string_view to_string(DType t) noexcept {
  switch (t) {
    case DType::F32:
      return "f32";
    case DType::F64:
      return "f64";
    case DType::BF16:
      return "bf16";
    case DType::F16:
      return "f16";
  }
  return "?";
}

std::optional<Family> parse_family(std::string_view s) noexcept {
  for (const FamilyInfo& i : kFamilies) {
    if (i.name == s) return i.family;
  }
  return std::nullopt;
}

std::optional<Layout> parse_layout(std::string_view s) noexcept {
  if (s == "interleaved") return Layout::Interleaved;
  if (s == "concatenated") return Layout::Concatenated;
  if (s == "halfsplit") return Layout::HalfSplit;
  if (s == "deinterleave") return Layout::Deinterleave;
  if (s == "hqk") return Layout::Hqk;
  return std::nullopt;
}

std::optional<DType> parse_dtype(std::string_view s) noexcept {
  if (s == "f32") return DType::F32;
  if (s == "f64") return DType::F64;
  if (s == "bf16") return DType::BF16;
  if (s == "f16") return DType::F16;
  return std::nullopt;
}

bool layout_belongs_to(Layout l, Family f) noexcept {
  const auto layouts = family_info(f).layouts;
  return std::find(layouts.begin(), layouts.end(), l) != layouts.end();
}

std::size_t size_of(DType t) noexcept {
  switch (t) {
    case DType::F32:
      return 4;
    case DType::F64:
      return 8;
    case DType::BF16:
    case DType::F16:
      return 2;
  }
  return 0;
}

}  // namespace pe

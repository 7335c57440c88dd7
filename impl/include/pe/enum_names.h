// The one table of names of pe-suite's enumerations: the word each value has in files, on command lines and
// in reports. to_string, the parse_* functions and the JSON form (pe/harness/enum_json.h) all read it.
// An enumeration elsewhere (a report's verdict) gets its names by specialising EnumNames beside it.
#pragma once

#include <optional>
#include <string_view>

#include "pe/alibi.h"
#include "pe/attn_temperature.h"
#include "pe/rope_form.h"
#include "pe/rope_scaling.h"
#include "pe/types.h"

namespace pe {

template <class E>
struct EnumRow {
  E value;
  std::string_view name;
};
// Specialised with `static constexpr EnumRow<E> rows[]`: one row per enumerator.
template <class E>
struct EnumNames;
template <class E>
concept NamedEnum = requires {
  EnumNames<E>::rows;
};

// "?" for a value without a row (a cast of a stray integer).
template <NamedEnum E>
constexpr std::string_view enum_name(E value) noexcept {
  for (const EnumRow<E>& r : EnumNames<E>::rows)
    if (r.value == value) return r.name;
  return "?";
}
template <NamedEnum E>
constexpr std::optional<E> parse_enum(std::string_view name) noexcept {
  for (const EnumRow<E>& r : EnumNames<E>::rows)
    if (r.name == name) return r.value;
  return std::nullopt;
}

template <>
struct EnumNames<Family> {
  static constexpr EnumRow<Family> rows[] = {
      {Family::Sinusoidal, "sinusoidal"}, {Family::Rope, "rope"}, {Family::Alibi, "alibi"}};
};
template <>
struct EnumNames<Layout> {
  static constexpr EnumRow<Layout> rows[] = {{Layout::Interleaved, "interleaved"},
                                             {Layout::Concatenated, "concatenated"},
                                             {Layout::HalfSplit, "halfsplit"},
                                             {Layout::Deinterleave, "deinterleave"},
                                             {Layout::Hqk, "hqk"}};
};
template <>
struct EnumNames<DType> {
  static constexpr EnumRow<DType> rows[] = {
      {DType::F32, "f32"}, {DType::F64, "f64"}, {DType::BF16, "bf16"}, {DType::F16, "f16"}};
};
// HF's rope_type where HF has the method ("ntk" is pe-suite's own).
template <>
struct EnumNames<RopeScalingType> {
  using T = RopeScalingType;
  static constexpr EnumRow<T> rows[] = {
      {T::None, "none"}, {T::Linear, "linear"}, {T::Ntk, "ntk"},           {T::Dynamic, "dynamic"},
      {T::Yarn, "yarn"}, {T::Llama3, "llama3"}, {T::LongRope, "longrope"}, {T::Proportional, "proportional"}};
};
template <>
struct EnumNames<YarnAttention> {
  static constexpr EnumRow<YarnAttention> rows[] = {{YarnAttention::Replace, "replace"},
                                                    {YarnAttention::Multiply, "multiply"}};
};
template <>
struct EnumNames<DynamicSemantics> {
  static constexpr EnumRow<DynamicSemantics> rows[] = {{DynamicSemantics::Live, "live"},
                                                       {DynamicSemantics::Static, "static"}};
};
template <>
struct EnumNames<LongRopeSwitch> {
  static constexpr EnumRow<LongRopeSwitch> rows[] = {{LongRopeSwitch::PerSequence, "per-sequence"},
                                                     {LongRopeSwitch::PerToken, "per-token"}};
};
template <>
struct EnumNames<MropeLayout> {
  static constexpr EnumRow<MropeLayout> rows[] = {{MropeLayout::Sectioned, "sectioned"},
                                                  {MropeLayout::Interleaved, "interleaved"},
                                                  {MropeLayout::Ernie, "ernie"}};
};
template <>
struct EnumNames<VisionRope> {
  static constexpr EnumRow<VisionRope> rows[] = {
      {VisionRope::None, "none"}, {VisionRope::Qwen2vl, "qwen2vl"}, {VisionRope::Pixtral, "pixtral"}};
};
template <>
struct EnumNames<AlibiSlopes> {
  static constexpr EnumRow<AlibiSlopes> rows[] = {{AlibiSlopes::Interpolated, "interpolated"},
                                                  {AlibiSlopes::Direct, "direct"}};
};
template <>
struct EnumNames<AlibiForm> {
  static constexpr EnumRow<AlibiForm> rows[] = {
      {AlibiForm::Causal, "causal"}, {AlibiForm::Symmetric, "symmetric"}, {AlibiForm::Bloom, "bloom"}};
};
template <>
struct EnumNames<AttnTemperatureType> {
  using T = AttnTemperatureType;
  static constexpr EnumRow<T> rows[] = {{T::None, "none"}, {T::Llama4, "llama4"}, {T::Mistral, "mistral"}};
};

}  // namespace pe

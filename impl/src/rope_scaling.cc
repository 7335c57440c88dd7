#include "pe/rope_scaling.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>

#include "detail/check.h"
#include "pe/enum_names.h"

namespace pe {
namespace {

using T = RopeScalingType;

constexpr ScalingField kFields[] = {
    {"factor", "factor"},
    {"original_max_position", "original_max_position_embeddings"},
    {"seq_len", ""},
    {"beta_fast", "beta_fast"},
    {"beta_slow", "beta_slow"},
    {"truncate", "truncate"},
    {"mscale", "mscale"},
    {"mscale_all_dim", "mscale_all_dim"},
    {"attention_factor", "attention_factor"},
    {"low_freq_factor", "low_freq_factor"},
    {"high_freq_factor", "high_freq_factor"},
    {"short_factor", "short_factor"},
    {"long_factor", "long_factor"},
    {"position_scale", ""},
    {"longrope_switch", ""},
    {"dynamic_semantics", ""},
    {"yarn_attention", ""},
    {"alpha", "alpha"},
    {"partial_rotary_factor", "partial_rotary_factor"},
};

// attention_factor: HF reads it for yarn and longrope only; pe-suite takes it with any method, so that a
// hypothesis such as "linear frequencies with YaRN's gain" can be stated (the config reader stays HF's).
// position_scale: pe-suite's own, with any method (no HF key).
constexpr std::string_view kNone[] = {"attention_factor", "position_scale"};
constexpr std::string_view kFactor[] = {"factor"};
constexpr std::string_view kFactorReads[] = {"factor", "attention_factor", "position_scale"};
constexpr std::string_view kFactorAndL[] = {"factor", "original_max_position"};
// dynamic_semantics and alpha: the engines' readings of HF's "dynamic" (vLLM's static table at n = factor·L,
// Hunyuan's alpha, which vLLM's DynamicNTKAlphaRotaryEmbedding reads from the same rope_type).
constexpr std::string_view kDynamic[] = {
    "factor",         "original_max_position", "seq_len", "attention_factor",
    "position_scale", "dynamic_semantics",     "alpha"};
constexpr std::string_view kProportional[] = {"factor", "partial_rotary_factor", "attention_factor",
                                              "position_scale"};
constexpr std::string_view kYarn[] = {
    "factor",         "original_max_position", "beta_fast", "beta_slow",      "mscale",
    "mscale_all_dim", "attention_factor",      "truncate",  "position_scale", "yarn_attention"};
constexpr std::string_view kLlama3[] = {"factor",           "original_max_position", "low_freq_factor",
                                        "high_freq_factor", "attention_factor",      "position_scale"};
constexpr std::string_view kLongRope[] = {"factor",           "original_max_position", "seq_len",
                                          "attention_factor", "short_factor",          "long_factor",
                                          "position_scale",   "longrope_switch"};
constexpr std::string_view kLongRopeRequired[] = {"factor", "original_max_position", "short_factor",
                                                  "long_factor"};

const ScalingMethod kMethods[] = {
    {T::None, enum_name(T::None), kNone, {}},
    {T::Linear, enum_name(T::Linear), kFactorReads, kFactor},
    {T::Ntk, enum_name(T::Ntk), kFactorReads, kFactor},
    {T::Dynamic, enum_name(T::Dynamic), kDynamic, kFactorAndL},
    {T::Yarn, enum_name(T::Yarn), kYarn, kFactorAndL},
    {T::Llama3, enum_name(T::Llama3), kLlama3, kFactorAndL},
    {T::LongRope, enum_name(T::LongRope), kLongRope, kLongRopeRequired},
    {T::Proportional, enum_name(T::Proportional), kProportional, {}},  // HF: factor 1, F 1 when absent
};

bool contains(std::span<const std::string_view> list, std::string_view field) {
  return std::find(list.begin(), list.end(), field) != list.end();
}

}  // namespace

std::span<const ScalingField> scaling_fields() noexcept { return kFields; }
std::span<const ScalingMethod> scaling_methods() noexcept { return kMethods; }

const ScalingMethod& scaling_method(RopeScalingType t) noexcept {
  for (const ScalingMethod& m : kMethods) {
    if (m.type == t) return m;
  }
  std::abort();  // every enumerator has a row
}

bool reads_field(RopeScalingType t, std::string_view field) noexcept {
  return contains(scaling_method(t).reads, field);
}
bool requires_field(RopeScalingType t, std::string_view field) noexcept {
  return contains(scaling_method(t).required, field);
}

RopeScaling scaling_at(const RopeScaling& s, std::int64_t position) {
  if (!switches_per_token(s)) return s;
  RopeScaling at = s;
  at.longrope_switch = LongRopeSwitch::PerSequence;
  at.seq_len = position < s.original_max_position ? 0 : position + 1;  // 0: HF's None, the short list
  return at;
}

std::int64_t proportional_pairs(const RopeScaling& s, std::int64_t rotary_dim) noexcept {
  // HF: int(rope_proportion * head_dim // 2): the product rounded to double, then floored by // 2.
  return static_cast<std::int64_t>(std::floor(s.partial_rotary_factor * static_cast<double>(rotary_dim) / 2));
}

std::int64_t partial_rotary_dim(std::int64_t head_dim, double partial_rotary_factor) {
  if (!std::isfinite(partial_rotary_factor) || !(partial_rotary_factor > 0.0) ||
      partial_rotary_factor > 1.0) {
    detail::fail("partial_rotary_factor",
                 "partial_rotary_factor must be in (0, 1], got " + detail::show(partial_rotary_factor));
  }
  // HF: int(head_dim * partial_rotary_factor), the product in double, truncated.
  const auto dim = static_cast<std::int64_t>(static_cast<double>(head_dim) * partial_rotary_factor);
  if (dim < 2 || dim % 2 != 0) {
    detail::fail("partial_rotary_factor", "partial_rotary_factor " + detail::show(partial_rotary_factor) +
                                              " gives rotary_dim = int(" + std::to_string(head_dim) + " * " +
                                              detail::show(partial_rotary_factor) +
                                              ") = " + std::to_string(dim) + ", which must be even and >= 2");
  }
  return dim;
}

}  // namespace pe

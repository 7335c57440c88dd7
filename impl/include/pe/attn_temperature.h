// Attention temperature: a per-position gain on q, applied after RoPE or on a NoPE layer.
//
//   llama4   t(p) = 1 + attn_scale·ln(⌊(p + 1)/floor_scale⌋ + 1)
//            HF Llama4TextAttention (attn_temperature_tuning, NoPE layers only): floor_scale 8192,
//            attn_scale 0.1; the temperature-tuning paper is arXiv:2501.19399.
//   mistral  t(p) = 1 + beta·ln(1 + ⌊p/original_max_position⌋)
//            HF Ministral3Attention (_get_llama_4_attn_scale, every layer, after RoPE): beta is
//            rope_parameters.llama_4_scaling_beta, original_max_position its
//            original_max_position_embeddings (0.1 and 16384 or 8192 in the published configs).
//
// Both are one step function t = 1 + s·ln(1 + ⌊(p + offset)/period⌋): they differ by the position
// convention alone (llama4 reads p + 1), so data made with one and checked as the other is off by one
// position, and only at the steps. The floor is taken in integers here; HF forms it in float32, which
// agrees while p + 1 < 2^24 and the period is a power of two (both defaults are).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "pe/types.h"

namespace pe {

enum class AttnTemperatureType : std::uint8_t { None, Llama4, Mistral };

std::string_view to_string(AttnTemperatureType t) noexcept;
std::optional<AttnTemperatureType> parse_attn_temperature_type(std::string_view s) noexcept;

// Fields of the other type are ignored. Defaults are HF's (llama4) and the published configs' (beta).
struct AttnTemperature {
  AttnTemperatureType type = AttnTemperatureType::None;
  double attn_scale = 0.1;                 // llama4: finite, >= 0
  std::int64_t floor_scale = 8192;         // llama4: > 0
  double beta = 0.1;                       // mistral: finite, >= 0
  std::int64_t original_max_position = 0;  // mistral: > 0, no default (it is the model's L)
};

// The common form t = 1 + scale·ln(1 + ⌊(p + offset)/period⌋).
struct TemperatureSteps {
  double scale = 0;
  std::int64_t period = 1, offset = 0;
};

// Throws InvalidArgument naming attn_scale, floor_scale, beta or original_max_position and its value.
TemperatureSteps validate(const AttnTemperature& t);

// ⌊(p + offset)/period⌋ for 0 <= p <= kMaxPosition: t(p) depends on p only through it.
std::int64_t temperature_step(const TemperatureSteps& s, std::int64_t position) noexcept;
// The smallest position of step k >= 1 (t changes between it and the position before); 0 for k = 0.
std::int64_t temperature_boundary(const TemperatureSteps& s, std::int64_t k) noexcept;

// t(p) in double, 1 exactly on step 0: ln, the product and the sum in long double, rounded once,
// relative error <= kTemperatureError (x86-64's 64-bit long double; see the .cc).
double attn_temperature(const TemperatureSteps& s, std::int64_t position) noexcept;
inline constexpr double kTemperatureError = 1.01 * 0x1p-53;

// The error model of q·t(p) in an implementation, relative to t(p)·|x| (x the rotated or NoPE value):
// the gain computed in float32 (6·2^-24: ln within 1 ulp, attn_scale's rounding, the product and the
// sum), rounded once into the data type (HF Ministral3 casts it to q's dtype) and the product rounded
// once into it: 6·2^-24 + 2·u_out. `gain_floor` is the absolute floor of an underflowing product.
double gain_relative_error(DType out) noexcept;
double gain_floor(DType out) noexcept;

}  // namespace pe

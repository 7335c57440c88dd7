// RoPE written as FP8 codes (issue 51): FlashInfer's rope_quantize_fp8 and mla_rope_quantize_fp8, vLLM's fp8
// KV cache. The formats are the OCP 8-bit floats: e4m3fn (bias 7, 3 mantissa bits, no infinity, NaN at
// S.1111.111, largest 448) and e5m2 (bias 15, 2 mantissa bits, IEEE-like: infinities and NaNs at exponent 31,
// largest 57344). Out-of-range values saturate to the largest finite one, as the fused kernels clamp before
// they cast.
//
// The reference is the exact RoPE divided by the scale (one per tensor, or per head), rounded to nearest,
// ties to even, in the format. The contract: every code is the rounding of some value the quantizer may have
// met: the exact rotation within eps, divided by the scale exactly, or as a float32 quantizer does (the value
// held in float32, divided by the float32 scale or multiplied by its float32 reciprocal, rounded once). eps
// is the rotation's own error as an engine computes it: HF's rotate_half in float32 by default (the
// rope.torch_f32 contract's element budget: the angle, frequency and scaling errors at the pair's |phi|), or
// in a 16-bit type (rotation BF16 or F16: rope.torch_bf16/_f16, a bf16 model's RoPE before an fp8 cache).
// Values are compared, so -0 and +0 agree. Pass-through channels are quantized only (eps 0): an exact tie
// rounds to even.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pe/check/check.h"

namespace pe::check {

enum class Fp8Format { E4m3fn, E5m2 };
std::string_view to_string(Fp8Format f) noexcept;  // "e4m3fn", "e5m2"
// "e4m3fn" (also "e4m3", torch's float8_e4m3fn), "e5m2".
std::optional<Fp8Format> parse_fp8_format(std::string_view s) noexcept;

// A code's value: NaN for a NaN code, ±inf for e5m2's infinities.
double fp8_value(Fp8Format f, std::uint8_t code) noexcept;
// v rounded to nearest, ties to even, saturating at the largest finite value; NaN to 0x7F.
std::uint8_t fp8_code(Fp8Format f, double v) noexcept;

struct Fp8RopeRequest {
  // x, positions, heads_first, spec and hf as check_rope reads them; rope.y is not read.
  RopeRequest rope;
  std::span<const std::uint8_t> codes;  // y's codes, x's shape and layout
  std::vector<std::size_t> codes_shape;
  std::string codes_name;
  std::vector<double> scale;  // one, or one per head: y = RN(rope(x) / scale)
  Fp8Format format = Fp8Format::E4m3fn;
  DType rotation = DType::F32;  // the type the engine rotates in before quantizing (F32, BF16 or F16)
};

// The verdict (every code within the contract), the first wrong element among the worst, the codes accepted
// as a neighbour near a boundary (doc.parameters["fp8"]["neighbours"]) and, for a failure, the fused kernels'
// mistakes that reproduce every code: the rotation rounded to bfloat16 or float16 before the quantization,
// the scale applied twice, multiplied instead of divided, or not at all, the other format. BadRequest naming
// the codes, the scale or a RoPE parameter fp8 kernels do not take (a temperature, xPos, NoPE, real
// positions).
Report check_rope_fp8(const Fp8RopeRequest& r, const Names& names);

}  // namespace pe::check

// xPos (Sun et al. 2022, "A Length-Extrapolatable Transformer"; flash-attention's RotaryEmbedding(scale_base)
// and rotary-embedding-torch's use_xpos): after the rotation, pair j of a rotary part of d channels is
// scaled by a gain per position,
//
//   g_j(p) = ζ_j^w,   ζ_j = (2j + 0.4·d) / (1.4·d),   w = (p − centre) / scale_base,
//
// on queries, and divided by it (w negated) on keys, so that ⟨q_m, k_n⟩ decays with m − n alone. Both
// engines take the centre as seqlen // 2 of the table they built (flash-attn's cache length, torch's
// sequence length): a cache built to another length moves it. ζ_j < 1, so the low pairs (j small, ζ_0 =
// 2/7) carry the strongest gain; beyond |w| ≈ 70 the gain leaves float32's range.
#pragma once

#include <cstdint>

#include "pe/types.h"

namespace pe {

struct XPos {
  double scale_base = 0;    // 0: no xPos; else finite and > 0 (512: rotary-embedding-torch's default)
  std::int64_t centre = 0;  // 0 <= centre <= kMaxPosition
  bool keys = false;        // the tensor is k (divided by the gain), else q (multiplied)

  bool enabled() const noexcept { return scale_base != 0; }
};

// Throws InvalidArgument naming xpos_scale_base or xpos_centre and its value.
void validate(const XPos& x);

// ζ_j for pair j of `rotary_dim` channels, and the signed exponent w (negated for keys), in double.
double xpos_ratio(std::int64_t pair, std::int64_t rotary_dim) noexcept;
double xpos_exponent(const XPos& x, std::int64_t position) noexcept;

// The error model of an implementation's gain, relative to g·(|x_a| + |x_b|) (docs/contracts.md §2m):
// flash-attention computes ζ_j, w and ζ_j^w in float32 (ζ_j within 4 roundings, w within 2, powf within 1
// ulp: |ln ζ_0| < 1.26, so the exponent's error is below 7·|w|·2^-24), multiplies the cos and sin by it in
// float32 and rounds the products into the data type: (7·|w| + 4)·2^-24 + 2·u_out. A product below the type's
// normal range is rounded to its subnormal grid instead, an absolute error of half its step per table entry,
// which reaches the output as xpos_table_floor·(|x_a| + |x_b|) whatever g is. The floor is gain_floor's.
inline constexpr double kXPosPerExponent = 7 * 0x1p-24;
double xpos_relative_error(DType out) noexcept;  // the part without |w|: 4·2^-24 + 2·u_out
double xpos_table_floor(DType out) noexcept;     // (denorm_min(f32) + denorm_min(out)) / 2

}  // namespace pe

// A variant's accuracy contract: what it supports and the error it promises, as data.
//
// End-to-end budget for every output element y with exact value y*:
//
//   |y - y*| <= (c0·u_out + ck·u_compute + ct·u_table + (c1 + c1_pair·i)·u_angle·|φ|) · scale  +  floor
//
//   φ          the exact angle p·ω_i (RoPE: p·θ_j)
//   u_out      unit roundoff of the output type; the c0 term is the one final rounding into it and
//              is absent when the output type is the compute type (nothing is rounded then)
//   u_compute  unit roundoff of the type sin/cos (and RoPE's rotation) are evaluated in; for the
//              16-bit rotations (rope.torch_bf16, ...) the rotation's type, sin/cos in float32 then
//              being folded into ck and ca in units of it
//   u_table    unit roundoff of the type a cos/sin table is stored in (RoPE caches in bf16/f16)
//   u_angle    unit roundoff of the type the angle is formed in
//   i          the pair index: frequencies built by repeated multiplication (ggml) lose accuracy
//              with every step, so their bound grows with i
//   scale      1 for sinusoidal tables; |x_a| + |x_b| of the pair's input for RoPE
//   floor      2·denorm_min(compute) + denorm_min(out): underflow in products and the final rounding
//
// RoPE under a scaled plan (pe/rope_scaling.h) multiplies cos and sin by the attention factor A, so
// scale = A·(|x_a| + |x_b|), and adds
//   + ca·u_compute·A·(|x_a| + |x_b|)            A rounded to double, to the compute type, and the
//                                                 product: ca = 3 (when A != 1; 3·2^-24/u_compute
//                                                 where that product is float32's, a 16-bit rotation)
//   + c1_gain·u_angle·|φ|                        formulations that rescale θ_j in the angle type
//                                                 themselves (when the plan's gain g_j != 1)
//   + (frequency_error - 1.02·2^-53)·|φ|·scale   a plan whose θ'_j is less accurate than the
//                                                 1.02·2^-53 every contract assumes (pe/plan.h)
//
// ALiBi reads the same formula with |φ| = 1, scale = the exact bias |m_h·s| (s the integer the slope
// multiplies: j - i, -|i - j| or j; |m_h| where s = 0, the diagonal, whose bias is exactly 0) and i = the
// power k of the head's slope m0^k: every term is
// relative to the bias, and slopes raised to the k-th power from a rounded m0 lose k roundings
// (c1_pair). A slope is the bias at s = 1. `max_base` is 2^max_bias, ALiBi's slopes being
// (2^max_bias)^(-k/den), the sinusoids' base^(-2i/d). A bias beyond the output type's range must be
// the infinity it rounds to.
//
// The fused add (embedding + PE) adds one rounding in the compute type and one into the output type
// of the sum: + (u_out + u_compute)·(|embedding| + 1).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pe/types.h"

namespace pe {

// An aggregate: each variant declares its own as one designated-initialiser constant. The family is
// not part of it: the variant's class (SinusoidalVariant, RopeVariant) fixes that.
struct Contract {
  std::vector<Layout> layouts;
  std::vector<DType> outputs;
  DType angle_type = DType::F64;    // type the angle p·ω is formed in
  DType compute_type = DType::F64;  // type of sin/cos and of the rotation or addition (see u_compute)
  std::int64_t max_position = 0;    // largest position the budget and the properties cover
  double max_base = 1e12;           // largest base the derivation covers
  double max_input_abs = 0;         // RoPE and fused add: largest |input| promised (no overflow)
  DType table_type = DType::F64;    // type of a stored cos/sin table (with ct)
  const char* depends_on = "";      // build conditions the bound relies on (instruction sets, libm)
  // State along positions: 0 when every row is computed from its position alone. Otherwise a row is
  // computed directly at the start of a call, after a jump (p != previous + 1), and after `state_rows`
  // rows advanced from the last direct one; the others are advanced from the row before. A call split
  // at those direct rows gives the same bits as the whole call (the properties' determinism check).
  std::int64_t state_rows = 0;
  double c0 = 0, ck = 0, ct = 0, c1 = 0, c1_pair = 0;  // the budget's coefficients, see above
  double ca = 3, c1_gain = 0;                          // RoPE scaling terms, see above
  // Sinusoidal tables at a scale other than 1 or at real positions (table_at): the angle's extra roundings
  // there (fl(scale) and its product, a float32 formulation's fl(t) where c1 assumed an exact integer),
  // added as c1_scale·u_angle·|φ| by table_element_budget, as c1_gain is for a scaled RoPE plan. The
  // unscaled integer table's budget is c1's alone.
  double c1_scale = 0;
  // Sinusoidal: whether the variant computes every form of the table the plan and the API express: the
  // plan's flip_sin_to_cos and downscale_freq_shift (its frequencies from the plan's, its channels from
  // sin_index and cos_index), a scale other than 1, an odd dim (the last channel a zero pad) and real
  // positions (table_at). A C plugin's plan carries none of them (ABI v2): the API refuses each, naming it.
  bool table_switches = true;
  // Sinusoidal: the largest downscale_freq_shift the derivation covers. Every built-in one assumes the
  // exponent i/(dim/2 - shift) <= 1 (the plan's 1.02·2^-53, docs/contracts.md §2b; the frameworks'
  // |exponent| <= ln P), which holds for every dim exactly when shift <= 1. The API refuses a larger shift
  // naming downscale_freq_shift and the variant.
  double max_freq_shift = 1;
};

// The budget for one element of pair `pair`. `scale` is 1 for tables, |x_a| + |x_b| for a RoPE pair.
double element_budget(const Contract& c, DType out, double abs_phi, std::size_t pair,
                      double scale = 1.0) noexcept;
// element_budget of a sinusoidal table element; where the table is scaled (scale != 1) or read at real
// positions, `real_scale` is |scale| and the budget adds c1_scale·u_angle·|φ| and
// 2·|scale|·denorm_min(angle): the angle t·ω formed before the scale may be subnormal (a tiny t), absolute
// there, then multiplied by the scale. 0: the unscaled integer table, element_budget's alone.
double table_element_budget(const Contract& c, DType out, double abs_phi, std::size_t pair,
                            double real_scale) noexcept;
class RopePlan;
// The budget of one output of RoPE pair `pair` under `plan`, input magnitude |x_a| + |x_b| = `abs_pair`
// and exact angle |φ| (of the scaled frequency).
double rope_element_budget(const Contract& c, const RopePlan& plan, DType out, double abs_phi,
                           std::size_t pair, double abs_pair) noexcept;
// rope_element_budget with everything but |φ| and |x_a| + |x_b| evaluated once, for one contract, plan and
// output type. The budget is affine in |x_a| + |x_b|: slope(|φ|, j)·(|x_a| + |x_b|) + floor(), and
// rope_element_budget evaluates exactly that (the same bits, pinned by a property), so a reader that
// meets many elements at one angle (every head of a token) takes the slope once and pays one
// multiply-add per element.
class RopeBudgetTerms {
 public:
  RopeBudgetTerms(const Contract& c, const RopePlan& plan, DType out);
  // The budget per unit of |x_a| + |x_b| at angle |φ| of pair j: A·(the relative terms), A the plan's
  // attention factor.
  double slope(double abs_phi, std::size_t pair) const noexcept {
    double relative = relative_ + angle_[pair] * abs_phi;
    if (attention_ != 1.0) relative += attention_term_;
    if (gained_[pair]) relative += gain_term_ * abs_phi;
    relative += frequency_term_ * abs_phi;
    return attention_ * relative;
  }
  // slope(|φ|, j) is A·(α + β·|φ|) in exact arithmetic, α and β below (each a sum of non-negative terms), and
  // its computed value lies within relative 2^-50 of that (eight roundings): check's screen bounds a token's
  // budgets by these instead of calling slope() per contract and pair.
  double slope_at_zero() const noexcept {
    return attention_ * (relative_ + (attention_ != 1.0 ? attention_term_ : 0.0));
  }
  double slope_per_radian(std::size_t pair) const noexcept {
    return attention_ * (angle_[pair] + (gained_[pair] ? gain_term_ : 0.0) + frequency_term_);
  }
  // Underflow in products and the final rounding: 2·denorm_min(compute) + denorm_min(out).
  double floor() const noexcept { return floor_; }
  double operator()(double abs_phi, std::size_t pair, double abs_pair) const noexcept {
    return slope(abs_phi, pair) * abs_pair + floor_;
  }

 private:
  double attention_, relative_, floor_, attention_term_, gain_term_, frequency_term_;
  std::vector<double> angle_;  // (c1 + c1_pair·j)·u_angle per pair
  std::vector<bool> gained_;   // the plan's per-pair gain differs from 1
};
// The extra budget of the fused add for an embedding value of magnitude |e|.
double add_budget(const Contract& c, DType out, double abs_embedding) noexcept;
// DESIGN's two-term form c0'·u_out + c1·u_angle·|φ| for this output type: c0' folds the kernel and
// table terms in.
double effective_c0(const Contract& c, DType out) noexcept;

}  // namespace pe

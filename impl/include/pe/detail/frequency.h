// The frequency a kernel's own formula is fed, so that an outside kernel written the way an engine
// writes it (1/powf(base, 2j/d), times the scaling's gain) follows the plan it is handed: the form's
// frequency index and dimension, the NTK/dynamic base', the per-pair gain of linear, YaRN, Llama-3
// and LongRoPE.
#pragma once

#include <cstddef>

#include "pe/plan.h"

namespace pe::detail {

// Each pair's frequency is base^(-2·index/dim): (i, dim) for tables, the form's for RoPE (vision forms
// index their own frequency tables, axial forms have a ladder per axis, pe/rope_form.h).
// The dim of pair j's ladder: one for the whole plan but for axial RoPE forms (each axis its own ladder over
// its own dim, pe/rope_form.h), so a kernel asks per pair; the one-argument form is pair 0's.
inline std::size_t frequency_dim(const SinusoidalPlan& plan, std::size_t = 0) noexcept {
  return plan.frequency_dim();
}
inline std::size_t frequency_dim(const RopePlan& plan, std::size_t j = 0) noexcept {
  return plan.frequency_index(j).dim;
}
inline std::size_t frequency_of(const SinusoidalPlan&, std::size_t i) noexcept { return i; }
inline std::size_t frequency_of(const RopePlan& plan, std::size_t j) noexcept {
  return plan.frequency_index(j).index;
}
// The base the framework's own power formula is fed (RoPE: the NTK/dynamic base' of pe/plan.h), and
// the per-pair gain it then applies as one float32 multiplication (1 for tables and unscaled RoPE).
inline double formula_base(const SinusoidalPlan& plan) noexcept { return plan.params().base; }
inline double formula_base(const RopePlan& plan) noexcept { return plan.effective_base(); }
inline float formula_gain(const SinusoidalPlan&, std::size_t) noexcept { return 1.0f; }
inline float formula_gain(const RopePlan& plan, std::size_t j) noexcept {
  return static_cast<float>(plan.gain()[j]);
}

}  // namespace pe::detail

// Registering an outside kernel as a pe-suite variant, in C++. A kernel that computes one (sin, cos)
// pair at a time writes only that rule, the way the engine writes it; the drivers do the rest exactly
// as for the built-in variants (every layout, the batch's strides, the rotary forms' per-pair
// positions, rotary_dim and the pass-through channels, the inverse direction, the attention factor,
// every output type with one rounding):
//
//   struct EngineSinCos {              // constructed from the plan, called per (position, pair)
//     const pe::RopePlan& plan;
//     void operator()(std::int64_t p, std::size_t j, float& s, float& c) const noexcept {
//       const float e = float(2 * pe::kernel::frequency_of(plan, j)) /
//       float(pe::kernel::frequency_dim(plan, j)); const float angle = (1.0f /
//       std::pow(float(pe::kernel::formula_base(plan)), e)) *
//                           pe::kernel::formula_gain(plan, j) * float(p);
//       s = std::sin(angle);
//       c = std::cos(angle);
//     }
//   };
//   const pe::Contract kContract{.layouts = {pe::Layout::HalfSplit}, .outputs = {pe::DType::F32}, ...};
//   PE_REGISTER_ROPE("rope.engine_f32", kContract, pe::kernel::PairwiseRope<float, EngineSinCos>);
//
// A kernel with its own whole-call loop derives from pe::RopeVariant (pe/variant.h) instead and uses
// with_typed to reach the buffer as float, double, BFloat16 or Float16, load_as/store_as to convert.
// pe_add_variant_suite() (the CMake package) runs every property and the benchmark grid over it.
#pragma once

#include "pe/detail/convert.h"
#include "pe/detail/frequency.h"
#include "pe/detail/pairwise_variant.h"
#include "pe/half.h"
#include "pe/register.h"
#include "pe/variant.h"

namespace pe::kernel {

// Drivers for a (sin, cos)-per-pair rule SinCos, computing in type C (float or double).
template <class C, class SinCos>
using PairwiseRope = detail::PairwiseRope<C, SinCos>;
template <class C, class SinCos>
using PairwiseSinusoidal = detail::PairwiseSinusoidal<C, SinCos>;

// The frequency an engine's own formula reads from the plan: base^(-2·frequency_of/frequency_dim),
// the base' of NTK and dynamic scaling, and each pair's gain under linear, YaRN, Llama-3, LongRoPE.
using detail::formula_base;
using detail::formula_gain;
using detail::frequency_dim;
using detail::frequency_of;

// The buffer as a typed pointer (only the output types the contract declares reach a kernel), and
// the conversions between a compute type and every storage type (one rounding to nearest-even).
using detail::load_as;
using detail::store_as;
using detail::with_typed;

}  // namespace pe::kernel

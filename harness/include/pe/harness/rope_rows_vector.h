// The reference's exact RoPE rotation (ref::Rope::fast_rotate_by: double-double sin and cos times the
// inputs, then the attention factor) and the metrics measure reports (|y - exact|, its ULPs), for many
// pairs at once in vectors: bit for bit the scalar functions, on every Highway target whose multiply-add
// is fused (the double-double products need the exact FMA; other CPUs keep the scalar loop).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "pe/ref/double_double.h"
#include "pe/types.h"

namespace pe::harness {

// Struct-of-arrays over a row's pairs, each array holding at least padded(n) values (RotationLanes::kLanes
// apart); the lanes from n on are computed too (the caller keeps them finite or ignores them).
struct RotationLanes {
  static constexpr std::size_t kLanes = 8;  // the widest vector of doubles any target uses
  static std::size_t padded(std::size_t n) { return (n + kLanes - 1) / kLanes * kLanes; }
  // The token's: each pair's sin and cos (ref::FastSinCos), already negated sin for the inverse.
  const double *sin_hi, *sin_lo, *cos_hi, *cos_lo;
  // The row's: each pair's inputs (x_a, x_b) and the kernel's outputs (y_0, y_1) as doubles.
  const double *xa, *xb, *y0, *y1;
  // Out: the exact values' leading doubles, |y - exact| (ref::abs_error) and its ULPs (ref::in_ulps).
  double *exact0, *exact1, *err0, *err1, *ulp0, *ulp1;
};

// The types the vector metrics cover: those whose ULP exponent stays a normal double's (not float64).
bool rotation_lanes_cover(DType out);

// Fills the outputs for pairs [0, n); `attention` the factor the rotation is multiplied by (null: none).
// Returns false, with the outputs unspecified, when a pair's |x_a| + |x_b| is not below 2^900 (or NaN):
// the scalar path decides those (fast_rotate_by declines them). Requires rotation_lanes_cover(out) and
// a target (rotation_targets() not empty).
bool rotate_and_measure(const RotationLanes& lanes, std::size_t n, const ref::dd::DD* attention, DType out);

// Whether measure_rope_rows rotates in vectors where it can (default: on). Off, the scalar loop takes every
// row: the tests compare both. Process-wide.
bool vector_rows_enabled() noexcept;
void set_vector_rows(bool enabled) noexcept;

// Every compiled target with a fused multiply-add that the CPU supports, best first (for the tests).
struct RotationTarget {
  std::string name;
  bool (*run)(const RotationLanes&, std::size_t, const ref::dd::DD*, int precision, int emin);
};
const std::vector<RotationTarget>& rotation_targets();

}  // namespace pe::harness

// What position and frequency recovery share about a rotation's angle read back from data.
#pragma once

#include <cmath>
#include <numbers>

namespace pe::check {

inline constexpr double kFullTurn = 2 * std::numbers::pi;

// The angle of the rotation taking (x0, x1) to (y0, y1) (a pair's input and output), in (-π, π].
inline double rotation_angle(double x0, double x1, double y0, double y1) {
  return std::atan2(x0 * y1 - x1 * y0, x0 * y0 + x1 * y1);
}

// a reduced to (-π, π].
inline double wrapped_angle(double a) { return a - kFullTurn * std::nearbyint(a / kFullTurn); }

// The angle an implementation may be off by at angle p·θ: sin/cos and float32 data's rounding (2e-3 rad, a
// generous floor); 16-bit data's, 8 units `data_unit` of its rounding (cos and sin cast, two products and a
// sum, each rounded: about 5 units on the pair's angle); for a float32 angle, its rounding, a few u of p·θ.
inline double angle_tolerance(double p, double theta, double data_unit, bool float32_angle = true) {
  return 2e-3 + 8 * data_unit + (float32_angle ? 8 * 0x1p-24 * std::fabs(p * theta) : 0.0);
}

}  // namespace pe::check

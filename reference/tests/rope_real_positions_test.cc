// ref::Rope at real positions (issue 50: a video grid's fractional coordinates) against an independent
// computation: Boost's cpp_bin_float at 256 bits (no MPFR), θ_j = base^(-2j/d) from its own pow, the angle
// t·θ_j with t the double's exact binary value, the rotation (a cos φ − b sin φ, a sin φ + b cos φ). The
// reference's outputs must be the nearest float64 and float32 values to it (each no farther than either
// neighbour), with the fast path on and off.
#include <gtest/gtest.h>

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <cmath>
#include <random>

#include "pe/ref/reference.h"

namespace pe::ref {
namespace {

using Independent = bmp::number<bmp::cpp_bin_float<256, bmp::digit_base_2>, bmp::et_off>;

std::pair<Independent, Independent> independent_rotation(double t, std::int64_t dim, double base,
                                                         std::size_t pair, double a, double b) {
  const Independent e =
      -Independent(static_cast<long long>(2 * pair)) / Independent(static_cast<long long>(dim));
  const Independent phi = pow(Independent(base), e) * Independent(t);
  const Independent c = cos(phi), s = sin(phi);
  return {Independent(a) * c - Independent(b) * s, Independent(a) * s + Independent(b) * c};
}

// Whether r (a value of `type`, as a double) is a nearest value of that type to v: no farther from v than its
// neighbours in the type.
bool nearest(double r, const Independent& v, DType type) {
  const auto step = [&](double toward) {
    return type == DType::F32
               ? static_cast<double>(std::nextafter(static_cast<float>(r), static_cast<float>(toward)))
               : std::nextafter(r, toward);
  };
  const Independent d = abs(Independent(r) - v);
  return d <= abs(Independent(step(INFINITY)) - v) && d <= abs(Independent(step(-INFINITY)) - v);
}

class RealPositions : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    was_ = fast_path_enabled();
    set_fast_path(GetParam());
  }
  void TearDown() override { set_fast_path(was_); }
  bool was_ = true;
};

TEST_P(RealPositions, RoundedRotationIsTheNearestToAnIndependentComputation) {
  std::mt19937_64 rng(50);
  std::normal_distribution<double> normal;
  // Fractional grid steps (CogVideoX's 1.5), values with no short binary form (0.1, 1/3 of a million), a
  // float32 coordinate, negatives, one past 2^24, and tiny and huge magnitudes.
  const double positions[] = {
      0.5,      1.5,     7.25,       0.1,      -3.75,       1e6 + 1.0 / 3,       4095.999755859375,
      0x1p-100, -0x1p-3, 16777217.5, 123.456f, -98765.4321, 0x1.fffffffffffffp40};
  for (const std::int64_t dim : {64, 128}) {
    for (const double base : {10000.0, 500000.0}) {
      const RopeParams params{dim, 0, base, Layout::HalfSplit};
      const Rope rope(params, RealPosition{0x1p41});
      for (const double t : positions) {
        for (std::size_t j = 0; j < static_cast<std::size_t>(dim / 2); j += 3) {
          const double a = normal(rng), b = normal(rng);
          for (const DType type : {DType::F64, DType::F32}) {
            // x in the output type, as a kernel of that type holds it.
            const double xa = type == DType::F32 ? static_cast<float>(a) : a;
            const double xb = type == DType::F32 ? static_cast<float>(b) : b;
            const auto [w0, w1] = independent_rotation(t, dim, base, j, xa, xb);
            const auto [r0, r1] = rope.rounded(RealPosition{t}, j, xa, xb, type);
            EXPECT_TRUE(nearest(r0, w0, type)) << "t " << t << " pair " << j << " dim " << dim;
            EXPECT_TRUE(nearest(r1, w1, type)) << "t " << t << " pair " << j << " dim " << dim;
          }
          // The angle rounded to double: within one ulp of the independent t·θ_j.
          const Independent phi = pow(Independent(base), -Independent(static_cast<long long>(2 * j)) /
                                                             Independent(static_cast<long long>(dim))) *
                                  Independent(t);
          const double angle = rope.angle(RealPosition{t}, j);
          EXPECT_LE(abs(Independent(angle) - phi),
                    Independent(std::fabs(std::nextafter(angle, INFINITY) - angle)))
              << "t " << t << " pair " << j;
        }
      }
    }
  }
  EXPECT_EQ(undecided_roundings(), 0u);
}

TEST_P(RealPositions, AnIntegerValuedRealPositionIsTheIntegerOne) {
  const Rope rope({64, 0, 10000.0, Layout::Interleaved}, RealPosition{1 << 20});
  for (const std::int64_t p : {0, 1, 17, 4096, 1 << 20}) {
    for (std::size_t j = 0; j < 32; j += 5) {
      EXPECT_EQ(rope.rounded(RealPosition{static_cast<double>(p)}, j, 0.75, -1.25, DType::F32),
                rope.rounded(p, j, 0.75, -1.25, DType::F32));
      EXPECT_EQ(rope.angle(RealPosition{static_cast<double>(p)}, j), rope.angle(p, j));
    }
  }
}

TEST_P(RealPositions, ANegativePositionRotatesTheOtherWay) {
  const Rope rope({64, 0, 10000.0, Layout::HalfSplit}, RealPosition{100});
  for (std::size_t j = 0; j < 32; j += 7) {
    const auto [y0, y1] = rope.rounded(RealPosition{-37.375}, j, 1.0, 0.0, DType::F64);
    const auto [z0, z1] = rope.rounded(RealPosition{37.375}, j, 1.0, 0.0, DType::F64, RopeDirection::Inverse);
    EXPECT_EQ(y0, z0);
    EXPECT_EQ(y1, z1);
  }
}

INSTANTIATE_TEST_SUITE_P(FastPath, RealPositions, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& p) { return p.param ? "fast" : "mpfr"; });

}  // namespace
}  // namespace pe::ref

// The OCP 8-bit floats as the FP8 check reads and rounds them (pe/check/fp8.h), against the definition's own
// numbers: e4m3fn's largest 448, smallest subnormal 2^-9, NaN at S.1111.111 and no infinity; e5m2's largest
// 57344, smallest subnormal 2^-16, infinities at exponent 31. Rounding is to nearest, ties to the even code,
// saturating at the largest finite value.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "pe/check/fp8.h"

namespace pe::check {
namespace {

TEST(Fp8Codes, TheDefinitionsNumbers) {
  EXPECT_EQ(fp8_value(Fp8Format::E4m3fn, 0x7E), 448.0);
  EXPECT_TRUE(std::isnan(fp8_value(Fp8Format::E4m3fn, 0x7F)));
  EXPECT_TRUE(std::isnan(fp8_value(Fp8Format::E4m3fn, 0xFF)));
  EXPECT_EQ(fp8_value(Fp8Format::E4m3fn, 0x01), std::ldexp(1.0, -9));
  EXPECT_EQ(fp8_value(Fp8Format::E4m3fn, 0x38), 1.0);  // exponent 7 = bias
  EXPECT_EQ(fp8_value(Fp8Format::E5m2, 0x7B), 57344.0);
  EXPECT_EQ(fp8_value(Fp8Format::E5m2, 0x7C), std::numeric_limits<double>::infinity());
  EXPECT_EQ(fp8_value(Fp8Format::E5m2, 0xFC), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(fp8_value(Fp8Format::E5m2, 0x01), std::ldexp(1.0, -16));
  EXPECT_EQ(fp8_value(Fp8Format::E5m2, 0x3C), 1.0);  // exponent 15 = bias
}

TEST(Fp8Codes, EveryFiniteCodeRoundsToItself) {
  for (const Fp8Format f : {Fp8Format::E4m3fn, Fp8Format::E5m2}) {
    for (int c = 0; c < 256; ++c) {
      const double v = fp8_value(f, static_cast<std::uint8_t>(c));
      if (!std::isfinite(v) || c == 0x80) continue;  // -0 rounds to +0's code (values compare equal)
      EXPECT_EQ(fp8_code(f, v), c) << to_string(f) << " code " << c;
    }
  }
}

TEST(Fp8Codes, NearestTiesToEvenAndSaturation) {
  const auto e4 = Fp8Format::E4m3fn;
  // 1 + 1/16 lies halfway between 1 (0x38, even) and 1.125 (0x39): the even code.
  EXPECT_EQ(fp8_code(e4, 1.0625), 0x38);
  // 1.125 + 1/16 lies halfway between 1.125 (0x39) and 1.25 (0x3A, even).
  EXPECT_EQ(fp8_code(e4, 1.1875), 0x3A);
  EXPECT_EQ(fp8_code(e4, 1.07), 0x39);
  EXPECT_EQ(fp8_code(e4, -1.07), 0xB9);
  EXPECT_EQ(fp8_code(e4, 1e9), 0x7E);  // saturates at 448, no infinity
  EXPECT_EQ(fp8_code(e4, -1e9), 0xFE);
  EXPECT_EQ(fp8_code(Fp8Format::E5m2, 1e9), 0x7B);       // the fused kernels clamp before they cast
  EXPECT_EQ(fp8_code(e4, std::ldexp(1.0, -11)), 0x00);   // below half the smallest subnormal: zero
  EXPECT_EQ(fp8_code(e4, -std::ldexp(1.0, -11)), 0x00);  // compares equal to -0
  EXPECT_EQ(fp8_code(e4, std::numeric_limits<double>::quiet_NaN()), 0x7F);
  EXPECT_EQ(parse_fp8_format("e4m3"), Fp8Format::E4m3fn);
  EXPECT_EQ(parse_fp8_format("e5m2"), Fp8Format::E5m2);
  EXPECT_FALSE(parse_fp8_format("e4m3fnuz"));
}

// The definition by search: the finite code whose value lies nearest |v| (ties: the even code), saturating at
// the largest; v's sign where the value is not zero.
std::uint8_t nearest_by_search(Fp8Format f, double v) {
  int best = 0;
  for (int c = 1; c < 128; ++c) {
    const double x = fp8_value(f, static_cast<std::uint8_t>(c));
    if (!std::isfinite(x)) break;  // the positive codes ascend up to the largest finite
    const double d = std::fabs(std::fabs(v) - x),
                 db = std::fabs(std::fabs(v) - fp8_value(f, static_cast<std::uint8_t>(best)));
    if (d < db || (d == db && c % 2 == 0)) best = c;
  }
  return std::signbit(v) && best != 0 ? static_cast<std::uint8_t>(best | 0x80)
                                      : static_cast<std::uint8_t>(best);
}

// Every midpoint between neighbouring codes (the ties), a double's ulp either side of it, a quarter step
// either side, beyond the largest, and a spread of magnitudes, both signs.
TEST(Fp8Codes, RoundingFromTheBitsIsTheNearestBySearch) {
  for (const Fp8Format f : {Fp8Format::E4m3fn, Fp8Format::E5m2}) {
    std::vector<double> probes;
    for (int c = 0; c < 127; ++c) {
      const double lo = fp8_value(f, static_cast<std::uint8_t>(c)),
                   hi = fp8_value(f, static_cast<std::uint8_t>(c + 1));
      if (!std::isfinite(hi)) {
        for (const double k : {1.0, 1.03125, 1.0625, 1.5, 1e3}) probes.push_back(lo * k);  // past the largest
        break;
      }
      const double mid = (lo + hi) / 2;
      for (const double p : {lo, mid, std::nextafter(mid, 0.0), std::nextafter(mid, 1e300),
                             lo + (hi - lo) / 4, hi - (hi - lo) / 4})
        probes.push_back(p);
    }
    for (double a = 1e-12; a < 1e6; a *= 1.0137) probes.push_back(a);
    for (const double p : probes)
      for (const double v : {p, -p})
        ASSERT_EQ(fp8_code(f, v), nearest_by_search(f, v)) << to_string(f) << " " << v;
  }
}

}  // namespace
}  // namespace pe::check

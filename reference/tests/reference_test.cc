// The reference against facts that do not come from it: IEEE rounding done by the hardware,
// published constants, the format definitions, and an independent cpp_bin_float computation.
#include "pe/ref/reference.h"

#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "pe/ref/self_check.h"
#include "support/generators.h"
#include "support/property_util.h"

namespace pe::ref {
namespace {

TEST(Reference, AgreesWithIndependentCppBinFloatBelow2Pow31) {
  const SelfCheckReport r = self_check(20261130, 24, std::int64_t{1} << 31);
  EXPECT_TRUE(r.failures.empty()) << r.failures.front();
  EXPECT_EQ(r.samples, 24u);
  EXPECT_LE(r.max_disagreement, 0x1p-120);
}

TEST(Reference, AgreesWithIndependentCppBinFloatAtTheWideTier) {
  const SelfCheckReport r = self_check(7, 8, kMaxPosition);
  EXPECT_TRUE(r.failures.empty()) << r.failures.front();
}

TEST(Reference, PrecisionKeeps64BitsBeyondFloat64AtTheLargestPosition) {
  const SinusoidalParams params{128, 10000.0, Layout::Interleaved};
  // ω_0 = 1, so φ = p: bits(p) + 53 + 64 must fit the precision.
  EXPECT_GE(Sinusoidal(params, (std::int64_t{1} << 40) - 1).precision_bits(), 40 + 53 + 64);
  EXPECT_GE(Sinusoidal(params, kMaxPosition).precision_bits(), 53 + 53 + 64);
}

// sin 1 and cos 1 to 40 digits (Abramowitz & Stegun, table 4.6).
TEST(Reference, MatchesPublishedSinAndCosOfOne) {
  const Sinusoidal r({2, 10000.0, Layout::Interleaved}, 1);  // dim 2: ω_0 = 1, φ = p
  EXPECT_EQ(r.rounded(1, 0, DType::F64), 0.8414709848078965066525023216302989996226);
  EXPECT_EQ(r.rounded(1, 1, DType::F64), 0.5403023058681397174009366074429766037323);
  EXPECT_EQ(r.rounded(1, 0, DType::F32), 0.8414709848078965066525023216302989996226f);
  EXPECT_EQ(r.rounded(1, 1, DType::F32), 0.5403023058681397174009366074429766037323f);
  const double err = abs_error(0.8414709848078965, r.exact(1, 0).value);
  EXPECT_LT(err, 0x1p-53);
}

TEST(Reference, PositionZeroIsExact) {
  for (Layout l : {Layout::Interleaved, Layout::Concatenated}) {
    const Sinusoidal r({64, 10000.0, l}, 0);
    for (std::size_t ch = 0; ch < 64; ++ch) {
      const bool is_cos = l == Layout::Interleaved ? ch % 2 == 1 : ch >= 32;
      EXPECT_EQ(r.exact(0, ch).radius, 0);
      EXPECT_EQ(r.rounded(0, ch, DType::F32), is_cos ? 1.0 : 0.0);
    }
  }
}

// The hardware's double -> float conversion is one IEEE rounding: round_to must agree on every
// double, subnormal results and overflow included.
TEST(Reference, RoundToFloatMatchesHardwareConversion) {
  EXPECT_TRUE(rc::check("round_to(v, f32) == (float)v", [] {
    const double v = *testing::gen_value(DType::F64, std::numeric_limits<double>::max()).as("v");
    const double want = static_cast<float>(v);
    const double got = round_to(Real(v), DType::F32);
    RC_ASSERT(std::memcmp(&got, &want, sizeof got) == 0);
  }));
}

// Values whose rounding the formats' definitions fix: ties to even, the subnormal steps, overflow.
TEST(Reference, RoundToHalfFormatsFollowsTheirDefinitions) {
  const auto r = [](double v, DType t) { return round_to(Real(v), t); };
  EXPECT_EQ(r(1 + 0x1p-8, DType::BF16), 1.0);                   // tie, to even
  EXPECT_EQ(r(1 + 0x1p-8 + 0x1p-30, DType::BF16), 1 + 0x1p-7);  // just above the tie
  EXPECT_EQ(r(1 + 3 * 0x1p-8, DType::BF16), 1 + 0x1p-6);        // tie, to even (up)
  EXPECT_EQ(r(0x1p-133, DType::BF16), 0x1p-133);                // smallest subnormal
  EXPECT_EQ(r(0x1p-134, DType::BF16), 0.0);                     // half of it: tie to 0
  EXPECT_EQ(r(0x1p-134 * 1.01, DType::BF16), 0x1p-133);
  EXPECT_EQ(r(65504.0, DType::F16), 65504.0);  // largest finite
  EXPECT_EQ(r(65519.0, DType::F16), 65504.0);
  EXPECT_TRUE(std::isinf(r(65520.0, DType::F16)));  // tie at the top: to infinity
  EXPECT_EQ(r(0x1p-24, DType::F16), 0x1p-24);       // smallest subnormal
  EXPECT_EQ(r(0x1p-25, DType::F16), 0.0);
  EXPECT_EQ(r(3 * 0x1p-25, DType::F16), 0x1p-23);          // 1.5 steps: tie, to even (2)
  EXPECT_EQ(r(0x1p-14 + 0x1p-25, DType::F16), 0x1p-14);    // normal boundary, tie to even
  EXPECT_EQ(std::signbit(r(-0x1p-30, DType::F16)), true);  // underflow keeps the sign
}

// SLEEF's definition: the ulp of the exact value's binade, the subnormal step below the normals.
TEST(Reference, UlpOfFollowsSleefDefinition) {
  EXPECT_EQ(ulp_of(Real(1.0), DType::F32), 0x1p-23);
  EXPECT_EQ(ulp_of(Real(0.75), DType::F32), 0x1p-24);
  EXPECT_EQ(ulp_of(Real(0.0), DType::F32), 0x1p-149);
  EXPECT_EQ(ulp_of(Real(1e-40), DType::F32), 0x1p-149);
  EXPECT_EQ(ulp_of(Real(1.0), DType::F64), 0x1p-52);
  EXPECT_EQ(ulp_of(Real(0.5), DType::BF16), 0x1p-8);
  EXPECT_EQ(ulp_error(1.0 + 0x1p-23, Real(1.0), DType::F32), 1.0);
}

TEST(Reference, UndecidedRoundingIsRefused) {
  // The f32 midpoint between 1 and 1 + 2^-23, with an enclosure straddling it.
  const Enclosure e{Real(1.0) + ldexp(Real(1), -24), ldexp(Real(1), -60)};
  EXPECT_FALSE(decided_rounding(e, DType::F32).has_value());
  const Enclosure clear{Real(1.0) + ldexp(Real(1), -25), ldexp(Real(1), -60)};
  EXPECT_EQ(decided_rounding(clear, DType::F32), 1.0);
}

TEST(Reference, RopeOfUnitVectorIsTheSinusoidalTable) {
  const Rope rope({64, 0, 10000.0, Layout::Interleaved}, 1 << 20);
  const Sinusoidal table({64, 10000.0, Layout::Interleaved}, 1 << 20);
  for (std::int64_t p : {0, 1, 17, 1 << 20}) {
    for (std::size_t j = 0; j < 32; ++j) {
      const auto [c, s] = rope.cos_sin(p, j, DType::F64);
      EXPECT_EQ(s, table.rounded(p, 2 * j, DType::F64));
      EXPECT_EQ(c, table.rounded(p, 2 * j + 1, DType::F64));
    }
  }
}

TEST(Reference, InverseRotationIsRotationByMinusP) {
  const Rope rope({8, 0, 10000.0, Layout::HalfSplit}, 1000);
  const auto [c, s] = rope.cos_sin(1000, 1, DType::F64);
  const auto [y0, y1] = rope.rounded(1000, 1, 1.0, 0.0, DType::F64, RopeDirection::Inverse);
  EXPECT_EQ(y0, c);
  EXPECT_EQ(y1, -s);
}

TEST(Reference, EveryRoundingWasDecided) { EXPECT_EQ(undecided_roundings(), 0u); }

}  // namespace
}  // namespace pe::ref

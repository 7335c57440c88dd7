// The reference's fast path (double-double with Ziv's test) against MPFR: the enclosure holds the
// exact value, and every rounding it decides is MPFR's correctly rounded one, bit for bit, on seeded
// samples over every position range the path covers, scalings and output types.
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <cstring>
#include <random>

#include "pe/ref/fast_trig.h"
#include "pe/ref/reference.h"
#include "support/generators.h"

namespace pe::ref {
namespace {

constexpr DType kTypes[] = {DType::F32, DType::F64, DType::BF16, DType::F16};

// What `f` gives with the fast path off: MPFR's answer alone.
template <class F>
auto mpfr_only(F f) {
  const bool was = fast_path_enabled();
  set_fast_path(false);
  const auto r = f();
  set_fast_path(was);
  return r;
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Positions spread over the census's bands up to 2^52: a band drawn uniformly, then a position in it.
std::int64_t draw_position(std::mt19937_64& g) {
  const int bits = std::uniform_int_distribution<int>(0, 52)(g);
  const std::int64_t top = std::int64_t{1} << bits;
  return std::uniform_int_distribution<std::int64_t>(0, top)(g);
}

TEST(FastReference, EnclosureHoldsTheExactSinAndCos) {
  std::mt19937_64 g(20261201);
  double worst = 0;  // largest |fast - exact| / radius
  for (int i = 0; i < 20000; ++i) {
    const std::int64_t p = draw_position(g) * (g() % 8 == 0 ? -1 : 1);
    const double base = std::uniform_real_distribution<double>(2.0, 1e7)(g);
    const int dim = 2 * std::uniform_int_distribution<int>(1, 2048)(g);
    const int pair = std::uniform_int_distribution<int>(0, dim / 2 - 1)(g);
    const Real omega = pow(Real(base), Real(-2 * pair) / dim);
    const auto sc = fast_sincos(p, to_dd(omega), 0x1p-105);
    const Real phi = omega * static_cast<long long>(p);
    // The path's range: |φ| < 2^52 (beyond it MPFR decides alone).
    ASSERT_EQ(sc.has_value(), abs(phi) < 0x1p52) << "p = " << p;
    if (!sc) continue;
    const Real es = abs(Real(sc->sin.hi) + Real(sc->sin.lo) - sin(phi));
    const Real ec = abs(Real(sc->cos.hi) + Real(sc->cos.lo) - cos(phi));
    const Real err = es > ec ? es : ec;
    const double ratio = p == 0 ? 0.0 : Real(err / sc->radius).convert_to<double>();
    worst = std::max(worst, ratio);
    ASSERT_LE(ratio, 1.0) << "p = " << p << ", base " << base << ", dim " << dim << ", pair " << pair;
  }
  // The radius takes each term at least four times over: a bound that is not slack would sit near 1.
  EXPECT_LE(worst, 0.25);
  RecordProperty("worst_error_over_radius", std::to_string(worst));
}

TEST(FastReference, DoubleTierEnclosesTheExactSinAndCos) {
  std::mt19937_64 g(4);
  double worst = 0;
  for (int i = 0; i < 20000; ++i) {
    const int bits = std::uniform_int_distribution<int>(0, 32)(g);
    std::int64_t p = std::uniform_int_distribution<std::int64_t>(0, (std::int64_t{1} << bits) - 1)(g);
    if (g() % 8 == 0) p = -p;
    const double base = std::uniform_real_distribution<double>(2.0, 1e7)(g);
    const int dim = 2 * std::uniform_int_distribution<int>(1, 2048)(g);
    const int pair = std::uniform_int_distribution<int>(0, dim / 2 - 1)(g);
    const Real omega = pow(Real(base), Real(-2 * pair) / dim);
    double s = 0, c = 0;
    ASSERT_TRUE(double_tier_sincos(p, split_omega(to_dd(omega)), s, c))
        << "p = " << p << ", base " << base << ", dim " << dim << ", pair " << pair;
    const Real phi = omega * static_cast<long long>(p);
    const double radius = double_tier_radius(std::fabs(phi.convert_to<double>()));
    const Real es = abs(Real(s) - sin(phi)), ec = abs(Real(c) - cos(phi));
    const Real err = es > ec ? es : ec;
    const double ratio = Real(err / radius).convert_to<double>();
    worst = std::max(worst, ratio);
    ASSERT_LE(ratio, 1.0) << "p = " << p << ", base " << base << ", dim " << dim << ", pair " << pair;
  }
  EXPECT_LE(worst, 0.25);  // the radius takes each term four times over
  RecordProperty("double_tier_worst_error_over_radius", std::to_string(worst));
  double s = 0, c = 0;
  EXPECT_FALSE(double_tier_sincos(std::int64_t{1} << 32, split_omega({1.0, 0}), s, c));
}

TEST(FastReference, SinusoidalRoundingsAreMpfrsBitForBit) {
  std::mt19937_64 g(7);
  int decided = 0, total = 0;
  for (int i = 0; i < 4000; ++i) {
    const std::int64_t p = draw_position(g);
    const double base = std::uniform_real_distribution<double>(2.0, 1e6)(g);
    const Layout layout = g() % 2 ? Layout::Interleaved : Layout::Concatenated;
    const Sinusoidal r({128, base, layout}, std::int64_t{1} << 52);
    const auto ch = static_cast<std::size_t>(g() % 128);
    for (DType t : kTypes) {
      const std::uint64_t before = mpfr_fallbacks();
      const double fast = r.rounded(p, ch, t);
      decided += mpfr_fallbacks() == before;
      ++total;
      const double mpfr = mpfr_only([&] { return r.rounded(p, ch, t); });
      ASSERT_TRUE(same_bits(fast, mpfr))
          << "p = " << p << " channel " << ch << " " << to_string(t) << ": " << fast << " vs MPFR " << mpfr;
    }
  }
  // Undecided only near a boundary, at p = 0's zeros or where f64 needs more than ~106 bits.
  EXPECT_GE(decided, total * 9 / 10);
}

TEST(FastReference, RopeRoundingsAreMpfrsBitForBitUnderEveryScaling) {
  std::mt19937_64 g(11);
  RopeScaling yarn;
  yarn.type = RopeScalingType::Yarn;
  yarn.factor = 8, yarn.original_max_position = 4096;
  RopeScaling llama3;
  llama3.type = RopeScalingType::Llama3;
  llama3.factor = 8, llama3.original_max_position = 8192, llama3.low_freq_factor = 1,
  llama3.high_freq_factor = 4;
  RopeScaling linear;
  linear.type = RopeScalingType::Linear;
  linear.factor = 4;
  const RopeScaling scalings[] = {RopeScaling{}, yarn, llama3, linear};
  for (const RopeScaling& s : scalings) {
    const Rope rope({128, 0, 500000.0, Layout::HalfSplit, s}, std::int64_t{1} << 52);
    for (int i = 0; i < 1500; ++i) {
      const std::int64_t p = draw_position(g);
      const auto pair = static_cast<std::size_t>(g() % 64);
      // Inputs as engines hold them: float32 values, sometimes bf16-like short significands.
      const auto a = static_cast<double>(static_cast<float>(std::normal_distribution<double>(0, 3)(g)));
      const auto b = static_cast<double>(static_cast<float>(std::normal_distribution<double>(0, 3)(g)));
      const RopeDirection dir = g() % 4 == 0 ? RopeDirection::Inverse : RopeDirection::Forward;
      const DType t = kTypes[g() % 4];
      const auto fast = rope.rounded(p, pair, a, b, t, dir);
      const auto mpfr = mpfr_only([&] { return rope.rounded(p, pair, a, b, t, dir); });
      ASSERT_TRUE(same_bits(fast.first, mpfr.first) && same_bits(fast.second, mpfr.second))
          << "scaling " << static_cast<int>(s.type) << " p = " << p << " pair " << pair << " (" << a << ", "
          << b << ") " << to_string(t);
    }
  }
}

// round_double_to is the formats' rounding: the same as MPFR's round_to on every double.
TEST(FastReference, RoundDoubleToIsRoundTo) {
  for (DType t : kTypes) {
    EXPECT_TRUE(rc::check(std::string("round_double_to == round_to, ") + std::string(to_string(t)), [t] {
      const double v = *testing::gen_value(DType::F64, std::numeric_limits<double>::max()).as("v");
      RC_ASSERT(same_bits(round_double_to(v, t), round_to(Real(v), t)));
    }));
  }
  // The format's edges: ties to even, the subnormal step, overflow at the top tie.
  EXPECT_EQ(round_double_to(1 + 0x1p-8, DType::BF16), 1.0);
  EXPECT_EQ(round_double_to(0x1p-134, DType::BF16), 0.0);
  EXPECT_EQ(round_double_to(3 * 0x1p-25, DType::F16), 0x1p-23);
  EXPECT_TRUE(std::isinf(round_double_to(65520.0, DType::F16)));
  EXPECT_EQ(round_double_to(65519.0, DType::F16), 65504.0);
  EXPECT_TRUE(same_bits(round_double_to(-0x1p-1000, DType::F16), -0.0));  // a zero keeps the sign
  EXPECT_EQ(round_double_to(-(1 + 0x1p-8), DType::BF16), -1.0);
  EXPECT_EQ(round_double_to(-(1 + 3 * 0x1p-8), DType::BF16), -(1 + 0x1p-6));
}

// The double-double metrics: ulp_of is MPFR's ulp of the value hi + lo, and in_ulps divides by it (the
// same bits as the division), also where hi is a power of two with lo of the other sign.
TEST(FastReference, UlpOfADoubleDoubleIsTheValuesUlp) {
  for (DType t : kTypes) {
    EXPECT_TRUE(rc::check(std::string("ulp_of(dd) == ulp_of(Real), ") + std::string(to_string(t)), [t] {
      const double hi = *testing::gen_value(DType::F64, 1e30).as("hi");
      const bool power = *rc::gen::arbitrary<bool>();
      const double h = power && hi != 0 ? std::copysign(std::ldexp(1.0, std::ilogb(hi)), hi) : hi;
      const double lo = h * std::ldexp(*rc::gen::inRange(-1000, 1000) / 1000.0, -60);
      const dd::DD v{h, lo};
      RC_ASSERT(same_bits(ulp_of(v, t), ulp_of(Real(h) + Real(lo), t)));
      const double err = std::fabs(*testing::gen_value(DType::F64, 1.0));
      RC_ASSERT(same_bits(in_ulps(err, v, t), err / ulp_of(v, t)));
    }));
  }
}

// Ziv's test refuses what it cannot decide and decides what it can.
TEST(FastReference, ZivsTestRefusesAnIntervalAcrossAMidpoint) {
  const dd::DD midpoint{1.0 + 0x1p-24, 0};  // between 1 and 1 + 2^-23 in f32
  EXPECT_FALSE(fast_rounding(midpoint, 0x1p-80, DType::F32).has_value());
  EXPECT_FALSE(fast_rounding({1.0 + 0x1p-24, 0x1p-90}, 0x1p-80, DType::F32).has_value());
  // Narrower types are decided on the enclosure widened outward to doubles: within 2^-52 of a
  // midpoint is left to MPFR, beyond it decided.
  EXPECT_FALSE(fast_rounding({1.0 + 0x1p-24, 0x1p-70}, 0x1p-80, DType::F32).has_value());
  EXPECT_EQ(fast_rounding({1.0 + 0x1p-24 + 0x1p-40, 0}, 0x1p-80, DType::F32), 1.0 + 0x1p-23);
  EXPECT_EQ(fast_rounding({1.0 + 0x1p-24 - 0x1p-40, 0}, 0x1p-80, DType::F32), 1.0);
  // f64: the double-double's own midpoint between 1 and 1 + 2^-52.
  EXPECT_FALSE(fast_rounding({1.0, 0x1p-53}, 0x1p-110, DType::F64).has_value());
  EXPECT_EQ(fast_rounding({1.0 + 0x1p-52, -0x1p-53 + 0x1p-100}, 0x1p-110, DType::F64), 1.0 + 0x1p-52);
  EXPECT_EQ(fast_rounding({1.0, 0x1p-53 - 0x1p-100}, 0x1p-110, DType::F64), 1.0);
  // A zero inside the interval: the sign is MPFR's to decide.
  EXPECT_FALSE(fast_rounding({0x1p-120, 0}, 0x1p-100, DType::F32).has_value());
  // An exact value (radius 0) is rounded as it is.
  EXPECT_EQ(fast_rounding({0.0, 0}, 0, DType::F32), 0.0);
}

// The fallback is counted: a zero rotation (a = b = 0) is always MPFR's.
TEST(FastReference, FallbacksAreCounted) {
  const Rope rope({64, 0, 10000.0, Layout::Interleaved}, 1000);
  const std::uint64_t before = mpfr_fallbacks();
  EXPECT_EQ(rope.rounded(5, 3, 0.0, 0.0, DType::F32).first, 0.0);
  EXPECT_EQ(mpfr_fallbacks(), before + 1);
  (void)rope.rounded(5, 3, 1.0, 0.5, DType::F32);
  EXPECT_EQ(mpfr_fallbacks(), before + 1);
}

}  // namespace
}  // namespace pe::ref

// ref::Sinusoidal with issue 49's switches (flip_sin_to_cos, downscale_freq_shift, scale, odd dims) at real
// and integer positions against the definition written out here in 200-bit MPFR: diffusers'
// get_timestep_embedding, ω_i = base^(−i/(dim/2 − shift)), the angle scale·t·ω_i, [sin | cos] (or
// interleaved), [cos | sin] flipped, an odd dim's last column 0. Rounding the 200-bit value is correct
// unless it lies within 2^-190 of a midpoint, which no sampled value does by chance.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <boost/multiprecision/mpfr.hpp>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "pe/errors.h"
#include "pe/ref/reference.h"

namespace pe::ref {
namespace {

using M200 = boost::multiprecision::number<boost::multiprecision::mpfr_float_backend<200>>;

// The table's value at (t, channel) from the definition, independent of the reference's code.
M200 switches_definition(const SinusoidalParams& p, double t, std::size_t ch) {
  const std::size_t half = static_cast<std::size_t>(p.dim) / 2;
  if (ch >= 2 * half) return M200(0);  // diffusers' and fairseq's zero pad column
  const bool interleaved = p.layout == Layout::Interleaved;
  const bool first = interleaved ? ch % 2 == 0 : ch < half;
  const std::size_t i = interleaved ? ch / 2 : (first ? ch : ch - half);
  const M200 omega = pow(M200(p.base), -M200(static_cast<unsigned>(i)) / (M200(static_cast<unsigned>(half)) -
                                                                          M200(p.downscale_freq_shift)));
  const M200 phi = M200(p.scale) * M200(t) * omega;
  const bool is_sin = first != p.flip_sin_to_cos;  // flip: cos where sin was, and the reverse
  return is_sin ? M200(sin(phi)) : M200(cos(phi));
}

// Round-to-nearest-even of the 200-bit value into `type`, by MPFR's own conversions.
double switches_rounded(const M200& v, DType type) {
  if (type == DType::F64) return mpfr_get_d(v.backend().data(), MPFR_RNDN);
  if (type == DType::F32) return static_cast<double>(mpfr_get_flt(v.backend().data(), MPFR_RNDN));
  mpfr_t b;  // bfloat16: an 8-bit significand, float32's exponent range (the values here are normal)
  mpfr_init2(b, 8);
  mpfr_set(b, v.backend().data(), MPFR_RNDN);
  const double out = mpfr_get_d(b, MPFR_RNDN);
  mpfr_clear(b);
  return out;
}

bool switches_same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

std::vector<SinusoidalParams> switches_cases() {
  std::vector<SinusoidalParams> out;
  for (const std::int64_t dim : {16, 15, 7})
    for (const Layout layout : {Layout::Interleaved, Layout::Concatenated})
      for (const bool flip : {false, true})
        for (const double shift : {0.0, 1.0, 0.5})
          for (const double scale : {1.0, 1000.0, -0.25}) {
            SinusoidalParams p{dim, 10000.0, layout};
            p.flip_sin_to_cos = flip, p.downscale_freq_shift = shift, p.scale = scale;
            out.push_back(p);
          }
  SinusoidalParams big{9, 1e8, Layout::Concatenated};  // a large max_period, odd, shifted
  big.downscale_freq_shift = 1.5;
  out.push_back(big);
  return out;
}

std::string switches_name(const SinusoidalParams& p) {
  return "dim " + std::to_string(p.dim) + " " + std::string(to_string(p.layout)) + " flip " +
         std::to_string(p.flip_sin_to_cos) + " shift " + std::to_string(p.downscale_freq_shift) + " scale " +
         std::to_string(p.scale) + " base " + std::to_string(p.base);
}

TEST(SinusoidalSwitches, RealPositionsRoundAsTheDefinition) {
  const std::vector<double> ts = {0.0, 0.5, 17.25, 999.875, 1e-3, -3.75, 123456.789, 0x1p-30};
  std::size_t compared = 0;
  for (const SinusoidalParams& p : switches_cases()) {
    const Sinusoidal r(p, RealPosition{123456.789});
    for (const double t : ts)
      for (std::size_t ch = 0; ch < static_cast<std::size_t>(p.dim); ++ch) {
        const M200 want = switches_definition(p, t, ch);
        for (const DType type : {DType::F32, DType::F64, DType::BF16}) {
          const double got = r.rounded(RealPosition{t}, ch, type), expect = switches_rounded(want, type);
          // == : the sign of an exact 0 (sin(−0.25·0)) is no part of the value.
          ASSERT_TRUE(got == expect) << switches_name(p) << " t " << t << " channel " << ch << " "
                                     << to_string(type) << ": " << got << " vs " << expect;
          ++compared;
        }
        // The enclosure holds the definition's value.
        const Enclosure e = r.exact(RealPosition{t}, ch);
        EXPECT_LE(static_cast<double>(abs(M200(e.value) - want)), static_cast<double>(e.radius) + 0x1p-180)
            << switches_name(p) << " t " << t << " channel " << ch;
      }
  }
  EXPECT_GT(compared, 10000u);
}

// The MPFR path (the fast path off where |scale·t·ω| reaches 2^52, or never taken for a huge scale) and the
// wide tier agree with the definition too.
TEST(SinusoidalSwitches, WideTierAndHugeAnglesRoundAsTheDefinition) {
  SinusoidalParams p{12, 10000.0, Layout::Concatenated};
  p.flip_sin_to_cos = true, p.downscale_freq_shift = 1, p.scale = 0x1p20;
  const double t = 0x1p40 + 0.75;  // |scale·t| ~ 2^60: the wide tier, ω_0's angle past the fast path
  const Sinusoidal r(p, RealPosition{t});
  for (std::size_t ch = 0; ch < 12; ++ch)
    for (const DType type : {DType::F32, DType::F64})
      EXPECT_TRUE(switches_same_bits(r.rounded(RealPosition{t}, ch, type),
                                     switches_rounded(switches_definition(p, t, ch), type)))
          << "channel " << ch << " " << to_string(type);
}

TEST(SinusoidalSwitches, IntegerPositionsGiveTheBitsOfTheSameRealPosition) {
  for (const SinusoidalParams& p : switches_cases()) {
    const Sinusoidal r(p, std::int64_t{1} << 45);
    for (const std::int64_t pos : {std::int64_t{0}, std::int64_t{1}, std::int64_t{7}, std::int64_t{4096},
                                   std::int64_t{1000003}, (std::int64_t{1} << 45) - 1, -std::int64_t{9}})
      for (std::size_t ch = 0; ch < static_cast<std::size_t>(p.dim); ++ch) {
        const RealPosition t{static_cast<double>(pos)};
        for (const DType type : {DType::F32, DType::F64, DType::BF16})
          ASSERT_TRUE(switches_same_bits(r.rounded(pos, ch, type), r.rounded(t, ch, type)))
              << switches_name(p) << " p " << pos << " channel " << ch;
        ASSERT_TRUE(switches_same_bits(r.angle(pos, ch), r.angle(t, ch)));
        ASSERT_TRUE(switches_same_bits(static_cast<double>(r.exact(pos, ch).value),
                                       static_cast<double>(r.exact(t, ch).value)));
        const auto a = r.fast_exact(pos, ch), b = r.fast_exact(t, ch);
        ASSERT_EQ(a.has_value(), b.has_value());
        if (a) {
          ASSERT_TRUE(switches_same_bits(a->value.hi, b->value.hi) &&
                      switches_same_bits(a->value.lo, b->value.lo));
        }
      }
  }
}

TEST(SinusoidalSwitches, AnOddDimsLastChannelIsZero) {
  for (const bool flip : {false, true})
    for (const Layout layout : {Layout::Interleaved, Layout::Concatenated}) {
      SinusoidalParams p{15, 10000.0, layout};
      p.flip_sin_to_cos = flip, p.downscale_freq_shift = 1;
      const Sinusoidal r(p, RealPosition{1000});
      EXPECT_EQ(r.n_pairs(), 7u);
      EXPECT_TRUE(r.is_pad(14));
      EXPECT_FALSE(r.is_pad(13));
      for (const double t : {0.0, 0.5, 999.875}) {
        for (const DType type : {DType::F32, DType::F64, DType::BF16})
          EXPECT_EQ(r.rounded(RealPosition{t}, 14, type), 0.0);
        EXPECT_EQ(r.angle(RealPosition{t}, 14), 0.0);
        EXPECT_EQ(static_cast<double>(r.exact(RealPosition{t}, 14).value), 0.0);
        EXPECT_EQ(static_cast<double>(r.exact(RealPosition{t}, 14).radius), 0.0);
      }
      // Position 0: the sin channels 0, the cos channels 1, whichever the flip puts where.
      std::size_t ones = 0;
      for (std::size_t ch = 0; ch < 14; ++ch)
        ones += r.rounded(RealPosition{0}, ch, DType::F32) == 1.0 ? 1 : 0;
      EXPECT_EQ(ones, 7u);
      const std::size_t first_cos = layout == Layout::Interleaved ? (flip ? 0 : 1) : (flip ? 0 : 7);
      EXPECT_EQ(r.rounded(RealPosition{0}, first_cos, DType::F32), 1.0);
    }
}

void expect_refused(const SinusoidalParams& p, const std::string& parameter) {
  try {
    const Sinusoidal r(p, 10);
    ADD_FAILURE() << switches_name(p) << " accepted, expected a refusal naming " << parameter;
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.parameter(), parameter) << switches_name(p) << ": " << e.what();
  }
}

TEST(SinusoidalSwitches, RefusesWhatHasNoTableNamingTheParameter) {
  const auto with = [](std::int64_t dim, double shift, double scale) {
    SinusoidalParams p{dim, 10000.0, Layout::Concatenated};
    p.downscale_freq_shift = shift, p.scale = scale;
    return p;
  };
  expect_refused(with(1, 0, 1), "dim");
  expect_refused(with(0, 0, 1), "dim");
  expect_refused(with(-4, 0, 1), "dim");
  expect_refused(with(8, 4, 1), "downscale_freq_shift");    // dim/2 − shift = 0
  expect_refused(with(8, 5, 1), "downscale_freq_shift");    // negative
  expect_refused(with(8, 0.3, 1), "downscale_freq_shift");  // not a multiple of 1/2
  expect_refused(with(3, 1, 1), "downscale_freq_shift");    // dim 3: one pair, nothing left
  expect_refused(with(8, NAN, 1), "downscale_freq_shift");
  expect_refused(with(8, 0, 0), "scale");
  expect_refused(with(8, 0, NAN), "scale");
  expect_refused(with(8, 0, INFINITY), "scale");
  // What the definition allows is accepted: a shift of 1/2, 3.5 of 4 pairs, a negative scale, dim 2 and 3.
  EXPECT_NO_THROW(Sinusoidal(with(8, 0.5, 1), 10));
  EXPECT_NO_THROW(Sinusoidal(with(8, 3.5, -2), 10));
  EXPECT_NO_THROW(Sinusoidal(with(2, 0, 1), 10));
  EXPECT_NO_THROW(Sinusoidal(with(3, 0, 1), 10));
}

}  // namespace
}  // namespace pe::ref

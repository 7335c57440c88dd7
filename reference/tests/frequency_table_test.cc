// The process-wide frequency tables behind ref::Frequencies (reference.cc): every value an object reads from
// the shared table, its double-double and the scaling's rule are those computed afresh from the formulas,
// whichever object computed them first, and objects of other parameters never read them; tables sharing an
// unscaled ladder each read their own.
#include <gtest/gtest.h>
#include <mpfr.h>

#include <boost/math/constants/constants.hpp>
#include <cmath>
#include <thread>

#include "pe/ref/frequency_ladder.h"
#include "pe/ref/reference.h"

namespace pe::ref {
namespace {

RopeScaling table_yarn_scaling() {
  RopeScaling s;
  s.type = RopeScalingType::Yarn;
  s.factor = 4;
  s.original_max_position = 4096;
  return s;
}

// unscaled_frequencies against the power of each exponent (ScalingRule<Real>::unscaled), bit for bit: bases
// from just above 1 to an NTK base near the largest double, head dims with and without tails, up to 4096.
TEST(FrequencyLadder, EveryPowerIsThePowersBits) {
  const std::uint64_t fallbacks = frequency_ladder_fallbacks();
  std::size_t compared = 0;
  for (const double base : {1.0001, 2.0, 10000.0, 500000.0, 1e6, 1e12, 0x1.fffffffffffffp1000}) {
    for (const std::int64_t dim : {2, 6, 64, 96, 128, 130, 4096}) {
      const ScalingRule<Real> rule({}, dim, base, boost::math::constants::pi<Real>());
      const std::size_t count = static_cast<std::size_t>(dim / 2);
      const std::vector<Real> ladder = unscaled_frequencies(rule.effective_base(), dim, count);
      ASSERT_EQ(ladder.size(), count);
      for (std::size_t k = 0; k < count; ++k, ++compared)
        ASSERT_EQ(ladder[k], rule.unscaled(k)) << "base " << base << " dim " << dim << " k " << k;
    }
  }
  EXPECT_EQ(compared, 7u * (1 + 3 + 32 + 48 + 64 + 65 + 2048));
  // Undecided values (none expected: a value within 2^-300 of a rounding boundary) are taken by a power.
  EXPECT_LE(frequency_ladder_fallbacks() - fallbacks, 2u);
}

TEST(FrequencyTable, SharedValuesAreTheFormulas) {
  RopeScaling dynamic;  // an NTK base of its own, from the sequence length
  dynamic.type = RopeScalingType::Dynamic;
  dynamic.factor = 4;
  dynamic.original_max_position = 2048;
  dynamic.seq_len = 30000;
  for (const RopeScaling& s : {RopeScaling{}, table_yarn_scaling(), dynamic}) {
    const std::size_t pairs = 16;
    const ScalingRule<Real> fresh(s, 32, 10000.0, boost::math::constants::pi<Real>());
    const Frequencies first(pairs, 32, 10000.0, s), second(pairs, 32, 10000.0, s);
    for (std::size_t i = 0; i < pairs; ++i) {
      const Real expected = fresh.inv_freq(i);
      EXPECT_EQ(first[i], expected) << "pair " << i;
      EXPECT_EQ(second[i], expected) << "pair " << i;  // read from the table first filled
      const dd::DD d = second.omega(i), e = to_dd(expected);
      EXPECT_EQ(d.hi, e.hi) << "pair " << i;
      EXPECT_EQ(d.lo, e.lo) << "pair " << i;
    }
    EXPECT_EQ(first.rule().attention(), fresh.attention());
    EXPECT_EQ(second.rule().effective_base(), fresh.effective_base());
  }
}

TEST(FrequencyTable, OtherParametersReadOtherValues) {
  const Frequencies a(8, 16, 10000.0), b(8, 16, 10000.5), c(8, 16, 10000.0, table_yarn_scaling());
  for (std::size_t i = 1; i < 8; ++i) EXPECT_NE(a[i], b[i]) << "pair " << i;
  // YaRN keeps the fast pairs and divides the slowest by the factor.
  EXPECT_EQ(a.omega(7).hi, 4 * c.omega(7).hi);
  EXPECT_EQ(a.omega(1).hi, c.omega(1).hi);
}

// The unscaled ladders are kept by base, dim and count (reference.cc's kept_ladder) and shared by tables of
// other scalings: each still reads its own formulas, whichever table kept the ladder first, where two NTK
// bases differ in their last bits, where two given bases differ by one double ulp, where the dim differs at
// one count (a key without the dim would hand one ladder's values to the other) and where the count differs
// at one dim (without the count, the longer table would read past the shorter ladder: ASan's build).
TEST(FrequencyTable, TablesSharingALadderReadTheirOwnFormulas) {
  std::vector<std::pair<double, RopeScaling>> configs;
  RopeScaling linear, dynamic, llama3 = table_yarn_scaling();
  linear.type = RopeScalingType::Linear;
  linear.factor = 2;
  llama3.type = RopeScalingType::Llama3;
  llama3.factor = 8;
  llama3.original_max_position = 8192;
  dynamic.type = RopeScalingType::Dynamic;
  dynamic.factor = 4;
  dynamic.original_max_position = 2048;
  for (const double base : {10000.0, std::nextafter(10000.0, 20000.0)}) {
    for (const RopeScaling& s : {RopeScaling{}, linear, table_yarn_scaling(), llama3})
      configs.emplace_back(base, s);
    for (const std::int64_t seq_len : {30000, 30001}) {
      dynamic.seq_len = seq_len;
      configs.emplace_back(base, dynamic);
    }
  }
  for (const auto& [pairs, dim] : {std::pair<std::size_t, std::int64_t>{16, 64}, {16, 32}, {32, 64}}) {
    for (const auto& [base, s] : configs) {
      const ScalingRule<Real> fresh(s, dim, base, boost::math::constants::pi<Real>());
      const Frequencies f(pairs, dim, base, s);
      for (std::size_t i = 0; i < pairs; ++i)
        ASSERT_EQ(f[i], fresh.inv_freq(i))
            << pairs << " pairs of dim " << dim << " base " << base << " type " << static_cast<int>(s.type);
    }
  }
}

TEST(FrequencyTable, ThreadsFillingOneTableAgree) {
  const std::size_t pairs = 64;
  const RopeScaling s = table_yarn_scaling();
  std::vector<std::vector<Real>> seen(4);
  std::vector<std::thread> threads;
  for (auto& values : seen)
    threads.emplace_back([&values, &s] {
      {
        const Frequencies f(pairs, 128, 500000.0, s);
        for (std::size_t i = pairs; i-- > 0;) values.push_back(f[i]);
      }
      mpfr_free_cache2(MPFR_FREE_LOCAL_CACHE);  // MPFR's per-thread constants, else they leak with the thread
    });
  for (auto& t : threads) t.join();
  const ScalingRule<Real> fresh(s, 128, 500000.0, boost::math::constants::pi<Real>());
  for (const auto& values : seen)
    for (std::size_t k = 0; k < pairs; ++k) EXPECT_EQ(values[k], fresh.inv_freq(pairs - 1 - k)) << k;
}

}  // namespace
}  // namespace pe::ref

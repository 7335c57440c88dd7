// kth_largest against std::nth_element on every Highway target this CPU has: tails continuous and lumpy (a
// few distinct values in heavy lumps, as an ALiBi check's ulp tail holds 193 in 552 779), sorted either
// way, with zeros and +inf, every k from the ends to the middle; each way a selection can go taken, a
// missed bracket through the histogram selection included.
#include "pe/harness/kth_largest.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace pe::harness {
namespace {
using detail::BracketCounts;
using detail::kth_largest_on;
using detail::kth_targets;
using detail::KthBracket;
using detail::KthPaths;
using detail::KthTarget;

double nth_largest(std::vector<double> v, std::size_t k) {
  const auto at = v.end() - static_cast<std::ptrdiff_t>(k);
  std::nth_element(v.begin(), at, v.end());
  return *at;
}

// A tail of n values of one of six shapes.
std::vector<double> tail(std::mt19937_64& rng, std::size_t n, int shape) {
  std::vector<double> v(n);
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<double> lumps(2 + rng() % 200);
  for (double& x : lumps) x = std::ldexp(1 + unit(rng), -static_cast<int>(rng() % 4));
  for (std::size_t i = 0; i < n; ++i) {
    switch (shape) {
      case 0:  // continuous over a few binades
        v[i] = std::ldexp(1 + unit(rng), -static_cast<int>(rng() % 4));
        break;
      case 1:  // lumpy: a few values, the first ones far more often
        v[i] = lumps[std::min<std::size_t>(rng() % lumps.size(), rng() % lumps.size())];
        break;
      case 2:  // one lump and a scatter
        v[i] = rng() % 3 == 0 ? 7.0 : 7.0 + unit(rng);
        break;
      case 3:  // zeros and +inf among them
        v[i] = rng() % 5 == 0 ? 0.0 : rng() % 7 == 0 ? INFINITY : unit(rng);
        break;
      default:
        v[i] = unit(rng);
    }
  }
  if (shape == 4) std::sort(v.begin(), v.end());
  if (shape == 5) std::sort(v.rbegin(), v.rend());
  return v;
}

TEST(KthLargest, EqualsNthElementOnEveryTargetAndTakesEveryPath) {
  std::mt19937_64 rng(20261208);
  ASSERT_FALSE(kth_targets().empty());
  for (const KthTarget& target : kth_targets()) {
    SCOPED_TRACE(target.name);
    KthPaths paths;
    for (int trial = 0; trial < 240; ++trial) {
      const std::size_t n = std::vector<std::size_t>{100, 4097, 6000, 30000, 120000}[trial % 5];
      const std::vector<double> v = tail(rng, n, trial / 5 % 6);
      const std::size_t k = std::vector<std::size_t>{1, n, n / 100 + 1, n / 2, 1 + rng() % n}[trial / 30 % 5];
      ASSERT_EQ(kth_largest_on(target, v, k, &paths), nth_largest(v, k)) << "trial " << trial << " k " << k;
    }
    EXPECT_GT(paths.small, 0U);
    EXPECT_GT(paths.upper, 0U);
    EXPECT_GT(paths.lower, 0U);
    EXPECT_GT(paths.inside, 0U);
  }
}

// A bracket that misses the k-th (both ends above it, or below it) goes to the histogram selection.
TEST(KthLargest, AMissedBracketGoesToTheHistogram) {
  std::mt19937_64 rng(7);
  const std::vector<double> v = tail(rng, 50000, 0);
  const std::size_t k = 25000;
  const double kth = nth_largest(v, k);
  for (const KthBracket b : {KthBracket{kth * 1.01, kth * 1.02}, KthBracket{kth * 0.98, kth * 0.99}}) {
    KthPaths paths;
    EXPECT_EQ(kth_largest_on(kth_targets().front(), v, k, &paths, {&b, 1}), kth);
    EXPECT_EQ(paths.histogram, 1U);
    EXPECT_EQ(paths.inside + paths.upper + paths.lower, 0U);
  }
  EXPECT_EQ(kth_largest_by_histogram(v, k), kth);
}

// Brackets forced level by level: three gathers, each narrower, and then the histogram selection on what is
// left (more than 4096 values), the k-th still the k-th.
TEST(KthLargest, ThreeLevelsThenTheHistogram) {
  std::vector<double> v(40000);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>((i * 7919) % v.size());  // 0..39999
  const std::size_t k = 20000;  // the value 20000 (39999 the first)
  const KthBracket levels[] = {{1000, 39000}, {2000, 38000}, {3000, 37000}};
  for (const KthTarget& target : kth_targets()) {
    SCOPED_TRACE(target.name);
    KthPaths paths;
    EXPECT_EQ(kth_largest_on(target, v, k, &paths, levels), 20000.0);
    EXPECT_EQ(paths.inside, 3U);
    EXPECT_EQ(paths.histogram, 1U);
    EXPECT_EQ(paths.small, 0U);
  }
}

// Every k of a lumpy tail against one bracket [2, 4] whose ends are lumps: k at each boundary (the last value
// above the bracket, the first and last at hi, inside, at lo, the first below) and between.
TEST(KthLargest, EveryKAroundAGivenBracket) {
  std::vector<double> v;
  for (int value = 1; value <= 5; ++value)
    for (int i = 0; i < 1000 + 37 * value; ++i) v.push_back(value + (value == 3 ? 0.001 * (i % 7) : 0.0));
  std::mt19937_64 rng(5);
  std::shuffle(v.begin(), v.end(), rng);
  std::vector<double> sorted = v;
  std::sort(sorted.rbegin(), sorted.rend());
  const KthBracket b{2.0, 4.0};
  for (const KthTarget& target : kth_targets()) {
    SCOPED_TRACE(target.name);
    KthPaths paths;
    for (std::size_t k = 1; k <= v.size(); ++k)
      ASSERT_EQ(kth_largest_on(target, v, k, &paths, {&b, 1}), sorted[k - 1]) << "k " << k;
    EXPECT_GT(paths.upper, 0U);
    EXPECT_GT(paths.lower, 0U);
    EXPECT_GT(paths.inside, 0U);
    EXPECT_GT(paths.histogram, 0U);  // the k above hi's lump and below lo's
  }
}

// Each target's two passes against their definitions, with lo == hi and the vectors' remainders.
TEST(KthLargest, CountAndGatherFollowTheirDefinitions) {
  std::mt19937_64 rng(11);
  for (const KthTarget& target : kth_targets()) {
    SCOPED_TRACE(target.name);
    for (std::size_t n : {0, 1, 7, 8, 9, 31, 1000}) {
      const std::vector<double> v = tail(rng, n, 1);
      for (int pick = 0; pick < 4; ++pick) {
        const double lo = n == 0 ? 0.5 : v[rng() % n], hi = pick == 0 ? lo : n == 0 ? 1.0 : v[rng() % n];
        BracketCounts want;
        std::vector<double> between;
        for (const double x : v) {
          want.above += x > hi, want.at_least += x >= lo, want.at_hi += x == hi, want.at_lo += x == lo;
          want.below += x < lo;
          if (lo < x && x < hi) between.push_back(x);
        }
        const BracketCounts got = target.count(v.data(), n, lo, hi);
        EXPECT_EQ(got.above, want.above);
        EXPECT_EQ(got.at_least, want.at_least);
        EXPECT_EQ(got.at_hi, want.at_hi);
        EXPECT_EQ(got.at_lo, want.at_lo);
        EXPECT_EQ(got.below, want.below);
        std::vector<double> out(between.size() + 64, -1.0);
        ASSERT_EQ(target.gather(v.data(), n, lo, hi, out.data()), between.size());
        EXPECT_TRUE(std::equal(between.begin(), between.end(), out.begin()));
      }
    }
  }
}

// A NaN (not a tail's) goes to the histogram selection, whose answer stays what Tail::p99 gave before.
TEST(KthLargest, ANaNGoesToTheHistogram) {
  std::mt19937_64 rng(3);
  std::vector<double> v = tail(rng, 30000, 0);
  v[123] = NAN;
  for (std::size_t k : {1, 2, 300, 15000}) {
    KthPaths paths;
    const double got = kth_largest_on(kth_targets().front(), v, k, &paths);
    const double want = kth_largest_by_histogram(v, k);
    EXPECT_TRUE(got == want || (std::isnan(got) && std::isnan(want))) << k;
    EXPECT_EQ(paths.histogram, 1U) << k;
  }
  EXPECT_TRUE(std::isnan(kth_largest(v, 1)));  // ranked above every number, +inf included
}

TEST(KthLargest, NamesAKOutsideItsRange) {
  const std::vector<double> v(10, 1.0);
  for (std::size_t k : {0, 11}) {
    try {
      kth_largest(v, k);
      ADD_FAILURE() << "k " << k << " taken";
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("k " + std::to_string(k)), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace pe::harness

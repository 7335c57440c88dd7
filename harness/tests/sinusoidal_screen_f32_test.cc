// The table kernel's float32 pre-test (sinusoidal_screen.cc's Quiet32, its lines table_fast_line32): float32
// rows compared as read against e rounded to float32 must change no outcome of the kernel. Its lines against
// their bound in exact arithmetic; the kernel with and without its pre-tests on float32 rows whose errors sit
// at and beside every bar, where e's own rounding to float32 hides or adds up to half a float32 ulp; and the
// percentiles' sample blocks (table_sample_block).
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "pe/harness/sinusoidal_screen.h"
#include "pe/ref/real.h"

namespace pe::harness {
namespace {

// Each line is at most (L − 2^-23 − 2^-124)·(1 − 2^-24) (Quiet32's bound, measured in 100-digit MPFR), and
// within 2^-20 of it (not so low that it passes little); none (-1) where that bound is not positive or is
// below 2^-100, a float32's largest where L is infinite.
TEST(SinusoidalScreenF32, TheFloat32LinesLieUnderTheirBound) {
  std::mt19937_64 rng(2024);
  std::vector<double> lines{
      0x1p-23, 0x1p-23 + 0x1p-60, 0x1.0000001p-23, 0x1p-22, 0x1p-20, 0.5, 1.0, 1e30, 3.5e38, DBL_MAX};
  for (int i = 0; i < 20000; ++i)
    lines.push_back(
        std::ldexp(std::uniform_real_distribution<double>(1, 2)(rng), static_cast<int>(rng() % 60) - 40));
  for (const double L : lines) {
    SCOPED_TRACE(L);
    const float line = table_fast_line32(L);
    const ref::Real bound =
        (ref::Real(L) - ref::Real(0x1p-23) - ref::Real(0x1p-124)) * (1 - ref::Real(0x1p-24));
    if (bound < ref::Real(0x1p-100)) {
      EXPECT_EQ(line, -1.0f);
      continue;
    }
    ASSERT_GT(line, 0.0f);
    EXPECT_LE(ref::Real(line), bound);
    if (bound < ref::Real(FLT_MAX)) {
      EXPECT_GE(ref::Real(line), bound * (1 - ref::Real(0x1p-20)));
    } else {
      EXPECT_EQ(line, FLT_MAX);
    }
  }
  for (const double none : {double{NAN}, -1.0, -HUGE_VAL, 0.0, 0x1p-24, 0x1p-23})
    EXPECT_EQ(table_fast_line32(none), -1.0f) << none;
  EXPECT_EQ(table_fast_line32(INFINITY), FLT_MAX);
  // table_fast_bars fills them from its own lines.
  const TableScreenBars bars{.max_ulp = 2, .abs_floor = 0x1p-10, .ulp_floor = 0.5};
  const std::vector<double> in{NAN, 0x1p-8, 0x1p-12, INFINITY};
  std::vector<double> fast(in.size());
  std::vector<float> fast32(in.size());
  EXPECT_TRUE(table_fast_bars(bars, in, fast.data(), fast32.data()).line32_passes);  // some line above 0
  for (std::size_t j = 0; j < in.size(); ++j) EXPECT_EQ(fast32[j], table_fast_line32(fast[j])) << j;
  // The drivers' gate: no line above 0 (a NaN line, lines under 2^-23), no float32 lines asked, none at all.
  const std::vector<double> none{NAN, 0x1p-24, 0x1p-23};
  EXPECT_FALSE(table_fast_bars(bars, none, fast.data(), fast32.data()).line32_passes);
  EXPECT_FALSE(table_fast_bars(bars, in, fast.data()).line32_passes);
  EXPECT_FALSE(table_fast_bars(bars, {}, fast.data(), fast32.data()).line32_passes);
}

// What one kernel call gave: flags, loud count, kept estimates, the rows it took.
struct KernelOutcome {
  std::vector<double> flags, abs, ulp;
  std::size_t loud = 0, rows = 0;
};

KernelOutcome run_float32_kernel(const TableScreenTarget& target, const std::vector<float>& y, std::size_t n,
                                 const ScreenChannels& ch, TableScreenRow row, const TableScreenBars& bars,
                                 std::vector<double> sin, std::vector<double> cos, bool pre_tests) {
  const std::size_t padded = ScreenToken::padded(n), rows = row.rows;
  KernelOutcome out{std::vector<double>(rows * padded), std::vector<double>(2 * rows * padded + 8),
                    std::vector<double>(2 * rows * padded + 8)};
  std::vector<double> fast(padded, -1.0);
  std::vector<float> fast32(padded, -1.0f);
  row.sin = sin.data(), row.cos = cos.data();
  if (pre_tests) {
    row.fast_ulp =
        table_fast_bars(bars, std::span<const double>(row.line, n), fast.data(), fast32.data()).ulp;
    row.fast_line = fast.data(), row.fast_line32 = fast32.data();
  }
  TableScreenResult result{out.flags.data(), out.abs.data(), out.ulp.data()};
  target.run(ScreenType::F32, y.data(), n, ch, row, bars, result);
  out.abs.resize(result.abs_kept), out.ulp.resize(result.ulp_kept);
  out.loud = result.loud, out.rows = result.rows;
  return out;
}

bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

// (s, c) rotated by (ss, sc) as the kernel rotates (sinusoidal_screen.cc's Rotate: one rounding each).
void rotate_as_kernel(double& s, double& c, double ss, double sc) {
  const double s1 = std::fma(s, sc, c * ss), c1 = std::fma(c, sc, -(s * ss));
  s = s1, c = c1;
}

// Float32 rows of 64 pairs (8 whole vectors or more on every target, so that the float32 pre-test runs on
// all), concatenated or interleaved, one, two or three rows a call, the first rotated or not (every path of
// the kernel: a row alone rotated or not, two rows a step after either); e at and just below powers of two
// (where the ulp bar's binade and e's own meet, and the pre-test's bar comes closest to the judge's), beside
// 0 and random; lines from 2^-24 (no float32 line) to infinite, NaN; errors planted at the pair's line, at
// its float32 line, at the ulp bar, at the floors, each nudged by a float32 ulp or a relative 2^-20 either
// way. Every outcome must be the judge's alone, and the pre-test must have passed vectors
// (table_screen_float32_passes). Where its margins are dropped (its line L, or its bar without the float32
// rounding of e taken off), this test fails. Its η and 2^-120 (subnormals, flushed ones) are not reached: e
// near 0 here (0, 2^-30) is a float32, so a = 0 there.
TEST(SinusoidalScreenF32, TheFloat32PreTestChangesNoOutcomeOfTheKernel) {
  constexpr std::size_t n = 64;
  std::mt19937_64 rng(5353);
  const auto pick = [&](std::initializer_list<double> v) { return v.begin()[rng() % v.size()]; };
  const auto uniform = [&](double lo, double hi) {
    return std::uniform_real_distribution<double>(lo, hi)(rng);
  };
  std::size_t cases = 0, loud = 0, quiet = 0;
  const std::size_t passes = table_screen_float32_passes();
  for (const TableScreenTarget& target : table_screen_targets()) {
    SCOPED_TRACE(target.name);
    for (int trial = 0; trial < 600; ++trial) {
      const double radius = pick({0x1p-48, 0x1p-44, 0x1p-30});
      const TableScreenBars bars{.max_ulp = pick({1.1, 1.2, 1.3, 1.5, 4.0, 64.0, 1e6, INFINITY}),
                                 .abs_floor = pick({0x1p-18, 0x1p-12, INFINITY, INFINITY}),
                                 .ulp_floor = pick({2.0, 1e3, INFINITY, INFINITY})};
      const std::size_t rows = 1 + trial % 3;
      const bool rotate = trial / 3 % 2 == 1, interleaved = trial / 6 % 2 == 1;
      const bool all_quiet = trial % 5 == 0;  // y = e rounded, e away from 0, lines not NaN: no element loud
      std::vector<double> sin(n), cos(n), line(n), step_sin(n), step_cos(n);
      for (std::size_t j = 0; j < n; ++j) {
        const double phi = uniform(0, 6.3), w = uniform(0, 0.1);
        step_sin[j] = std::sin(w), step_cos[j] = std::cos(w);
        const double below = pick({0.5, 0.25, 1.0, 0x1p-10}) * (1 - pick({0x1p-40, 0x1p-24, 0x1p-12}));
        sin[j] = rng() % 3 == 0 ? pick({below, -below, 0.5, 0x1p-30, 0.0}) : std::sin(phi);
        cos[j] = rng() % 3 == 0 ? pick({below, 1.0, -0.25}) : std::cos(phi);
        line[j] = rng() % 16 == 0 ? pick({NAN, INFINITY, 0x1p-24})
                                  : pick({0x1p-22, 0x1p-20, 0x1p-16, 0x1p-12, 0x1p-8});
        if (all_quiet) {
          sin[j] = pick({below, -below, 0.5, 0.75}), cos[j] = pick({below, 1.0, -0.25, 0.375});
          line[j] = pick({INFINITY, 0x1p-22, 0x1p-8});
        }
      }
      // Each row's e as the kernel forms it: the first rotated where `rotate`, each later one from the last.
      std::vector<std::vector<double>> es(rows, std::vector<double>(2 * n));
      for (std::size_t j = 0; j < n; ++j) {
        double s = sin[j], c = cos[j];
        for (std::size_t r = 0; r < rows; ++r) {
          if (r > 0 || rotate) rotate_as_kernel(s, c, step_sin[j], step_cos[j]);
          es[r][j] = s, es[r][n + j] = c;
        }
      }
      std::vector<float> y(rows * 2 * n);
      for (std::size_t r = 0; r < rows; ++r)
        for (std::size_t o = 0; o < 2; ++o)
          for (std::size_t j = 0; j < n; ++j) {
            const double e = es[r][o * n + j];
            const auto ulp_at = [](double v) { return std::ldexp(1.0, std::max(std::ilogb(v), -126) - 23); };
            const double lower = ulp_at(std::max(std::fabs(e) - 2 * radius, 0x1p-126));
            const double own = ulp_at(e == 0 ? 0x1p-126 : e);
            const double fast = std::isnan(line[j]) ? -1.0 : std::min(line[j], bars.abs_floor);
            // One element in 16 planted, the rest e rounded: a vector then holds one element at a bar
            // with no louder one beside it, and the pre-test decides on that element alone.
            if (all_quiet || rng() % 16 != 0) {
              y[r * 2 * n + (interleaved ? 2 * j + o : o * n + j)] = static_cast<float>(e);
              continue;
            }
            double err = std::ldexp(uniform(0, 1), -27);
            if (rng() % 8 != 0) {
              const double bar = pick({fast, table_fast_line32(fast), bars.abs_floor,
                                       bars.max_ulp * (1 - 0x1p-49) * lower - radius, bars.ulp_floor * own,
                                       uniform(0, 1) * fast});
              if (std::isfinite(bar) && bar > 0) err = bar * (1 + pick({0.0, 0x1p-20, -0x1p-20}));
            }
            auto v = static_cast<float>(e + (rng() % 2 == 0 ? err : -err));
            if (rng() % 3 == 0) v = std::nextafter(v, rng() % 2 == 0 ? INFINITY : -INFINITY);
            if (rng() % 31 == 0) v = static_cast<float>(pick({NAN, INFINITY}));
            y[r * 2 * n + (interleaved ? 2 * j + o : o * n + j)] = v;
          }
      TableScreenRow row{nullptr, nullptr, step_sin.data(), step_cos.data(), line.data(), radius, rotate};
      row.rows = rows, row.y_stride = 2 * n * sizeof(float), row.table_rows = rows;
      const ScreenChannels ch = interleaved ? ScreenChannels{0, 1, true} : ScreenChannels{0, n, false};
      const KernelOutcome judged = run_float32_kernel(target, y, n, ch, row, bars, sin, cos, false);
      const KernelOutcome pre = run_float32_kernel(target, y, n, ch, row, bars, sin, cos, true);
      EXPECT_TRUE(same_bits(judged.flags, pre.flags)) << "trial " << trial;
      EXPECT_EQ(judged.loud, pre.loud) << "trial " << trial;
      EXPECT_EQ(judged.rows, pre.rows) << "trial " << trial;
      EXPECT_TRUE(same_bits(judged.abs, pre.abs)) << "trial " << trial;
      EXPECT_TRUE(same_bits(judged.ulp, pre.ulp)) << "trial " << trial;
      ++cases;
      (judged.loud != 0 ? loud : quiet) += 1;
    }
  }
  if (!table_screen_targets().empty()) {
    EXPECT_EQ(cases, 600 * table_screen_targets().size());
    EXPECT_GT(loud, cases / 4);  // both outcomes met often
    EXPECT_GT(quiet, cases / 20);
    EXPECT_GT(table_screen_float32_passes(), passes + cases);  // more than one vector a call on average
  }
}

// A kernel call stops trying the float32 pre-test after a step in which it failed most vectors: a first row
// whose pairs from the eighth on are each 3 float32 ulps off (over the pre-test's ulp bar, under 2 ulps, but
// quiet under max_ulp 64; no line), then two exact rows. Stopped, the call counts the first row's passing
// vectors alone (one or two: pairs 0-7), not the exact rows' (a pass a vector each); with a first row as
// exact as the others it counts them all. The outcomes are the judge's either way.
TEST(SinusoidalScreenF32, AKernelCallStopsThePreTestAfterAStepItMostlyFailed) {
  constexpr std::size_t n = 64;
  std::vector<double> sin(n), cos(n), line(n, INFINITY), step_sin(n), step_cos(n);
  for (std::size_t j = 0; j < n; ++j) {
    const double phi = 0.3 + 0.02 * static_cast<double>(j), w = 0.001 * static_cast<double>(j + 1);
    sin[j] = std::sin(phi), cos[j] = std::cos(phi), step_sin[j] = std::sin(w), step_cos[j] = std::cos(w);
  }
  const TableScreenBars bars{.max_ulp = 64, .abs_floor = INFINITY, .ulp_floor = 2.0};
  for (const TableScreenTarget& target : table_screen_targets()) {
    SCOPED_TRACE(target.name);
    for (const bool first_off : {true, false}) {
      std::vector<float> y(3 * 2 * n);
      for (std::size_t j = 0; j < n; ++j) {
        double s = sin[j], c = cos[j];
        for (std::size_t r = 0; r < 3; ++r) {
          if (r > 0) rotate_as_kernel(s, c, step_sin[j], step_cos[j]);
          for (const auto& [o, e] : {std::pair{0, s}, std::pair{1, c}}) {
            float v = static_cast<float>(e);
            if (first_off && r == 0 && j >= 8 && o == 0)
              for (int u = 0; u < 3; ++u) v = std::nextafter(v, INFINITY);
            y[r * 2 * n + 2 * j + o] = v;
          }
        }
      }
      TableScreenRow row{nullptr, nullptr, step_sin.data(), step_cos.data(), line.data(), 0x1p-48, false};
      row.rows = 3, row.y_stride = 2 * n * sizeof(float), row.table_rows = 3;
      const ScreenChannels ch{0, 1, true};
      const KernelOutcome judged = run_float32_kernel(target, y, n, ch, row, bars, sin, cos, false);
      const std::size_t before = table_screen_float32_passes();
      const KernelOutcome pre = run_float32_kernel(target, y, n, ch, row, bars, sin, cos, true);
      const std::size_t passes = table_screen_float32_passes() - before;
      EXPECT_EQ(pre.loud, 0U);
      EXPECT_EQ(pre.rows, 3U);
      EXPECT_TRUE(same_bits(judged.flags, pre.flags));
      EXPECT_TRUE(same_bits(judged.abs, pre.abs));
      EXPECT_TRUE(same_bits(judged.ulp, pre.ulp));
      if (first_off) {
        EXPECT_GE(passes, 1U);
        EXPECT_LE(passes, 2U);
      } else {
        EXPECT_GE(passes, 16U);  // two steps of 8 vectors or more each
      }
    }
  }
}

// About 4096 elements a block, a power of two; for a row length that is a power of two up to 4096, a band of
// 2^21 elements (Measurement::kSampledFrom) holds 512 blocks (kSampledBlocksFrom).
TEST(SinusoidalScreenF32, ATablesSampleBlockHoldsAbout4096Elements) {
  EXPECT_EQ(table_sample_block(128), 32U);
  EXPECT_EQ(table_sample_block(1024), 4U);
  EXPECT_EQ(table_sample_block(1280), 2U);
  EXPECT_EQ(table_sample_block(4096), 1U);
  EXPECT_EQ(table_sample_block(10000), 1U);
  EXPECT_EQ(table_sample_block(0), 4096U);
  for (std::size_t dim = 1; dim <= 4096; dim *= 2) {
    const std::size_t block = table_sample_block(dim);
    EXPECT_TRUE(std::has_single_bit(block)) << dim;
    EXPECT_EQ(Measurement::kSampledFrom / dim / block, Measurement::kSampledBlocksFrom) << dim;
  }
}

}  // namespace
}  // namespace pe::harness

// measure(): the one comparison with the reference. Errors planted at known elements must come back
// with their position, channel, size in ULPs and band; the statistics follow their definitions.
#include "pe/harness/measure.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>

#include "pe/harness/instance.h"
#include "pe/ref/reference.h"

namespace pe::harness {
namespace {

// The correctly rounded f32 table: every element within half an ulp of the exact value.
std::vector<double> rounded_table(const SinusoidalParams& params,
                                  const std::vector<std::int64_t>& positions) {
  const ref::Sinusoidal r(params, *std::max_element(positions.begin(), positions.end()));
  std::vector<double> y;
  for (std::int64_t p : positions)
    for (std::size_t ch = 0; ch < static_cast<std::size_t>(params.dim); ++ch)
      y.push_back(r.rounded(p, ch, DType::F32));
  return y;
}

TEST(Measure, CorrectlyRoundedTableIsWithinHalfAnUlpEverywhere) {
  const SinusoidalParams params{16, 10000.0, Layout::Interleaved};
  const std::vector<std::int64_t> positions = {0, 5, 999, 1000, 123456, 2'000'000'000};
  Measurement m;
  measure_sinusoidal(params, positions, rounded_table(params, positions), {nullptr, DType::F32, 1e-30},
                     [&](const ElementRecord& e) { m.add(e); });
  EXPECT_EQ(m.count(), positions.size() * 16);
  for (const BandStats& b : m.bands()) {
    EXPECT_LE(b.max_ulp.value, 0.5) << b.lo;
    EXPECT_LE(b.p99_ulp, b.max_ulp.value);
  }
  // Position 0 channel 0 is sin 0 = 0 exactly: no error, within even a tiny fixed budget.
  EXPECT_EQ(m.bands()[0].samples, 3u * 16);
  EXPECT_EQ(m.bands()[1].samples, 1u * 16);  // 1000 opens the second band
}

// An element whose budget reaches the largest error any output of its magnitude could have cannot fail:
// RoPE's pair norm plus |exact|, a sinusoid's 1 + |exact|. A band of only such elements is undecidable,
// whatever the data holds; a band with one element left to judge is not, and says how many were judged.
TEST(Measure, BudgetsThatReachAnyOutputsErrorAreUndecidable) {
  const RopeParams params{8, 8, 10000.0, Layout::HalfSplit};
  const std::vector<std::int64_t> far = {std::int64_t{1} << 40, (std::int64_t{1} << 40) + 1};
  std::vector<double> x(2 * 8), wrong(2 * 8);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = 0.25 + 0.125 * static_cast<double>(i % 5);
  for (std::size_t i = 0; i < x.size(); ++i) wrong[i] = -x[(i + 3) % x.size()];  // any output at all
  const RopeBatch batch = RopeBatch::tokens_first(far, 1, 8);
  const Budget flat_vacuous{nullptr, DType::F32, 10.0}, flat_tight{nullptr, DType::F32, 1e-6};
  Measurement vacuous, tight;
  measure_rope(params, batch, x, wrong, flat_vacuous, [&](const ElementRecord& e) {
    EXPECT_GE(e.reach, std::fabs(e.exact));
    EXPECT_LE(e.reach, 2 * 2 * 0.75 + 1e-12);  // at most twice the pair's norm (|x_a|, |x_b| <= 0.75)
    vacuous.add(e);
  });
  EXPECT_TRUE(vacuous.pass());
  EXPECT_FALSE(vacuous.verdict_pass());
  EXPECT_EQ(vacuous.undecidable(), 16u);
  EXPECT_EQ(vacuous.undecidable_bands(), 1u);
  EXPECT_STREQ(vacuous.bands().back().verdict(), "undecidable");
  measure_rope(params, batch, x, wrong, flat_tight, [&](const ElementRecord& e) { tight.add(e); });
  EXPECT_EQ(tight.undecidable(), 0u);
  EXPECT_STREQ(tight.bands().back().verdict(), "FAIL");
  // A pair of zeros carries nothing but its floor: judged, never undecidable.
  std::vector<double> zeros(16, 0.0);
  Measurement zero;
  measure_rope(params, batch, zeros, zeros, flat_vacuous, [&](const ElementRecord& e) { zero.add(e); });
  EXPECT_EQ(zero.undecidable(), 0u);
  EXPECT_TRUE(zero.verdict_pass());
  // One element left to judge keeps the band decidable.
  Measurement mixed;
  ElementRecord e;
  e.position = 5, e.budget = 3, e.reach = 2;
  mixed.add(e);
  e.budget = 1;
  mixed.add(e);
  EXPECT_EQ(mixed.undecidable(), 1u);
  EXPECT_EQ(mixed.bands()[0].judged(), 1u);
  EXPECT_STREQ(mixed.bands()[0].verdict(), "pass");
  // Sinusoids: a budget of 2 reaches any value in [-1, 1].
  const SinusoidalParams table{4, 10000.0, Layout::Interleaved};
  Measurement sinusoid;
  measure_sinusoidal(table, far, std::vector<double>(8, 0.0), {nullptr, DType::F32, 2.0},
                     [&](const ElementRecord& r) {
                       EXPECT_DOUBLE_EQ(r.reach, 1 + std::fabs(r.exact));
                       sinusoid.add(r);
                     });
  EXPECT_EQ(sinusoid.undecidable_bands(), 1u);
}

TEST(Measure, PlantedErrorIsFoundWithItsElementUlpAndBand) {
  const SinusoidalParams params{8, 10000.0, Layout::Concatenated};
  const std::vector<std::int64_t> positions = {7, 50'000};
  std::vector<double> y = rounded_table(params, positions);
  // Row 1 (position 50000), channel 5 = the cos of pair 1: moved by 3 f32 ulps of its value.
  const std::size_t at = 8 + 5;
  const double ulp = std::ldexp(1.0, std::ilogb(y[at]) - 23);
  y[at] += 3 * ulp;
  Measurement m;
  measure_sinusoidal(params, positions, y, {nullptr, DType::F32, 1e-6},
                     [&](const ElementRecord& e) { m.add(e); });
  ASSERT_EQ(m.worst().size(), 10u);
  const ElementRecord& w = m.worst().front();
  EXPECT_EQ(w.row, 1);
  EXPECT_EQ(w.position, 50'000);
  EXPECT_EQ(w.channel, 5);
  EXPECT_NEAR(w.ulp, 3.0, 0.5);
  EXPECT_NEAR(w.abs_error, 3 * ulp, ulp / 2);
  const auto bands = m.bands();
  EXPECT_EQ(bands[2].lo, 10'000);
  EXPECT_EQ(bands[2].max_abs.at.channel, 5);
  EXPECT_EQ(bands[2].samples, 8u);
  EXPECT_EQ(bands[0].max_ulp.value <= 0.5, true);
  EXPECT_EQ(m.pass(), 3 * ulp <= 1e-6);
}

TEST(Measure, StatisticsFollowTheirDefinitions) {
  Measurement m(5000, 2);
  for (int k = 1; k <= 200; ++k) {  // errors 1..200 at position 10, budget 150
    ElementRecord e;
    e.position = 10;
    e.abs_error = k;
    e.ulp = 2.0 * k;
    e.budget = 150;
    m.add(e);
  }
  const auto bands = m.bands();
  ASSERT_EQ(bands.size(), 2u);  // [0, 999], [1000, 5000]
  EXPECT_EQ(bands[1].hi, 5000);
  EXPECT_EQ(bands[0].p99_abs, 198);  // nearest rank: ceil(0.99·200) = 198th smallest
  EXPECT_EQ(bands[0].p99_ulp, 396);
  EXPECT_EQ(bands[0].max_abs.value, 200);
  EXPECT_EQ(bands[0].budget_at_max_abs, 150);
  EXPECT_EQ(bands[0].violations, 50u);
  EXPECT_EQ(m.worst().size(), 2u);
  EXPECT_EQ(m.worst()[0].abs_error, 200);
  EXPECT_EQ(m.worst()[1].abs_error, 199);
}

TEST(Measure, NanAndZeroBudgetsAreViolations) {
  ElementRecord e;
  e.abs_error = NAN;
  e.budget = 1;
  EXPECT_EQ(e.ratio(), INFINITY);
  e.abs_error = 1e-300;
  e.budget = 0;
  EXPECT_EQ(e.ratio(), INFINITY);
  e.abs_error = 0;
  EXPECT_EQ(e.ratio(), 0);
  Measurement m;
  e.abs_error = 0;
  e.budget = 0.5;
  m.add(e);  // an exact element first: its band names it and its budget
  EXPECT_EQ(m.bands()[0].budget_at_max_abs, 0.5);
  EXPECT_EQ(m.bands()[0].max_abs.at.budget, 0.5);
  e.abs_error = NAN;
  e.position = 5000;
  m.add(e);
  EXPECT_FALSE(m.pass());
  EXPECT_TRUE(std::isnan(m.bands()[1].max_abs.value));
  EXPECT_EQ(m.max_abs(), INFINITY);  // what check's verdict line and its diagnosis gate read
  EXPECT_EQ(m.bands().back().hi, std::numeric_limits<std::int64_t>::max());
}

TEST(Measure, RopePassThroughChannelsMustBeUntouched) {
  const RopeParams params{8, 4, 10000.0, Layout::HalfSplit};
  const std::vector<std::int64_t> positions = {3};
  const std::vector<double> x = {0.5, -0.25, 1, 2, 0.125, 3, -1, 4};
  const ref::Rope r(params, 3);
  std::vector<double> y = x;
  for (std::size_t j = 0; j < 2; ++j) std::tie(y[j], y[j + 2]) = r.rounded(3, j, x[j], x[j + 2], DType::F64);
  Measurement good, bad;
  const Budget budget{nullptr, DType::F64, 1e-15};
  measure_rope(params, positions, 1, x, y, budget, [&](const ElementRecord& e) { good.add(e); });
  EXPECT_TRUE(good.pass());
  EXPECT_EQ(good.count(), 8u);
  y[6] = std::nextafter(y[6], 0.0);  // a pass-through lane written by a fast path
  measure_rope(params, positions, 1, x, y, budget, [&](const ElementRecord& e) { bad.add(e); });
  EXPECT_FALSE(bad.pass());
  EXPECT_EQ(bad.worst().front().channel, 6);
  EXPECT_EQ(bad.worst().front().budget, 0);
}

TEST(Measure, SampleSelectsRowsAndBothChannelsOfEachPair) {
  const SinusoidalParams params{8, 10000.0, Layout::Concatenated};
  const std::vector<std::int64_t> positions = {1, 2, 3};
  std::vector<std::pair<std::int64_t, std::int64_t>> seen;
  measure_sinusoidal(params, positions, rounded_table(params, positions), {nullptr, DType::F32, 1},
                     [&](const ElementRecord& e) { seen.emplace_back(e.row, e.channel); }, {{2}, {1}});
  EXPECT_EQ(seen, (std::vector<std::pair<std::int64_t, std::int64_t>>{{2, 1}, {2, 5}}));
}

}  // namespace
}  // namespace pe::harness

namespace pe::harness {
namespace {

// A RoPE batch rotated with errors of a few float32 ulps, some rows far over budget, a NaN and a moved
// pass-through channel: rows and elements that reach every branch of the statistics. The noise is of a fixed
// size (Flat), grows with the position (Growing, a float32 angle's: later rows keep rising above the tails'
// floors) or is a uniform share of each value's ULP (Ulps: the ULP errors crowd just below their largest).
enum class Noise { Flat, Growing, Ulps };
struct NoisyRope {
  RopeParams params{64, 0, 10000.0, Layout::HalfSplit};
  std::vector<std::int64_t> positions;
  std::vector<double> x, y;
  explicit NoisyRope(Noise noise) {
    params.rotary_dim = 48;
    std::mt19937_64 g(20261202);
    std::uniform_real_distribution<double> unit(-1.0, 1.0);
    for (int t = 0; t < 40; ++t) positions.push_back(t < 20 ? t * 37 : 2000 + t * 91);
    x.resize(positions.size() * 3 * 64);
    for (double& v : x) v = static_cast<float>(unit(g));
    const ref::Rope r(params, 6000);
    const RopePlan plan(params);
    y = x;
    for (std::size_t t = 0; t < positions.size(); ++t)
      for (std::size_t h = 0; h < 3; ++h)
        for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
          const std::size_t row = (t * 3 + h) * 64;
          const auto [i0, i1] = plan.input_channels(j);
          const auto [a, b] = r.rounded(positions[t], j, x[row + i0], x[row + i1], DType::F32);
          const double size = noise == Noise::Growing ? 1 + static_cast<double>(positions[t]) / 64 : 1;
          y[row + i0] = noise == Noise::Ulps ? a + unit(g) * std::ldexp(1.0, std::ilogb(a) - 23)
                                             : a + unit(g) * 0x1p-22 * size;
          y[row + i1] = b;
        }
    y[5 * 64 + 3] += 0.01;  // far over budget
    y[70 * 64 + 9] = NAN;
    y[90 * 64 + 60] += 0x1p-20;  // a pass-through channel moved
  }
};

// add_row (a row's quiet elements only counted, the others through add) with expect (the tails compacted)
// keeps add()'s statistics element by element.
TEST(Measure, ExpectKeepsTheSameStatisticsWithATailOfThePercentiles) {
  // A contract's budget (slope·(|x_a| + |x_b|) + floor) varies apart from the error: the ratio's bar acts
  // alone.
  const Contract& contract = instances_matching("rope.scalar_f32").front().contract();
  for (const bool by_contract : {false, true})
    for (const Noise noise : {Noise::Flat, Noise::Growing, Noise::Ulps})
      for (std::size_t cap_total : {std::size_t{7680}, std::size_t{7680 + 17}}) {
        const NoisyRope d(noise);
        ASSERT_EQ(d.x.size(), 7680u);
        const RopeBatch batch = RopeBatch::tokens_first(d.positions, 3, 64);
        const Budget budget = by_contract
                                  ? Budget{&contract, DType::F32}
                                  : Budget{nullptr, DType::F32, noise == Noise::Growing ? 2e-5 : 2e-7};
        Measurement all, capped;
        capped.expect(cap_total);
        measure_rope(d.params, batch, d.x, d.y, budget, [&](const ElementRecord& e) { all.add(e); });
        measure_rope_rows(d.params, batch, d.x, d.y, budget,
                          [&](const RopeRow& row) { capped.add_row(row); });
        ASSERT_EQ(all.count(), capped.count());
        EXPECT_EQ(all.violations(), capped.violations());
        ASSERT_EQ(all.bands().size(), capped.bands().size());
        for (std::size_t k = 0; k < all.bands().size(); ++k) {
          const BandStats &a = all.bands()[k], &c = capped.bands()[k];
          EXPECT_EQ(a.samples, c.samples) << k;
          EXPECT_EQ(a.p99_abs, c.p99_abs) << k;
          EXPECT_EQ(a.p99_ulp, c.p99_ulp) << k;
          EXPECT_EQ(a.violations, c.violations) << k;
          EXPECT_EQ(a.encoding, c.encoding) << k;
          EXPECT_EQ(a.undecidable, c.undecidable) << k;
          EXPECT_EQ(a.max_vacuity.value, c.max_vacuity.value) << k;
          EXPECT_EQ(a.max_ratio.at.channel, c.max_ratio.at.channel) << k;
          EXPECT_EQ(a.max_ulp.at.row, c.max_ulp.at.row) << k;
          EXPECT_TRUE(std::isnan(a.max_ulp.value) ? std::isnan(c.max_ulp.value)
                                                  : a.max_ulp.value == c.max_ulp.value);
          EXPECT_TRUE(std::isnan(a.max_abs.value) ? std::isnan(c.max_abs.value)
                                                  : a.max_abs.value == c.max_abs.value);
        }
        ASSERT_EQ(all.worst().size(), capped.worst().size());
        for (std::size_t i = 0; i < all.worst().size(); ++i) {
          EXPECT_EQ(all.worst()[i].row, capped.worst()[i].row);
          EXPECT_EQ(all.worst()[i].channel, capped.worst()[i].channel);
        }
      }
  // The percentiles' tail is compacted: a band of many elements keeps at most about 4% of them, not all.
  Measurement big;
  big.expect(200'000);
  std::mt19937_64 g(7);
  std::vector<double> values;
  for (int i = 0; i < 200'000; ++i) {
    ElementRecord e;
    e.position = 5;
    e.abs_error = e.ulp = std::ldexp(static_cast<double>(g() % 1000), -30) * (1 + i * 1e-6);
    e.budget = 1;
    values.push_back(e.abs_error);
    big.add(e);
  }
  std::sort(values.begin(), values.end());
  EXPECT_EQ(big.bands()[0].p99_abs, values[static_cast<std::size_t>(std::ceil(0.99 * 200'000)) - 1]);
  ElementRecord one_more;
  EXPECT_THROW(big.add(one_more), std::logic_error);
}

TEST(Measure, PresumedFloorsKeepThePercentilesOrSayTheyDidNot) {
  // 20000 errors at position 5, each value once: one band, whose 99th percentile (nearest rank) is the
  // 19800th smallest, the 201st largest.
  std::vector<double> values(20'000);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = std::ldexp(static_cast<double>(i + 1), -40);
  std::shuffle(values.begin(), values.end(), std::mt19937_64(11));
  const auto measure = [&](double presumed) {
    Measurement m;
    m.expect(values.size());
    if (!std::isnan(presumed)) m.presume_floors(5, presumed, presumed);
    for (const double v : values) {
      ElementRecord e;
      e.position = 5;
      e.abs_error = e.ulp = v;
      e.budget = 1;
      m.add(e);
    }
    return m;
  };
  const Measurement plain = measure(NAN);
  const double p99 = plain.bands()[0].p99_abs;
  ASSERT_EQ(p99, std::ldexp(19'800.0, -40));
  // Below the percentile (down to the value just under it, 201 values above): the same percentiles.
  for (const double below : {19'000.0, 19'799.0}) {
    const Measurement held = measure(std::ldexp(below, -40));
    EXPECT_TRUE(held.presumptions_held()) << below;
    EXPECT_EQ(held.bands()[0].p99_abs, p99) << below;
    EXPECT_EQ(held.bands()[0].p99_ulp, p99) << below;
  }
  // At the percentile itself: its value is dropped (200 values above), and the measurement says so.
  EXPECT_FALSE(measure(p99).presumptions_held());
  EXPECT_TRUE(plain.presumptions_held());
  Measurement late;
  late.add(ElementRecord{});
  EXPECT_THROW(late.presume_floors(5, 0, 0), std::logic_error);
}

// sample_percentiles: a band expected to hold `from` elements or more takes its 99th percentiles (nearest
// rank) over the rows sampled_row() picks, counted in percentile_samples; a smaller band over all of its own.
// Rows come as add()'s records (even rows) and add_row()'s rows (odd rows), in blocks of 4: 3000 rows of 40
// elements at position = row, so band [0, 999] holds 40'000 elements (under `from`) and [1000, 9999] 80'000
// in 500 blocks (at least `blocks_from`, 400; at 501 it is not sampled either).
TEST(Measure, SampledPercentilesAreTheNearestRankOverTheSampledRows) {
  constexpr std::size_t kRows = 3000, kWidth = 40, kBlock = 4;
  std::mt19937_64 g(20261207);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  Measurement m;
  m.expect(kRows * kWidth);
  for (std::size_t r = 0; r < kRows; ++r) m.expect_band(static_cast<std::int64_t>(r), kWidth);
  m.sample_percentiles(kBlock, 50'000, 400);
  Measurement few_blocks;
  for (std::size_t r = 0; r < kRows; ++r) few_blocks.expect_band(static_cast<std::int64_t>(r), kWidth);
  few_blocks.sample_percentiles(kBlock, 50'000, 501);
  EXPECT_FALSE(few_blocks.samples_percentiles());
  EXPECT_TRUE(m.samples_percentiles());
  std::vector<double> abs_all[2], ulp_all[2], abs_sampled, ulp_sampled;
  std::size_t sampled_rows = 0;
  for (std::size_t r = 0; r < kRows; ++r) {
    const auto row = static_cast<std::int64_t>(r);
    const std::size_t band = r < 1000 ? 0 : 1;
    const bool in = m.sampled_row(row);
    EXPECT_EQ(in, m.sampled_row(row - row % static_cast<std::int64_t>(kBlock))) << "row " << r;
    EXPECT_EQ(m.in_sample(row, row), band == 0 || in) << "row " << r;
    sampled_rows += band == 1 && in ? 1 : 0;
    RopeRow whole;
    whole.row = row;
    whole.resize(kWidth);
    for (std::size_t i = 0; i < kWidth; ++i) {
      // Errors growing with the row (a band's rows are not alike: a biased sample would show).
      const double abs = (1 + unit(g)) * static_cast<double>(r + 1) * 0x1p-30, ulp = 1000 * unit(g);
      abs_all[band].push_back(abs), ulp_all[band].push_back(ulp);
      if (band == 1 && in) abs_sampled.push_back(abs), ulp_sampled.push_back(ulp);
      if (r % 2 == 0) {
        ElementRecord e;
        e.row = row, e.position = row, e.channel = static_cast<std::int64_t>(i);
        e.abs_error = abs, e.ulp = ulp, e.budget = 1;
        m.add(e);
      } else {
        whole.position[i] = row, whole.abs_error[i] = abs, whole.ulp[i] = ulp, whole.budget[i] = 1;
        whole.reach[i] = INFINITY;
      }
    }
    if (r % 2 == 1) m.add_row(whole);
  }
  const auto nearest_rank = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(v.size()))) - 1];
  };
  // About 1 block in 8 of band 1's 500 (a hash: not exactly).
  EXPECT_GT(sampled_rows, 2000 / 16);
  EXPECT_LT(sampled_rows, 2000 / 5);
  const std::vector<BandStats>& b = m.bands();
  EXPECT_FALSE(b[0].percentiles_sampled());
  EXPECT_EQ(b[0].percentile_samples, 40'000U);
  EXPECT_EQ(b[0].p99_abs, nearest_rank(abs_all[0]));
  EXPECT_EQ(b[0].p99_ulp, nearest_rank(ulp_all[0]));
  EXPECT_TRUE(b[1].percentiles_sampled());
  EXPECT_EQ(b[1].samples, 80'000U);
  EXPECT_EQ(b[1].percentile_samples, sampled_rows * kWidth);
  EXPECT_EQ(b[1].p99_abs, nearest_rank(abs_sampled));
  EXPECT_EQ(b[1].p99_ulp, nearest_rank(ulp_sampled));
  // The maxima stay every element's.
  EXPECT_EQ(b[1].max_abs.value, *std::max_element(abs_all[1].begin(), abs_all[1].end()));
  EXPECT_EQ(b[1].max_ulp.value, *std::max_element(ulp_all[1].begin(), ulp_all[1].end()));
  Measurement late;
  late.add(ElementRecord{});
  EXPECT_THROW(late.sample_percentiles(1), std::logic_error);
  EXPECT_THROW(Measurement().sample_percentiles(0), std::invalid_argument);
  EXPECT_THROW(Measurement().sample_percentiles(3), std::invalid_argument);  // not a power of two
}

// The sample's rows are drawn by a hash of their block, not a stride: rows laid out with a period that is a
// multiple of 8 blocks (packed sequences of 64 tokens, each from position 0) still give every offset in the
// period about 1 block in 8, where `block % 8 == 0` would give the offsets 0-7 of every period and no other.
// A band whose sample met none of its rows says so (NaN), not a percentile of 0.
TEST(Measure, TheSampleIsAHashNotAStride) {
  Measurement m;
  m.sample_percentiles(1, 0, 0);
  for (std::int64_t offset = 0; offset < 64; ++offset) {
    std::size_t in = 0;
    for (std::int64_t period = 0; period < 4096; ++period) in += m.sampled_row(64 * period + offset) ? 1 : 0;
    EXPECT_GT(in, 4096U / 12) << "offset " << offset;
    EXPECT_LT(in, 4096U / 6) << "offset " << offset;
  }
  std::int64_t outside = 0;
  while (m.sampled_row(outside)) ++outside;
  ElementRecord e;
  e.row = outside, e.position = 5, e.abs_error = e.ulp = 1, e.budget = 2;
  m.add(e);
  EXPECT_EQ(m.bands()[0].samples, 1U);
  EXPECT_EQ(m.bands()[0].percentile_samples, 0U);
  EXPECT_TRUE(std::isnan(m.bands()[0].p99_abs));
  EXPECT_TRUE(std::isnan(m.bands()[0].p99_ulp));
}

}  // namespace
}  // namespace pe::harness

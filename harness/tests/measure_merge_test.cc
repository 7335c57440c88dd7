// Measurement::merge: a batch's elements measured in consecutive parts, each part's measurement set up for
// the whole (expect, expect_band, promise), merged in order, give the one measurement of the whole bit for
// bit: every band's counts, maxima with their elements (the first of equals, the last NaN), percentiles,
// and the worst list (the earlier of equal ratios first). The elements tie often (errors on a coarse grid),
// carry NaNs and zero budgets, and some cannot be judged.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <tuple>

#include "pe/harness/measure.h"
#include "same_measurement.h"

namespace pe::harness {
namespace {

std::vector<ElementRecord> drawn(std::size_t n, std::mt19937_64& g) {
  std::uniform_int_distribution<int> grid(0, 7), pick(0, 99);
  std::uniform_int_distribution<std::int64_t> position(0, 30000);
  std::vector<ElementRecord> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    ElementRecord& e = out[i];
    e.row = static_cast<std::int64_t>(i);
    e.position = position(g);
    e.abs_error = pick(g) == 0 ? NAN : grid(g) * 0x1p-20;
    e.ulp = grid(g) * 0.25;
    e.budget = pick(g) == 1 ? 0.0 : (1 + grid(g)) * 0x1p-21;
    e.reach = pick(g) < 5 ? e.budget / 2 : INFINITY;
  }
  return out;
}

// `block`: the percentiles over a sample of rows in blocks that long (0: every element).
Measurement set_up(const std::vector<ElementRecord>& all, std::size_t block = 0) {
  Measurement m(30000, 10);
  m.promise(1000);
  m.expect(all.size());
  for (const ElementRecord& e : all) m.expect_band(e.position, 1);
  if (block != 0) m.sample_percentiles(block, 0, 0);
  return m;
}

// The same in everything, the percentiles and the least judgeable elements included.
void expect_same(const Measurement& a, const Measurement& b, const std::string& what) {
  expect_same_but_percentiles(a, b, what);
  for (std::size_t k = 0; k < a.bands().size() && k < b.bands().size(); ++k) {
    const BandStats &x = a.bands()[k], &y = b.bands()[k];
    const std::string where = what + " band " + std::to_string(k);
    EXPECT_TRUE(bits_equal(x.max_vacuity.value, y.max_vacuity.value)) << where;
    EXPECT_EQ(x.max_vacuity.at.row, y.max_vacuity.at.row) << where;
    EXPECT_TRUE(bits_equal(x.p99_abs, y.p99_abs)) << where;
    EXPECT_TRUE(bits_equal(x.p99_ulp, y.p99_ulp)) << where;
  }
}

TEST(MeasurementMerge, PartsMergedInOrderAreTheWhole) {
  std::mt19937_64 g(20261205);
  for (const std::size_t n : {std::size_t{40}, std::size_t{3000}, std::size_t{50000}}) {
    const std::vector<ElementRecord> all = drawn(n, g);
    for (const std::size_t block : {0, 1, 4}) {  // percentiles over every element, then over samples
      Measurement whole = set_up(all, block);
      for (const ElementRecord& e : all) whole.add(e);
      if (block != 0 && n > 40) {
        EXPECT_GT(whole.bands()[0].samples, whole.bands()[0].percentile_samples) << n << " block " << block;
      }
      for (const std::size_t parts : {2, 3, 8}) {
        std::vector<Measurement> m;
        for (std::size_t k = 0; k < parts; ++k) {
          m.push_back(set_up(all, block));
          for (std::size_t i = n * k / parts; i < n * (k + 1) / parts; ++i) m.back().add(all[i]);
        }
        for (std::size_t k = 1; k < parts; ++k) m[0].merge(m[k]);
        expect_same(m[0], whole,
                    std::to_string(n) + " elements in " + std::to_string(parts) + " parts, block " +
                        std::to_string(block));
      }
    }
  }
}

// Parts presuming the same floors merge into the whole presuming them: whether they held is judged on the
// merged whole (each part alone keeps too few values above a floor the whole keeps enough above), and where
// they held the merged measurement is the whole's without presuming, percentiles included. The abs errors lie
// on a grid 0..7·2^-20, the ulps on 0..7·0.25 (a NaN abs error counts as +inf, about 1 in 100): a floor at 5
// keeps about a quarter of the values, one at 7 (ulp) keeps none.
TEST(MeasurementMerge, PartsPresumingOneFloorAreJudgedWhole) {
  std::mt19937_64 g(20261206);
  const std::size_t n = 50000;
  const std::vector<ElementRecord> all = drawn(n, g);
  Measurement plain = set_up(all);
  for (const ElementRecord& e : all) plain.add(e);
  for (const auto& [abs_floor, ulp_floor, holds] :
       {std::tuple{5 * 0x1p-20, 5 * 0.25, true}, std::tuple{5 * 0x1p-20, 7 * 0.25, false}}) {
    const auto presumed = [&] {
      Measurement m = set_up(all);
      for (const std::int64_t position : {0, 1000, 10000})
        m.presume_floors(position, abs_floor, ulp_floor, 0.02);
      return m;
    };
    Measurement whole = presumed();
    for (const ElementRecord& e : all) whole.add(e);
    EXPECT_EQ(whole.presumptions_held(), holds);
    for (const std::size_t parts : {2, 3, 8}) {
      const std::string what = std::to_string(parts) + " parts, ulp floor " + std::to_string(ulp_floor);
      std::vector<Measurement> m;
      for (std::size_t k = 0; k < parts; ++k) {
        m.push_back(presumed());
        for (std::size_t i = n * k / parts; i < n * (k + 1) / parts; ++i) m.back().add(all[i]);
      }
      for (std::size_t k = 1; k < parts; ++k) m[0].merge(m[k]);
      EXPECT_EQ(m[0].presumptions_held(), holds) << what;
      if (holds) expect_same(m[0], plain, what);
    }
  }
}

TEST(MeasurementMerge, RefusesMeasurementsSetUpOtherwise) {
  Measurement a(30000), b(1000);
  EXPECT_THROW(a.merge(b), std::logic_error);
  Measurement c, d;
  c.expect(10), d.expect(20);
  EXPECT_THROW(c.merge(d), std::logic_error);
  Measurement g, h;  // the same total, another band's share
  g.expect(100), h.expect(100);
  g.expect_band(5, 100), h.expect_band(5000, 100);
  EXPECT_THROW(g.merge(h), std::logic_error);
  Measurement e, f;
  e.expect(1000), f.expect(1000);
  e.presume_floors(5, 1e-6, 0.5);
  EXPECT_THROW(e.merge(f), std::logic_error);
  EXPECT_THROW(f.merge(e), std::logic_error);
  f.presume_floors(5, 2e-6, 0.5);  // another floor
  EXPECT_THROW(e.merge(f), std::logic_error);
  Measurement s, t, u;  // a sample against none, or against another block's
  s.sample_percentiles(1, 0, 0), u.sample_percentiles(2, 0, 0);
  EXPECT_THROW(s.merge(t), std::logic_error);
  EXPECT_THROW(t.merge(s), std::logic_error);
  EXPECT_THROW(s.merge(u), std::logic_error);
}

}  // namespace
}  // namespace pe::harness

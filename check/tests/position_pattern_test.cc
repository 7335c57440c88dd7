// A position claim needs most sampled rows determined and a pattern that names something (issue 32's two
// wrong claims: an offset named from 1 determined row of 32; a "fits" line saying only that the recovered
// positions follow no offset pattern).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "readback/position_recovery.h"

namespace pe::check {
namespace {

struct Rows {
  std::vector<std::int64_t> positions;
  std::vector<double> none;  // the pattern reads positions only
  RopeData data() const { return {none, none, RopeBatch::tokens_first(positions, 1, 2), 2, 2, {}, 0}; }
};

Rows from(std::int64_t first, std::size_t n) {
  Rows r;
  for (std::size_t t = 0; t < n; ++t) r.positions.push_back(first + static_cast<std::int64_t>(t));
  return r;
}

TEST(PositionPattern, AnOffsetFromOneDeterminedRowOf32IsNotClaimed) {
  const Rows r = from(4000, 32);
  std::vector<RecoveredRow> rows;
  for (std::size_t t = 0; t < 32; ++t) rows.push_back({t, std::nullopt});
  rows[5].position = 5;  // one row read back at p - 4000
  const PositionPattern p = position_pattern(r.data(), rows);
  EXPECT_FALSE(p.fits) << p.words;
  EXPECT_EQ(p.support, "1 of 32 sampled rows determined (32 tokens x 1 head), every determined one agreeing");
  for (std::size_t t = 0; t < 17; ++t) rows[t].position = static_cast<std::int64_t>(t);  // now 17 of 32
  const PositionPattern most = position_pattern(r.data(), rows);
  EXPECT_TRUE(most.fits) << most.words;
  EXPECT_NE(most.words.find("p-4000"), std::string::npos) << most.words;
}

TEST(PositionPattern, NoOffsetPatternIsANoteNotAFit) {
  const Rows r = from(1000, 24);
  std::vector<RecoveredRow> rows;
  for (std::size_t t = 0; t < 24; ++t)  // every row determined, offsets all different
    rows.push_back({t, 1000 + static_cast<std::int64_t>(t) + static_cast<std::int64_t>(t * t % 7) * 3 + 1});
  const PositionPattern p = position_pattern(r.data(), rows);
  EXPECT_FALSE(p.fits) << p.words;
  EXPECT_NE(p.words.find("follow no offset pattern"), std::string::npos) << p.words;
}

TEST(PositionPattern, PositionsRoundedToBfloat16AreNamed) {
  const Rows r = from(4000, 24);
  std::vector<RecoveredRow> rows;
  for (std::size_t t = 0; t < 24; ++t) {
    const std::int64_t p = 4000 + static_cast<std::int64_t>(t);
    rows.push_back({t, (p + 8) / 16 * 16 - ((p % 32) == 8 ? 16 : 0)});  // round half to even, spacing 16
  }
  const PositionPattern p = position_pattern(r.data(), rows);
  EXPECT_TRUE(p.fits) << p.words;
  EXPECT_NE(p.words.find("positions rounded to bfloat16"), std::string::npos) << p.words;
}

// int64 positions beyond 2^31 read as int32 wrap to negative ones (issue 33's planted mistake): named with an
// example; below 2^32 + 2^31 the low 32 bits are the same words without the wrap.
TEST(PositionPattern, Int32WrappedPositionsAreNamed) {
  const std::int64_t start = (std::int64_t{1} << 31) + 1000;
  const Rows r = from(start, 24);
  std::vector<RecoveredRow> rows;
  for (std::size_t t = 0; t < 24; ++t)
    rows.push_back({t, static_cast<std::int32_t>(start + static_cast<std::int64_t>(t))});
  const PositionPattern p = position_pattern(r.data(), rows);
  EXPECT_TRUE(p.fits) << p.words;
  EXPECT_EQ(p.words,
            "positions truncated to 32 bits, wrapping to negative ones (int64 position ids read as int32: "
            "2147484648 read as -2147482648)");
}

// The positions themselves read back below 0, where the search is asked to go (explain/explanation.cc: from
// -2^31 once the given positions pass 2^31): a float64 rotation by the wrapped positions.
TEST(PositionRecovery, FindsNegativePositionsWhenAskedTo) {
  const RopeParams params{64, 64, 10000.0, Layout::HalfSplit};
  const RopePlan plan(params);
  std::vector<std::int64_t> given;
  for (std::int64_t k = 0; k < 8; ++k) given.push_back((std::int64_t{1} << 31) + 5 + 977 * k);
  std::vector<double> x(given.size() * 64), y(x.size());
  for (std::size_t t = 0; t < given.size(); ++t) {
    const double p = static_cast<double>(static_cast<std::int32_t>(given[t]));
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      const auto [i0, i1] = plan.input_channels(j);
      const double a = 0.5 + 0.01 * static_cast<double>(j), b = 0.25 - 0.003 * static_cast<double>(t);
      const double phi = p * plan.inv_freq()[j];
      x[t * 64 + i0] = a, x[t * 64 + i1] = b;
      y[t * 64 + i0] = a * std::cos(phi) - b * std::sin(phi);
      y[t * 64 + i1] = b * std::cos(phi) + a * std::sin(phi);
    }
  }
  const RopeData d{x, y, RopeBatch::tokens_first(given, 1, 64), 64, 64, {}, 0};
  std::vector<std::size_t> tokens(given.size());
  for (std::size_t t = 0; t < tokens.size(); ++t) tokens[t] = t;
  const auto below = recover_positions(d, plan, tokens, std::int64_t{1} << 33, -(std::int64_t{1} << 31));
  for (std::size_t t = 0; t < tokens.size(); ++t)
    EXPECT_EQ(below[t].position, std::optional<std::int64_t>(static_cast<std::int32_t>(given[t]))) << t;
}

}  // namespace
}  // namespace pe::check

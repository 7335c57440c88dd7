// A position claim needs most sampled rows determined and a pattern that names something (issue 32's two
// wrong claims: an offset named from 1 determined row of 32; a "fits" line saying only that the recovered
// positions follow no offset pattern).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "position_recovery.h"

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
  EXPECT_EQ(p.support, "1 of 32 sampled rows determined (head 0 of each), every determined one agreeing");
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

}  // namespace
}  // namespace pe::check

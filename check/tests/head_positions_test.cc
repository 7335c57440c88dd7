// Positions read back per (token, head) row (issue 50): data rotated exactly (float64) by an index other than
// the token's position is named by that index, a correct rotation by none of them, and a decode step left as
// its input lists its dropped offset among the causes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "readback/position_recovery.h"

namespace pe::check {
namespace {

constexpr std::size_t kDim = 64;
const std::string kExchanged =
    "rows turned by their head index, not their token's position: the sequence and head axes exchanged";
const std::string kDecodeOffset = "the decode offset dropped (every step at position 0)";

// x random-ish, y = x with row (t, h) turned by turn(t, h) (half-split pairs, base 10000), laid out
// [tokens, heads, head_dim] or [heads, tokens, head_dim].
struct Planted {
  std::vector<std::int64_t> positions;
  std::size_t heads;
  bool heads_first = false;
  std::vector<double> x, y;
  RopePlan plan{RopeParams{kDim, kDim, 10000.0, Layout::HalfSplit}};

  Planted(std::vector<std::int64_t> p, std::size_t h,
          const std::function<double(std::size_t, std::size_t)>& turn, bool transposed = false)
      : positions(std::move(p)), heads(h), heads_first(transposed) {
    x.resize(positions.size() * heads * kDim);
    y.resize(x.size());
    const RopeBatch b = batch();
    for (std::size_t t = 0; t < positions.size(); ++t) {
      for (std::size_t k = 0; k < heads; ++k) {
        const std::size_t row = b.row(t, k);
        for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
          const auto [i0, i1] = plan.input_channels(j);
          const double a = 0.5 + 0.01 * static_cast<double>(j) + 0.1 * static_cast<double>(k),
                       c = 0.25 - 0.003 * static_cast<double>(t) + 0.02 * static_cast<double>(j % 5);
          const double phi = turn(t, k) * plan.inv_freq()[j];
          x[row + i0] = a, x[row + i1] = c;
          y[row + i0] = a * std::cos(phi) - c * std::sin(phi);
          y[row + i1] = c * std::cos(phi) + a * std::sin(phi);
        }
      }
    }
  }
  RopeBatch batch() const {
    return heads_first ? RopeBatch::heads_first(positions, heads, kDim)
                       : RopeBatch::tokens_first(positions, heads, kDim);
  }
  RopeData data() const { return {x, y, batch(), kDim, kDim, {}, 0}; }
  // Every row, read back over [0, 2^31] as the explanation searches.
  PositionPattern pattern() const {
    std::vector<SampledRow> rows;
    for (std::size_t t = 0; t < positions.size(); ++t)
      for (std::size_t k = 0; k < heads; ++k) rows.push_back({t, k});
    return position_pattern(data(), recover_positions(data(), plan, rows, std::int64_t{1} << 31));
  }
};

std::vector<std::int64_t> spaced(std::int64_t first, std::size_t n, std::int64_t step = 1) {
  std::vector<std::int64_t> p;
  for (std::size_t t = 0; t < n; ++t) p.push_back(first + step * static_cast<std::int64_t>(t));
  return p;
}

double as_double(std::size_t v) { return static_cast<double>(v); }

TEST(HeadPositions, RowsTurnedByTheirHeadIndexAreNamedAsExchangedAxes) {
  for (const bool transposed : {false, true}) {
    const Planted d(
        spaced(3000, 24, 7), 8, [](std::size_t, std::size_t h) { return as_double(h); }, transposed);
    const PositionPattern p = d.pattern();
    EXPECT_TRUE(p.fits) << p.words;
    EXPECT_TRUE(p.row_index);
    EXPECT_EQ(p.words.rfind(kExchanged, 0), 0u) << p.words;
    EXPECT_EQ(p.support,
              "192 of 192 sampled rows determined (24 tokens x 8 heads), every determined one agreeing");
  }
}

// A decode step: one token at 5000, its heads turned by 0..7; head 0 alone reads as unrotated.
TEST(HeadPositions, ADecodeStepTurnedByItsHeadIndexIsNamed) {
  const Planted d({5000}, 8, [](std::size_t, std::size_t h) { return as_double(h); });
  const PositionPattern p = d.pattern();
  EXPECT_TRUE(p.fits) << p.words;
  EXPECT_EQ(p.words.rfind(kExchanged, 0), 0u) << p.words;
  EXPECT_EQ(p.support, "8 of 8 sampled rows determined (1 token x 8 heads), every determined one agreeing");
  const PositionPattern head0 =
      position_pattern(d.data(), recover_positions(d.data(), d.plan, std::vector<std::size_t>{0}, 1 << 20));
  EXPECT_NE(head0.words.find("not rotated"), std::string::npos) << head0.words;
}

TEST(HeadPositions, RowsTurnedByThePositionOfTokenHAreNamed) {
  const std::vector<std::int64_t> given = spaced(400, 16, 13);
  const Planted d(given, 8, [&](std::size_t, std::size_t h) { return static_cast<double>(given[h]); });
  const PositionPattern p = d.pattern();
  EXPECT_TRUE(p.fits) << p.words;
  EXPECT_EQ(p.words.rfind("rows turned by the position of token h (h their head index)", 0), 0u) << p.words;
}

TEST(HeadPositions, FlattenedRowIndicesAreNamed) {
  const Planted by_token(spaced(9000, 12), 4,
                         [](std::size_t t, std::size_t h) { return as_double(t * 4 + h); });
  const PositionPattern p = by_token.pattern();
  EXPECT_TRUE(p.fits) << p.words;
  EXPECT_EQ(p.words.rfind("rows turned by their flattened row index t*heads + h", 0), 0u) << p.words;
  const Planted by_head(spaced(9000, 12), 4,
                        [](std::size_t t, std::size_t h) { return as_double(h * 12 + t); });
  const PositionPattern q = by_head.pattern();
  EXPECT_TRUE(q.fits) << q.words;
  EXPECT_EQ(q.words.rfind("rows turned by h*tokens + t", 0), 0u) << q.words;
}

// No false alarm: a correct rotation, at positions where the indices above coincide with the given ones for
// some rows (0..23 with 8 heads: position of token h is h), reads back as the given positions.
TEST(HeadPositions, ACorrectRotationNamesNoPattern) {
  for (const std::int64_t first : {0, 1, 5000}) {
    const std::vector<std::int64_t> given = spaced(first, 24);
    const Planted d(given, 8, [&](std::size_t t, std::size_t) { return static_cast<double>(given[t]); });
    const PositionPattern p = d.pattern();
    EXPECT_FALSE(p.fits) << first << ": " << p.words;
    EXPECT_EQ(p.words, "") << first;
  }
}

// Heads of one token turned by positions that follow none of the indices: undetermined, no claim. The
// tokens' pattern (an offset) is still named when every head of a token agrees.
TEST(HeadPositions, HeadsThatDisagreeOtherwiseAreUndetermined) {
  const Planted odd(spaced(700, 16), 4,
                    [](std::size_t t, std::size_t h) { return as_double(700 + t + 3 * h * h); });
  const PositionPattern p = odd.pattern();
  EXPECT_FALSE(p.fits) << p.words;
  EXPECT_NE(p.words.find("read back different positions"), std::string::npos) << p.words;
  EXPECT_NE(p.words.find("undetermined"), std::string::npos) << p.words;
  const Planted offset(spaced(700, 16), 4, [](std::size_t t, std::size_t) { return as_double(t + 200); });
  const PositionPattern q = offset.pattern();
  EXPECT_TRUE(q.fits) << q.words;
  EXPECT_NE(q.words.find("every row rotated by p-500"), std::string::npos) << q.words;
  EXPECT_FALSE(q.row_index);
}

// Positions read back as 0..T-1 where the given ones start at 5001: the decode offset dropped, said so.
TEST(HeadPositions, PositionsCountedFromZeroNameTheDecodeOffset) {
  const Planted d(spaced(5001, 4), 2, [](std::size_t t, std::size_t) { return as_double(t); });
  const PositionPattern p = d.pattern();
  EXPECT_TRUE(p.fits) << p.words;
  EXPECT_EQ(
      p.words,
      "every row rotated by p-5001 (positions recovered from the data): an offset dropped: positions counted "
      "from 0 where the given ones start at 5001 (the decode offset, or the KV cache's length, dropped)");
}

// A decode step whose output is its input: every step at position 0 is among the causes, for one token and
// for a batch of sequences' single tokens; not for a prefill, nor a chunk p0, p0 + 1, ... (a dropped offset
// would turn its rows by 0, 1, ..., not leave them all), nor where a row is rotated.
TEST(HeadPositions, ADecodeStepLeftAsItsInputListsItsDroppedOffset) {
  const auto unchanged = [](std::vector<std::int64_t> given) {
    Planted d(std::move(given), 4, [](std::size_t, std::size_t) { return 0.0; });
    const UnrotatedRows u = unrotated_rows(d.data(), d.plan);
    EXPECT_EQ(u.count, u.rows);
    return unrotated_words(u, true);
  };
  EXPECT_NE(unchanged({5000}).find(kDecodeOffset), std::string::npos) << unchanged({5000});
  EXPECT_NE(unchanged({812, 77, 4096}).find(kDecodeOffset), std::string::npos);
  EXPECT_NE(unchanged({812, 77, 4096}).find("the data was not rotated"), std::string::npos);
  EXPECT_EQ(unchanged(spaced(1, 24)).find("decode offset"), std::string::npos);
  EXPECT_EQ(unchanged(spaced(5000, 4)).find("decode offset"), std::string::npos);
  EXPECT_EQ(unchanged({0, 812}).find("decode offset"), std::string::npos);  // token 0 at 0: not a decode step
  const Planted half({5000, 77}, 4, [](std::size_t t, std::size_t) { return t == 0 ? 0.0 : 77.0; });
  const UnrotatedRows u = unrotated_rows(half.data(), half.plan);
  EXPECT_EQ(u.count, 4u);
  EXPECT_FALSE(u.decode_offset);
}

}  // namespace
}  // namespace pe::check

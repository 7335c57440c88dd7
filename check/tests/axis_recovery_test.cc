// Which position axis each M-RoPE pair read, read back from the data (issue 33: sections in the wrong order):
// a float64 rotation by another rule's axes (the given sections reversed; the other layout) is named by the
// sections every determined pair agrees with; data as given says nothing; positions equal on every axis (text
// tokens) determine no pair.
#include "readback/axis_recovery.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace pe::check {
namespace {

constexpr std::size_t kHeadDim = 32, kHeads = 2, kTokens = 24;

struct MropeData {
  std::vector<std::int64_t> positions;  // [3][tokens]
  std::vector<double> x, y;
  RopeData data() const {
    return {x, y, RopeBatch{positions, 3, kHeads, kHeads * kHeadDim, kHeadDim}, kHeadDim, kHeadDim, {}, 0};
  }
};

// x rotated pair by pair by the `kernel` form's axes (the given plan's frequencies: M-RoPE's are the text
// ones), at positions t = p, h = 5p/8 + 3, w = 3p/13 + 1 (or all p when `same_axes`), p spread up to 10^5.
MropeData rotated_by(const RopePlan& given, const RopeForm& kernel, bool same_axes = false) {
  MropeData m;
  std::vector<std::int64_t> p;
  for (std::size_t k = 0; k < kTokens; ++k)
    p.push_back(k < 4 ? static_cast<std::int64_t>(k) : static_cast<std::int64_t>(std::pow(1.6, k)));
  for (std::size_t a = 0; a < 3; ++a)
    for (const std::int64_t q : p)  // t = p, h = 5p/8 + 3, w = 3p/13 + 1 (verify_rope's probe)
      m.positions.push_back(same_axes || a == 0 ? q : a == 1 ? 5 * q / 8 + 3 : 3 * q / 13 + 1);
  std::mt19937_64 g(7);
  std::normal_distribution<double> normal;
  m.x.resize(kTokens * kHeads * kHeadDim);
  for (double& v : m.x) v = normal(g);
  m.y = m.x;
  const std::size_t pairs = given.n_pairs();
  for (std::size_t t = 0; t < kTokens; ++t) {
    for (std::size_t h = 0; h < kHeads; ++h) {
      const std::size_t row = (t * kHeads + h) * kHeadDim;
      for (std::size_t j = 0; j < pairs; ++j) {
        const std::size_t axis = axis_of_pair(kernel, pairs, j);
        const double phi = static_cast<double>(m.positions[axis * kTokens + t]) * given.inv_freq()[j];
        const auto [i0, i1] = given.input_channels(j);
        const double a = m.x[row + i0], b = m.x[row + i1];
        m.y[row + i0] = a * std::cos(phi) - b * std::sin(phi);
        m.y[row + i1] = b * std::cos(phi) + a * std::sin(phi);
      }
    }
  }
  return m;
}

RopeParams mrope(std::vector<std::int64_t> sections, MropeLayout layout = MropeLayout::Sectioned) {
  RopeParams p{kHeadDim, kHeadDim, 10000.0, Layout::HalfSplit};
  p.form.mrope_section = std::move(sections);
  p.form.mrope_layout = layout;
  return p;
}

TEST(AxisRecovery, TheGivenSectionsReversedAreNamed) {
  const RopePlan given(mrope({3, 5, 8}));
  const MropeData m = rotated_by(given, mrope({8, 5, 3}).form);
  const RecoveredAxes r = recover_axes(m.data(), given);
  EXPECT_TRUE(r.fits) << r.words << " / " << r.support;
  EXPECT_EQ(r.words, "M-RoPE sections [8, 5, 3] (given [3, 5, 8]): the given sections in reverse order");
  EXPECT_EQ(r.determined, 16u);
}

TEST(AxisRecovery, TheOtherLayoutIsNamed) {
  const RopePlan given(mrope({6, 5, 5}));
  const MropeData m = rotated_by(given, mrope({6, 5, 5}, MropeLayout::Interleaved).form);
  const RecoveredAxes r = recover_axes(m.data(), given);
  EXPECT_TRUE(r.fits) << r.words << " / " << r.support;
  EXPECT_EQ(r.words, "M-RoPE layout interleaved (given sectioned)");
  EXPECT_NE(r.support.find("the given ones among them"), std::string::npos) << r.support;
}

TEST(AxisRecovery, DataAsGivenSaysNothing) {
  const RopePlan given(mrope({3, 5, 8}));
  const RecoveredAxes r = recover_axes(rotated_by(given, given.params().form).data(), given);
  EXPECT_EQ(r.words, "");
  EXPECT_FALSE(r.fits);
  EXPECT_EQ(r.determined, 16u);
}

TEST(AxisRecovery, EqualPositionsOnEveryAxisDetermineNoPair) {
  const RopePlan given(mrope({3, 5, 8}));
  const MropeData m = rotated_by(given, mrope({8, 5, 3}).form, /*same_axes=*/true);
  const RecoveredAxes r = recover_axes(m.data(), given);
  EXPECT_EQ(r.determined, 0u);
  EXPECT_EQ(r.words, "");  // indistinguishable from the given rule: no claim, no note
}

}  // namespace
}  // namespace pe::check

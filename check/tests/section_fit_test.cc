// M-RoPE's sections read back from the axis of each pair (issue 54): sections given in another order are
// named with the data's, as the parameters to rerun with, on float64 data and through the whole check; the
// other layout is named; where two axes hold one position their split is said to be undetermined, not
// guessed; data as given, or with one position on every axis, says nothing, and passes.
#include "explain/section_fit.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "mrope_data.h"
#include "pe/check/check.h"
#include "test_words.h"

namespace pe::check {
namespace {

using mrope_testing::Axes;
using mrope_testing::mrope;
using mrope_testing::rotated_by;

SectionFit fit(const RopeParams& given, const RopeParams& kernel, Axes axes = Axes::Distinct) {
  const RopePlan plan(given);
  return fit_sections(recover_axes(rotated_by(plan, kernel.form, axes).data(), plan), given.form);
}

TEST(SectionFit, Qwen2VlSectionsGivenInAnotherOrderAreNamed) {
  const SectionFit f = fit(mrope(128, {24, 24, 16}), mrope(128, {16, 24, 24}));
  EXPECT_TRUE(f.fits) << f.words << " / " << f.support;
  EXPECT_EQ(f.words, "mrope_section 16,24,24 (given 24,24,16): the given sections in reverse order");
  EXPECT_NE(f.support.find("64 of 64 pairs fit one axis alone (64 of them by twice the tolerance), 16 miss"),
            std::string::npos)
      << f.support;
  ASSERT_TRUE(f.hypothesis);
  EXPECT_EQ(f.hypothesis->form.mrope_section, (std::vector<std::int64_t>{16, 24, 24}));
  EXPECT_FALSE(f.hypothesis->form.mrope_layout);  // sectioned, as given: nothing to change
}

TEST(SectionFit, OtherSectionsAreNamed) {
  const SectionFit f = fit(mrope(128, {20, 24, 20}), mrope(128, {16, 24, 24}));
  EXPECT_TRUE(f.fits);
  EXPECT_EQ(f.words, "mrope_section 16,24,24 (given 20,24,20)");
  ASSERT_TRUE(f.hypothesis);
  EXPECT_EQ(f.hypothesis->form.mrope_section, (std::vector<std::int64_t>{16, 24, 24}));
}

TEST(SectionFit, TheGivenSectionsReversedAreNamed) {
  const SectionFit f = fit(mrope(32, {3, 5, 8}), mrope(32, {8, 5, 3}));
  EXPECT_TRUE(f.fits);
  EXPECT_EQ(f.words, "mrope_section 8,5,3 (given 3,5,8): the given sections in reverse order");
}

TEST(SectionFit, TheOtherLayoutIsNamed) {
  const SectionFit f = fit(mrope(32, {6, 5, 5}), mrope(32, {6, 5, 5}, MropeLayout::Interleaved));
  EXPECT_TRUE(f.fits) << f.words << " / " << f.support;
  EXPECT_EQ(f.words, "mrope_layout interleaved (given sectioned)");
  EXPECT_NE(f.support.find("the given ones among them"), std::string::npos) << f.support;
  ASSERT_TRUE(f.hypothesis);  // the given sections under the data's layout
  EXPECT_EQ(f.hypothesis->form.mrope_section, (std::vector<std::int64_t>{6, 5, 5}));
  EXPECT_EQ(f.hypothesis->form.mrope_layout, MropeLayout::Interleaved);
}

TEST(SectionFit, DataAsGivenSaysNothing) {
  const SectionFit f = fit(mrope(128, {16, 24, 24}), mrope(128, {16, 24, 24}));
  EXPECT_EQ(f.words, "");
  EXPECT_FALSE(f.hypothesis);
}

// h = w in every row: t's 16 pairs are read back, where h's section ends and w's begins is not; no order of
// the given sections fits, so none is named.
TEST(SectionFit, TwoAxesOfOnePositionLeaveTheirSplitUndetermined) {
  const SectionFit f = fit(mrope(128, {20, 24, 20}), mrope(128, {16, 24, 24}), Axes::SameHW);
  EXPECT_TRUE(f.fits) << f.words;
  EXPECT_EQ(f.words, "mrope_section 16,?,? (given 20,24,20): h's 0 to 48, w's 0 to 48 undetermined");
  EXPECT_NE(f.support.find("pairs 16-63 fit h and w alike (their positions coincide in every sampled row)"),
            std::string::npos)
      << f.support;
  EXPECT_FALSE(f.hypothesis);  // no one set of sections to rerun with
}

// The same data given the sections reversed: of the sets that fit, one is an order of the given sections;
// that one is named as such, the split the data leaves open said to be undetermined.
TEST(SectionFit, AmongSectionsTheDataCannotTellApartTheOneOrderOfTheGivenIsNamed) {
  const SectionFit f = fit(mrope(128, {24, 24, 16}), mrope(128, {16, 24, 24}), Axes::SameHW);
  EXPECT_TRUE(f.fits) << f.words;
  EXPECT_EQ(
      f.words,
      "mrope_section 16,24,24 (given 24,24,16): the given sections in reverse order, the one order of them "
      "that fits (the data alone leaves h's 0 to 48, w's 0 to 48 undetermined)");
  ASSERT_TRUE(f.hypothesis);
  EXPECT_EQ(f.hypothesis->form.mrope_section, (std::vector<std::int64_t>{16, 24, 24}));
}

// Two orders of the given sections fit where h = w: both named, neither as the one to rerun with.
TEST(SectionFit, SeveralOrdersOfTheGivenAreNamedWithoutAHypothesis) {
  const SectionFit f = fit(mrope(128, {28, 20, 16}), mrope(128, {16, 20, 28}), Axes::SameHW);
  EXPECT_TRUE(f.fits) << f.words;
  EXPECT_EQ(f.words,
            "mrope_section 16,20,28 or 16,28,20 (given 28,20,16): the orders of the given sections that fit, "
            "16,20,28 the given sections in reverse order (the data alone leaves h's 0 to 48, w's 0 to 48 "
            "undetermined)");
  EXPECT_FALSE(f.hypothesis);
}

TEST(SectionFit, OnePositionOnEveryAxisSaysNothing) {
  const SectionFit f = fit(mrope(128, {24, 24, 16}), mrope(128, {16, 24, 24}), Axes::SameAll);
  EXPECT_EQ(f.words, "");
  EXPECT_FALSE(f.fits);
}

// The check of float32 data by a kernel of `kernel` sections, given `given`.
Report check_mrope(std::vector<std::int64_t> given, std::vector<std::int64_t> kernel, Axes axes,
                   const Names& names = Names()) {
  const RopePlan plan(mrope(128, given));
  mrope_testing::MropeData m = rotated_by(plan, mrope(128, std::move(kernel)).form, axes);
  for (double& v : m.y) v = static_cast<float>(v);
  for (double& v : m.x) v = static_cast<float>(v);
  const std::vector<std::size_t> shape = {m.tokens, m.heads, m.head_dim};
  RopeRequest r;
  r.x = {m.x, shape, DType::F32, "x"};
  r.y = {m.y, shape, DType::F32, "y"};
  r.positions.values = m.positions;
  r.positions.shape = {3, m.tokens};
  r.spec.base = 10000.0;
  r.spec.layout = Layout::HalfSplit;
  r.spec.form.mrope_section = std::move(given);
  return check_rope(r, names);
}

TEST(SectionFit, TheCheckNamesTheSectionsAsTheParametersToRerunWith) {
  const Names words = test_words();
  const Report report = check_mrope({24, 24, 16}, {16, 24, 24}, Axes::Distinct, words);
  ASSERT_FALSE(report.passed);
  ASSERT_TRUE(report.doc.explanations);
  const auto it = std::find_if(report.doc.explanations->begin(), report.doc.explanations->end(),
                               [](const Finding& f) { return f.hypothesis.has_value(); });
  ASSERT_NE(it, report.doc.explanations->end()) << report.text;
  EXPECT_EQ(it->fits, "mrope_section 16,24,24 (given 24,24,16): the given sections in reverse order");
  EXPECT_EQ(it->hypothesis->form.mrope_section, (std::vector<std::int64_t>{16, 24, 24}));
  ASSERT_TRUE(it->restated);
  EXPECT_EQ(it->restated->text, "<mrope_section=[16,24,24]>");
  EXPECT_NE(report.text.find("the data fits: mrope_section 16,24,24 (given 24,24,16)"), std::string::npos)
      << report.text;
}

TEST(SectionFit, TheRightSectionsPassAndOnePositionOnEveryAxisPassesAnyOrder) {
  EXPECT_TRUE(check_mrope({16, 24, 24}, {16, 24, 24}, Axes::Distinct).passed);
  EXPECT_TRUE(check_mrope({24, 24, 16}, {16, 24, 24}, Axes::SameAll).passed);
}

TEST(SectionFit, TheCheckSaysTheSplitOfTwoAxesOfOnePositionIsUndetermined) {
  const Report report = check_mrope({20, 24, 20}, {16, 24, 24}, Axes::SameHW);
  ASSERT_FALSE(report.passed);
  EXPECT_EQ(report.text.find("16,24,24"), std::string::npos) << report.text;  // no set of sections claimed
  EXPECT_NE(report.text.find("the data fits: mrope_section 16,?,? (given 20,24,20)"), std::string::npos)
      << report.text;
}

}  // namespace
}  // namespace pe::check

// check_rope_fp8 reads x a run of tokens at a time (issue 53: nothing the size of the tensor held): a batch
// of several runs, in either layout, must give the report of its elements in x's own order — the first wrong
// element the first in x's layout, not in the runs' token order — and the same counts in both layouts.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "pe/check/fp8.h"
#include "pe/check/golden.h"

namespace pe::check {
namespace {

constexpr std::size_t kTokens = 300, kHeads = 4, kDim = 64;  // 76800 elements: three runs of 32768

struct Case {
  std::vector<float> x;
  std::vector<std::uint8_t> codes;
  std::vector<std::int64_t> positions;
};

// x [tokens, heads, dim] (or [heads, tokens, dim]) and the codes of its exact rotation divided by 0.5,
// rounded to e4m3fn: the codes a correct fused kernel writes, but for those `wrong` names (token, head,
// channel), moved one code up.
Case make(bool heads_first, const std::vector<std::array<std::size_t, 3>>& wrong) {
  Case c;
  for (std::size_t t = 0; t < kTokens; ++t) c.positions.push_back(static_cast<std::int64_t>(1000 + 7 * t));
  const std::size_t n = kTokens * kHeads * kDim;
  const auto flat = [heads_first](std::size_t t, std::size_t h, std::size_t ch) {
    return (heads_first ? h * kTokens + t : t * kHeads + h) * kDim + ch;
  };
  c.x.resize(n);
  for (std::size_t t = 0; t < kTokens; ++t)
    for (std::size_t h = 0; h < kHeads; ++h)
      for (std::size_t ch = 0; ch < kDim; ++ch)
        c.x[flat(t, h, ch)] =
            static_cast<float>(3 * std::sin(0.37 * static_cast<double>((t * kHeads + h) * kDim + ch)));
  const RopeParams params{static_cast<std::int64_t>(kDim), 0, 10000.0, Layout::HalfSplit};
  const RopeBatch batch = heads_first ? RopeBatch::heads_first(c.positions, kHeads, kDim)
                                      : RopeBatch::tokens_first(c.positions, kHeads, kDim);
  const std::vector<double> xd(c.x.begin(), c.x.end());
  const std::vector<double> exact = golden_rope(params, batch, xd, DType::F64);
  c.codes.resize(n);
  for (std::size_t i = 0; i < n; ++i) c.codes[i] = fp8_code(Fp8Format::E4m3fn, exact[i] / 0.5);
  for (const auto& [t, h, ch] : wrong) c.codes[flat(t, h, ch)] += 1;
  return c;
}

Report check(const Case& c, bool heads_first, std::size_t threads = 1) {
  Fp8RopeRequest r;
  r.rope.threads = threads;
  const std::vector<std::size_t> shape = heads_first ? std::vector<std::size_t>{kHeads, kTokens, kDim}
                                                     : std::vector<std::size_t>{kTokens, kHeads, kDim};
  r.rope.x = {{}, shape, DType::F32, "x", c.x.data()};
  r.rope.positions.values = c.positions;
  r.rope.heads_first = heads_first;
  r.codes = c.codes;
  r.codes_shape = shape;
  r.codes_name = std::string{"y"};
  r.scale = {0.5};
  return check_rope_fp8(r, Names());
}

TEST(Fp8Runs, ACorrectKernelPassesOverSeveralRuns) {
  for (const bool heads_first : {false, true}) {
    const Report r = check(make(heads_first, {}), heads_first);
    EXPECT_TRUE(r.passed) << r.text;
    EXPECT_EQ(r.doc.elements, kTokens * kHeads * kDim);
  }
}

// Token 250 of head 0 comes first in [heads, tokens, dim], token 10 of head 3 first in token order: the
// report names the first in x's layout, and each layout counts both.
TEST(Fp8Runs, TheFirstWrongElementIsFirstInXsLayout) {
  const std::vector<std::array<std::size_t, 3>> wrong = {{10, 3, 5}, {250, 0, 40}};
  for (const bool heads_first : {false, true}) {
    const Report r = check(make(heads_first, wrong), heads_first);
    ASSERT_FALSE(r.passed);
    EXPECT_EQ(r.doc.violations, 2U);
    ASSERT_EQ(r.doc.worst.size(), 1U);
    const auto& w = r.doc.worst[0];
    const std::size_t token = heads_first ? 250 : 10, head = heads_first ? 0 : 3,
                      channel = heads_first ? 40 : 5;
    EXPECT_EQ(w["row"], token) << r.text;
    EXPECT_EQ(w["head"], head) << r.text;
    EXPECT_EQ(w["channel"], channel) << r.text;
    EXPECT_EQ(w["position"], 1000 + 7 * static_cast<std::int64_t>(token)) << r.text;
  }
}

// Every code divided by 0.25 instead of 0.5 (the scale applied twice): the diagnosis reads every run and
// names it; the same but one code of the last run written as the given reading would (0.5) names nothing.
TEST(Fp8Runs, TheDiagnosisReadsEveryRun) {
  Case c = make(false, {});
  const RopeParams params{static_cast<std::int64_t>(kDim), 0, 10000.0, Layout::HalfSplit};
  const std::vector<double> xd(c.x.begin(), c.x.end());
  const std::vector<double> exact =
      golden_rope(params, RopeBatch::tokens_first(c.positions, kHeads, kDim), xd, DType::F64);
  for (std::size_t i = 0; i < exact.size(); ++i) c.codes[i] = fp8_code(Fp8Format::E4m3fn, exact[i] / 0.25);
  const Report twice = check(c, false);
  ASSERT_FALSE(twice.passed);
  ASSERT_TRUE(twice.doc.explanations.has_value() && twice.doc.explanations->size() == 1) << twice.text;
  EXPECT_NE(twice.text.find("the scale applied twice"), std::string::npos) << twice.text;
  std::size_t last = exact.size() - 1;
  while (fp8_code(Fp8Format::E4m3fn, exact[last] / 0.5) == c.codes[last]) --last;
  ASSERT_GE(last, 2 * (std::size_t{1} << 15));  // in the third run
  c.codes[last] = fp8_code(Fp8Format::E4m3fn, exact[last] / 0.5);
  const Report none = check(c, false);
  ASSERT_FALSE(none.passed);
  EXPECT_FALSE(none.doc.explanations.has_value() && !none.doc.explanations->empty()) << none.text;
  EXPECT_NE(none.text.find("undetermined"), std::string::npos) << none.text;
}

// Runs dealt to threads (whole runs each): the same report, text and document, on any count (at most the
// machine's threads and the runs: 3 here). The first wrong element in part 0 or a later part, and none in
// part 0 at all.
TEST(Fp8Runs, EveryThreadCountGivesTheOneThreadReport) {
  using Wrong = std::vector<std::array<std::size_t, 3>>;
  for (const Wrong& wrong : {Wrong{{10, 3, 5}, {250, 0, 40}, {299, 1, 63}}, Wrong{{200, 2, 9}, {299, 0, 1}}})
    for (const bool heads_first : {false, true}) {
      const Case c = make(heads_first, wrong);
      const Report one = check(c, heads_first, 1);
      for (const std::size_t threads : {2, 3, 7}) {
        const Report many = check(c, heads_first, threads);
        EXPECT_EQ(many.text, one.text) << threads;
        EXPECT_EQ(many.json().dump(), one.json().dump()) << threads;
      }
    }
}

}  // namespace
}  // namespace pe::check

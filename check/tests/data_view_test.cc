// The check engine reads the caller's elements in place (DataView::typed: a mapped .npy file, a numpy
// array) exactly as it reads their copy as doubles: the same report, text and JSON, for RoPE that passes,
// fails (the diagnosis reads the data), is compared against a second implementation or is a NoPE layer,
// for a sinusoidal table and for an ALiBi bias, in float32, bfloat16 and float16.
#include <gtest/gtest.h>

#include <random>

#include "held_values.h"
#include "pe/check/check.h"
#include "pe/check/errors.h"
#include "pe/check/golden.h"
#include "pe/half.h"

namespace pe::check {
namespace {

void expect_same(const Report& a, const Report& b, const std::string& what) {
  EXPECT_EQ(a.passed, b.passed) << what;
  EXPECT_EQ(a.text, b.text) << what;
  EXPECT_EQ(a.json().dump(), b.json().dump()) << what;
}

TEST(DataView, InPlaceElementsGiveTheReportOfTheirDoubles) {
  const std::size_t tokens = 40, heads = 2, hd = 64;
  std::mt19937_64 g(20261202);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<std::int64_t> positions(tokens);
  for (std::size_t t = 0; t < tokens; ++t) positions[t] = static_cast<std::int64_t>(t * 97);
  const RopeParams params{64, 0, 10000.0, Layout::HalfSplit};
  const RopeBatch batch = rope_batch_of({tokens, heads, hd}, positions, false, "x");
  for (const DType type : {DType::F32, DType::BF16, DType::F16}) {
    std::vector<double> x(tokens * heads * hd);
    for (double& v : x) v = unit(g);
    const Held hx(x, type);
    const std::vector<double> golden = golden_rope(params, batch, hx.doubles, type);
    std::vector<double> wrong = golden;  // a kernel that ignores the positions past 2000
    for (std::size_t i = 0; i < wrong.size(); ++i)
      if (positions[i / (heads * hd)] > 2000) wrong[i] = hx.doubles[i];
    const Held good(golden, type), bad(wrong, type);
    const std::string t(to_string(type));
    for (const auto& [y, b, no_rope, what] :
         {std::tuple{&good, static_cast<const Held*>(nullptr), false, "passing"},
          {&bad, nullptr, false, "failing"},
          {&good, &bad, false, "against"},
          {&hx, nullptr, true, "NoPE"}}) {
      RopeRequest r;
      r.positions.values = positions;
      if (!no_rope) r.spec.layout = Layout::HalfSplit;
      if (no_rope) r.spec.no_rope = true;
      RopeRequest in_place = r;
      r.x = hx.as_doubles({tokens, heads, hd}, "x");
      r.y = y->as_doubles({tokens, heads, hd}, "y");
      in_place.x = hx.in_place({tokens, heads, hd}, "x");
      in_place.y = y->in_place({tokens, heads, hd}, "y");
      if (b != nullptr) {
        r.against = b->as_doubles({tokens, heads, hd}, "b");
        in_place.against = b->in_place({tokens, heads, hd}, "b");
      }
      const Report doubles = check_rope(r, Names());
      EXPECT_EQ(doubles.passed, b == nullptr && y != &bad) << t << " " << what;
      expect_same(doubles, check_rope(in_place, Names()), t + " " + what);
      // The verdict alone (RopeRequest::quiet, verify_rope's per-call check): the whole check's, without
      // text; with a second implementation, whose comparison can turn the verdict, refused by name.
      RopeRequest quiet = in_place;
      quiet.quiet = true;
      if (b != nullptr) {
        try {
          check_rope(quiet, Names());
          ADD_FAILURE() << t << " " << what << ": quiet with a second implementation was not refused";
        } catch (const BadRequest& e) {
          EXPECT_EQ(e.parameter(), "quiet") << t << " " << what;
        }
      } else {
        const Report alone = check_rope(quiet, Names());
        EXPECT_EQ(alone.passed, doubles.passed) << t << " " << what;
        EXPECT_EQ(alone.json().value("verdict", ""), doubles.json().value("verdict", "")) << t << " " << what;
        EXPECT_TRUE(alone.text.empty()) << t << " " << what;
      }
    }
    // A sinusoidal table and an ALiBi bias, each a little off.
    std::vector<std::int64_t> rows(50);
    for (std::size_t p = 0; p < rows.size(); ++p) rows[p] = static_cast<std::int64_t>(p * 31);
    std::vector<double> table = golden_sinusoidal({32, 10000.0, Layout::Interleaved}, rows, type);
    table[77] += 0.01;
    const Held ht(table, type);
    SinusoidalRequest s;
    s.positions.values = rows;
    s.spec.layout = Layout::Interleaved;
    SinusoidalRequest s_in_place = s;
    s.table = ht.as_doubles({50, 32}, "table");
    s_in_place.table = ht.in_place({50, 32}, "table");
    const Report table_report = check_sinusoidal(s, Names());
    EXPECT_FALSE(table_report.passed) << t;
    expect_same(table_report, check_sinusoidal(s_in_place, Names()), t + " sinusoidal");
    std::vector<std::int64_t> q = {0, 1, 2, 3}, k = {0, 1, 2, 3};
    std::vector<double> bias = golden_alibi({8, 8.0}, q, k, false, type);
    bias[5] += 0.1;
    const Held hb(bias, type);
    AlibiRequest a;
    AlibiRequest a_in_place = a;
    a.table = hb.as_doubles({8, 4, 4}, "bias");
    a_in_place.table = hb.in_place({8, 4, 4}, "bias");
    const Report bias_report = check_alibi(a, Names());
    EXPECT_FALSE(bias_report.passed) << t;
    expect_same(bias_report, check_alibi(a_in_place, Names()), t + " alibi");
  }
}

}  // namespace
}  // namespace pe::check

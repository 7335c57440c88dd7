// check_rope's one screened pass (harness/rope_screen.h) gives the report of every element measured
// exactly (the screen turned off): the same verdict, tally, worst elements, diagnosis and JSON but for the
// bands' 99th percentiles, which are the screen's estimates, within its radius of the exact ones. Passing
// and failing kernels (positions ignored past 2000, another base, a pass-through channel moved, a NaN in
// the input), half-split and interleaved, partial rotary, float32, bfloat16 and float16.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "held_values.h"
#include "pe/check/check.h"
#include "pe/check/golden.h"
#include "pe/harness/rope_screen.h"
#include "pe/harness/typed_buffer.h"

namespace pe::check {
namespace {

struct Case {
  std::string name;
  RopeParams kernel;
  Layout layout;
  std::optional<std::int64_t> rotary_dim;
  bool ignore_late = false, move_through = false, nan_input = false;
};

TEST(ScreenedCheck, ReportIsTheExactPathsButItsPercentiles) {
  const std::size_t tokens = 48, heads = 4, hd = 64;
  std::mt19937_64 g(20261205);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::vector<std::int64_t> positions(tokens);
  for (std::size_t t = 0; t < tokens; ++t) positions[t] = static_cast<std::int64_t>(t * 97);
  const RopeBatch batch = rope_batch_of({tokens, heads, hd}, positions, false, "x");
  const std::vector<Case> cases = {
      {"passing", {64, 0, 1e4, Layout::HalfSplit}, Layout::HalfSplit, std::nullopt},
      {"interleaved", {64, 0, 1e4, Layout::Interleaved}, Layout::Interleaved, std::nullopt},
      {"ignores positions past 2000", {64, 0, 1e4, Layout::HalfSplit}, Layout::HalfSplit, std::nullopt, true},
      {"another base", {64, 0, 5e5, Layout::HalfSplit}, Layout::HalfSplit, std::nullopt},
      {"partial, moved", {64, 32, 1e4, Layout::HalfSplit}, Layout::HalfSplit, 32, false, true},
      {"NaN input", {64, 0, 1e4, Layout::HalfSplit}, Layout::HalfSplit, std::nullopt, false, false, true}};
  for (const DType type : {DType::F32, DType::BF16, DType::F16}) {
    for (const Case& c : cases) {
      harness::TypedBuffer x(type, tokens * heads * hd), y(type, x.size());
      std::vector<double> xd(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) x.set(i, unit(g)), xd[i] = x.get(i);
      const std::vector<double> golden = golden_rope(c.kernel, batch, xd, type);
      for (std::size_t i = 0; i < y.size(); ++i) {
        const bool late = c.ignore_late && positions[i / (heads * hd)] > 2000;
        y.set(i, late ? xd[i] : golden[i]);
      }
      if (c.nan_input) x.set(7 * heads * hd + 3, NAN);  // token 7 is the input's, not judged
      if (c.move_through) y.set(5 * hd + 60, y.get(5 * hd + 60) + 0.5);
      RopeRequest r;
      r.positions.values = positions;
      r.spec.layout = c.layout;
      r.spec.rotary_dim = c.rotary_dim;
      r.x = {{}, {tokens, heads, hd}, type, "x", x.view().data};
      r.y = {{}, {tokens, heads, hd}, type, "y", y.view().data};
      const Report screened = checked_with_screen(r, true), exact = checked_with_screen(r, false);
      const std::string what = std::string(to_string(type)) + " " + c.name;
      EXPECT_EQ(screened.passed, exact.passed) << what;
      EXPECT_EQ(exact.passed, c.name == "passing" || c.name == "interleaved" || c.name == "NaN input")
          << what;
      std::vector<double> p99_screened, p99_exact;
      EXPECT_EQ(without_p99(screened.json(), &p99_screened).dump(),
                without_p99(exact.json(), &p99_exact).dump())
          << what;
      ASSERT_EQ(p99_screened.size(), p99_exact.size()) << what;
      // |x| <= 1: each estimate within (|x_a| + |x_b|)·2^-46 <= 2^-45 of its exact error; ulps relative.
      for (std::size_t k = 0; k < p99_exact.size(); ++k)
        EXPECT_NEAR(p99_screened[k], p99_exact[k], k % 2 == 0 ? 0x1p-45 : 1e-6 * (1 + p99_exact[k]))
            << what << " percentile " << k;
    }
  }
}

}  // namespace
}  // namespace pe::check

// check_rope at real positions (issue 50): the screened pass (each token's sines and cosines from the fast
// path at t·θ_j) gives the report of every element measured exactly (the screen off), but for the bands' 99th
// percentiles; on one thread and on four alike. Text RoPE and a 3-axis M-RoPE grid with fractional
// coordinates, negative ones included, float32, bfloat16 and float16; passing data (the reference's own
// rotation, rounded) and failing data (the rotation at the positions rounded to integers). The refusals name
// their parameter.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "held_values.h"
#include "pe/check/check.h"
#include "pe/check/errors.h"
#include "pe/harness/rope_screen.h"
#include "pe/ref/reference.h"

namespace pe::check {
namespace {

struct RealCase {
  std::string name;
  std::size_t axes;
  bool rounded = false;  // the data rotated at the positions rounded to integers: fails
};

// y = the reference's rotation of x at `at` ([axes][tokens]; one pair's axis by the plan), rounded to `type`.
std::vector<double> rotated(const RopeParams& params, const std::vector<double>& at, std::size_t tokens,
                            std::size_t heads, const std::vector<double>& x, DType type) {
  const RopePlan plan(params);
  const ref::Rope rope(params, ref::RealPosition{0x1p20});
  const std::size_t hd = static_cast<std::size_t>(params.head_dim);
  std::vector<double> y(x.size());
  for (std::size_t t = 0; t < tokens; ++t)
    for (std::size_t h = 0; h < heads; ++h)
      for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
        const std::size_t row = (t * heads + h) * hd;
        const auto [i0, i1] = plan.input_channels(j);
        const auto [o0, o1] = plan.output_channels(j);
        const double p = at[plan.axis_of_pair(j) * tokens + t];
        const auto [y0, y1] = rope.rounded(ref::RealPosition{p}, j, x[row + i0], x[row + i1], type);
        y[row + o0] = y0, y[row + o1] = y1;
      }
  return y;
}

TEST(RealPositionsCheck, ScreenedReportIsTheExactPathsButItsPercentiles) {
  const std::size_t tokens = 60, heads = 3, hd = 64;
  std::mt19937_64 g(50);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (const RealCase& c : {RealCase{"text", 1}, RealCase{"text, rounded", 1, true}, RealCase{"mrope", 3},
                            RealCase{"mrope, rounded", 3, true}}) {
    std::vector<double> at(c.axes * tokens);
    for (std::size_t a = 0; a < c.axes; ++a)
      for (std::size_t t = 0; t < tokens; ++t)  // steps of 1.5 from a negative start on the last axis
        at[a * tokens + t] =
            static_cast<double>(t) * 1.5 - (a == c.axes - 1 ? 20.25 : 0.0) + 0.1 * static_cast<double>(a);
    std::vector<double> integers = at;
    for (double& v : integers) v = std::round(v);
    RopeParams params{static_cast<std::int64_t>(hd), 0, 1e4, Layout::HalfSplit};
    RopeRequest r;
    if (c.axes == 3) {
      params.form.mrope_section = {8, 12, 12};
      r.spec.form.mrope_section = std::vector<std::int64_t>{8, 12, 12};
      r.positions.shape = {3, tokens};
    }
    r.positions.real = at;
    r.spec.layout = Layout::HalfSplit;
    for (const DType type : {DType::F32, DType::BF16, DType::F16}) {
      std::vector<double> xv(tokens * heads * hd);
      for (double& v : xv) v = unit(g);
      const Held x(xv, type);
      const Held y(rotated(params, c.rounded ? integers : at, tokens, heads, x.doubles, type), type);
      r.x = x.in_place({tokens, heads, hd}, "x");
      r.y = y.in_place({tokens, heads, hd}, "y");
      const std::string what = std::string(to_string(type)) + " " + c.name;
      r.threads = 1;
      const Report screened = checked_with_screen(r, true), exact = checked_with_screen(r, false);
      r.threads = 4;
      const Report parts = checked_with_screen(r, true);
      EXPECT_EQ(exact.passed, !c.rounded) << what << "\n" << exact.text;
      EXPECT_EQ(screened.passed, exact.passed) << what;
      EXPECT_EQ(parts.passed, exact.passed) << what;
      std::vector<double> p99_screened, p99_exact;
      EXPECT_EQ(without_p99(screened.json(), &p99_screened).dump(),
                without_p99(exact.json(), &p99_exact).dump())
          << what;
      EXPECT_EQ(without_p99(parts.json()).dump(), without_p99(exact.json()).dump()) << what;
      ASSERT_EQ(p99_screened.size(), p99_exact.size()) << what;
      for (std::size_t k = 0; k < p99_exact.size(); ++k)  // |x| <= 1: within (|x_a| + |x_b|)·2^-46
        EXPECT_NEAR(p99_screened[k], p99_exact[k], k % 2 == 0 ? 0x1p-45 : 1e-6 * (1 + p99_exact[k])) << what;
      if (c.rounded) {
        EXPECT_NE(exact.text.find("diagnosis: undetermined"), std::string::npos) << what;
      }
    }
  }
}

TEST(RealPositionsCheck, OutOfBoundRealPositionsAreRefusedNamingPositions) {
  RopeRequest r;
  const std::vector<double> xv(4 * 8, 0.5);
  const Held x(xv, DType::F32);
  r.x = x.in_place({4, 1, 8}, "x");
  r.y = r.x;
  const auto message = [&](std::vector<double> real) {
    r.positions.real = std::move(real);
    try {
      check_rope(r, Names());
    } catch (const BadRequest& e) {
      return std::string(e.what()) + " [" + e.parameter() + "]";
    }
    return std::string("no error");
  };
  EXPECT_NE(message({0.5, 1, NAN, 2}).find("holds nan at flat index 2, not a finite position [positions]"),
            std::string::npos);
  EXPECT_NE(message({0.5, 1, 2, 0x1p54}).find("beyond the real positions' bound |t| <= 2^53 [positions]"),
            std::string::npos);
  EXPECT_NE(message({0.5, 1e-39, 2, 3})
                .find("0 or at least 2^-126 in magnitude (a float32 angle's fl(t) is relative only there) "
                      "[positions]"),
            std::string::npos);
  EXPECT_EQ(message({0.5, -1, 2, 3}), "no error");  // negative real positions are checked
}

}  // namespace
}  // namespace pe::check

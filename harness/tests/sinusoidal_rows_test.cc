// pe/harness/sinusoidal_rows.h: diffusers' grids (get_2d_sincos_pos_embed, get_3d_sincos_pos_embed, as
// diffusers 0.31's embeddings.py writes them) re-derived here in float32 numpy semantics (a float32 arange
// divided by a Python float: the divisor rounded to float32, one float32 division), their row order and
// channel blocks, the zero rows, the refusals; and measure_sinusoidal_rows on the correctly rounded table:
// every element within its contract's budget, one element moved by 1e-3 the only violation.
#include "pe/harness/sinusoidal_rows.h"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "pe/check/golden.h"
#include "pe/errors.h"
#include "pe/variant.h"

namespace pe::harness {
namespace {

// numpy: np.arange(n, dtype=np.float32) / d1 / d2, each Python float divisor cast to float32 first.
std::vector<float> rows_numpy_axis(std::int64_t n, std::vector<double> divisors) {
  std::vector<float> out;
  for (std::int64_t i = 0; i < n; ++i) {
    float v = static_cast<float>(i);
    for (const double d : divisors) v = v / static_cast<float>(d);
    out.push_back(v);
  }
  return out;
}

SinusoidalParams rows_params(std::int64_t dim) { return {dim, 10000.0, Layout::Concatenated}; }

// 2-D: grid_h = arange(H)/(H/base_size)/scale, grid_w likewise over W; meshgrid(grid_w, grid_h) flattened
// row-major, so cell m is (h, w) = (m / W, m % W); the first half of the channels (emb_h of grid[0]) reads w.
void expect_2d(const SinusoidalRows& rows, std::int64_t H, std::int64_t W, std::optional<double> base_size,
               double scale, std::int64_t extra, std::int64_t dim) {
  const auto div = [&](std::int64_t n) {
    return base_size ? std::vector<double>{static_cast<double>(n) / *base_size, scale}
                     : std::vector<double>{scale};
  };
  const std::vector<float> gh = rows_numpy_axis(H, div(H)), gw = rows_numpy_axis(W, div(W));
  ASSERT_EQ(rows.dim, static_cast<std::size_t>(dim));
  ASSERT_EQ(rows.rows(), static_cast<std::size_t>(extra + H * W));
  ASSERT_EQ(rows.blocks.size(), 2u);
  EXPECT_EQ(rows.blocks[0].offset, 0u);
  EXPECT_EQ(rows.blocks[1].offset, static_cast<std::size_t>(dim / 2));
  EXPECT_EQ(rows.blocks[0].params.dim, dim / 2);
  EXPECT_EQ(rows.blocks[1].params.dim, dim / 2);
  EXPECT_EQ(rows.blocks[0].axis_name, "w");
  EXPECT_EQ(rows.blocks[1].axis_name, "h");
  const std::size_t aw = rows.blocks[0].axis, ah = rows.blocks[1].axis;
  EXPECT_NE(aw, ah);
  for (std::int64_t r = 0; r < extra; ++r) EXPECT_TRUE(rows.zero_row(static_cast<std::size_t>(r)));
  for (std::int64_t m = 0; m < H * W; ++m) {
    const auto r = static_cast<std::size_t>(extra + m);
    EXPECT_FALSE(rows.zero_row(r));
    ASSERT_EQ(rows.positions[aw][r], static_cast<double>(gw[static_cast<std::size_t>(m % W)]))
        << "cell " << m;
    ASSERT_EQ(rows.positions[ah][r], static_cast<double>(gh[static_cast<std::size_t>(m / W)]))
        << "cell " << m;
  }
}

TEST(SinusoidalRows, TwoDGridAsDiffusersBuildsIt) {
  GridSpec g;
  g.sizes = {12, 20};
  g.base_size = 16;
  g.interpolation_scale = 2;
  expect_2d(grid_rows(rows_params(64), g), 12, 20, 16.0, 2, 0, 64);
  // 20/16 = 1.25 and 12/16 = 0.75: w's coordinates step by 0.4, h's by 2/3 rounded.
  g.extra_tokens = 1;
  const SinusoidalRows with_cls = grid_rows(rows_params(64), g);
  expect_2d(with_cls, 12, 20, 16.0, 2, 1, 64);
  EXPECT_EQ(with_cls.positions[with_cls.blocks[0].axis][1 + 19], static_cast<double>(19.0f / 1.25f / 2.0f));
  // MAE's util/pos_embed.py: no base_size, coordinates the plain arange (scaled).
  GridSpec mae;
  mae.sizes = {12, 20};
  mae.extra_tokens = 4;
  mae.interpolation_scale = 0.3;
  expect_2d(grid_rows(rows_params(128), mae), 12, 20, std::nullopt, 0.3, 4, 128);
}

// A contract's c1_scale (the angle's roundings a scale or a real t adds, pe/contract.h) is charged where a
// kernel computed one of them: a block scaled, or a row at a position that is not a whole number (the whole
// table then).
TEST(SinusoidalRows, ScaledOrRealRowsChargeTheContractsScaleTerms) {
  EXPECT_EQ(rows_real_scale(one_axis_rows(rows_params(64), {0, 1, 999})), 0);
  EXPECT_EQ(rows_real_scale(one_axis_rows(rows_params(64), {0, 1, 17.25})), 1);
  SinusoidalParams scaled = rows_params(64);
  scaled.scale = -1000;
  EXPECT_EQ(rows_real_scale(one_axis_rows(scaled, {0, 1})), 1000);
  GridSpec whole;  // base_size = the side, interpolation 1: the coordinates are 0, 1, ...
  whole.sizes = {4, 6};
  EXPECT_EQ(rows_real_scale(grid_rows(rows_params(64), whole)), 0);
  whole.interpolation_scale = 2;
  EXPECT_EQ(rows_real_scale(grid_rows(rows_params(64), whole)), 1);

  const Variant* v = find_variant("sinusoidal.diffusers_f32");
  ASSERT_NE(v, nullptr);
  ASSERT_GT(v->contract().c1_scale, 0);
  Budget budget{&v->contract(), DType::F32};
  const double phi = 731.125, plain = budget(nullptr, phi, 3, 1.0);
  EXPECT_EQ(plain, element_budget(v->contract(), DType::F32, phi, 3));
  budget.real_scale = 1;
  // c1_scale·u_angle·|φ| more: 3·2^-24·731.125, and 2·denorm_min(float32) for a subnormal t·ω.
  EXPECT_DOUBLE_EQ(budget(nullptr, phi, 3, 1.0) - plain, v->contract().c1_scale * 0x1p-24 * phi + 0x1p-148);
  // A scale of 3e38 makes that term 2·3e38·2^-149 = 8.4e-7 (a t·ω of 1e-40 rounds to within 2^-150 absolute).
  budget.real_scale = 3e38;
  EXPECT_GE(budget(nullptr, 1e-3, 0, 1.0), 2 * 3e38 * 0x1p-149);
}

TEST(SinusoidalRows, ThreeDGridAsCogVideoXBuildsIt) {
  GridSpec g;
  g.sizes = {4, 6, 10};  // T, H, W
  g.interpolation_scale = 1.875;
  g.temporal_interpolation_scale = 0.7;
  const std::int64_t dim = 64;
  const SinusoidalRows rows = grid_rows(rows_params(dim), g);
  ASSERT_EQ(rows.rows(), 240u);
  ASSERT_EQ(rows.blocks.size(), 3u);
  // [temporal D/4 | spatial 3D/4 = (emb of grid_w 3D/8 | emb of grid_h 3D/8)].
  const std::vector<std::size_t> offsets = {0, 16, 40}, widths = {16, 24, 24};
  const std::vector<std::string> names = {"t", "w", "h"};
  for (std::size_t b = 0; b < 3; ++b) {
    EXPECT_EQ(rows.blocks[b].offset, offsets[b]);
    EXPECT_EQ(rows.blocks[b].params.dim, static_cast<std::int64_t>(widths[b]));
    EXPECT_EQ(rows.blocks[b].axis_name, names[b]);
    EXPECT_EQ(rows.blocks[b].params.layout, Layout::Concatenated);
  }
  const std::vector<float> gt = rows_numpy_axis(4, {0.7}), gh = rows_numpy_axis(6, {1.875}),
                           gw = rows_numpy_axis(10, {1.875});
  for (std::size_t r = 0; r < 240; ++r) {
    const std::size_t t = r / 60, m = r % 60;
    ASSERT_EQ(rows.positions[rows.blocks[0].axis][r], static_cast<double>(gt[t])) << r;
    ASSERT_EQ(rows.positions[rows.blocks[1].axis][r], static_cast<double>(gw[m % 10])) << r;
    ASSERT_EQ(rows.positions[rows.blocks[2].axis][r], static_cast<double>(gh[m / 10])) << r;
    EXPECT_FALSE(rows.zero_row(r));
  }
}

TEST(SinusoidalRows, OneAxisRowsZeroThePaddingIndex) {
  std::vector<double> t;
  for (int p = 0; p < 10; ++p) t.push_back(p);
  const SinusoidalRows rows = one_axis_rows(rows_params(15), t, 1);
  ASSERT_EQ(rows.rows(), 10u);
  for (std::size_t r = 0; r < 10; ++r) EXPECT_EQ(rows.zero_row(r), r == 1) << r;
  const SinusoidalRows none = one_axis_rows(rows_params(15), t);
  for (std::size_t r = 0; r < 10; ++r) EXPECT_FALSE(none.zero_row(r));
  EXPECT_EQ(none.blocks.size(), 1u);
  EXPECT_EQ(none.blocks[0].params.dim, 15);
}

void expect_grid_refused(std::int64_t dim, const GridSpec& g, const std::string& parameter) {
  try {
    grid_rows(rows_params(dim), g);
    ADD_FAILURE() << "accepted; expected a refusal naming " << parameter;
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.parameter(), parameter) << e.what();
  }
}

TEST(SinusoidalRows, GridsRefusedNamingTheParameter) {
  const auto grid = [](std::vector<std::int64_t> sizes) {
    GridSpec g;
    g.sizes = std::move(sizes);
    return g;
  };
  expect_grid_refused(64, grid({12}), "grid");
  expect_grid_refused(64, grid({2, 3, 4, 5}), "grid");
  expect_grid_refused(64, grid({0, 5}), "grid");
  expect_grid_refused(64, grid({4, -1, 5}), "grid");
  expect_grid_refused(30, grid({12, 20}), "dim");    // halves of 15: odd
  expect_grid_refused(24, grid({4, 6, 10}), "dim");  // D/4 = 6, 3D/8 = 9: odd
  GridSpec g = grid({12, 20});
  g.base_size = 0;
  expect_grid_refused(64, g, "base_size");
  g = grid({4, 6, 10});
  g.base_size = 16;
  expect_grid_refused(64, g, "base_size");
  g = grid({12, 20});
  g.extra_tokens = -1;
  expect_grid_refused(64, g, "extra_tokens");
  g = grid({4, 6, 10});
  g.extra_tokens = 1;
  expect_grid_refused(64, g, "extra_tokens");
  g = grid({12, 20});
  g.interpolation_scale = 0;
  expect_grid_refused(64, g, "interpolation_scale");
  g.interpolation_scale = NAN;
  expect_grid_refused(64, g, "interpolation_scale");
  g = grid({4, 6, 10});
  g.temporal_interpolation_scale = -1;
  expect_grid_refused(64, g, "temporal_interpolation_scale");
}

// The correctly rounded float32 table (check's golden) against a sinusoidal float32 contract's budget: every
// element within it (a correct rounding is within half an ulp, every float32 contract allows more); one
// element moved by 1e-3 (thousands of float32 ulps of a value <= 1) is the only violation.
TEST(SinusoidalRows, MeasuresTheGoldenTableWithinBudgetAndFindsOneMovedElement) {
  const Variant* v = find_variant("sinusoidal.scalar_f32");
  ASSERT_NE(v, nullptr);
  const Budget budget{&v->contract(), DType::F32};
  GridSpec g;
  g.sizes = {12, 20};
  g.base_size = 16;
  g.extra_tokens = 1;
  SinusoidalParams flipped = rows_params(64);
  flipped.flip_sin_to_cos = true;
  std::vector<double> t = {0, 0.5, 17.25, 999.875, 3.0, 250.125};
  SinusoidalParams timestep = rows_params(33);  // odd: a pad column
  timestep.downscale_freq_shift = 1;
  timestep.scale = 2.5;
  for (const SinusoidalRows& rows : {grid_rows(flipped, g), one_axis_rows(timestep, t, 3)}) {
    std::vector<double> y = check::golden_sinusoidal(rows, DType::F32);
    ASSERT_EQ(y.size(), rows.rows() * rows.dim);
    std::size_t count = 0, over = 0;
    measure_sinusoidal_rows(rows, y, budget, [&](const ElementRecord& e) {
      ++count;
      if (!(e.abs_error <= e.budget)) ++over;
    });
    EXPECT_EQ(count, y.size());
    EXPECT_EQ(over, 0u);
    const std::size_t moved = (rows.rows() - 1) * rows.dim + 5;
    y[moved] += 1e-3;
    std::vector<std::size_t> violations;
    measure_sinusoidal_rows(rows, y, budget, [&](const ElementRecord& e) {
      if (!(e.abs_error <= e.budget))
        violations.push_back(static_cast<std::size_t>(e.row) * rows.dim +
                             static_cast<std::size_t>(e.channel));
    });
    EXPECT_EQ(violations, std::vector<std::size_t>{moved});
    // A zero row's element moved by the smallest amount is a violation too (budget 0).
    y[moved] -= 1e-3;
    const std::size_t zero = (g.extra_tokens > 0 && rows.blocks.size() == 2 ? 0 : 3) * rows.dim + 2;
    y[zero] = 0x1p-149;
    violations.clear();
    measure_sinusoidal_rows(rows, y, budget, [&](const ElementRecord& e) {
      if (!(e.abs_error <= e.budget))
        violations.push_back(static_cast<std::size_t>(e.row) * rows.dim +
                             static_cast<std::size_t>(e.channel));
    });
    EXPECT_EQ(violations, std::vector<std::size_t>{zero});
  }
}

}  // namespace
}  // namespace pe::harness

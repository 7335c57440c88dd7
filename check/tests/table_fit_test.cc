// check_sinusoidal on tables built here from the published code, transcribed in its own arithmetic: diffusers
// 0.31's get_timestep_embedding (float32 torch), get_2d_sincos_pos_embed and get_3d_sincos_pos_embed (numpy:
// float32 coordinates, float64 frequencies and sin/cos, cast to float32 as the models load them), Whisper's
// sinusoids and fairseq's SinusoidalPositionalEmbedding.get_embedding (float32 torch). Each passes under the
// spec that names its switches; the same table checked with one switch wrong fails, and the diagnosis's
// finding names that switch (explain/table_fit.h).
#include "explain/table_fit.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "pe/check/check.h"
#include "pe/check/golden.h"
#include "pe/contract.h"
#include "pe/variant.h"

namespace pe::check {
namespace {

// torch's float32 ops: a Python float operand rounded to float32, then one float32 operation.
float f32(double v) { return static_cast<float>(v); }

// diffusers get_timestep_embedding(timesteps, dim, flip_sin_to_cos, downscale_freq_shift, scale, max_period).
std::vector<float> timestep_embedding(const std::vector<float>& ts, std::size_t dim, bool flip, double shift,
                                      double scale, double max_period) {
  const std::size_t half = dim / 2;
  std::vector<float> freq(half);
  for (std::size_t i = 0; i < half; ++i) {
    const float exponent = f32(-std::log(max_period)) * static_cast<float>(i);  // -ln(P) * arange(half)
    freq[i] = std::exp(exponent / f32(static_cast<double>(half) - shift));
  }
  std::vector<float> out(ts.size() * dim, 0.0f);  // an odd dim's last column: F.pad's zero
  for (std::size_t r = 0; r < ts.size(); ++r)
    for (std::size_t i = 0; i < half; ++i) {
      const float angle = f32(scale) * (ts[r] * freq[i]);
      const float s = std::sin(angle), c = std::cos(angle);
      out[r * dim + i] = flip ? c : s;  // cat([sin, cos]); flipped: cat([emb[:, half:], emb[:, :half]])
      out[r * dim + half + i] = flip ? s : c;
    }
  return out;
}

// Whisper's sinusoids(length, channels, max_timescale=10000).
std::vector<float> whisper_sinusoids(std::size_t length, std::size_t channels) {
  const std::size_t half = channels / 2;
  const double increment = std::log(10000.0) / static_cast<double>(half - 1);
  std::vector<float> inv(half);
  for (std::size_t i = 0; i < half; ++i) inv[i] = std::exp(f32(-increment) * static_cast<float>(i));
  std::vector<float> out(length * channels);
  for (std::size_t p = 0; p < length; ++p)
    for (std::size_t i = 0; i < half; ++i) {
      const float scaled = static_cast<float>(p) * inv[i];
      out[p * channels + i] = std::sin(scaled);
      out[p * channels + half + i] = std::cos(scaled);
    }
  return out;
}

// fairseq's SinusoidalPositionalEmbedding.get_embedding(num_embeddings, embedding_dim, padding_idx).
std::vector<float> fairseq_embedding(std::size_t num, std::size_t dim, std::size_t padding_idx) {
  const std::size_t half = dim / 2;
  const double step = std::log(10000.0) / static_cast<double>(half - 1);
  std::vector<float> freq(half);
  for (std::size_t i = 0; i < half; ++i) freq[i] = std::exp(static_cast<float>(i) * f32(-step));
  std::vector<float> out(num * dim, 0.0f);  // odd: torch.cat([emb, zeros(num, 1)])
  for (std::size_t p = 0; p < num; ++p) {
    if (p == padding_idx) continue;  // emb[padding_idx, :] = 0
    for (std::size_t i = 0; i < half; ++i) {
      const float angle = static_cast<float>(p) * freq[i];
      out[p * dim + i] = std::sin(angle);
      out[p * dim + half + i] = std::cos(angle);
    }
  }
  return out;
}

// numpy's get_1d_sincos_pos_embed_from_grid(D, pos): float64 ω = 1/10000**(arange(D/2)/(D/2)), [sin | cos],
// written at `row`'s columns [offset, offset + D).
void numpy_1d(std::vector<double>& row, std::size_t offset, std::size_t d, float pos) {
  for (std::size_t i = 0; i < d / 2; ++i) {
    const double omega = 1.0 / std::pow(10000.0, static_cast<double>(i) / (static_cast<double>(d) / 2.0));
    const double angle = static_cast<double>(pos) * omega;
    row[offset + i] = std::sin(angle);
    row[offset + d / 2 + i] = std::cos(angle);
  }
}

// np.arange(n, dtype=np.float32) / d (each float divisor cast to float32).
float numpy_coordinate(std::size_t i, std::initializer_list<double> divisors) {
  float v = static_cast<float>(i);
  for (const double d : divisors) v = v / f32(d);
  return v;
}

// get_2d_sincos_pos_embed(D, (H, W), cls_token, extra_tokens, interpolation_scale, base_size); base_size 0:
// MAE's (no division by n / base_size). `swapped`: the first half reading h (the mistake checked for).
// `w_by_h`: the w coordinates divided by grid_size[0] / base_size (H's), the per-side mistake checked for.
std::vector<float> grid_2d(std::size_t D, std::size_t H, std::size_t W, std::size_t extra, double scale,
                           double base_size, bool swapped = false, bool w_by_h = false) {
  const auto coord = [&](std::size_t i, std::size_t n) {
    if (w_by_h && n == W) n = H;
    return base_size > 0 ? numpy_coordinate(i, {static_cast<double>(n) / base_size, scale})
                         : numpy_coordinate(i, {scale});
  };
  std::vector<float> out((extra + H * W) * D, 0.0f);  // the extra tokens' rows: np.zeros
  std::vector<double> row(D);
  for (std::size_t h = 0; h < H; ++h)
    for (std::size_t w = 0; w < W; ++w) {
      // meshgrid(grid_w, grid_h): grid[0] the w coordinates, its embedding the first half.
      numpy_1d(row, 0, D / 2, swapped ? coord(h, H) : coord(w, W));
      numpy_1d(row, D / 2, D / 2, swapped ? coord(w, W) : coord(h, H));
      for (std::size_t c = 0; c < D; ++c) out[(extra + h * W + w) * D + c] = static_cast<float>(row[c]);
    }
  return out;
}

// get_3d_sincos_pos_embed(D, (W, H), T, spatial_interpolation_scale, temporal_interpolation_scale):
// [temporal D/4 | w 3D/8 | h 3D/8], rows t·H·W + h·W + w (`w_major`: the cells flattened w-major instead).
std::vector<float> grid_3d(std::size_t D, std::size_t T, std::size_t H, std::size_t W, double s, double ts,
                           bool w_major = false) {
  std::vector<float> out(T * H * W * D);
  std::vector<double> row(D);
  for (std::size_t t = 0; t < T; ++t)
    for (std::size_t h = 0; h < H; ++h)
      for (std::size_t w = 0; w < W; ++w) {
        numpy_1d(row, 0, D / 4, numpy_coordinate(t, {ts}));
        numpy_1d(row, D / 4, 3 * D / 8, numpy_coordinate(w, {s}));
        numpy_1d(row, D / 4 + 3 * D / 8, 3 * D / 8, numpy_coordinate(h, {s}));
        const std::size_t cell = w_major ? w * H + h : h * W + w;
        for (std::size_t c = 0; c < D; ++c) out[(t * H * W + cell) * D + c] = static_cast<float>(row[c]);
      }
  return out;
}

struct FitCase {
  std::vector<float> table;
  std::size_t rows = 0, dim = 0;
  SinusoidalRequest request;
};

Report checked(FitCase& c) {
  c.request.table = {{}, {c.rows, c.dim}, DType::F32, "table", c.table.data()};
  return check_sinusoidal(c.request, Names());
}

std::vector<std::int64_t> fit_range(std::int64_t from, std::int64_t to) {
  std::vector<std::int64_t> v;
  for (std::int64_t p = from; p <= to; ++p) v.push_back(p);
  return v;
}

// The report's first finding ("the data fits: ...").
std::string first_finding(const Report& r) {
  if (!r.doc.explanations || r.doc.explanations->empty()) return "(no finding)";
  return r.doc.explanations->front().fits;
}

void expect_finding(FitCase c, const std::string& words) {
  const Report r = checked(c);
  EXPECT_FALSE(r.passed) << r.text;
  EXPECT_NE(first_finding(r).find(words), std::string::npos) << "expected \"" << words << "\"\n" << r.text;
}

// Stable Diffusion's Timesteps(320, flip_sin_to_cos=True, downscale_freq_shift=0) at fractional timesteps.
FitCase timestep_case(bool flip, double shift, const std::vector<float>& ts, double scale = 1,
                      double max_period = 10000) {
  FitCase c;
  c.rows = ts.size(), c.dim = 320;
  c.table = timestep_embedding(ts, c.dim, flip, shift, scale, max_period);
  c.request.real_positions.assign(ts.begin(), ts.end());
  c.request.spec.layout = Layout::Concatenated;
  c.request.spec.flip_sin_to_cos = flip;
  c.request.spec.downscale_freq_shift = shift;
  return c;
}

std::vector<float> fit_timesteps() {
  std::vector<float> ts = {0.0f, 0.5f, 17.25f, 999.875f};
  for (int k = 1; k <= 60; ++k) ts.push_back(static_cast<float>(k) * 16.625f);
  return ts;
}

TEST(TableFit, TimestepEmbeddingPassesAndAWrongFlipOrShiftIsNamed) {
  for (const double shift : {0.0, 1.0}) {
    FitCase sd = timestep_case(true, shift, fit_timesteps());
    const Report r = checked(sd);
    EXPECT_TRUE(r.passed) << r.text;
    FitCase unflipped = sd;
    unflipped.request.spec.flip_sin_to_cos = false;
    expect_finding(unflipped, "flip_sin_to_cos true (given: false)");
    if (shift == 1) {
      FitCase unshifted = sd;
      unshifted.request.spec.downscale_freq_shift = 0;
      expect_finding(unshifted, "downscale_freq_shift 1 (given: 0)");
    }
  }
}

// An odd dim (diffusers pads the last column with 0) and a scale, at a timestep of 999.875.
TEST(TableFit, OddTimestepEmbeddingWithAScalePasses) {
  FitCase c;
  const std::vector<float> ts = {0.5f, 17.25f, 999.875f, 3.0f};
  c.rows = ts.size(), c.dim = 33;
  c.table = timestep_embedding(ts, 33, false, 1, 0.25, 10000);
  c.request.real_positions.assign(ts.begin(), ts.end());
  c.request.spec.layout = Layout::Concatenated;
  c.request.spec.downscale_freq_shift = 1;
  c.request.spec.scale = 0.25;
  const Report r = checked(c);
  EXPECT_TRUE(r.passed) << r.text;
  c.table[2 * 33 + 32] = 1e-3f;  // the pad column must be 0
  EXPECT_FALSE(checked(c).passed);
}

// A contract's c1_scale (the roundings a real t or a scale adds to the angle) is charged at real positions
// only: an element moved past diffusers_f32's integer-table budget by half its c1_scale term passes there,
// and the same move at a whole-number timestep fails.
TEST(TableFit, RealTimestepsAreJudgedWithTheContractsScaleTerm) {
  const Variant* v = find_variant("sinusoidal.diffusers_f32");
  ASSERT_NE(v, nullptr);
  const Contract& contract = v->contract();
  ASSERT_GT(contract.c1_scale, 0);
  for (const float t : {999.875f, 999.0f}) {
    FitCase c;
    const std::vector<float> ts = {t};
    c.rows = 1, c.dim = 320;
    c.request.real_positions.assign(ts.begin(), ts.end());
    c.request.spec.layout = Layout::Concatenated;
    c.request.budget.contract = v->name();
    SinusoidalParams params{320, 10000.0, Layout::Concatenated};
    const std::vector<double> exact = golden_sinusoidal(harness::one_axis_rows(params, {t}), DType::F64);
    // Pair 0's sin (channel 0): ω = 1, |φ| = t.
    const double plain = element_budget(contract, DType::F32, t, 0);
    const double extra = contract.c1_scale * 0x1p-24 * t;
    for (std::size_t ch = 0; ch < c.dim; ++ch) c.table.push_back(static_cast<float>(exact[ch]));
    c.table[0] =
        static_cast<float>(exact[0] + plain + 0.5 * extra);  // its float32 rounding: < 3e-8 << extra/2
    EXPECT_EQ(checked(c).passed, t != std::floor(t)) << "t = " << t << "\n" << checked(c).text;
  }
}

// Timesteps in [0, 1] where the model multiplied them by 1000 first.
TEST(TableFit, TimestepsScaledBy1000AreNamed) {
  std::vector<float> unit, thousand;
  for (int k = 0; k < 64; ++k) {
    unit.push_back(static_cast<float>(k) / 64.0f);
    thousand.push_back(static_cast<float>(k) / 64.0f * 1000.0f);
  }
  FitCase c = timestep_case(true, 0, thousand);
  c.request.real_positions.assign(unit.begin(), unit.end());
  expect_finding(c, "timesteps scaled by 1000");
}

TEST(TableFit, WhisperSinusoidsPassAsShiftOneAndAreNamedWithoutIt) {
  FitCase c;
  c.rows = 1500, c.dim = 384;
  c.table = whisper_sinusoids(1500, 384);
  c.request.positions.values = fit_range(0, 1499);
  c.request.spec.layout = Layout::Concatenated;
  c.request.spec.downscale_freq_shift = 1;
  const Report r = checked(c);
  EXPECT_TRUE(r.passed) << r.text;
  c.request.spec.downscale_freq_shift.reset();
  expect_finding(c, "downscale_freq_shift 1 (given: 0)");
}

TEST(TableFit, FairseqTablePassesWithItsPaddingRowAndIsNamedInTheOtherLayout) {
  const std::size_t n = 200, dim = 255, padding = 1;  // odd: a zero column
  FitCase whole;
  whole.rows = n + 2, whole.dim = dim;
  whole.table = fairseq_embedding(n + 2, dim, padding);
  whole.request.positions.values = fit_range(0, static_cast<std::int64_t>(n) + 1);
  whole.request.spec.layout = Layout::Concatenated;
  whole.request.spec.downscale_freq_shift = 1;
  whole.request.spec.padding_idx = 1;
  const Report r = checked(whole);
  EXPECT_TRUE(r.passed) << r.text;
  // The rows a sequence of n tokens reads: make_positions' padding_idx + 1 onwards.
  FitCase used;
  used.rows = n, used.dim = dim;
  used.table.assign(whole.table.begin() + 2 * dim, whole.table.end());
  used.request = whole.request;
  used.request.spec.padding_idx.reset();
  used.request.positions.values = fit_range(2, static_cast<std::int64_t>(n) + 1);
  const Report u = checked(used);
  EXPECT_TRUE(u.passed) << u.text;
  FitCase from_zero = used;
  from_zero.request.positions.values = fit_range(0, static_cast<std::int64_t>(n) - 1);
  expect_finding(from_zero, "positions shifted by +2");
  FitCase interleaved = whole;
  interleaved.request.spec.layout = Layout::Interleaved;
  expect_finding(interleaved, "layout concatenated (given: interleaved)");
}

TEST(TableFit, MaeAndDiffusersGridsPassAndSwappedAxesAreNamed) {
  struct Grid {
    std::size_t extra;
    double scale, base_size;
  };
  for (const Grid g : {Grid{1, 1, 0}, Grid{0, 2, 16}}) {
    FitCase c;
    c.dim = 128, c.rows = g.extra + 12 * 20;
    c.table = grid_2d(128, 12, 20, g.extra, g.scale, g.base_size);
    c.request.spec.layout = Layout::Concatenated;
    c.request.spec.grid = std::vector<std::int64_t>{12, 20};
    if (g.extra) c.request.spec.extra_tokens = static_cast<std::int64_t>(g.extra);
    if (g.scale != 1) c.request.spec.interpolation_scale = g.scale;
    if (g.base_size > 0) c.request.spec.base_size = g.base_size;
    const Report r = checked(c);
    EXPECT_TRUE(r.passed) << r.text;
    FitCase swapped = c;
    swapped.table = grid_2d(128, 12, 20, g.extra, g.scale, g.base_size, true);
    expect_finding(swapped, "axes w and h swapped");
  }
}

TEST(TableFit, CogVideoXGridPassesAndItsFlattenOrderIsNamed) {
  FitCase c;
  c.dim = 64, c.rows = 4 * 6 * 10;
  c.table = grid_3d(64, 4, 6, 10, 1.875, 1.0);
  c.request.spec.layout = Layout::Concatenated;
  c.request.spec.grid = std::vector<std::int64_t>{4, 6, 10};
  c.request.spec.interpolation_scale = 1.875;
  const Report r = checked(c);
  EXPECT_TRUE(r.passed) << r.text;
  FitCase w_major = c;
  w_major.table = grid_3d(64, 4, 6, 10, 1.875, 1.0, true);
  expect_finding(w_major, "cells flattened w-major");
}

TEST(TableFit, AnotherBaseIsReadBack) {
  std::vector<float> ts;
  for (int p = 0; p < 512; ++p) ts.push_back(static_cast<float>(p));
  FitCase c = timestep_case(false, 0, ts, 1, 1e8);
  c.dim = 320;
  const Report r = checked(c);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.text.find("base 1e+08"), std::string::npos) << r.text;
  EXPECT_NE(first_finding(r).find("base 1e+08 read back (given: 10000)"), std::string::npos) << r.text;
}

// Two mistakes at once: the ladder is read under the flip that lets its angles unwrap, and the base read back
// on it.
TEST(TableFit, AnotherBaseIsReadBackUnderTheRightFlip) {
  std::vector<float> ts;
  for (int p = 0; p < 512; ++p) ts.push_back(static_cast<float>(p));
  FitCase c = timestep_case(true, 0, ts, 1, 1e8);
  c.request.spec.flip_sin_to_cos = false;
  expect_finding(c, "flip_sin_to_cos true (given: false); base 1e+08 read back (given: 10000)");
}

// The memory [dim, rows] (channel-major, numpy's pe.T reshaped) read as [rows, dim].
std::vector<float> transposed(const std::vector<float>& table, std::size_t rows, std::size_t dim) {
  std::vector<float> out(table.size());
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < dim; ++c) out[c * rows + r] = table[r * dim + c];
  return out;
}

TEST(TableFit, RowsAndChannelsExchangedAreNamed) {
  FitCase whisper;
  whisper.rows = 300, whisper.dim = 64;
  whisper.table = transposed(whisper_sinusoids(300, 64), 300, 64);
  whisper.request.positions.values = fit_range(0, 299);
  whisper.request.spec.layout = Layout::Concatenated;
  whisper.request.spec.downscale_freq_shift = 1;
  expect_finding(whisper, "rows and channels exchanged: the data is [dim 64, rows 300]");
  FitCase mae;
  mae.dim = 128, mae.rows = 1 + 12 * 20;
  mae.table = transposed(grid_2d(128, 12, 20, 1, 1, 0), mae.rows, 128);
  mae.request.spec.layout = Layout::Concatenated;
  mae.request.spec.grid = std::vector<std::int64_t>{12, 20};
  mae.request.spec.extra_tokens = 1;
  expect_finding(mae, "rows and channels exchanged");
}

// A wrong axis scale is not named where another mistake explains the table, and on a correct table every
// new candidate leaves far more than the given one (the table's disorder, not rounding).
TEST(TableFit, ExchangedAndAxisCandidatesDoNotFitCorrectTables) {
  FitCase swapped;
  swapped.dim = 128, swapped.rows = 12 * 20;
  swapped.table = grid_2d(128, 12, 20, 0, 2, 16, true);
  swapped.request.spec.layout = Layout::Concatenated;
  swapped.request.spec.grid = std::vector<std::int64_t>{12, 20};
  swapped.request.spec.base_size = 16;
  swapped.request.spec.interpolation_scale = 2;
  expect_finding(swapped, "axes w and h swapped");
  SinusoidalParams p;
  p.dim = 64, p.layout = Layout::Concatenated;
  const std::vector<float> cog = grid_3d(64, 4, 6, 10, 1.875, 1.0);
  const std::vector<double> data(cog.begin(), cog.end());
  SinusoidalSpec spec;
  spec.grid = std::vector<std::int64_t>{4, 6, 10};
  spec.interpolation_scale = 1.875;
  const TableDiagnosis d = diagnose_table(data, harness::grid_rows(p, grid_spec(spec)), spec);
  EXPECT_EQ(d.fits.front().convention.label, "");  // the given model, best
  EXPECT_LT(d.fits.front().residual, 1e-6);
  bool exchanged = false;
  for (const Fit& f : d.fits) {
    // Far above rounding (near 1e-7 here): the correct table read in another order is another table.
    if (f.convention.label.starts_with("rows and")) {
      EXPECT_GT(f.residual, 0.1);
      exchanged = true;
    }
    EXPECT_FALSE(f.convention.label.starts_with("axis")) << f.convention.label;  // no axis reads otherwise
  }
  EXPECT_TRUE(exchanged);
  ASSERT_EQ(d.notes.size(), 3u);  // every axis reads as given
  for (const std::string& n : d.notes) EXPECT_NE(n.find(", as given"), std::string::npos) << n;
}

// CogVideoX's temporal_interpolation_scale given wrong: the t axis's ladder alone reads the value the table
// was built with; w and h read as given.
TEST(TableFit, OneAxisInterpolationScaleIsReadBack) {
  FitCase c;
  c.dim = 64, c.rows = 8 * 6 * 10;
  c.table = grid_3d(64, 8, 6, 10, 1.875, 1.0);
  c.request.spec.layout = Layout::Concatenated;
  c.request.spec.grid = std::vector<std::int64_t>{8, 6, 10};
  c.request.spec.interpolation_scale = 1.875;
  c.request.spec.temporal_interpolation_scale = 2;
  expect_finding(c, "axis t: coordinates x2 read back: temporal_interpolation_scale 1 (given: 2)");
  const Report r = checked(c);
  for (const std::string axis : {"axis w (channels [16, 40)): ", "axis h (channels [40, 64)): "}) {
    const std::size_t at = r.text.find(axis);
    ASSERT_NE(at, std::string::npos) << r.text;
    EXPECT_TRUE(r.text.substr(at, r.text.find('\n', at) - at).ends_with(", as given")) << r.text;
  }
  // Both spatial axes at another interpolation_scale: the shared value.
  FitCase both = c;
  both.request.spec.temporal_interpolation_scale.reset();
  both.request.spec.interpolation_scale = 1;
  expect_finding(both, "interpolation_scale 1.875 read back on w and h (given: 1)");
}

// Every axis given otherwise at once: a video's spatial and temporal scales; a 2-D grid's base_size, which
// scales w and h alike (named with the interpolation_scale it equals: the data cannot tell them apart).
TEST(TableFit, AxesReadOtherwiseTogetherAreNamedTogether) {
  FitCase video;
  video.dim = 64, video.rows = 8 * 6 * 10;
  video.table = grid_3d(64, 8, 6, 10, 1.875, 1.0);
  video.request.spec.layout = Layout::Concatenated;
  video.request.spec.grid = std::vector<std::int64_t>{8, 6, 10};
  video.request.spec.temporal_interpolation_scale = 2;
  expect_finding(
      video,
      "interpolation_scale 1.875 read back on w and h (given: 1); axis t: temporal_interpolation_scale 1 "
      "(given: 2) read back");
  FitCase dit;
  dit.dim = 128, dit.rows = 12 * 20;
  dit.table = grid_2d(128, 12, 20, 0, 1, 8);
  dit.request.spec.layout = Layout::Concatenated;
  dit.request.spec.grid = std::vector<std::int64_t>{12, 20};
  dit.request.spec.base_size = 16;
  expect_finding(dit, "interpolation_scale 2 read back on w and h (given: 1), or base_size 8 (given: 16)");
}

// A non-square grid whose w coordinates were divided by H/base_size: the w axis alone, named with the value
// read back and its per-side reading.
TEST(TableFit, BaseSizeOnTheOtherSideIsReadBackOnOneAxis) {
  FitCase c;
  c.dim = 128, c.rows = 12 * 20;
  c.table = grid_2d(128, 12, 20, 0, 1, 16, false, true);
  c.request.spec.layout = Layout::Concatenated;
  c.request.spec.grid = std::vector<std::int64_t>{12, 20};
  c.request.spec.base_size = 16;
  expect_finding(c, "axis w: coordinates x1.66667 read back: interpolation_scale 0.6 (given: 1)");
  EXPECT_NE(first_finding(checked(c)).find("divided by H/base_size (the other side's size)"),
            std::string::npos);
}

// A video of one frame: its t axis shows no frequency and is said undetermined, not guessed.
TEST(TableFit, AnAxisThatDoesNotReadIsUndetermined) {
  FitCase c;
  c.dim = 64, c.rows = 6 * 10;
  c.table = grid_3d(64, 1, 6, 10, 1.0, 1.0);
  c.request.spec.layout = Layout::Concatenated;
  c.request.spec.grid = std::vector<std::int64_t>{1, 6, 10};
  c.request.spec.interpolation_scale = 2;
  const Report r = checked(c);
  EXPECT_FALSE(r.passed);
  EXPECT_NE(r.text.find("axis t (channels [0, 16)): undetermined: its size is 1"), std::string::npos)
      << r.text;
  EXPECT_NE(first_finding(r).find("interpolation_scale 1 read back on w and h (given: 2)"), std::string::npos)
      << r.text;
}

}  // namespace
}  // namespace pe::check

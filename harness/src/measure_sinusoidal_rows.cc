// pe/harness/sinusoidal_rows.h: tables at real positions, grids, zero rows, against the exact reference.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "pe/errors.h"
#include "pe/harness/sinusoidal_rows.h"
#include "pe/ref/fast_trig.h"
#include "pe/ref/reference.h"

namespace pe::harness {
namespace {

// `message` names the parameter itself (front ends prefix their own word for it: rethrow_named).
[[noreturn]] void fail(const std::string& parameter, const std::string& message) {
  throw InvalidArgument(parameter, message);
}

std::string show(double v) { return fmt::format("{:g}", v); }

// As numpy and torch compute a float32 arange divided by a Python float: in float32, the divisor rounded
// to float32 first.
float divided(float v, double by) { return v / static_cast<float>(by); }

// One axis of a grid: n coordinates, each divided in float32 by every divisor in turn.
std::vector<double> coordinates(std::int64_t n, std::initializer_list<double> divisors) {
  std::vector<double> out(static_cast<std::size_t>(n));
  for (std::size_t i = 0; i < out.size(); ++i) {
    float v = static_cast<float>(i);
    for (const double d : divisors) v = divided(v, d);
    out[i] = v;
  }
  return out;
}

void check_scale(const char* name, double v) {
  if (!std::isfinite(v) || !(v > 0))
    fail(name, std::string(name) + " must be finite and > 0, got " + show(v));
}

// Every angle scale·t within 2^53 (the reference's exact range, and every position's).
void check_angles(const SinusoidalRows& rows) {
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    if (rows.zero_row(r)) continue;
    for (const SinusoidalBlock& b : rows.blocks) {
      const double t = rows.positions[b.axis][r], angle = b.params.scale * t;
      if (!(std::fabs(angle) <= 0x1p53))
        fail(b.params.scale != 1 ? "scale" : "positions",
             "scale·position must be finite and within 2^53: scale " + show(b.params.scale) +
                 " times position " + show(t) + " (row " + std::to_string(r) + ") is " + show(angle));
    }
  }
}

SinusoidalBlock block(const SinusoidalParams& params, std::size_t offset, std::size_t width, std::size_t axis,
                      std::string name) {
  SinusoidalParams p = params;
  p.dim = static_cast<std::int64_t>(width);
  return {offset, p, axis, std::move(name)};
}

}  // namespace

SinusoidalRows one_axis_rows(const SinusoidalParams& params, std::vector<double> positions,
                             std::optional<std::int64_t> padding_idx) {
  validate_table_params(params);
  if (positions.empty()) fail("positions", "no positions");
  for (std::size_t i = 0; i < positions.size(); ++i)
    if (!(std::fabs(positions[i]) <= 0x1p53))
      fail("positions", "position " + std::to_string(i) + " is " + show(positions[i]) +
                            ", not a finite number within 2^53");
  SinusoidalRows rows;
  rows.dim = static_cast<std::size_t>(params.dim);
  rows.blocks.push_back({0, params, 0, ""});
  if (padding_idx) {
    rows.zero_rows.resize(positions.size());
    for (std::size_t r = 0; r < positions.size(); ++r)
      rows.zero_rows[r] = positions[r] == static_cast<double>(*padding_idx) ? 1 : 0;
  }
  rows.positions.push_back(std::move(positions));
  check_angles(rows);
  return rows;
}

std::size_t grid_cells(const GridSpec& g) {
  const std::size_t n_axes = g.sizes.size();
  if (n_axes != 2 && n_axes != 3)
    fail("grid", "grid must be H,W or T,H,W, got " + std::to_string(n_axes) + " sizes");
  std::size_t cells = 1;
  for (const std::int64_t s : g.sizes) {
    if (s < 1 || s > (std::int64_t{1} << 24))
      fail("grid", "grid sizes must be in [1, 2^24], got " + std::to_string(s));
    // 2^26 cells hold a 90x160 video of 4096 frames; the rows' coordinates are built before any table.
    cells *= static_cast<std::size_t>(s);  // at most 2^26·2^24 before the check: no overflow
    if (cells > (std::size_t{1} << 26)) fail("grid", "grid must have at most 2^26 cells");
  }
  if (g.extra_tokens < 0 || g.extra_tokens > (std::int64_t{1} << 24))
    fail("extra_tokens", "extra_tokens must be in [0, 2^24], got " + std::to_string(g.extra_tokens));
  return cells + static_cast<std::size_t>(g.extra_tokens);
}

double rows_real_scale(const SinusoidalRows& rows) {
  bool real = false;
  double largest = 0;
  for (const SinusoidalBlock& b : rows.blocks) {
    largest = std::max(largest, std::fabs(b.params.scale));
    real = real || b.params.scale != 1;
    for (std::size_t r = 0; r < rows.rows() && !real; ++r)
      real = !rows.zero_row(r) && std::trunc(rows.positions[b.axis][r]) != rows.positions[b.axis][r];
  }
  return real ? largest : 0;
}

std::int64_t row_band(const SinusoidalRows& rows, std::size_t r) {
  double largest = 0;
  if (!rows.zero_row(r))
    for (const SinusoidalBlock& b : rows.blocks)
      largest = std::max(largest, std::fabs(b.params.scale * rows.positions[b.axis][r]));
  return static_cast<std::int64_t>(std::floor(std::min(largest, 0x1p62)));
}

SinusoidalRows grid_rows(const SinusoidalParams& params, const GridSpec& g) {
  grid_cells(g);
  const std::size_t n_axes = g.sizes.size();
  check_scale("interpolation_scale", g.interpolation_scale);
  check_scale("temporal_interpolation_scale", g.temporal_interpolation_scale);
  if (g.base_size) check_scale("base_size", *g.base_size);
  const auto dim = static_cast<std::size_t>(params.dim);
  SinusoidalRows rows;
  rows.dim = dim;
  std::size_t frame = 1;
  for (std::size_t a = n_axes - 2; a < n_axes; ++a) frame *= static_cast<std::size_t>(g.sizes[a]);
  const auto H = g.sizes[n_axes - 2], W = g.sizes[n_axes - 1];
  if (n_axes == 2) {
    // diffusers' get_2d_sincos_pos_embed: every width even (get_1d_sincos_pos_embed_from_grid refuses odd).
    if (params.dim < 4 || params.dim % 4 != 0)
      fail("dim",
           "dim must be a multiple of 4 for a 2-D grid (two even halves), got " + std::to_string(params.dim));
    const auto axis = [&](std::int64_t n) {
      return g.base_size ? coordinates(n, {static_cast<double>(n) / *g.base_size, g.interpolation_scale})
                         : coordinates(n, {g.interpolation_scale});
    };
    const std::vector<double> w = axis(W), h = axis(H);
    rows.blocks = {block(params, 0, dim / 2, 0, "w"), block(params, dim / 2, dim / 2, 1, "h")};
    const auto extra = static_cast<std::size_t>(g.extra_tokens);
    rows.positions.assign(2, std::vector<double>(extra + frame, 0.0));
    rows.zero_rows.assign(extra + frame, 0);
    std::fill_n(rows.zero_rows.begin(), extra, 1);
    for (std::size_t m = 0; m < frame; ++m) {
      rows.positions[0][extra + m] = w[m % static_cast<std::size_t>(W)];
      rows.positions[1][extra + m] = h[m / static_cast<std::size_t>(W)];
    }
  } else {
    // diffusers' get_3d_sincos_pos_embed (CogVideoX): D/4 temporal, 3D/8 w, 3D/8 h, each even.
    if (params.dim % 16 != 0)
      fail("dim", "dim must be a multiple of 16 for a 3-D grid (D/4 and 3D/8 even), got " +
                      std::to_string(params.dim));
    if (g.base_size)
      fail("base_size", "base_size applies to 2-D grids only (get_3d_sincos_pos_embed has none)");
    if (g.extra_tokens != 0) fail("extra_tokens", "extra_tokens applies to 2-D grids only");
    const std::size_t t_dim = dim / 4, s_dim = 3 * dim / 8;
    const std::vector<double> t = coordinates(g.sizes[0], {g.temporal_interpolation_scale});
    const std::vector<double> w = coordinates(W, {g.interpolation_scale}),
                              h = coordinates(H, {g.interpolation_scale});
    rows.blocks = {block(params, 0, t_dim, 0, "t"), block(params, t_dim, s_dim, 1, "w"),
                   block(params, t_dim + s_dim, s_dim, 2, "h")};
    const std::size_t n = static_cast<std::size_t>(g.sizes[0]) * frame;
    rows.positions.assign(3, std::vector<double>(n, 0.0));
    for (std::size_t r = 0; r < n; ++r) {
      const std::size_t m = r % frame;
      rows.positions[0][r] = t[r / frame];
      rows.positions[1][r] = w[m % static_cast<std::size_t>(W)];
      rows.positions[2][r] = h[m / static_cast<std::size_t>(W)];
    }
  }
  for (const SinusoidalBlock& b : rows.blocks) validate_table_params(b.params);
  check_angles(rows);
  return rows;
}

namespace {

// One pair's (or a pad channel's) elements of a row: y against the fast path's value (a zero's) or, where
// that is absent, MPFR's; the angle, band and budget the pair's two share.
struct PairElements {
  const SinusoidalRows& rows;
  const Budget& budget;
  const Sink& sink;
  std::size_t r;
  const SinusoidalBlock& block;
  const ref::Sinusoidal& reference;
  ref::RealPosition t;
  std::int64_t band;

  // `fixed_zero`: a zero row or pad channel, which must be 0 exactly (budget 0), as a padded row of the fused
  // add is.
  void operator()(std::size_t c, double y, const std::optional<ref::FastValue>& fast, std::size_t pair,
                  double abs_phi, double pair_budget, bool fixed_zero) const {
    ElementRecord e{.row = static_cast<std::int64_t>(r),
                    .position = band,
                    .channel = static_cast<std::int64_t>(block.offset + c),
                    .dim = static_cast<std::int64_t>(rows.dim),
                    .base = block.params.base,
                    .y = y};
    if (fast) {
      e.exact = fast->value.hi;
      e.abs_error = ref::abs_error(e.y, fast->value);
      e.ulp = e.abs_error / ref::ulp_of(fast->value, budget.dtype);
    } else {
      const ref::Real exact = reference.exact(t, c).value;
      e.exact = exact.convert_to<double>();
      e.abs_error = ref::abs_error(e.y, exact);
      e.ulp = e.abs_error / ref::ulp_of(exact, budget.dtype);
    }
    e.abs_phi = abs_phi;
    e.pair = pair;
    e.scale = 1.0;
    e.unchanged = fixed_zero;
    e.budget = pair_budget;
    e.reach = fixed_zero ? INFINITY : 1 + std::fabs(e.exact);
    sink(e);
  }
};

}  // namespace

double axis_reach(const SinusoidalRows& rows, const SinusoidalBlock& b) {
  double reach = 0;
  for (std::size_t r = 0; r < rows.rows(); ++r)
    if (!rows.zero_row(r)) reach = std::max(reach, std::fabs(rows.positions[b.axis][r]));
  return reach;
}

void measure_sinusoidal_rows_exact(const SinusoidalRows& rows, Values y, const Budget& budget,
                                   const Sink& sink) {
  std::vector<ref::Sinusoidal> refs;
  for (const SinusoidalBlock& b : rows.blocks)
    refs.emplace_back(b.params, ref::RealPosition{axis_reach(rows, b)});
  const std::optional<ref::FastValue> zero = ref::FastValue{};
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    const bool zero_row = rows.zero_row(r);
    const std::int64_t band = row_band(rows, r);
    for (std::size_t k = 0; k < rows.blocks.size(); ++k) {
      const SinusoidalBlock& b = rows.blocks[k];
      const ref::Sinusoidal& reference = refs[k];
      const ref::RealPosition t{zero_row ? 0.0 : rows.positions[b.axis][r]};
      const PairElements element{rows, budget, sink, r, b, reference, t, band};
      const auto at = [&](std::size_t c) { return y[r * rows.dim + b.offset + c]; };
      // Each pair's sin and cos from one evaluation of the fast path, one angle and one budget.
      for (std::size_t i = 0; i < reference.n_pairs(); ++i) {
        const PairChannels ch = table_pair_channels(b.params, i);
        std::optional<ref::FastValue> s = zero, c = zero;
        double abs_phi = 0, pair_budget = 0;
        if (!zero_row) {
          if (const auto sc = reference.fast_pair(t, i)) {
            s = ref::FastValue{sc->sin, sc->radius}, c = ref::FastValue{sc->cos, sc->radius};
          } else {
            s = c = std::nullopt;
          }
          abs_phi = std::fabs(reference.angle(t, ch.sin));
          pair_budget = budget(nullptr, abs_phi, i, 1.0);
        }
        element(ch.sin, at(ch.sin), s, i, abs_phi, pair_budget, zero_row);
        element(ch.cos, at(ch.cos), c, i, abs_phi, pair_budget, zero_row);
      }
      const auto last = static_cast<std::size_t>(b.params.dim) - 1;
      if (reference.is_pad(last)) element(last, at(last), zero, 0, 0.0, 0.0, true);
    }
  }
}

}  // namespace pe::harness

// explain/table_fit.h: candidates of a sinusoidal table's switches, and its frequencies read back.
#include "explain/table_fit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <set>
#include <utility>

#include "explain/axis_ladders.h"
#include "pe/errors.h"
#include "pe/plan.h"

namespace pe::check {
namespace {

using harness::SinusoidalRows;

std::vector<std::size_t> sampled_rows(std::size_t n, std::size_t at_most) {
  std::set<std::size_t> s;
  const std::size_t k = std::min(n, at_most);
  for (std::size_t i = 0; i < k; ++i) s.insert(k == 1 ? 0 : i * (n - 1) / (k - 1));
  return {s.begin(), s.end()};
}

long double model_omega(const SinusoidalParams& p, std::size_t i) {
  const auto d = static_cast<long double>(sinusoidal_frequency_dim(p));
  return static_cast<long double>(p.scale) *
         std::pow(static_cast<long double>(p.base), -2.0L * static_cast<long double>(i) / d);
}

// max |data − model| over `rows` (every channel); stops past `cutoff` (then only a lower bound).
// `exchanged`: element (r, c) read at c·rows + r (TableCandidate's).
double table_residual(std::span<const double> table, const SinusoidalRows& m,
                      const std::vector<std::size_t>& rows, bool exchanged = false,
                      double cutoff = INFINITY) {
  double worst = 0;
  const auto off = [&](std::size_t at, long double model) {
    const std::size_t from = exchanged ? (at % m.dim) * m.rows() + at / m.dim : at;
    const double e = std::fabs(table[from] - static_cast<double>(model));
    worst = std::max(worst, std::isnan(e) ? INFINITY : e);
  };
  for (const std::size_t r : rows) {
    const std::size_t row = r * m.dim;
    for (const harness::SinusoidalBlock& b : m.blocks) {
      const std::size_t half = static_cast<std::size_t>(b.params.dim) / 2;
      const auto t = static_cast<long double>(m.positions[b.axis][r]);
      for (std::size_t i = 0; i < half; ++i) {
        const auto [s, c] = table_pair_channels(b.params, i);
        const long double phi = t * model_omega(b.params, i);
        off(row + b.offset + s, m.zero_row(r) ? 0.0L : std::sin(phi));
        off(row + b.offset + c, m.zero_row(r) ? 0.0L : std::cos(phi));
      }
      if (b.params.dim % 2 != 0) off(row + b.offset + 2 * half, 0.0L);
    }
    if (worst > cutoff) break;
  }
  return worst;
}

// The largest |scale·t| of a model's rows (its blocks' scales, their axes).
double largest_angle(const SinusoidalRows& m) {
  double reach = 0;
  for (const harness::SinusoidalBlock& b : m.blocks)
    for (std::size_t r = 0; r < m.rows(); ++r)
      if (!m.zero_row(r)) reach = std::max(reach, std::fabs(b.params.scale * m.positions[b.axis][r]));
  return reach;
}

// Every block's params changed by `f`; nullopt where a block's become invalid (a shift past dim/2).
std::optional<SinusoidalRows> with_table_params(const SinusoidalRows& g, const auto& f) {
  SinusoidalRows m = g;
  for (harness::SinusoidalBlock& b : m.blocks) {
    f(b.params);
    try {
      validate_table_params(b.params);
    } catch (const InvalidArgument&) {
      return std::nullopt;
    }
  }
  return m;
}

std::string joined(const std::vector<std::string>& parts) {
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

// The switches flipped alone and together: flip, the other layout, the shifts 0 and 1.
void switch_candidates(const SinusoidalRows& g, std::vector<TableCandidate>& out) {
  const SinusoidalParams& p = g.blocks.front().params;
  const Layout other = p.layout == Layout::Interleaved ? Layout::Concatenated : Layout::Interleaved;
  std::vector<double> shifts = {p.downscale_freq_shift};
  for (const double s : {0.0, 1.0})
    if (s != p.downscale_freq_shift) shifts.push_back(s);
  for (const bool flip : {p.flip_sin_to_cos, !p.flip_sin_to_cos}) {
    for (const Layout layout : {p.layout, other}) {
      for (const double shift : shifts) {
        std::vector<std::string> words;
        if (flip != p.flip_sin_to_cos)
          words.push_back(fmt::format("flip_sin_to_cos {} (given: {})", flip, !flip));
        if (layout != p.layout)
          words.push_back(fmt::format("layout {} (given: {})", to_string(layout), to_string(p.layout)));
        if (shift != p.downscale_freq_shift)
          words.push_back(
              fmt::format("downscale_freq_shift {:g} (given: {:g})", shift, p.downscale_freq_shift));
        if (words.empty()) continue;  // the given one
        if (auto m = with_table_params(g, [&](SinusoidalParams& q) {
              q.flip_sin_to_cos = flip, q.layout = layout, q.downscale_freq_shift = shift;
            }))
          out.push_back({joined(words), std::move(*m)});
      }
    }
  }
}

// One axis: positions off by a few (fairseq's rows start at padding_idx + 1), timesteps scaled by 1000.
void position_candidates(const SinusoidalRows& g, std::vector<TableCandidate>& out) {
  if (g.positions.size() != 1) return;
  for (const int k : {1, -1, 2, -2}) {
    SinusoidalRows m = g;
    for (double& t : m.positions[0]) t += k;
    out.push_back({fmt::format("positions shifted by {:+} (row for p holds p{:+})", k, k), std::move(m)});
  }
  const double s = g.blocks.front().params.scale;
  for (const double f : {1000.0, 1e-3}) {
    if (auto m = with_table_params(g, [&](SinusoidalParams& q) { q.scale *= f; }))
      out.push_back(
          {fmt::format("timesteps scaled by {:g} (scale {:g}; given: {:g})", f, s * f, s), std::move(*m)});
  }
}

// The table's parameters over its whole width (a grid's blocks are each a part of it).
SinusoidalParams whole_table(const SinusoidalRows& g) {
  SinusoidalParams p = g.blocks.front().params;
  p.dim = static_cast<std::int64_t>(g.dim);
  return p;
}

// Two spatial axes: swapped (the first half reading h), or the cells flattened with h inner.
void grid_candidates(const SinusoidalRows& g, const SinusoidalSpec& spec, std::vector<TableCandidate>& out) {
  if (!spec.grid || g.blocks.size() < 2) return;
  const std::size_t n = g.blocks.size();
  SinusoidalRows swapped = g;
  std::swap(swapped.blocks[n - 2].axis, swapped.blocks[n - 1].axis);
  out.push_back(
      {"axes w and h swapped (the first spatial half reads h; diffusers' and MAE's reads w, the "
       "meshgrid's first grid)",
       std::move(swapped)});
  // 2-D coordinates divided by n/base_size or not: get_2d_sincos_pos_embed's default base_size is 16, MAE
  // divides by nothing.
  if (spec.grid->size() == 2) {
    for (const std::optional<double> base_size : {std::optional<double>{16.0}, std::optional<double>{}}) {
      if (base_size == spec.base_size) continue;
      try {
        out.push_back({base_size
                           ? fmt::format("base_size 16, get_2d_sincos_pos_embed's default (given: {})",
                                         spec.base_size ? fmt::format("{:g}", *spec.base_size) : "none")
                           : fmt::format("no base_size (MAE's coordinates i; given: {:g})", *spec.base_size),
                       harness::grid_rows(whole_table(g), [&] {
                         harness::GridSpec other = grid_spec(spec);
                         other.base_size = base_size;
                         return other;
                       }())});
      } catch (const InvalidArgument&) {
      }
    }
  }
  const auto H = static_cast<std::size_t>((*spec.grid)[spec.grid->size() - 2]);
  const auto W = static_cast<std::size_t>((*spec.grid)[spec.grid->size() - 1]);
  if (H == W || H * W == 0) return;  // a square grid's two orders differ only by the swap above
  // The grid given as W,H: the same cells, each coordinate from the other axis's size.
  std::vector<std::int64_t> sizes = *spec.grid;
  std::swap(sizes[sizes.size() - 2], sizes[sizes.size() - 1]);
  try {
    out.push_back({fmt::format("grid {} (given: {}): H and W swapped", fmt::join(sizes, "x"),
                               fmt::join(*spec.grid, "x")),
                   harness::grid_rows(whole_table(g), [&] {
                     harness::GridSpec other = grid_spec(spec);
                     other.sizes = sizes;
                     return other;
                   }())});
  } catch (const InvalidArgument&) {
  }
  SinusoidalRows transposed = g;
  const std::size_t frame = H * W, first = g.rows() % frame;  // 2-D: the extra tokens come first
  for (std::size_t r = first; r < g.rows(); ++r) {
    const std::size_t m = (r - first) % frame, base = r - m;
    // Cell m read as w outer, h inner: (h, w) = (m mod H, m div H), that cell's coordinates at h·W + w.
    const std::size_t same = base + (m % H) * W + m / H;
    for (std::size_t a = n - 2; a < n; ++a) {
      const std::size_t axis = g.blocks[a].axis;
      transposed.positions[axis][r] = g.positions[axis][same];
    }
  }
  out.push_back({fmt::format("cells flattened w-major (h inner) where the grid is {}x{} h-major", H, W),
                 std::move(transposed)});
}

// The data written [dim, rows] (a kernel that wrote channel-major, numpy's pe.T reshaped) and read as
// [rows, dim]: the given model against element (r, c) read at c·rows + r. Its residual decides: a table of
// the given encoding fits within rounding, any other leaves the table's own disorder.
void transposed_candidate(const SinusoidalRows& g, std::vector<TableCandidate>& out) {
  if (g.rows() < 2 || g.dim < 2) return;
  out.push_back(
      {fmt::format("rows and channels exchanged: the data is [dim {}, rows {}], read as [rows, dim]", g.dim,
                   g.rows()),
       g, true});
}

// The base that fits the given shift, the shift that fits the given base, the scale: from the ladder.
void ladder_candidates(std::span<const double> table, const SinusoidalRows& g,
                       std::vector<TableCandidate>& out, std::vector<std::string>& notes) {
  if (g.blocks.size() != 1) return;
  const auto ladder = read_ladder(table, g, 0);
  if (!ladder) return;
  const SinusoidalParams& p = g.blocks.front().params;
  const double den = static_cast<double>(sinusoidal_frequency_dim(p)) / 2;
  const double base = std::exp(ladder->slope * den), scale = std::exp(ladder->log_scale);
  const double shift = static_cast<double>(p.dim / 2) - std::log(p.base) / ladder->slope;
  notes.push_back(fmt::format(
      "frequencies read back ({} of {} pairs on one line, each reproducing its sampled angles within 0.05 "
      "rad): "
      "ln ω_i = ln {:.6g} − {:.6g}·i within {:.2g}, that is base {:.6g} with downscale_freq_shift {:g}, or "
      "downscale_freq_shift {:.3f} with base {:g}",
      ladder->pairs, p.dim / 2, scale, ladder->slope, ladder->deviation, base, p.downscale_freq_shift, shift,
      p.base));
  // The ladder fixes ln(base)/den only: the given base with a shift diffusion code sets (0, 1/2 or 1; 0 and 1
  // are tried above) explains it before another base does (1e8 over dim/2 is also 1e4 over dim/4: no shift
  // of dim/4 is set anywhere). Read-back's own error (the slope from float32 data) is far below 1e-4 of the
  // base, and 0.05 of a shift step.
  const double half_steps = std::round(2 * shift);
  if (std::fabs(2 * shift - half_steps) < 0.05 && half_steps >= 0 && half_steps <= 2) {
    if (half_steps / 2 != p.downscale_freq_shift && half_steps / 2 != 0 && half_steps / 2 != 1) {
      if (auto m =
              with_table_params(g, [&](SinusoidalParams& q) { q.downscale_freq_shift = half_steps / 2; }))
        out.push_back({fmt::format("downscale_freq_shift {:g} read back (given: {:g})", half_steps / 2,
                                   p.downscale_freq_shift),
                       std::move(*m)});
    }
  } else if (std::isfinite(base) && base > 1 && std::fabs(base / p.base - 1) > 1e-4) {
    if (auto m = with_table_params(g, [&](SinusoidalParams& q) { q.base = base; }))
      out.push_back({fmt::format("base {:.6g} read back (given: {:g})", base, p.base), std::move(*m)});
  }
  // Timesteps scaled by 1000 or 1/1000 are named by position_candidates: a fitted scale would absorb the
  // data's own rounding and outrank them.
  const bool named_scale =
      std::fabs(scale / (1000 * p.scale) - 1) < 1e-3 || std::fabs(scale / (1e-3 * p.scale) - 1) < 1e-3;
  if (std::isfinite(scale) && std::fabs(scale / p.scale - 1) > 1e-4 && !named_scale) {
    if (auto m = with_table_params(g, [&](SinusoidalParams& q) { q.scale = scale; }))
      out.push_back({fmt::format("scale {:.6g} read back (given: {:g})", scale, p.scale), std::move(*m)});
  }
}

// A line through ln ω_i: first through the lowest third of the frequencies (the last pairs: never aliased
// where any pair is read), then through every pair within 0.01 of it, twice. Aliased pairs (positions all
// multiples of k cannot tell ω from ω + 2π/k) fall off the line and are left out.
std::optional<Ladder> fit_ladder(const std::vector<double>& xs, const std::vector<double>& ys) {
  const auto line = [&](const std::vector<std::size_t>& use) -> std::optional<Ladder> {
    if (use.size() < 2) return std::nullopt;
    const auto n = static_cast<double>(use.size());
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (const std::size_t k : use) sx += xs[k], sy += ys[k], sxx += xs[k] * xs[k], sxy += xs[k] * ys[k];
    const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    Ladder l{(sy - slope * sx) / n, -slope, use.size(), 0};
    for (const std::size_t k : use)
      l.deviation = std::max(l.deviation, std::fabs(ys[k] - (l.log_scale - l.slope * xs[k])));
    return l;
  };
  std::vector<std::size_t> use;
  for (std::size_t k = xs.size() - std::min(xs.size(), (xs.size() + 2) / 3); k < xs.size(); ++k)
    use.push_back(k);
  std::optional<Ladder> l = line(use);
  for (int pass = 0; pass < 2 && l; ++pass) {
    use.clear();
    for (std::size_t k = 0; k < xs.size(); ++k)
      if (std::fabs(ys[k] - (l->log_scale - l->slope * xs[k])) < 0.01) use.push_back(k);
    l = line(use);
  }
  return l;
}

}  // namespace

std::optional<Ladder> read_ladder(std::span<const double> table, const SinusoidalRows& rows,
                                  std::size_t block) {
  constexpr long double kTurn = 2 * std::numbers::pi_v<long double>;
  const harness::SinusoidalBlock& b = rows.blocks[block];
  const std::vector<double>& t = rows.positions[b.axis];
  // Rows by |t| ascending, zero rows and t = 0 left out: each angle unwrapped from the last estimate.
  std::vector<std::size_t> order;
  for (std::size_t r = 0; r < rows.rows(); ++r)
    if (!rows.zero_row(r) && t[r] != 0) order.push_back(r);
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t c) { return std::fabs(t[a]) < std::fabs(t[c]); });
  std::vector<std::size_t> use;
  for (const std::size_t k : sampled_rows(order.size(), 64)) use.push_back(order[k]);
  const std::size_t half = static_cast<std::size_t>(b.params.dim) / 2;
  const auto angle = [&](std::size_t r, std::size_t i) {
    const auto [s, c] = table_pair_channels(b.params, i);
    return std::atan2(static_cast<long double>(table[r * rows.dim + b.offset + s]),
                      static_cast<long double>(table[r * rows.dim + b.offset + c]));
  };
  std::vector<double> xs, ys;
  for (std::size_t i = 0; i < half && !use.empty(); ++i) {
    long double w = angle(use.front(), i) / t[use.front()];  // the smallest |t|: taken as under half a turn
    for (const std::size_t r : use) {
      const long double turns = std::round((w * t[r] - angle(r, i)) / kTurn);
      w = (angle(r, i) + kTurn * turns) / t[r];
    }
    // Kept only where it reproduces every sampled row's angle (a pair past half a turn at the smallest |t|
    // reads back an alias that does not).
    bool consistent = w > 0;
    for (const std::size_t r : use) {
      const long double off = std::remainder(w * t[r] - angle(r, i), kTurn);
      consistent = consistent && std::fabs(off) < 0.05L;
    }
    if (!consistent) continue;
    xs.push_back(static_cast<double>(i));
    ys.push_back(std::log(static_cast<double>(w)));
  }
  return fit_ladder(xs, ys);
}

TableDiagnosis diagnose_table(std::span<const double> table, const SinusoidalRows& given,
                              const SinusoidalSpec& spec) {
  TableDiagnosis d;
  const SinusoidalParams& p = given.blocks.front().params;
  d.given.layout = p.layout;
  d.given.base = p.base;
  const std::vector<std::size_t> rows = sampled_rows(given.rows(), 64);
  std::vector<std::pair<double, double>> reach_of;  // (residual, the largest angle) of each fit
  const auto fit = [&](std::string label, const SinusoidalRows& m, bool exchanged) {
    Convention conv = d.given;
    conv.label = std::move(label);
    d.fits.push_back({std::move(conv), table_residual(table, m, rows, exchanged), rows.size()});
    reach_of.emplace_back(d.fits.back().residual, largest_angle(m));
  };
  std::vector<TableCandidate> candidates;
  switch_candidates(given, candidates);
  position_candidates(given, candidates);
  grid_candidates(given, spec, candidates);
  transposed_candidate(given, candidates);
  if (spec.grid) axis_ladder_candidates(table, given, spec, candidates, d.notes);
  fit("", given, false);
  for (TableCandidate& c : candidates) fit(std::move(c.label), c.rows, c.exchanged);
  // The ladder is read under each order and layout (a wrong one reads angles that do not unwrap), the one
  // that reads the most pairs kept: its candidates keep the given shift, base and scale.
  std::optional<SinusoidalRows> under;
  std::string prefix;
  std::size_t most = 0;
  for (const bool flip : {p.flip_sin_to_cos, !p.flip_sin_to_cos}) {
    for (const Layout layout :
         {p.layout, p.layout == Layout::Interleaved ? Layout::Concatenated : Layout::Interleaved}) {
      auto m =
          with_table_params(given, [&](SinusoidalParams& q) { q.flip_sin_to_cos = flip, q.layout = layout; });
      if (given.blocks.size() != 1 || !m) continue;
      const auto ladder = read_ladder(table, *m, 0);
      if (!ladder || ladder->pairs <= most) continue;
      most = ladder->pairs;
      std::vector<std::string> words;
      if (flip != p.flip_sin_to_cos)
        words.push_back(fmt::format("flip_sin_to_cos {} (given: {})", flip, !flip));
      if (layout != p.layout)
        words.push_back(fmt::format("layout {} (given: {})", to_string(layout), to_string(p.layout)));
      prefix = words.empty() ? "" : joined(words) + "; ";
      under = std::move(m);
    }
  }
  std::vector<TableCandidate> read;
  if (under) ladder_candidates(table, *under, read, d.notes);
  for (TableCandidate& c : read) fit(prefix + c.label, c.rows, false);
  std::stable_sort(d.fits.begin(), d.fits.end(),
                   [](const Fit& a, const Fit& b) { return a.residual < b.residual; });
  // The fit tolerance is the best candidate's: a kernel of it reaches its angles, not the given ones.
  std::stable_sort(reach_of.begin(), reach_of.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  d.max_angle = static_cast<std::int64_t>(std::ceil(std::min(reach_of.front().second, 0x1p62)));
  return d;
}

}  // namespace pe::check

// explain/axis_ladders.h: a grid's ladders read back one axis at a time.
#include "explain/axis_ladders.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <optional>

#include "pe/errors.h"
#include "pe/plan.h"

namespace pe::check {
namespace {

using harness::SinusoidalBlock;
using harness::SinusoidalRows;

// The grid size a block's axis runs over: t the first size, h the second last, w the last.
std::int64_t axl_size(const std::vector<std::int64_t>& sizes, const SinusoidalBlock& b) {
  if (b.axis_name == "t") return sizes.front();
  return b.axis_name == "h" ? sizes[sizes.size() - 2] : sizes.back();
}

// A value read back, at 4 significant digits where that is within 2e-4 of it (configs write 1.875, 0.6, 2;
// the read-back's own error, from float32 data, is near 1e-5), otherwise as read.
double axl_snapped(double v) {
  const double unit = std::pow(10.0, std::floor(std::log10(v)) - 3);
  const double s = std::round(v / unit) * unit;
  return std::fabs(s / v - 1) < 2e-4 ? s : v;
}

// One axis whose coordinates read `ratio` times the given ones.
struct AxisRead {
  const SinusoidalBlock* block;
  double ratio;
};

// What an axis's coordinate ratio means in the spec's terms: the value that divides it (temporal or spatial
// interpolation_scale), or base_size (a 2-D grid's coordinate is i·base_size/n/interpolation_scale), or the
// other side's size dividing it.
std::string axl_reading(const SinusoidalSpec& spec, const harness::GridSpec& g, const AxisRead& a) {
  if (a.block->axis_name == "t")
    return fmt::format("temporal_interpolation_scale {:.6g} (given: {:g})",
                       axl_snapped(g.temporal_interpolation_scale / a.ratio), g.temporal_interpolation_scale);
  std::string s = fmt::format("interpolation_scale {:.6g} (given: {:g})",
                              axl_snapped(g.interpolation_scale / a.ratio), g.interpolation_scale);
  if (spec.grid->size() != 2) return s;
  const auto n = static_cast<double>(axl_size(*spec.grid, *a.block));
  const double base_size = g.base_size ? *g.base_size * a.ratio : n * a.ratio;
  s += fmt::format(", or base_size {:.6g} (given: {})", axl_snapped(base_size),
                   g.base_size ? fmt::format("{:g}", *g.base_size) : "none");
  const bool w = a.block->axis_name == "w";
  const auto other = static_cast<double>((*spec.grid)[w ? 0 : 1]);
  if (g.base_size && std::fabs(a.ratio / (n / other) - 1) < 1e-3)
    s += fmt::format(", or divided by {}/base_size (the other side's size)", w ? "H" : "W");
  return s;
}

// The model with `reads`' axes rebuilt at their values read back, each from grid_rows' own float32
// arithmetic at that value; nullopt where a value is refused.
std::optional<SinusoidalRows> axl_model(const SinusoidalRows& given, const harness::GridSpec& g,
                                        const std::vector<AxisRead>& reads) {
  SinusoidalRows m = given;
  SinusoidalParams whole = given.blocks.front().params;
  whole.dim = static_cast<std::int64_t>(given.dim);
  for (const AxisRead& a : reads) {
    harness::GridSpec other = g;
    if (a.block->axis_name == "t")
      other.temporal_interpolation_scale = axl_snapped(g.temporal_interpolation_scale / a.ratio);
    else
      other.interpolation_scale = axl_snapped(g.interpolation_scale / a.ratio);
    try {
      m.positions[a.block->axis] = harness::grid_rows(whole, other).positions[a.block->axis];
    } catch (const InvalidArgument&) {
      return std::nullopt;
    }
  }
  return m;
}

// One axis's note; its read (where its step is not the given one) appended to `scaled`.
void axl_read_axis(std::span<const double> table, const SinusoidalRows& given, std::size_t k,
                   const SinusoidalSpec& spec, const harness::GridSpec& g, std::vector<AxisRead>& scaled,
                   std::vector<std::string>& notes) {
  const SinusoidalBlock& b = given.blocks[k];
  const std::int64_t n = axl_size(*spec.grid, b);
  const auto half = static_cast<std::size_t>(b.params.dim / 2);
  const std::optional<Ladder> ladder = n >= 2 ? read_ladder(table, given, k) : std::nullopt;
  if (!ladder) {
    notes.push_back(fmt::format(
        "axis {} (channels [{}, {})): undetermined: {}", b.axis_name, b.offset,
        b.offset + static_cast<std::size_t>(b.params.dim),
        n < 2
            ? "its size is 1, every coordinate 0: no frequency shows"
            : fmt::format("its ladder does not read (fewer than two of its {} pairs reproduce their sampled "
                          "angles within 0.05 rad under the flip and layout given)",
                          half)));
    return;
  }
  const double den = static_cast<double>(sinusoidal_frequency_dim(b.params)) / 2;
  const double ratio = std::exp(ladder->log_scale) / b.params.scale;
  const double step = harness::axis_reach(given, b) / static_cast<double>(n - 1);
  // 1e-3: far above the read-back's error (near 1e-5), far below any scale a config sets.
  const double shift = static_cast<double>(half) - std::log(b.params.base) / ladder->slope;
  const bool as_given = std::fabs(ratio - 1) < 1e-3, readable = std::isfinite(ratio) && ratio > 0;
  if (!as_given && readable) scaled.push_back({&b, ratio});
  notes.push_back(fmt::format(
      "axis {} (channels [{}, {})): {} of {} pairs read on one line within {:.2g}: base {:.6g} with "
      "downscale_freq_shift {:g}, or downscale_freq_shift {:.3f} with base {:g}; coordinate step {:.6g} "
      "(given: {:.6g}){}",
      b.axis_name, b.offset, b.offset + static_cast<std::size_t>(b.params.dim), ladder->pairs, half,
      ladder->deviation, std::exp(ladder->slope * den), b.params.downscale_freq_shift,
      std::fabs(shift) < 5e-4 ? 0.0 : shift, b.params.base, step * ratio, step,
      as_given   ? ", as given"
      : readable ? ": " + axl_reading(spec, g, scaled.back())
                 : ""));
}

}  // namespace

void axis_ladder_candidates(std::span<const double> table, const SinusoidalRows& given,
                            const SinusoidalSpec& spec, std::vector<TableCandidate>& out,
                            std::vector<std::string>& notes) {
  if (!spec.grid || given.blocks.size() < 2) return;
  const harness::GridSpec g = grid_spec(spec);
  std::vector<AxisRead> scaled;
  for (std::size_t k = 0; k < given.blocks.size(); ++k)
    axl_read_axis(table, given, k, spec, g, scaled, notes);
  std::vector<AxisRead> spatial;
  for (const AxisRead& a : scaled) {
    if (a.block->axis_name != "t") spatial.push_back(a);
    if (auto m = axl_model(given, g, {a}))
      out.push_back({fmt::format("axis {}: coordinates x{:.6g} read back: {}; the other axes as given",
                                 a.block->axis_name, a.ratio, axl_reading(spec, g, a)),
                     std::move(*m)});
  }
  if (scaled.size() < 2) return;
  // Every axis read otherwise at once: w and h as one value where they read the same (the interpolation_scale
  // they share, or a 2-D grid's base_size), a video's t its own.
  std::vector<std::string> parts;
  const bool shared = spatial.size() == 2 && std::fabs(spatial[0].ratio / spatial[1].ratio - 1) < 1e-3;
  if (shared) {
    parts.push_back(fmt::format("interpolation_scale {:.6g} read back on w and h (given: {:g})",
                                axl_snapped(g.interpolation_scale / spatial[0].ratio),
                                g.interpolation_scale));
    if (g.base_size)
      parts.back() += fmt::format(", or base_size {:.6g} (given: {:g})",
                                  axl_snapped(*g.base_size * spatial[0].ratio), *g.base_size);
  }
  for (const AxisRead& a : scaled)
    if (!shared || a.block->axis_name == "t")
      parts.push_back(fmt::format("axis {}: {} read back", a.block->axis_name, axl_reading(spec, g, a)));
  if (auto m = axl_model(given, g, scaled))
    out.push_back({fmt::format("{}", fmt::join(parts, "; ")), std::move(*m)});
}

}  // namespace pe::check

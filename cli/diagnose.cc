#include "diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "pe/errors.h"
#include "pe/plan.h"

namespace pe::cli {
namespace {

std::vector<std::size_t> spread(std::size_t n, std::size_t at_most) {
  std::set<std::size_t> s;
  if (n == 0) return {};
  for (std::size_t k = 0; k < std::min(n, at_most); ++k)
    s.insert(k * (n - 1) / std::max<std::size_t>(1, std::min(n, at_most) - 1));
  return {s.begin(), s.end()};
}

std::string axis_name(std::size_t a) { return std::string(1, "thwe"[a]); }

long double inv_freq(const Convention& c, std::size_t i, std::size_t dim) {
  const long double half = static_cast<long double>(dim / 2);
  const long double exponent = c.t2t_exponent
                                   ? (half > 1 ? static_cast<long double>(i) / (half - 1) : 0.0L)
                                   : 2.0L * static_cast<long double>(i) / static_cast<long double>(dim);
  return std::pow(static_cast<long double>(c.base), -exponent);
}

// Every combination of the known conventions, with the given base and the common ones.
std::vector<Convention> candidates(const Convention& given, bool rope) {
  std::vector<double> bases = {given.base};
  for (double b : {1e4, 1e5, 5e5, 1e6, 1e7}) {
    if (b != given.base) bases.push_back(b);
  }
  std::vector<Layout> layouts = {given.layout};
  for (Layout l : rope ? std::vector<Layout>{Layout::HalfSplit, Layout::Interleaved, Layout::Deinterleave}
                       : std::vector<Layout>{Layout::Interleaved, Layout::Concatenated}) {
    if (l != given.layout) layouts.push_back(l);
  }
  std::vector<Convention> out;
  for (Layout layout : layouts) {
    for (bool swapped : {false, true}) {
      for (bool t2t : {false, true}) {
        for (std::int64_t shift : {0, 1, -1, 2, -2}) {
          for (double base : bases) {
            for (bool inverse : rope ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
              Convention c = given;
              c.layout = layout;
              c.base = base;
              c.swapped = swapped;
              c.t2t_exponent = t2t;
              c.shift = shift;
              c.inverse = inverse;
              out.push_back(c);
            }
          }
        }
      }
    }
  }
  return out;
}

std::vector<Fit> ranked(std::vector<Fit> fits) {
  std::stable_sort(fits.begin(), fits.end(),
                   [](const Fit& a, const Fit& b) { return a.residual < b.residual; });
  return fits;
}

}  // namespace

std::string describe(const Convention& c, const Convention& given) {
  std::vector<std::string> parts;
  if (c.layout != given.layout)
    parts.push_back(fmt::format("layout {} (given: {})", to_string(c.layout), to_string(given.layout)));
  if (c.swapped) parts.push_back("sin and cos swapped");
  if (c.t2t_exponent) parts.push_back("tensor2tensor/fairseq exponent i/(d/2-1)");
  if (c.shift != 0)
    parts.push_back(fmt::format("positions shifted by {:+} (row for p holds p{:+})", c.shift, c.shift));
  if (c.base != given.base) parts.push_back(fmt::format("base {:g} (given: {:g})", c.base, given.base));
  if (c.inverse) parts.push_back("inverse rotation (angle negated)");
  if (c.rotary_offset != given.rotary_offset) {
    parts.push_back(fmt::format("rotary channels at the {} (offset {}; given: {})",
                                c.rotary_offset < given.rotary_offset ? "start" : "end", c.rotary_offset,
                                given.rotary_offset));
  }
  if (c.one_d) parts.push_back("M-RoPE run as 1-D RoPE on the t positions");
  if (!c.one_d && c.form.mrope_layout != given.form.mrope_layout && !given.form.mrope_section.empty()) {
    parts.push_back(fmt::format("M-RoPE {} (given: {})", to_string(c.form.mrope_layout),
                                to_string(given.form.mrope_layout)));
  }
  if (!c.one_d && c.axes != given.axes) {
    const std::size_t n = n_axes(given.form);
    std::vector<std::size_t> moved;
    for (std::size_t a = 0; a < n; ++a) {
      if (c.axes[a] != a) moved.push_back(a);
    }
    const auto name = [&](std::size_t a) {
      return given.form.vision != VisionRope::None ? std::string(a == 0 ? "h" : "w") : axis_name(a);
    };
    if (moved.size() == 2) {
      parts.push_back(fmt::format("axes {} and {} swapped", name(moved[0]), name(moved[1])));
    } else {
      std::string order;
      for (std::size_t a = 0; a < n; ++a) order += (a == 0 ? "" : ", ") + name(c.axes[a]);
      parts.push_back(fmt::format("axes read in the order ({})", order));
    }
  }
  if (parts.empty()) return "the conventions given";
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

std::vector<Fit> diagnose_sinusoidal(const std::vector<double>& table, std::size_t dim,
                                     const std::vector<std::int64_t>& positions, const Convention& given) {
  const std::size_t half = dim / 2;
  const auto rows = spread(positions.size(), 64);
  const auto pairs = spread(half, 128);
  std::vector<Fit> fits;
  for (const Convention& c : candidates(given, false)) {
    double worst = 0;
    for (std::size_t r : rows) {
      const auto p = static_cast<long double>(positions[r] + c.shift);
      for (std::size_t i : pairs) {
        const long double phi = p * inv_freq(c, i, dim);
        long double s = std::sin(phi), co = std::cos(phi);
        if (c.swapped) std::swap(s, co);
        const std::size_t ch_sin = c.layout == Layout::Interleaved ? 2 * i : i;
        const std::size_t ch_cos = c.layout == Layout::Interleaved ? 2 * i + 1 : half + i;
        const double e1 = std::fabs(table[r * dim + ch_sin] - static_cast<double>(s));
        const double e2 = std::fabs(table[r * dim + ch_cos] - static_cast<double>(co));
        worst = std::max({worst, std::isnan(e1) ? INFINITY : e1, std::isnan(e2) ? INFINITY : e2});
      }
    }
    fits.push_back({c, worst});
  }
  return ranked(fits);
}

namespace {

// A candidate's model of the data: the plan of its form, layout, base and offset, each pair's
// position from the data's axis the candidate reads, in long double. Candidates whose plan is
// invalid for the data (sections of another rotary dim) are skipped.
// Stops once the residual passes `cutoff` (a candidate that cannot rank among the best): what it
// returns is then only a lower bound.
double rope_residual(const RopeData& d, const Convention& c, const std::vector<std::size_t>& tokens,
                     const std::vector<std::size_t>& heads, double cutoff = INFINITY) {
  RopeParams params{static_cast<std::int64_t>(d.head_dim), static_cast<std::int64_t>(d.rotary_dim), c.base,
                    c.layout, d.scaling};
  params.form = c.one_d ? RopeForm{} : c.form;
  params.rotary_offset = c.rotary_offset;
  std::optional<RopePlan> plan;
  try {
    plan.emplace(params);
  } catch (const InvalidArgument&) {
    return INFINITY;
  }
  const std::size_t half = plan->n_pairs();
  const long double attention = plan->attention_factor();
  double worst = 0;
  for (std::size_t t : tokens) {
    for (std::size_t h : heads) {
      const std::size_t row = d.batch.row(t, h);
      for (std::size_t j : spread(half, 64)) {
        const std::size_t axis = c.axes[plan->axis_of_pair(j)];
        if (axis >= d.batch.n_axes) return INFINITY;
        const auto p = static_cast<long double>(d.batch.position(t, axis) + c.shift);
        const long double w = c.t2t_exponent ? inv_freq(c, j, d.rotary_dim) : plan->inv_freq()[j];
        const long double phi = (c.inverse ? -p : p) * w;
        long double s = attention * std::sin(phi), co = attention * std::cos(phi);
        if (c.swapped) std::swap(s, co);
        const auto [i0, i1] = plan->input_channels(j);
        const auto [o0, o1] = plan->output_channels(j);
        const long double xa = d.x[row + i0], xb = d.x[row + i1];
        const double e1 = std::fabs(d.y[row + o0] - static_cast<double>(xa * co - xb * s));
        const double e2 = std::fabs(d.y[row + o1] - static_cast<double>(xb * co + xa * s));
        worst = std::max({worst, std::isnan(e1) ? INFINITY : e1, std::isnan(e2) ? INFINITY : e2});
      }
      if (worst > cutoff) return worst;
    }
  }
  return worst;
}

// The form's alternatives at the given base, direction and positions: other pairings, the rotary
// channels at the other end, M-RoPE's other layout, every permutation of the axes, 1-D on t.
std::vector<Convention> form_candidates(const Convention& given, std::size_t head_dim,
                                        std::size_t rotary_dim) {
  std::vector<std::int64_t> offsets = {given.rotary_offset};
  if (given.rotary_offset != 0) offsets.push_back(0);
  if (given.rotary_offset == 0 && rotary_dim < head_dim)
    offsets.push_back(static_cast<std::int64_t>(head_dim - rotary_dim));
  std::vector<MropeLayout> mrope_layouts = {given.form.mrope_layout};
  if (!given.form.mrope_section.empty()) {
    mrope_layouts.push_back(given.form.mrope_layout == MropeLayout::Sectioned ? MropeLayout::Interleaved
                                                                              : MropeLayout::Sectioned);
  }
  const std::size_t axes = std::min<std::size_t>(n_axes(given.form), 4);
  std::vector<Convention> out;
  for (Layout layout : {Layout::HalfSplit, Layout::Interleaved, Layout::Deinterleave}) {
    for (std::int64_t offset : offsets) {
      Convention c = given;
      c.layout = layout;
      c.rotary_offset = offset;
      if (axes > 1) {
        Convention flat = c;
        flat.one_d = true;
        out.push_back(flat);
      }
      for (MropeLayout ml : mrope_layouts) {
        c.form.mrope_layout = ml;
        std::array<std::uint8_t, 4> perm = {0, 1, 2, 3};
        do {
          c.axes = perm;
          out.push_back(c);
        } while (std::next_permutation(perm.data(), perm.data() + axes));
      }
    }
  }
  return out;
}

}  // namespace

std::vector<Fit> diagnose_rope(const RopeData& d, const Convention& given) {
  const auto tokens = spread(d.batch.tokens(), 32);
  const auto heads = spread(d.batch.heads, 2);
  std::vector<Convention> all;
  for (Convention c : candidates(given, true)) {
    if (c.t2t_exponent && !given.form.is_text()) continue;  // the exponent mistake of text tables
    all.push_back(c);
  }
  for (const Convention& c : form_candidates(given, d.head_dim, d.rotary_dim)) all.push_back(c);
  // Only the best three are printed, with the given convention's residual: the others may stop early.
  std::vector<Fit> fits;
  std::vector<double> best;
  for (const Convention& c : all) {
    const bool is_given = describe(c, given) == "the conventions given";
    const double cutoff = is_given || best.size() < 3 ? INFINITY : best[2];
    fits.push_back({c, rope_residual(d, c, tokens, heads, cutoff)});
    best.insert(std::upper_bound(best.begin(), best.end(), fits.back().residual), fits.back().residual);
  }
  return ranked(fits);
}

}  // namespace pe::cli

#include "readback/axis_recovery.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

#include "readback/rotation_angles.h"

namespace pe::check {
namespace {

// Whether pair j of every sampled row agrees with axis a: (agrees, some row tells a apart from another axis).
struct AxisVote {
  bool fits = true, tells = false;
};

std::string sections_text(const std::vector<std::int64_t>& s) {
  return fmt::format("[{}]", fmt::join(s, ", "));
}

// Every set of n_axes sections (each >= 1) summing to `pairs`, in both layouts, whose rule gives every
// determined pair its recovered axis; stops after `limit`.
void consistent_sections(const RecoveredAxes& r, std::size_t n_axes, std::size_t pairs, std::size_t limit,
                         std::vector<RopeForm>& out) {
  std::vector<std::int64_t> s(n_axes, 1);
  const auto check = [&](MropeLayout layout) {
    RopeForm f;
    f.mrope_section = s;
    f.mrope_layout = layout;
    for (std::size_t j = 0; j < pairs; ++j)
      if (r.axis[j] && *r.axis[j] != axis_of_pair(f, pairs, j)) return;
    out.push_back(f);
  };
  const auto rec = [&](auto&& self, std::size_t a, std::int64_t left) -> void {
    if (out.size() >= limit) return;
    if (a + 1 == n_axes) {
      if (left < 1) return;
      s[a] = left;
      check(MropeLayout::Sectioned);
      if (n_axes == 3 || n_axes == 4) check(MropeLayout::Interleaved);
      return;
    }
    for (std::int64_t v = 1; v <= left - static_cast<std::int64_t>(n_axes - a - 1); ++v) {
      s[a] = v;
      self(self, a + 1, left - v);
    }
  };
  rec(rec, 0, static_cast<std::int64_t>(pairs));
}

}  // namespace

RecoveredAxes recover_axes(const RopeData& d, const RopePlan& plan, std::size_t max_tokens) {
  RecoveredAxes out;
  const std::size_t pairs = plan.n_pairs(), axes = d.batch.n_axes, n = d.batch.tokens();
  out.axis.assign(pairs, std::nullopt);
  const RopeForm& given = plan.params().form;
  if (given.mrope_section.empty() || axes < 2 || axes != plan.n_axes() || n == 0) return out;
  const std::size_t step = std::max<std::size_t>(1, n / std::max<std::size_t>(1, max_tokens));
  std::vector<std::size_t> tokens;
  for (std::size_t t = 0; t < n && tokens.size() < max_tokens; t += step) tokens.push_back(t);
  out.tokens = tokens.size();
  for (std::size_t j = 0; j < pairs; ++j) {
    const double theta = plan.inv_freq()[j];
    const auto [i0, i1] = plan.input_channels(j);
    const auto [o0, o1] = plan.output_channels(j);
    std::vector<AxisVote> votes(axes);
    bool any = false;
    for (const std::size_t t : tokens) {
      for (std::size_t h = 0; h < d.batch.heads; ++h) {
        const std::size_t row = d.batch.row(t, h);
        const double x0 = d.x[row + i0], x1 = d.x[row + i1], y0 = d.y[row + o0], y1 = d.y[row + o1];
        if (!(std::hypot(x0, x1) > 1e-3) || !std::isfinite(y0) || !std::isfinite(y1)) continue;
        any = true;
        const double phi = rotation_angle(x0, x1, y0, y1);
        for (std::size_t a = 0; a < axes; ++a) {
          const auto p = static_cast<double>(d.batch.position(t, a));
          const double tol = angle_tolerance(p, theta, d.unit);
          if (std::fabs(wrapped_angle(phi - p * theta)) > tol) votes[a].fits = false;
          for (std::size_t b = 0; b < axes; ++b) {
            const auto q = static_cast<double>(d.batch.position(t, b));
            const double apart = std::fabs(wrapped_angle((p - q) * theta));
            if (b != a && apart > 2 * (tol + angle_tolerance(q, theta, d.unit))) votes[a].tells = true;
          }
        }
      }
    }
    if (!any) continue;
    std::optional<std::size_t> only;
    std::size_t fitting = 0;
    for (std::size_t a = 0; a < axes; ++a)
      if (votes[a].fits) ++fitting, only = a;
    if (fitting == 1 && votes[*only].tells) out.axis[j] = only, ++out.determined;
  }
  std::size_t differ = 0;
  for (std::size_t j = 0; j < pairs; ++j) differ += out.axis[j] && *out.axis[j] != plan.axis_of_pair(j);
  if (differ == 0) return out;
  std::vector<RopeForm> found;
  consistent_sections(out, axes, pairs, 64, found);
  const std::string read = fmt::format(
      "the axis of each pair read back from {} tokens x {} heads: {} of {} "
      "pairs determined, {} of them reading another axis than the given rule's",
      out.tokens, d.batch.heads, out.determined, pairs, differ);
  const auto all = [&](auto&& same) {
    return !found.empty() &&
           std::all_of(found.begin(), found.end(), [&](const RopeForm& f) { return same(f); });
  };
  const bool one_sections =
      all([&](const RopeForm& f) { return f.mrope_section == found.front().mrope_section; });
  const bool one_layout =
      all([&](const RopeForm& f) { return f.mrope_layout == found.front().mrope_layout; });
  if (one_sections && one_layout) {
    const RopeForm& f = found.front();
    out.words = f.mrope_section == given.mrope_section
                    ? std::string("M-RoPE")
                    : fmt::format("M-RoPE sections {} (given {})", sections_text(f.mrope_section),
                                  sections_text(given.mrope_section));
    if (f.mrope_layout != given.mrope_layout)
      out.words +=
          fmt::format(", layout {} (given {})", to_string(f.mrope_layout), to_string(given.mrope_layout));
    std::vector<std::int64_t> reversed(given.mrope_section.rbegin(), given.mrope_section.rend());
    if (f.mrope_layout == given.mrope_layout && f.mrope_section == reversed)
      out.words += ": the given sections in reverse order";
    out.support = read + "; every determined pair agrees with these sections and no other";
    out.fits = true;
  } else if (one_layout && found.front().mrope_layout != given.mrope_layout) {
    // Sections that read these pairs alike (the interleaved rule ignores t's, and a section past the last
    // pair): the layout is what the data determines.
    out.words = fmt::format("M-RoPE layout {} (given {})", to_string(found.front().mrope_layout),
                            to_string(given.mrope_layout));
    const bool with_given = std::any_of(found.begin(), found.end(), [&](const RopeForm& f) {
      return f.mrope_section == given.mrope_section;
    });
    out.support = read + fmt::format("; every determined pair agrees with that layout under {}{} sections{}",
                                     found.size(), found.size() == 64 ? " or more" : "",
                                     with_given ? ", the given ones among them" : "");
    out.fits = true;
  } else {
    out.words = fmt::format("pairs read other axes than the given M-RoPE sections {}",
                            sections_text(given.mrope_section));
    out.support = read + (found.empty() ? "; no sections of either layout agree with them"
                                        : "; several sections agree with them");
  }
  return out;
}

}  // namespace pe::check

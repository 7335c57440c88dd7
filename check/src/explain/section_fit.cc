#include "explain/section_fit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace pe::check {
namespace {

using Sections = std::vector<std::int64_t>;

std::string axis_name(std::size_t a) { return std::string(1, "thwe"[a]); }

// The sets of sections one layout's rule agrees with: how many, each axis's least and most, the first.
struct Tally {
  MropeLayout layout = MropeLayout::Sectioned;
  std::size_t count = 0;
  Sections lo, hi, first;
  bool with_given = false;

  void add(const Sections& s, const Sections& given) {
    if (count++ == 0) {
      lo = hi = first = s;
    } else {
      for (std::size_t a = 0; a < s.size(); ++a) lo[a] = std::min(lo[a], s[a]), hi[a] = std::max(hi[a], s[a]);
    }
    with_given = with_given || s == given;
  }
};

// Whether pair j may read `axis`: every sampled row's angle fits its position (an undetermined pair fits
// several axes alike), or the pair fits no axis at all (another mistake's, which says nothing of sections).
bool agrees(const RecoveredAxes& r, std::size_t j, std::size_t axis) {
  return r.fitting[j] == 0 || (r.fitting[j] >> axis & 1) != 0;
}

// Sectioned: section a is a run of pairs from `start` that grows while its next pair is a's or undetermined,
// so the search along it stops at the first pair that is not (sections of 0 pairs included).
void sectioned(const RecoveredAxes& r, std::size_t a, std::size_t start, Sections& s, const Sections& given,
               Tally& out) {
  const std::size_t pairs = r.axis.size();
  if (a + 1 == r.n_axes) {
    for (std::size_t j = start; j < pairs; ++j)
      if (!agrees(r, j, a)) return;
    s[a] = static_cast<std::int64_t>(pairs - start);
    out.add(s, given);
    return;
  }
  for (std::size_t v = 0; start + v <= pairs; ++v) {
    if (v > 0 && !agrees(r, start + v - 1, a)) break;
    s[a] = static_cast<std::int64_t>(v);
    sectioned(r, a + 1, start + v, s, given, out);
  }
}

// Interleaved (3 or 4 axes): every split of the pairs, each held against the rule pair by pair.
void interleaved(const RecoveredAxes& r, std::size_t a, std::int64_t left, RopeForm& f, const Sections& given,
                 Tally& out) {
  Sections& s = f.mrope_section;
  if (a + 1 == r.n_axes) {
    s[a] = left;
    for (std::size_t j = 0; j < r.axis.size(); ++j)
      if (!agrees(r, j, axis_of_pair(f, r.axis.size(), j))) return;
    out.add(s, given);
    return;
  }
  for (std::int64_t v = 0; v <= left; ++v) {
    s[a] = v;
    interleaved(r, a + 1, left - v, f, given, out);
  }
}

// ERNIE (3 axes): h == w pairs alternating from pair 0, then t's: one free number, every value held against
// the rule pair by pair.
void ernie(const RecoveredAxes& r, const Sections& given, Tally& out) {
  const std::size_t pairs = r.axis.size();
  RopeForm f;
  f.mrope_layout = MropeLayout::Ernie;
  for (std::size_t h = 0; 2 * h <= pairs; ++h) {
    const auto side = static_cast<std::int64_t>(h);
    f.mrope_section = {static_cast<std::int64_t>(pairs) - 2 * side, side, side};
    bool fits = true;
    for (std::size_t j = 0; j < pairs && fits; ++j) fits = agrees(r, j, axis_of_pair(f, pairs, j));
    if (fits) out.add(f.mrope_section, given);
  }
}

std::string why(std::int64_t apart) {
  return apart == 0 ? std::string("their positions coincide in every sampled row")
                    : fmt::format(
                          "their positions differ by at most {} in the sampled rows: too little at these "
                          "pairs' frequencies",
                          apart);
}

// Why pairs are undetermined (a pair fitting one axis alone is not), run by run of pairs fitting the same
// axes: "pairs 30-63 fit h and w alike (their positions differ by at most 5 in the sampled rows: too little
// at these pairs' frequencies)".
std::string undetermined(const RecoveredAxes& r) {
  std::vector<std::string> runs;
  std::size_t none = 0;
  for (std::size_t j = 0; j < r.axis.size();) {
    const unsigned mask = r.fitting[j];
    std::size_t k = j;
    while (k < r.axis.size() && !r.axis[k] && r.fitting[k] == mask) ++k;
    if (k == j) {
      ++j;
      continue;
    }
    std::vector<std::string> names;
    std::int64_t apart = 0;
    for (std::size_t a = 0; a < r.n_axes; ++a) {
      if (!(mask >> a & 1)) continue;
      names.push_back(axis_name(a));
      for (std::size_t b = 0; b < r.n_axes; ++b)
        if (mask >> b & 1) apart = std::max(apart, r.apart[a * r.n_axes + b]);
    }
    const std::string span = k - j == 1 ? fmt::format("pair {}", j) : fmt::format("pairs {}-{}", j, k - 1);
    if (mask == 0)
      none += k - j;
    else if (names.size() > 1)  // one axis alone: the pair reads it
      runs.push_back(fmt::format("{} fit {} and {} alike ({})", span,
                                 fmt::join(names.begin(), names.end() - 1, ", "), names.back(), why(apart)));
    j = k;
  }
  if (none > 0) runs.push_back(fmt::format("{} pairs fit no axis", none));
  return fmt::format("{}", fmt::join(runs, "; "));
}

RopeSpec hypothesis(const Sections& s, MropeLayout layout, const RopeForm& given) {
  RopeSpec h;
  h.form.mrope_section = s;
  if (layout != given.mrope_layout) h.form.mrope_layout = layout;
  return h;
}

bool fits_every_pair(const RecoveredAxes& r, const RopeForm& f) {
  for (std::size_t j = 0; j < r.axis.size(); ++j)
    if (!agrees(r, j, axis_of_pair(f, r.axis.size(), j))) return false;
  return true;
}

// The given sections' other orders that fit every pair (axes mixed up is the usual mistake, and a rerun with
// one tells): among sets the data alone cannot tell apart, the ones to try.
std::vector<Sections> orders_that_fit(const RecoveredAxes& r, const RopeForm& given) {
  RopeForm f = given;
  std::sort(f.mrope_section.begin(), f.mrope_section.end());
  std::vector<Sections> out;
  do {
    if (f.mrope_section != given.mrope_section && fits_every_pair(r, f)) out.push_back(f.mrope_section);
  } while (std::next_permutation(f.mrope_section.begin(), f.mrope_section.end()));
  return out;
}

// One layout's sets, several of them under the given layout: the sections they all give alike, named, or
// the orders of the given sections among them (the one to rerun with, where one is).
SectionFit shared_sections(const RecoveredAxes& r, const Tally& t, const RopeForm& given,
                           const std::string& read) {
  std::vector<std::string> known, open;
  for (std::size_t a = 0; a < r.n_axes; ++a) {
    const bool fixed = t.lo[a] == t.hi[a];
    known.push_back(fixed ? fmt::format("{}", t.lo[a]) : std::string("?"));
    if (!fixed) open.push_back(fmt::format("{}'s {} to {}", axis_name(a), t.lo[a], t.hi[a]));
  }
  SectionFit out;
  const Sections& g = given.mrope_section;
  const std::string sets =
      fmt::format("{}; {} sets of sections give every pair an axis it fits", read, t.count);
  if (const std::vector<Sections> orders = orders_that_fit(r, given); !orders.empty()) {
    const Sections reversed(g.rbegin(), g.rend());
    const bool has_reversed = std::find(orders.begin(), orders.end(), reversed) != orders.end();
    std::string which = "the orders of the given sections that fit";
    if (orders.size() == 1)
      which = fmt::format("the given sections in {} order, the one order of them that fits",
                          has_reversed ? "reverse" : "another");
    else if (has_reversed)
      which += fmt::format(", {} the given sections in reverse order", fmt::join(reversed, ","));
    std::vector<std::string> named;
    for (const Sections& o : orders) named.push_back(fmt::format("{}", fmt::join(o, ",")));
    out.words = fmt::format("mrope_section {} (given {}): {} (the data alone leaves {} undetermined)",
                            fmt::join(named, " or "), fmt::join(g, ","), which, fmt::join(open, ", "));
    out.support = fmt::format("{}, among them {} of the given sections; undetermined: {}", sets,
                              orders.size() == 1 ? "this one order" : "these orders", undetermined(r));
    out.fits = true;
    if (orders.size() == 1) out.hypothesis = hypothesis(orders.front(), given.mrope_layout, given);
    return out;
  }
  out.fits = open.size() < r.n_axes;
  out.words = fmt::format("mrope_section {} (given {}): {} undetermined", fmt::join(known, ","),
                          fmt::join(g, ","), fmt::join(open, ", "));
  out.support = fmt::format("{}, alike in the ones named and none of them the given; undetermined: {}", sets,
                            undetermined(r));
  return out;
}

}  // namespace

SectionFit fit_sections(const RecoveredAxes& r, const RopeForm& given) {
  const std::size_t pairs = r.axis.size();
  std::size_t differ = 0;
  for (std::size_t j = 0; j < pairs; ++j) differ += !agrees(r, j, axis_of_pair(given, pairs, j));
  if (differ == 0 || r.n_axes < 2) return {};
  const Sections& g = given.mrope_section;
  std::vector<Tally> tallies(1);
  Sections s(r.n_axes, 0);
  sectioned(r, 0, 0, s, g, tallies[0]);
  if (r.n_axes == 3 || r.n_axes == 4) {
    tallies.push_back({MropeLayout::Interleaved, 0, {}, {}, {}, false});
    RopeForm f;
    f.mrope_section = s;
    f.mrope_layout = MropeLayout::Interleaved;
    interleaved(r, 0, static_cast<std::int64_t>(pairs), f, g, tallies[1]);
  }
  if (r.n_axes == 3) {
    tallies.push_back({MropeLayout::Ernie, 0, {}, {}, {}, false});
    ernie(r, g, tallies.back());
  }
  std::erase_if(tallies, [](const Tally& t) { return t.count == 0; });
  const auto alone = static_cast<std::size_t>(
      std::count_if(r.fitting.begin(), r.fitting.end(), [](unsigned m) { return std::popcount(m) == 1; }));
  const std::string read = fmt::format(
      "each pair's angle held against θ_j times each axis's position in {} tokens x {} heads, "
      "every row within the angle tolerance: {} of {} pairs fit one axis alone "
      "({} of them by twice the tolerance), {} miss the given rule's axis",
      r.tokens, r.heads, alone, pairs, r.determined, differ);
  SectionFit out;
  if (tallies.size() != 1) {
    out.words = fmt::format("pairs read other axes than the given mrope_section {}", fmt::join(g, ","));
    out.support =
        read + (tallies.empty() ? "; no sections of any layout agree with them"
                                : fmt::format("; sections of {} layouts agree with them", tallies.size()));
    return out;
  }
  const Tally& t = tallies.front();
  const std::string layout =
      t.layout == given.mrope_layout
          ? std::string()
          : fmt::format("mrope_layout {} (given {})", to_string(t.layout), to_string(given.mrope_layout));
  if (t.count == 1) {
    out.words = t.first == g ? layout
                             : fmt::format("mrope_section {} (given {}){}", fmt::join(t.first, ","),
                                           fmt::join(g, ","), layout.empty() ? "" : ", " + layout);
    if (layout.empty() && Sections(g.rbegin(), g.rend()) == t.first)
      out.words += ": the given sections in reverse order";
    out.support = read + "; these sections and no others, of any layout, give every pair an axis it fits";
    out.fits = true;
    out.hypothesis = hypothesis(t.first, t.layout, given);
  } else if (!layout.empty()) {
    // Sections that read these pairs alike (the interleaved rule ignores t's, and a section past the last
    // pair): the layout is what the data determines.
    out.words = layout;
    out.support =
        read + fmt::format("; every pair fits its axis under that layout with {} sets of sections{}", t.count,
                           t.with_given ? ", the given ones among them" : "");
    out.fits = true;
    if (t.with_given) out.hypothesis = hypothesis(g, t.layout, given);
  } else {
    out = shared_sections(r, t, given, read);
  }
  return out;
}

}  // namespace pe::check

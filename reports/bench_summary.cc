#include "pe/reports/bench_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <tuple>

#include "pe/harness/family_traits.h"

namespace pe::reports {
namespace {

std::size_t family_rank(const std::string& family) {
  const auto all = harness::family_traits();
  for (std::size_t k = 0; k < all.size(); ++k)
    if (all[k]->name == family) return k;
  return all.size();  // a family no traits describe: after the known ones
}

auto shape_key(const harness::BenchIdentity& b) {
  return std::make_tuple(b.dtype != "f32", b.dtype, b.form != "text", b.form, b.scaling != "none", b.scaling,
                         b.threads, b.op, b.heads, b.dim, b.positions == "far", b.length);
}

// The letter before a number of the family's summary shape ("T2048·H32·D128": 'T' for the length, 'D'
// for the last): the family's own words for its sizes.
char letter_of(const harness::FamilyTraits& t, bool length) {
  const std::string_view s = t.summary_shape;
  if (!length) {
    const std::size_t dot = s.rfind("·");
    return dot == std::string_view::npos ? 'd' : s[dot + std::string_view("·").size()];
  }
  const std::string n = std::to_string(t.summary_length);
  for (std::size_t at = s.find(n); at != std::string_view::npos; at = s.find(n, at + 1))
    if (at > 0 && std::isalpha(static_cast<unsigned char>(s[at - 1]))) return s[at - 1];
  return 'L';
}

// "0.213  45%": ns per element and the fraction of the fill limit; "not timed" where the contract check
// failed.
std::string cell(const BenchRecord& r) {
  if (!r.error.empty()) return "not timed";
  return fmt::format("{:.3g} {:>3.0f}%", r.ns_per_element, 100 * r.fill_fraction);
}

// The header of one shape column, wrapped at spaces onto lines no wider than the cells (at least 10).
std::vector<std::string> wrapped(const std::string& label, std::size_t width) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < label.size()) {
    std::size_t end = std::min(label.size(), start + width);
    if (end < label.size()) {
      const std::size_t space = label.rfind(' ', end);
      if (space != std::string::npos && space > start) end = space;
    }
    lines.push_back(label.substr(start, end - start));
    start = end + (end < label.size() && label[end] == ' ' ? 1 : 0);
  }
  return lines;
}

std::string family_table(const std::string& family, const std::vector<const BenchRecord*>& recs);

}  // namespace

bool same_shape(const harness::BenchIdentity& a, const harness::BenchIdentity& b) {
  return a.family == b.family && shape_key(a) == shape_key(b);
}

bool bench_order_less(const BenchRecord& a, const BenchRecord& b) {
  const auto speed = [](const BenchRecord& r) { return r.error.empty() ? r.ns_per_element : INFINITY; };
  return std::make_tuple(family_rank(a.family), a.family, shape_key(a), speed(a), a.name) <
         std::make_tuple(family_rank(b.family), b.family, shape_key(b), speed(b), b.name);
}

std::string shape_label(const harness::BenchIdentity& id) {
  const harness::FamilyTraits* t = harness::traits_named(id.family);
  if (t == nullptr) {  // the name's shape part: what follows the instance
    const std::string name = harness::benchmark_name(id);
    return name.substr(id.family.size() + id.instance.size() + 2);
  }
  std::string out = fmt::format("{}{}", letter_of(*t, true), id.length);
  if (id.positions != "start") out += " " + id.positions;
  for (const std::string* word : {&id.dtype, &id.form, &id.scaling}) {
    if (*word != "f32" && *word != "text" && *word != "none") out += " " + *word;
  }
  if (id.op != t->headline_op) out += " " + id.op;
  if (id.heads != t->headline_heads) out += fmt::format(" H{}", id.heads);
  if (id.dim != t->headline_dim) out += fmt::format(" {}{}", letter_of(*t, false), id.dim);
  if (id.threads != 1) out += fmt::format(" {} threads", id.threads);
  return out;
}

std::string bench_summary(const std::vector<BenchRecord>& records) {
  std::vector<const BenchRecord*> sorted;
  for (const BenchRecord& r : records) sorted.push_back(&r);
  std::sort(sorted.begin(), sorted.end(),
            [](const BenchRecord* a, const BenchRecord* b) { return bench_order_less(*a, *b); });
  std::string out;
  for (std::size_t k = 0; k < sorted.size();) {
    std::size_t end = k;
    while (end < sorted.size() && sorted[end]->family == sorted[k]->family) ++end;
    out += family_table(sorted[k]->family, {sorted.begin() + static_cast<std::ptrdiff_t>(k),
                                            sorted.begin() + static_cast<std::ptrdiff_t>(end)});
    k = end;
  }
  if (!out.empty())
    out +=
        "\nallocs: the most heap allocations of one call in the row; spread: the widest (max - min) / median "
        "of a cell's repetitions\n";
  return out;
}

namespace {

// The headline shape at the family's summary length, where the run timed it: the rows' order.
bool summary_shape(const BenchRecord& r) {
  const harness::FamilyTraits* t = harness::traits_named(r.family);
  return t != nullptr && t->headline(r) && r.length == t->summary_length && r.positions == "start" &&
         r.dtype == "f32" && r.form == "text" && r.scaling == "none" && r.threads == 1;
}

std::string family_table(const std::string& family, const std::vector<const BenchRecord*>& recs) {
  // Columns: the shapes in order (recs are sorted by shape); rows: instances (with their type where
  // it is not f32), fastest first at the summary shape, else at the first shape they have.
  std::vector<const BenchRecord*> shapes;
  for (const BenchRecord* r : recs)
    if (shapes.empty() || !same_shape(*shapes.back(), *r)) shapes.push_back(r);
  std::map<std::string, std::vector<const BenchRecord*>> cells;  // instance -> one per shape column
  std::map<std::string, std::tuple<bool, std::size_t, double>> rank;
  std::size_t name_w = 8;
  for (std::size_t s = 0, i = 0; s < shapes.size(); ++s) {
    for (; i < recs.size() && same_shape(*shapes[s], *recs[i]); ++i) {
      const BenchRecord& r = *recs[i];
      auto& row = cells[r.instance];
      row.resize(shapes.size(), nullptr);
      row[s] = &r;
      const double speed = r.error.empty() ? r.ns_per_element : INFINITY;
      const std::tuple<bool, std::size_t, double> key{!summary_shape(r), s, speed};
      auto [it, fresh] = rank.emplace(r.instance, key);
      if (!fresh) it->second = std::min(it->second, key);
      name_w = std::max(name_w, r.instance.size());
    }
  }
  std::vector<std::string> order;
  for (const auto& [inst, row] : cells) order.push_back(inst);
  std::stable_sort(order.begin(), order.end(),
                   [&](const std::string& a, const std::string& b) { return rank[a] < rank[b]; });
  std::size_t reps = 0;
  for (const BenchRecord* r : recs) reps = std::max(reps, r->repetitions);
  const auto at_summary =
      std::find_if(recs.begin(), recs.end(), [](const BenchRecord* r) { return summary_shape(*r); });
  std::string out = fmt::format(
      "\n{}: ns per element (median of {} repetition{}) and % of the machine's fill limit at the same bytes "
      "(this run); rows fastest first{}\n",
      family, reps, reps == 1 ? "" : "s", at_summary == recs.end() ? "" : " at " + shape_label(**at_summary));
  std::size_t cell_w = 10;  // the widest cell ("0.0512  70%"), so that every column stays in line
  for (const BenchRecord* r : recs) cell_w = std::max(cell_w, cell(*r).size());
  std::vector<std::vector<std::string>> heads;
  std::size_t lines = 1;
  for (const BenchRecord* s : shapes) {
    heads.push_back(wrapped(shape_label(*s), cell_w));
    lines = std::max(lines, heads.back().size());
  }
  for (std::size_t l = 0; l < lines; ++l) {
    const bool last = l + 1 == lines;
    out += fmt::format("{:<{}}", last ? "instance" : "", name_w);
    for (const auto& h : heads)
      out += fmt::format("  {:>{}}", l + h.size() >= lines ? h[l + h.size() - lines] : "", cell_w);
    out += last ? fmt::format("  {:>6}  {:>6}\n", "allocs", "spread") : "\n";
  }
  for (const std::string& inst : order) {
    out += fmt::format("{:<{}}", inst, name_w);
    // -1 allocations: no heap counter in the record; a NaN spread: one repetition. Neither measured: "-".
    double allocs = -1, spread = NAN;
    for (const BenchRecord* r : cells[inst]) {
      out += fmt::format("  {:>{}}", r ? cell(*r) : "-", cell_w);
      if (r == nullptr || !r->error.empty()) continue;
      allocs = std::max(allocs, r->allocs_per_call);
      if (!std::isnan(r->spread)) spread = std::isnan(spread) ? r->spread : std::max(spread, r->spread);
    }
    out += fmt::format("  {:>6}  {:>6}\n", allocs < 0 ? "-" : fmt::format("{:.0f}", allocs),
                       std::isnan(spread) ? "-" : fmt::format("{:.1f}%", 100 * spread));
  }
  return out;
}

}  // namespace

}  // namespace pe::reports

// check_t5 (pe/check/t5.h): each element against the exact bucket of its offset (computed once per distinct
// offset), the float32 alternative accepted only where there is one, and T5's mistakes tried where it fails.
#include <fmt/format.h>

#include <cmath>
#include <map>

#include "pe/check/t5.h"
#include "pe/plan.h"
#include "pe/ref/t5.h"

namespace pe::check {
namespace {

struct T5Setting {
  std::string words;
  T5Buckets t;
  bool flipped = false;  // the offset taken as query − key
};

// Each distinct offset's exact bucket and float32's other one under a setting, the offset as the setting
// reads it (flipped: query − key): nullopt where the setting is not a valid T5 configuration (a mistake's
// candidate), or its buckets outrun the table's rows. Memory by distinct offsets, not by elements.
using T5Offsets = std::map<std::int64_t, ref::T5Exact>;

std::optional<T5Offsets> t5_offsets(const T5Setting& s, const T5Request& r) {
  try {
    validate(s.t);
  } catch (const InvalidArgument&) {
    return std::nullopt;
  }
  T5Offsets by_offset;
  const std::size_t rows = r.table ? r.table->shape[0] : 0;
  for (const std::int64_t q : r.queries)
    for (const std::int64_t k : r.keys) {
      const std::int64_t n = (k - q) * (s.flipped ? -1 : 1);
      if (by_offset.count(n) != 0) continue;
      const ref::T5Exact b = ref::t5_bucket(s.t, n);
      if (r.table &&
          (static_cast<std::size_t>(b.bucket) >= rows || static_cast<std::size_t>(b.alternative + 1) > rows))
        return std::nullopt;
      by_offset.emplace(n, b);
    }
  return by_offset;
}

// Equal values, -0 apart from 0, NaN equal to NaN: a gathered entry is the table's bits.
bool t5_same(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

// The elements that are neither the exact bucket's value nor float32's other one (where there is one), the
// first of them and its expected value; with `any`, stops at the first.
struct T5Compared {
  std::size_t wrong = 0, first = 0;
  double expected = 0;
};

T5Compared t5_compare(std::span<const double> data, const T5Offsets& offsets, const T5Setting& s,
                      const T5Request& r, std::span<const double> table, std::size_t heads, bool any) {
  const std::size_t nq = r.queries.size(), nk = r.keys.size();
  T5Compared out;
  const auto value = [&](std::int64_t bucket, std::size_t h) {
    return r.table ? table[static_cast<std::size_t>(bucket) * heads + h] : static_cast<double>(bucket);
  };
  for (std::size_t i = 0; i < nq; ++i)
    for (std::size_t j = 0; j < nk; ++j) {
      const ref::T5Exact& b = offsets.at((r.keys[j] - r.queries[i]) * (s.flipped ? -1 : 1));
      for (std::size_t h = 0; h < heads; ++h) {
        const std::size_t at = (h * nq + i) * nk + j;
        if (t5_same(data[at], value(b.bucket, h)) ||
            (b.alternative >= 0 && t5_same(data[at], value(b.alternative, h))))
          continue;
        if (out.wrong++ == 0 || at < out.first) out.first = at, out.expected = value(b.bucket, h);
        if (any) return out;
      }
    }
  return out;
}

std::vector<T5Setting> t5_mistakes(const T5Buckets& g) {
  std::vector<T5Setting> out;
  out.push_back(
      {fmt::format("the causal flag inverted (bidirectional={})", g.bidirectional ? "False" : "True"),
       {!g.bidirectional, g.num_buckets, g.max_distance}});
  out.push_back({"the offset taken as query − key (its sign flipped)", g, true});
  for (const std::int64_t nb :
       {g.num_buckets / 2, g.num_buckets * 2, std::int64_t{32}, std::int64_t{64}, std::int64_t{128}})
    if (nb != g.num_buckets && std::none_of(out.begin(), out.end(), [nb, &g](const T5Setting& s) {
          return s.t.num_buckets == nb && s.t.max_distance == g.max_distance &&
                 s.t.bidirectional == g.bidirectional;
        }))
      out.push_back({fmt::format("num_buckets {} (given: {})", nb, g.num_buckets),
                     {g.bidirectional, nb, g.max_distance}});
  for (const std::int64_t md : {g.max_distance / 2, g.max_distance * 2, std::int64_t{128}, std::int64_t{256}})
    if (md != g.max_distance &&
        std::none_of(out.begin(), out.end(), [md](const T5Setting& s) { return s.t.max_distance == md; }))
      out.push_back({fmt::format("max_distance {} (given: {})", md, g.max_distance),
                     {g.bidirectional, g.num_buckets, md}});
  return out;
}

}  // namespace

std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> t5_buckets_of(
    const T5Buckets& t, std::span<const std::int64_t> relative, const Names& names) {
  try {
    validate(t);
  } catch (const InvalidArgument& e) {
    rethrow_named(e, names);
  }
  std::vector<std::int64_t> b(relative.size()), alt(relative.size());
  std::map<std::int64_t, ref::T5Exact> by_offset;
  for (std::size_t i = 0; i < relative.size(); ++i) {
    if (std::llabs(relative[i]) > kMaxPosition)
      names.fail("relative_position", fmt::format("offsets must lie within ±2^53, got {}", relative[i]));
    auto it = by_offset.find(relative[i]);
    if (it == by_offset.end()) it = by_offset.emplace(relative[i], ref::t5_bucket(t, relative[i])).first;
    b[i] = it->second.bucket;
    alt[i] = it->second.alternative;
  }
  return {std::move(b), std::move(alt)};
}

Report check_t5(const T5Request& r, const Names& names) {
  try {
    validate(r.buckets);
  } catch (const InvalidArgument& e) {
    rethrow_named(e, names);
  }
  const std::size_t nq = r.queries.size(), nk = r.keys.size();
  if (nq == 0 || nk == 0) names.fail(nq == 0 ? "queries" : "keys", "no positions given");
  for (const auto* p : {&r.queries, &r.keys})
    for (const std::int64_t v : *p)
      if (v < 0 || v > kMaxPosition)
        names.fail(p == &r.queries ? "queries" : "keys",
                   fmt::format("positions must lie in [0, 2^53], got {}", v));
  std::size_t heads = 1;
  std::vector<double> table_storage, data_storage;
  std::span<const double> table;
  if (r.table) {
    const auto& ts = r.table->shape;
    if (ts.size() != 2 || ts[0] != static_cast<std::size_t>(r.buckets.num_buckets) || ts[1] == 0)
      names.fail("table", fmt::format("expected [num_buckets, heads] with num_buckets {}, got [{}]",
                                      r.buckets.num_buckets, fmt::join(ts, ", ")));
    heads = ts[1];
    table = as_doubles(*r.table, table_storage).values;
  }
  const std::vector<std::size_t> want =
      r.table ? std::vector<std::size_t>{heads, nq, nk} : std::vector<std::size_t>{nq, nk};
  if (r.data.shape != want)
    names.fail("data", fmt::format("expected shape [{}] ({}queries, keys), got [{}]", fmt::join(want, ", "),
                                   r.table ? "heads, " : "", fmt::join(r.data.shape, ", ")));
  const std::span<const double> data = as_doubles(r.data, data_storage).values;
  const T5Setting given{"", r.buckets, false};
  const T5Offsets offsets = *t5_offsets(given, r);
  const T5Compared c = t5_compare(data, offsets, given, r, table, heads, false);
  const std::size_t wrong = c.wrong, first = c.first;
  std::vector<std::int64_t> boundaries;
  for (const auto& [n, b] : offsets)
    if (b.alternative >= 0) boundaries.push_back(n);
  Report out;
  const T5Buckets& t = r.buckets;
  out.say("T5 buckets: {}, num_buckets {}, max_distance {}; {} queries x {} keys{}\n",
          t.bidirectional ? "bidirectional" : "causal", t.num_buckets, t.max_distance, nq, nk,
          r.table ? fmt::format(", bias from a table of {} heads", heads) : "");
  const std::vector<std::int64_t> shown(boundaries.begin(),
                                        boundaries.begin() + std::min<std::ptrdiff_t>(8, boundaries.size()));
  out.say(
      "float32 boundaries: {} offset(s) where t lies within float32's error of a bucket boundary (either "
      "bucket "
      "accepted){}\n",
      boundaries.size(), boundaries.empty() ? "" : fmt::format(": [{}]", fmt::join(shown, ", ")));
  out.passed = wrong == 0;
  out.doc.family = "t5";
  out.doc.table = r.data.name;
  out.doc.dtype = r.data.dtype;
  out.doc.budget = "exact (float32's other bucket at a boundary)";
  out.doc.elements = data.size();
  out.doc.violations = wrong;
  out.doc.passed = out.passed;
  out.doc.verdict = out.passed ? harness::Verdict::Pass : harness::Verdict::Fail;
  out.doc.parameters = {{"bidirectional", t.bidirectional},
                        {"num_buckets", t.num_buckets},
                        {"max_distance", t.max_distance},
                        {"boundaries", boundaries}};
  if (wrong > 0) {
    const std::size_t h = first / (nq * nk), i = (first / nk) % nq, j = first % nk;
    out.say(
        "{} of {} elements differ from the exact buckets; first: {}query {} key {} (offset {}): {}, expected "
        "{}\n",
        wrong, data.size(), r.table ? fmt::format("head {} ", h) : "", i, j, r.keys[j] - r.queries[i],
        data[first], c.expected);
    out.doc.worst = {{{"head", h}, {"query", i}, {"key", j}, {"value", data[first]}, {"exact", c.expected}}};
    std::size_t fits = 0;
    for (const T5Setting& m : t5_mistakes(t)) {
      const std::optional<T5Offsets> alt = t5_offsets(m, r);
      if (!alt || t5_compare(data, *alt, m, r, table, heads, true).wrong > 0) continue;
      ++fits;
      out.say("the data fits: {} (every one of the {} elements)\n", m.words, data.size());
      out.found(
          {m.words, fmt::format("every one of the {} elements", data.size()), std::nullopt, std::nullopt});
    }
    if (fits == 0) out.say("undetermined: none of T5's known mistakes reproduces the data\n");
  }
  out.say("verdict: {}\n", out.passed ? "PASS" : "FAIL");
  return out;
}

}  // namespace pe::check

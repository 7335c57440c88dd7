#include "pe/reports/compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <boost/math/distributions/normal.hpp>
#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "pe/reports/bench_results.h"

namespace pe::reports {
namespace {

struct Runs {
  std::map<std::string, std::vector<double>> times;  // real_time of each repetition, in ns
  std::map<std::string, std::vector<double>> paced;  // each real_time over its own pace_ns; all or none
  std::map<std::string, std::string> errors;
};

Runs collect(const nlohmann::json& run) {
  Runs r;
  for (const BenchRuns& b : benchmark_runs(run)) {
    if (!b.error.empty()) {
      r.errors[b.name] = b.error;
      continue;
    }
    auto& times = r.times[b.name];
    std::vector<double> paced;
    for (const nlohmann::json* rep : b.repetitions) {
      times.push_back(rep->value("real_time", NAN) * ns_per(rep->value("time_unit", "ns")));
      const nlohmann::json pace = rep->value("pace_ns", nlohmann::json());
      if (pace.is_number() && pace.get<double>() > 0) paced.push_back(times.back() / pace.get<double>());
    }
    if (!paced.empty() && paced.size() == times.size()) r.paced[b.name] = std::move(paced);
  }
  return r;
}

}  // namespace

std::string_view to_string(Verdict v) noexcept { return enum_name(v); }

double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b) {
  const double n1 = static_cast<double>(a.size()), n2 = static_cast<double>(b.size());
  if (a.empty() || b.empty()) return 1.0;
  // Midranks of the pooled sample; tie groups shrink the variance.
  std::vector<std::pair<double, int>> pooled;
  for (double x : a) pooled.push_back({x, 0});
  for (double x : b) pooled.push_back({x, 1});
  std::sort(pooled.begin(), pooled.end());
  double rank_sum_a = 0, tie_term = 0;
  for (std::size_t i = 0; i < pooled.size();) {
    std::size_t j = i;
    while (j < pooled.size() && pooled[j].first == pooled[i].first) ++j;
    const double midrank = 0.5 * static_cast<double>(i + 1 + j), t = static_cast<double>(j - i);
    for (std::size_t k = i; k < j; ++k) rank_sum_a += pooled[k].second == 0 ? midrank : 0.0;
    tie_term += t * t * t - t;
    i = j;
  }
  const double u = rank_sum_a - n1 * (n1 + 1) / 2, n = n1 + n2;
  const double mean = n1 * n2 / 2;
  const double var = n1 * n2 / 12 * ((n + 1) - tie_term / (n * (n - 1)));
  if (var <= 0) return 1.0;  // every value equal
  const double z = std::max(0.0, std::fabs(u - mean) - 0.5) / std::sqrt(var);
  return std::min(1.0, 2 * boost::math::cdf(boost::math::complement(boost::math::normal(), z)));
}

std::vector<double> benjamini_hochberg(const std::vector<double>& p) {
  const std::size_t m = p.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return p[a] < p[b]; });
  std::vector<double> adjusted(m);
  double running = 1.0;
  for (std::size_t k = m; k-- > 0;) {
    const std::size_t i = order[k];
    running = std::min(running, p[i] * static_cast<double>(m) / static_cast<double>(k + 1));
    adjusted[i] = running;
  }
  return adjusted;
}

std::vector<Comparison> compare_runs(const nlohmann::json& base, const nlohmann::json& next,
                                     const CompareOptions& options) {
  const Runs a = collect(base), b = collect(next);
  std::vector<Comparison> rows;
  std::vector<double> tested_p, paced_p;
  std::vector<std::size_t> tested;
  std::set<std::string> names;
  for (const Runs* r : {&a, &b}) {
    for (const auto& [n, _] : r->times) names.insert(n);
    for (const auto& [n, _] : r->errors) names.insert(n);
  }
  for (const std::string& name : names) {
    Comparison c;
    c.name = name;
    const auto ta = a.times.find(name), tb = b.times.find(name);
    if (b.errors.count(name) && !a.errors.count(name)) {
      c.verdict = Verdict::Error;
      c.note = "new run: " + b.errors.at(name);
    } else if (a.errors.count(name) || b.errors.count(name)) {
      c.verdict = Verdict::Missing;
      c.note = "error in the base run";
    } else if (ta == a.times.end() || tb == b.times.end()) {
      c.verdict = Verdict::Missing;
      c.note = ta == a.times.end() ? "only in the new run" : "only in the base run";
    } else {
      c.n_base = ta->second.size();
      c.n_new = tb->second.size();
      c.base_median = median(ta->second);
      c.new_median = median(tb->second);
      c.change = c.new_median / c.base_median - 1;
      c.p = mann_whitney_p(ta->second, tb->second);
      const auto pa = a.paced.find(name), pb = b.paced.find(name);
      if (pa != a.paced.end() && pb != b.paced.end()) {
        c.paced = true;
        c.paced_change = median(pb->second) / median(pa->second) - 1;
        c.paced_p = mann_whitney_p(pa->second, pb->second);
      }
      if (name.starts_with("limits/")) {
        c.verdict = Verdict::Machine;  // the machine's own fill/copy: context, not a gate
      } else {
        tested.push_back(rows.size());
        tested_p.push_back(c.p);
        if (c.paced) paced_p.push_back(c.paced_p);
      }
    }
    rows.push_back(c);
  }
  // The paced p-values adjusted over the benchmarks that have one.
  const std::vector<double> adjusted = benjamini_hochberg(tested_p),
                            paced_adjusted = benjamini_hochberg(paced_p);
  for (std::size_t k = 0, paced_k = 0; k < tested.size(); ++k) {
    Comparison& c = rows[tested[k]];
    c.p_adjusted = adjusted[k];
    if (c.paced) c.paced_p_adjusted = paced_adjusted[paced_k++];
    const auto moved = [&](double change, double p_adjusted) {
      const bool significant = p_adjusted < options.alpha;
      return significant && change > options.threshold    ? 1
             : significant && change < -options.threshold ? -1
                                                          : 0;
    };
    const int raw = moved(c.change, c.p_adjusted);
    // With the pace recorded on both sides the change must also hold against the machine's own
    // speed at each repetition: a step of the shared machine moves both, a slower build only one.
    const int paced = c.paced ? moved(c.paced_change, c.paced_p_adjusted) : raw;
    if (raw == 1 && paced == 1) c.verdict = Verdict::Regression;
    if (raw == -1 && paced == -1) c.verdict = Verdict::Improvement;
    if (raw != 0 && paced != raw) {
      const bool moved_with_pace =
          std::fabs(c.paced_change) <= options.threshold || (c.paced_change > 0) != (c.change > 0);
      c.note = moved_with_pace
                   ? fmt::format("the machine's pace moved with it ({:+.1f}% against the pace): not counted",
                                 100 * c.paced_change)
                   : fmt::format("{:+.1f}% against the pace, not significant there: not counted",
                                 100 * c.paced_change);
    }
    if (std::min(c.n_base, c.n_new) < 5) c.note = "under 5 repetitions: the test cannot reach significance";
  }
  return rows;
}

bool has_regression(const std::vector<Comparison>& rows) {
  return std::any_of(rows.begin(), rows.end(), [](const Comparison& c) {
    return c.verdict == Verdict::Regression || c.verdict == Verdict::Error;
  });
}

void to_json(nlohmann::json& j, const Comparison& c) {
  j = {{"name", c.name},
       {"n_base", c.n_base},
       {"n_new", c.n_new},
       {"base_median_ns", c.base_median},
       {"new_median_ns", c.new_median},
       {"change", c.change},
       {"p", c.p},
       {"p_adjusted", c.p_adjusted},
       {"paced", c.paced},
       {"paced_change", c.paced_change},
       {"paced_p", c.paced_p},
       {"paced_p_adjusted", c.paced_p_adjusted},
       {"verdict", c.verdict},
       {"note", c.note}};
}

namespace {
// A number of to_json's output: NaN and infinities were written as null.
double number(const nlohmann::json& row, const char* key, double absent) {
  const auto it = row.find(key);
  return it == row.end() ? absent : it->is_number() ? it->get<double>() : NAN;
}
}  // namespace

void from_json(const nlohmann::json& r, Comparison& c) {
  c.name = r.value("name", "");
  c.n_base = r.value("n_base", std::size_t{0});
  c.n_new = r.value("n_new", std::size_t{0});
  c.base_median = number(r, "base_median_ns", 0.0);
  c.new_median = number(r, "new_median_ns", 0.0);
  c.change = number(r, "change", 0.0);
  c.p = number(r, "p", 1.0);
  c.p_adjusted = number(r, "p_adjusted", 1.0);
  c.paced = r.value("paced", false);
  c.paced_change = number(r, "paced_change", 0.0);
  c.paced_p = number(r, "paced_p", 1.0);
  c.paced_p_adjusted = number(r, "paced_p_adjusted", 1.0);
  c.verdict = parse_enum<Verdict>(r.value("verdict", "same")).value_or(Verdict::Same);
  c.note = r.value("note", "");
}

nlohmann::json to_json(const std::vector<Comparison>& rows, const CompareOptions& options) {
  return {{"threshold", options.threshold},
          {"alpha", options.alpha},
          {"rows", rows},
          {"regression", has_regression(rows)}};
}

std::vector<Comparison> rows_from_json(const nlohmann::json& compared) {
  return compared.value("rows", nlohmann::json::array()).get<std::vector<Comparison>>();
}

std::string compare_markdown(const std::vector<Comparison>& rows, const CompareOptions& options, bool all) {
  std::map<Verdict, std::size_t> counts;
  for (const Comparison& c : rows) ++counts[c.verdict];
  std::string out = fmt::format(
      "# pe-suite compare\n\nMedian real time per benchmark; regression = slower by more than {:.3g}% "
      "with Mann-Whitney p below {:g} after Benjamini-Hochberg adjustment over {} benchmarks, both as "
      "measured "
      "and relative to the machine's pace at each repetition (where both runs recorded it).\n\n",
      100 * options.threshold, options.alpha,
      rows.size() - counts[Verdict::Missing] - counts[Verdict::Error] - counts[Verdict::Machine]);
  out += fmt::format("{} regressions, {} improvements, {} same, {} errors, {} missing, {} machine limits\n\n",
                     counts[Verdict::Regression], counts[Verdict::Improvement], counts[Verdict::Same],
                     counts[Verdict::Error], counts[Verdict::Missing], counts[Verdict::Machine]);
  // A benchmark in one run only is a change in what was compared: listed like a regression.
  const auto notable = [](const Comparison& c) {
    return c.verdict == Verdict::Regression || c.verdict == Verdict::Improvement ||
           c.verdict == Verdict::Error || c.verdict == Verdict::Missing;
  };
  const auto changed = static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), notable));
  if (rows.empty()) return out + "Nothing compared: neither run holds a benchmark.\n";
  // Nothing changed: every row compared, so that a reader sees what "no change" was said of (a header
  // alone cannot tell an empty comparison from a clean one).
  const std::size_t same = counts[Verdict::Same];
  if (changed == 0 && !all)
    out += fmt::format("None changed significantly; the {} benchmark{} compared:\n\n", same,
                       same == 1 ? "" : "s");
  all = all || changed == 0;
  out +=
      "| benchmark | base median | new median | change | p | p adjusted | against pace | verdict | note |\n"
      "|---|---:|---:|---:|---:|---:|---:|---|---|\n";
  for (const Comparison& c : rows) {
    if (!all && !notable(c)) continue;
    const std::string paced =
        c.paced ? fmt::format("{:+.1f}% (p {:.2g})", 100 * c.paced_change, c.paced_p_adjusted) : "-";
    out += fmt::format("| `{}` | {:.4g} ns | {:.4g} ns | {:+.1f}% | {:.2g} | {:.2g} | {} | {} | {} |\n",
                       c.name, c.base_median, c.new_median, 100 * c.change, c.p, c.p_adjusted, paced,
                       to_string(c.verdict), c.note);
  }
  if (!all && rows.size() > changed)
    out += fmt::format("\n{} more benchmark{} compared without a significant change{} (--all lists them)\n",
                       same, same == 1 ? "" : "s",
                       counts[Verdict::Machine] == 0
                           ? std::string()
                           : fmt::format(", and {} machine-limit rows", counts[Verdict::Machine]));
  return out;
}

}  // namespace pe::reports

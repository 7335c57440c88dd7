#include "pe/reports/variant_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "pe/harness/family_traits.h"
#include "pe/reports/measured.h"

namespace pe::reports {
namespace {

std::string test_name(std::string s) {
  for (char& c : s) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

// Property tests whose instance suffix names one of this variant's instances.
void count_properties(VariantRow& row, const std::vector<std::string>& instance_names,
                      const nlohmann::json& gtest) {
  if (!gtest.is_object()) return;
  row.property_tests = row.property_failures = 0;
  for (const auto& suite : gtest.value("testsuites", nlohmann::json::array())) {
    for (const auto& tc : suite.value("testsuite", nlohmann::json::array())) {
      const std::string name = tc.value("name", "");
      const bool mine = std::any_of(instance_names.begin(), instance_names.end(), [&](const std::string& n) {
        const std::string t = test_name(n);
        return name.size() > t.size() && name.ends_with(t) && name[name.size() - t.size() - 1] == '/';
      });
      if (!mine) continue;
      ++row.property_tests;
      if (!tc.value("failures", nlohmann::json::array()).empty()) ++row.property_failures;
    }
  }
}

std::string pct(double f) { return f < 0 ? "-" : fmt::format("{:.0f}%", 100 * f); }
std::string num(double v, const char* spec = "{:.3g}") {
  return v < 0 ? "-" : fmt::format(fmt::runtime(spec), v);
}

std::string props(const VariantRow& r) {
  if (r.property_tests < 0) return "-";
  return r.property_failures == 0 ? fmt::format("{} pass", r.property_tests)
                                  : fmt::format("{} FAIL", r.property_failures);
}

}  // namespace

std::string shape_at(const harness::FamilyTraits& t, std::int64_t length) {
  const std::string shape(t.summary_shape), want = std::to_string(t.summary_length);
  const std::size_t at = shape.find(want);
  if (length == t.summary_length) return shape;
  if (at == std::string::npos) return fmt::format("{} at length {}", shape, length);
  return shape.substr(0, at) + std::to_string(length) + shape.substr(at + want.size());
}

const BenchRecord* representative(const std::vector<BenchRecord>& bench, const std::string& instance) {
  // The summary's length when the run timed it; else the headline shape at the length nearest to it
  // (log scale; the longer on a tie): quick mode times ALiBi at Q1 and Q128 only (alibi.cc's Quick grid),
  // and "-" would hide what it measured.
  const BenchRecord* best = nullptr;
  double best_distance = 0;
  for (const BenchRecord& b : bench) {
    if (b.instance != instance || b.dtype != "f32" || b.positions != "start" || b.scaling != "none" ||
        b.form != "text" || b.threads != 1 || !b.error.empty() || b.length < 1)
      continue;
    const harness::FamilyTraits* t = harness::traits_named(b.family);
    if (t == nullptr || !t->headline(b)) continue;
    const double distance =
        std::fabs(std::log(static_cast<double>(b.length) / static_cast<double>(t->summary_length)));
    if (best == nullptr || distance < best_distance || (distance == best_distance && b.length > best->length))
      best = &b, best_distance = distance;
  }
  return best;
}

std::vector<VariantRow> variant_rows(const nlohmann::json& census, const std::vector<BenchRecord>& bench,
                                     const nlohmann::json& gtest) {
  std::vector<VariantRow> rows;
  std::map<std::string, std::size_t> index;
  std::map<std::string, std::vector<std::string>> names;
  for (const auto& inst : census) {
    const std::string v = inst.value("variant", "");
    if (!index.count(v)) {
      index[v] = rows.size();
      rows.push_back({});
      rows.back().variant = v;
      rows.back().family = inst.value("family", "");
    }
    VariantRow& r = rows[index[v]];
    const std::string name = inst.value("instance", "");
    names[v].push_back(name);
    ++r.instances;
    r.failing_instances += inst.value("within_contract", false) ? 0 : 1;
    r.max_position = std::max(r.max_position, inst["contract"].value("max_position", std::int64_t{0}));
    for (const auto& b : inst["bands"])
      r.worst_ratio = std::max(r.worst_ratio, measured_or(b["max_budget_ratio"], "value", INFINITY));
    if (r.primary.empty() && inst.value("dtype", "") == "f32") {
      r.primary = name;
      for (const auto& b : inst["bands"]) {
        const double e = measured_or(b["max_abs"], "value", NAN);
        r.primary_err_max = worse(r.primary_err_max, e);
        if (b.value("hi", std::int64_t{0}) < 1'000'000) r.primary_err_1e6 = worse(r.primary_err_1e6, e);
      }
    }
  }
  for (VariantRow& r : rows) {
    count_properties(r, names[r.variant], gtest);
    // The primary instance's name carries "/f32"; benchmarks are named by the instance without it.
    const std::string bench_instance = r.primary.substr(0, r.primary.find('/'));
    if (const BenchRecord* b = representative(bench, bench_instance)) {
      r.ns_per_element = b->ns_per_element;
      r.fill_fraction = b->fill_fraction;
      r.allocs_per_call = b->allocs_per_call;
      r.speed_shape = shape_at(*harness::traits_named(b->family), b->length);
    }
  }
  return rows;
}

std::string variant_table(const std::vector<VariantRow>& rows) {
  // Column widths from the data, so that a long variant name ("sinusoidal.interleaved.exact@AVX2") or a
  // verdict does not push its row out of line.
  struct Cells {
    std::string variant, props, ratio, err_1e6, err_all, max_pos, ns, fill, alloc, verdict;
  };
  std::vector<Cells> cells = {{"variant", "props", "err/budget", "|err|<1e6", "|err| all", "max pos",
                               "ns/elem", "fill", "alloc", "verdict"}};
  std::map<std::pair<std::string, std::string>, int> other_shape;  // (family, shape) -> rows
  for (const VariantRow& r : rows) {
    const bool ok = r.failing_instances == 0 && r.property_failures <= 0;
    cells.push_back(
        {r.variant, props(r), fmt::format("{:.3f}", r.worst_ratio), num(r.primary_err_1e6),
         num(r.primary_err_max),
         r.max_position >= (std::int64_t{1} << 20)
             ? fmt::format("2^{}", 63 - __builtin_clzll(static_cast<unsigned long long>(r.max_position)))
             : std::to_string(r.max_position),
         num(r.ns_per_element, "{:.2f}"), pct(r.fill_fraction), num(r.allocs_per_call, "{:.0f}"),
         ok ? "pass" : fmt::format("FAIL ({} of {} instances)", r.failing_instances, r.instances)});
    const harness::FamilyTraits* t = harness::traits_named(r.family);
    if (!r.speed_shape.empty() && t != nullptr && r.speed_shape != t->summary_shape)
      ++other_shape[{r.family, r.speed_shape}];
  }
  std::size_t w[10] = {};
  for (const Cells& c : cells) {
    const std::string* f[] = {&c.variant, &c.props, &c.ratio, &c.err_1e6, &c.err_all,
                              &c.max_pos, &c.ns,    &c.fill,  &c.alloc,   &c.verdict};
    for (int k = 0; k < 10; ++k) w[k] = std::max(w[k], f[k]->size());
  }
  std::string out;
  for (const Cells& c : cells) {
    out += fmt::format("{:<{}} {:>{}} {:>{}} {:>{}} {:>{}} {:>{}} {:>{}} {:>{}} {:>{}}  {}\n", c.variant,
                       w[0], c.props, w[1], c.ratio, w[2], c.err_1e6, w[3], c.err_all, w[4], c.max_pos, w[5],
                       c.ns, w[6], c.fill, w[7], c.alloc, w[8], c.verdict);
  }
  for (const auto& [key, n] : other_shape) {
    out += fmt::format("{} {} row{}: speed at {} (the run timed no {})\n", n, key.first, n == 1 ? "" : "s",
                       key.second, harness::traits_named(key.first)->summary_shape);
  }
  return out;
}

std::string variant_markdown(const std::vector<VariantRow>& rows) {
  std::string out =
      "| variant | property tests | worst err/budget | f32 max abs error, positions < 1e6 | ... all promised "
      "positions | max position | speed at | ns/element | % of fill limit | allocations per call | verdict "
      "|\n"
      "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---|\n";
  for (const VariantRow& r : rows) {
    const bool ok = r.failing_instances == 0 && r.property_failures <= 0;
    out +=
        fmt::format("| `{}` | {} | {:.3f} | {} | {} | {} | {} | {} | {} | {} | {} |\n", r.variant, props(r),
                    r.worst_ratio, num(r.primary_err_1e6), num(r.primary_err_max), r.max_position,
                    r.speed_shape.empty() ? "-" : r.speed_shape, num(r.ns_per_element, "{:.2f}"),
                    pct(r.fill_fraction), num(r.allocs_per_call, "{:.0f}"), ok ? "pass" : "**FAIL**");
  }
  return out;
}

}  // namespace pe::reports

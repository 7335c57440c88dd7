#include "pe/reports/variant_summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "pe/harness/family_traits.h"
#include "pe/reports/measured.h"

namespace pe::reports {
namespace {

// Property tests whose instance suffix names one of this variant's instances.
void count_properties(VariantRow& row, const std::vector<std::string>& instance_names,
                      const nlohmann::json& gtest) {
  if (!gtest.is_object()) return;
  row.property_tests = row.property_failures = 0;
  for (const auto& suite : gtest.value("testsuites", nlohmann::json::array())) {
    for (const auto& tc : suite.value("testsuite", nlohmann::json::array())) {
      const std::string name = tc.value("name", "");
      const bool mine = std::any_of(instance_names.begin(), instance_names.end(), [&](const std::string& n) {
        const std::string t = harness::test_identifier(n);
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

const BenchRecord* representative(const std::vector<BenchRecord>& bench, const std::string& instance,
                                  const std::string& dtype) {
  // The summary's length when the run timed it; else the headline shape at the length nearest to it
  // (log scale; the longer on a tie): quick mode times ALiBi at Q1 and Q128 only (alibi.cc's Quick grid),
  // and "-" would hide what it measured.
  const BenchRecord* best = nullptr;
  double best_distance = 0;
  for (const BenchRecord& b : bench) {
    if (b.instance != instance || b.dtype != dtype || b.positions != "start" || b.scaling != "none" ||
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
    // The first f32 instance; a variant that writes no f32 (rope.torch_bf16, ...) its first, in its type.
    const std::string dtype = inst.value("dtype", "");
    if (r.primary.empty() || (dtype == "f32" && r.primary_dtype != "f32")) {
      r.primary = name;
      r.primary_dtype = dtype;
      r.primary_err_1e6 = r.primary_err_max = -1;
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
    if (const BenchRecord* b = representative(bench, bench_instance, r.primary_dtype)) {
      r.ns_per_element = b->ns_per_element;
      r.fill_fraction = b->fill_fraction;
      r.allocs_per_call = b->allocs_per_call;
      r.speed_shape = shape_at(*harness::traits_named(b->family), b->length);
    }
  }
  return rows;
}

namespace {

// A summary column: its terminal and Markdown headers and its cell per row ("-": nothing measured).
struct Column {
  const char *header, *md_header;
  std::string (*cell)(const VariantRow&);
};

std::string in_type(const VariantRow& r, double v) {
  return num(v) == "-" || r.primary_dtype == "f32" ? num(v) : fmt::format("{} ({})", num(v), r.primary_dtype);
}
std::string position_cell(const VariantRow& r) {
  return r.max_position >= (std::int64_t{1} << 20)
             ? fmt::format("2^{}", 63 - __builtin_clzll(static_cast<unsigned long long>(r.max_position)))
             : std::to_string(r.max_position);
}
bool ok(const VariantRow& r) { return r.failing_instances == 0 && r.property_failures <= 0; }

// The columns after the variant's name, the verdict last.
const Column kColumns[] = {
    {"props", "property tests", [](const VariantRow& r) { return props(r); }},
    {"err/budget", "worst err/budget",
     [](const VariantRow& r) { return fmt::format("{:.3f}", r.worst_ratio); }},
    {"|err|<1e6", "max abs error (f32, else its own type), positions < 1e6",
     [](const VariantRow& r) { return in_type(r, r.primary_err_1e6); }},
    {"|err| all", "... all promised positions",
     [](const VariantRow& r) { return in_type(r, r.primary_err_max); }},
    {"max pos", "max position", position_cell},
    {"speed at", "speed at",
     [](const VariantRow& r) { return r.speed_shape.empty() ? std::string("-") : r.speed_shape; }},
    {"ns/elem", "ns/element", [](const VariantRow& r) { return num(r.ns_per_element, "{:.2f}"); }},
    {"fill", "% of fill limit", [](const VariantRow& r) { return pct(r.fill_fraction); }},
    {"alloc", "allocations per call", [](const VariantRow& r) { return num(r.allocs_per_call, "{:.0f}"); }},
};

// The columns with something in at least one row.
std::vector<const Column*> shown_columns(const std::vector<VariantRow>& rows, bool terminal) {
  std::vector<const Column*> out;
  for (const Column& c : kColumns) {
    if (terminal && std::string_view(c.header) == "speed at") continue;  // the terminal names it below
    if (std::any_of(rows.begin(), rows.end(), [&](const VariantRow& r) { return c.cell(r) != "-"; }))
      out.push_back(&c);
  }
  return out;
}

}  // namespace

std::string variant_table(const std::vector<VariantRow>& rows) {
  // Column widths from the data, so that a long variant name ("sinusoidal.interleaved.exact@AVX2") or a
  // verdict does not push its row out of line.
  const std::vector<const Column*> columns = shown_columns(rows, true);
  std::vector<std::vector<std::string>> cells(1);
  cells[0].push_back("variant");
  for (const Column* c : columns) cells[0].push_back(c->header);
  cells[0].push_back("verdict");
  std::map<std::pair<std::string, std::string>, int> other_shape;  // (family, shape) -> rows
  for (const VariantRow& r : rows) {
    cells.push_back({r.variant});
    for (const Column* c : columns) cells.back().push_back(c->cell(r));
    cells.back().push_back(
        ok(r) ? "pass" : fmt::format("FAIL ({} of {} instances)", r.failing_instances, r.instances));
    const harness::FamilyTraits* t = harness::traits_named(r.family);
    if (!r.speed_shape.empty() && t != nullptr && r.speed_shape != t->summary_shape)
      ++other_shape[{r.family, r.speed_shape}];
  }
  std::vector<std::size_t> w(cells[0].size());
  for (const auto& row : cells)
    for (std::size_t k = 0; k < row.size(); ++k) w[k] = std::max(w[k], row[k].size());
  std::string out;
  for (const auto& row : cells) {
    std::string line = fmt::format("{:<{}}", row[0], w[0]);
    for (std::size_t k = 1; k + 1 < row.size(); ++k) line += fmt::format(" {:>{}}", row[k], w[k]);
    out += line + "  " + row.back() + "\n";
  }
  for (const auto& [key, n] : other_shape) {
    out += fmt::format("{} {} row{}: speed at {} (the run timed no {})\n", n, key.first, n == 1 ? "" : "s",
                       key.second, harness::traits_named(key.first)->summary_shape);
  }
  return out;
}

std::string variant_markdown(const std::vector<VariantRow>& rows) {
  const std::vector<const Column*> columns = shown_columns(rows, false);
  std::string head = "| variant |", rule = "|---|";
  for (const Column* c : columns) {
    head += fmt::format(" {} |", c->md_header);
    rule += std::string_view(c->header) == "speed at" ? "---|" : "---:|";
  }
  std::string out = head + " verdict |\n" + rule + "---|\n";
  for (const VariantRow& r : rows) {
    out += fmt::format("| `{}` |", r.variant);
    for (const Column* c : columns) out += fmt::format(" {} |", c->cell(r));
    out += ok(r) ? " pass |\n" : " **FAIL** |\n";
  }
  return out;
}

}  // namespace pe::reports

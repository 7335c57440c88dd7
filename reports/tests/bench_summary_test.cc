// The speed a person reads (issue 54 item 1): bench's summary table (units, order, allocations, spread),
// bench.md's order, and compare's listing of what it compared when nothing changed.
#include "pe/reports/bench_summary.h"

#include <gtest/gtest.h>

#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "pe/reports/compare.h"
#include "pe/reports/report.h"

namespace pe::reports {
namespace {

BenchRecord rope(const std::string& instance, std::int64_t tokens, const std::string& positions, double ns) {
  BenchRecord b;
  b.family = "rope";
  b.instance = instance;
  b.variant = instance;
  b.op = "rope";
  b.dtype = "f32";
  b.length = tokens;
  b.heads = 32;
  b.dim = 128;
  b.positions = positions;
  b.name = harness::benchmark_name(b);
  b.repetitions = 3;
  b.ns_per_element = ns;
  b.fill_fraction = 0.25;
  b.allocs_per_call = 0;
  b.spread = 0.02;
  return b;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The line of `table` that starts with `name` ("" when none).
std::string row(const std::string& table, const std::string& name) {
  for (const std::string& l : lines_of(table))
    if (l.starts_with(name + " ")) return l;
  return "";
}

TEST(BenchSummary, OneRowPerInstanceFastestFirstAtTheSummaryShape) {
  std::vector<BenchRecord> recs = {rope("rope.slow", 2048, "start", 2.5), rope("rope.fast", 1, "far", 40),
                                   rope("rope.fast", 2048, "start", 0.125), rope("rope.slow", 1, "far", 30)};
  recs[0].allocs_per_call = 2;
  recs[3].spread = 0.5;
  BenchRecord yarn = rope("rope.fast", 2048, "start", 0.5);
  yarn.scaling = "yarn";
  yarn.name = harness::benchmark_name(yarn);
  recs.push_back(yarn);
  const std::string table = bench_summary(recs);
  EXPECT_NE(table.find("rope: ns per element (median of 3 repetitions) and % of the machine's fill limit"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("rows fastest first at T2048"), std::string::npos) << table;
  const std::vector<std::string> lines = lines_of(table);
  std::size_t fast = 0, slow = 0, header = 0;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    if (lines[k].starts_with("rope.fast ")) fast = k;
    if (lines[k].starts_with("rope.slow ")) slow = k;
    if (lines[k].starts_with("instance ")) header = k;
  }
  ASSERT_GT(header, 0u) << table;
  EXPECT_LT(fast, slow) << table;  // the faster at T2048, though the slower at T1
  // Columns: start before far, unscaled before yarn; plain numbers, the fraction in percent.
  const std::string& h = lines[header];
  EXPECT_LT(h.find("T2048"), h.find("T1 far")) << table;
  EXPECT_NE(h.find("allocs"), std::string::npos) << table;
  EXPECT_NE(h.find("spread"), std::string::npos) << table;
  EXPECT_NE(table.find("yarn"), std::string::npos) << table;
  EXPECT_NE(row(table, "rope.fast").find("0.125  25%"), std::string::npos) << table;
  EXPECT_NE(row(table, "rope.fast").find("0.5  25%"), std::string::npos) << table;
  EXPECT_NE(row(table, "rope.slow").find("2.5  25%"), std::string::npos) << table;
  // The most allocations and the widest spread of each row; "-" where the row's instance has no such shape.
  EXPECT_TRUE(row(table, "rope.slow").ends_with("2   50.0%")) << table;
  EXPECT_TRUE(row(table, "rope.fast").ends_with("0    2.0%")) << table;
  EXPECT_NE(row(table, "rope.slow").find(" - "), std::string::npos) << table;
  EXPECT_EQ(table.find("nan"), std::string::npos) << table;
}

TEST(BenchSummary, ShapeLabelsSayWhatDiffersFromTheHeadline) {
  BenchRecord b = rope("rope.x", 1, "far", 1);
  b.form = "mla";
  b.heads = 128;
  b.dim = 192;
  EXPECT_EQ(shape_label(b), "T1 far mla H128 D192");
  BenchRecord h = rope("rope.x", 2048, "start", 1);
  h.dtype = "bf16";
  h.threads = 2;
  EXPECT_EQ(shape_label(h), "T2048 bf16 2 threads");
}

TEST(BenchSummary, UntimedCellsSaySo) {
  std::vector<BenchRecord> recs = {rope("rope.a", 2048, "start", 1), rope("rope.b", 2048, "start", 1)};
  recs[1].error = "outside its contract";
  const std::string table = bench_summary(recs);
  EXPECT_NE(row(table, "rope.b").find("not timed"), std::string::npos) << table;
  EXPECT_LT(table.find("rope.a "), table.find("rope.b ")) << table;
}

// No heap counter in the record (-1) and one repetition (a NaN spread): nothing measured, so no 0 claimed.
TEST(BenchSummary, UnmeasuredCountersShowADash) {
  std::vector<BenchRecord> recs = {rope("rope.a", 2048, "start", 1)};
  recs[0].allocs_per_call = -1;
  recs[0].spread = NAN;
  const std::string table = bench_summary(recs);
  EXPECT_TRUE(row(table, "rope.a").ends_with("     -       -")) << table;
}

// bench.md: family, shape, then speed, whatever order the JSON held them in.
TEST(BenchMarkdown, RowsByFamilyShapeThenSpeed) {
  BenchRecord sin;
  sin.family = "sinusoidal";
  sin.instance = sin.variant = "sinusoidal.a";
  sin.op = "table";
  sin.dtype = "f32";
  sin.length = 128;
  sin.dim = 128;
  sin.positions = "start";
  sin.name = harness::benchmark_name(sin);
  const std::vector<BenchRecord> recs = {rope("rope.slow", 2048, "start", 2), sin,
                                         rope("rope.fast", 1, "far", 1), rope("rope.fast", 2048, "start", 1)};
  const std::string md = benchmarks_markdown(recs);
  const auto at = [&](const BenchRecord& r) { return md.find("| `" + r.name + "` |"); };
  EXPECT_LT(at(recs[1]), at(recs[3])) << md;  // sinusoidal first: the registry's family order
  EXPECT_LT(at(recs[3]), at(recs[0])) << md;  // T2048: the faster first
  EXPECT_LT(at(recs[0]), at(recs[2])) << md;  // then T1 far
}

Comparison same(const std::string& name) {
  Comparison c;
  c.name = name;
  c.n_base = c.n_new = 9;
  c.base_median = c.new_median = 100;
  return c;
}

// Without --all, a comparison where nothing changed still shows what was compared.
TEST(CompareMarkdown, NoChangeListsWhatWasCompared) {
  const std::vector<Comparison> rows = {same("rope/a"), same("rope/b")};
  const std::string md = compare_markdown(rows, CompareOptions{}, false);
  EXPECT_NE(md.find("None changed significantly; the 2 benchmarks compared:"), std::string::npos) << md;
  EXPECT_NE(md.find("| `rope/a` |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `rope/b` |"), std::string::npos) << md;
  std::vector<Comparison> one_slower = rows;
  one_slower[0].verdict = Verdict::Regression;
  const std::string changed = compare_markdown(one_slower, CompareOptions{}, false);
  EXPECT_NE(changed.find("| `rope/a` |"), std::string::npos) << changed;
  EXPECT_EQ(changed.find("| `rope/b` |"), std::string::npos) << changed;
  EXPECT_NE(changed.find("1 more benchmark compared without a significant change (--all lists them)"),
            std::string::npos)
      << changed;
  // A benchmark in one run only is no "none changed"; nothing at all is said to be nothing.
  std::vector<Comparison> one_missing = rows;
  one_missing[1].verdict = Verdict::Missing;
  const std::string missing = compare_markdown(one_missing, CompareOptions{}, false);
  EXPECT_EQ(missing.find("None changed"), std::string::npos) << missing;
  EXPECT_NE(missing.find("| `rope/b` |"), std::string::npos) << missing;
  EXPECT_NE(missing.find("1 more benchmark compared without a significant change (--all lists them)"),
            std::string::npos)
      << missing;
  EXPECT_NE(compare_markdown({}, CompareOptions{}, false).find("Nothing compared"), std::string::npos);
}

}  // namespace
}  // namespace pe::reports

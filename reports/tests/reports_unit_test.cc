// Unit tests of the report's pieces a new user reads first (issue 31 item 6): the summary's speed at
// the shape quick mode times, text tables whose columns stay in line with long names, the speed plot
// of a family timed at one start length plus the decode shape, and Pareto labels that do not overprint.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "pe/reports/plots.h"
#include "pe/reports/report.h"
#include "pe/reports/summary.h"
#include "pe/reports/variant_summary.h"

namespace pe::reports {
namespace {

BenchRecord record(const std::string& family, const std::string& variant, const std::string& op,
                   std::int64_t length, std::int64_t heads, std::int64_t dim, const std::string& positions,
                   double ns) {
  BenchRecord b;
  b.family = family;
  b.variant = variant;
  b.instance = variant;  // one layout: the instance name is the variant's
  b.name = family + "/" + variant + "/" + std::to_string(length);
  b.op = op;
  b.dtype = "f32";
  b.length = length;
  b.heads = heads;
  b.dim = dim;
  b.positions = positions;
  b.repetitions = 3;
  b.real_time_ns = ns * static_cast<double>(length * std::max<std::int64_t>(heads, 1) * dim);
  b.ns_per_element = ns;
  b.fill_fraction = 0.5;
  b.allocs_per_call = 0;
  return b;
}

nlohmann::json census_instance(const std::string& family, const std::string& variant, double err) {
  return {{"family", family},
          {"variant", variant},
          {"instance", variant + "/f32"},
          {"dtype", "f32"},
          {"within_contract", true},
          {"contract", {{"max_position", 1 << 20}}},
          {"bands",
           {{{"lo", 0},
             {"hi", 999},
             {"max_abs", {{"value", err}, {"position", 5}, {"channel", 1}}},
             {"max_ulp", {{"value", 1.0}}},
             {"budget_at_max_abs", 1e-6},
             {"max_budget_ratio", {{"value", 0.25}}},
             {"verdict", "pass"}}}}};
}

// ALiBi quick mode (harness/src/families/alibi.cc): Q1 and Q128 against 2048 keys, and decode against
// 65536 keys; no Q2048. The summary shows the Q128 numbers with their shape, not "-".
TEST(VariantSummary, SpeedAtTheNearestLengthTheRunTimed) {
  const std::vector<BenchRecord> bench = {record("alibi", "alibi.hwy", "bias", 1, 32, 65536, "start", 9.0),
                                          record("alibi", "alibi.hwy", "bias", 1, 32, 2048, "start", 3.0),
                                          record("alibi", "alibi.hwy", "bias", 128, 32, 2048, "start", 0.25)};
  const nlohmann::json census = {census_instance("alibi", "alibi.hwy", 1e-7)};
  const std::vector<VariantRow> rows = variant_rows(census, bench, nlohmann::json());
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_DOUBLE_EQ(rows[0].ns_per_element, 0.25);
  EXPECT_EQ(rows[0].speed_shape, "H32·Q128·K2048");
  EXPECT_NE(variant_markdown(rows).find("| H32·Q128·K2048 | 0.25 | 50% | 0 | pass |"), std::string::npos)
      << variant_markdown(rows);
  const std::string table = variant_table(rows);
  EXPECT_NE(table.find("1 alibi row: speed at H32·Q128·K2048 (the run timed no H32·Q2048·K2048)"),
            std::string::npos)
      << table;
  // The summary length wins where the run timed it; two threads never stand for one.
  std::vector<BenchRecord> full = bench;
  full.push_back(record("alibi", "alibi.hwy", "bias", 2048, 32, 2048, "start", 0.2));
  full.back().threads = 2;
  full.back().ns_per_element = 0.1;
  full.push_back(record("alibi", "alibi.hwy", "bias", 2048, 32, 2048, "start", 0.2));
  const std::vector<VariantRow> rows2 = variant_rows(census, full, nlohmann::json());
  EXPECT_DOUBLE_EQ(rows2[0].ns_per_element, 0.2);
  EXPECT_EQ(rows2[0].speed_shape, "H32·Q2048·K2048");
  EXPECT_EQ(variant_table(rows2).find("speed at"), std::string::npos);
}

// Every row of a text table has its columns where the header has them: the end of each right-aligned
// header word is the end of a cell (a non-blank followed by a blank or the line's end) in every row.
void expect_aligned(const std::string& table, const std::vector<std::string>& right_aligned_headers) {
  std::istringstream in(table);
  std::string header, line;
  std::getline(in, header);
  std::vector<std::size_t> ends;
  for (const std::string& h : right_aligned_headers) {
    const std::size_t at = header.find(h);
    ASSERT_NE(at, std::string::npos) << h << " in " << header;
    ends.push_back(at + h.size());
  }
  int rows = 0;
  while (std::getline(in, line)) {
    if (line.find(": ") != std::string::npos && line.find("  ") == std::string::npos) continue;  // a note
    ++rows;
    for (std::size_t k = 0; k < ends.size(); ++k) {
      const std::size_t e = ends[k];
      ASSERT_GT(line.size(), e - 1) << line;
      EXPECT_NE(line[e - 1], ' ') << right_aligned_headers[k] << " out of line in\n" << table;
      EXPECT_TRUE(e == line.size() || line[e] == ' ') << right_aligned_headers[k] << " out of line in\n"
                                                      << table;
    }
  }
  EXPECT_GE(rows, 2);
}

TEST(TextTables, LongNamesKeepColumnsInLine) {
  const std::string long_variant = "rope.halfsplit.exact@SCALAR.with_a_plugin_suffix_longer_than_44_chars";
  const nlohmann::json census = {census_instance("rope", "rope.hwy", 1e-7),
                                 census_instance("rope", long_variant, 2e-7),
                                 census_instance("rope", "rope.halfsplit.exact@SCALAR", 3e-7)};
  expect_aligned(census_instance_table(census), {"bands", "max |err|", "at position", "max ulp", "err/bud"});
  expect_aligned(census_table(census), {"max |err|", "max ulp", "budget", "err/bud"});
  const std::vector<BenchRecord> bench = {
      record("rope", "rope.halfsplit.exact@SCALAR", "rope", 2048, 32, 128, "start", 1.5)};
  // No property run: the props column, "-" in every row, is left out.
  expect_aligned(variant_table(variant_rows(census, bench, nlohmann::json())),
                 {"err/budget", "|err|<1e6", "|err| all", "max pos", "ns/elem", "fill", "alloc"});
}

// A wrong kernel's err/budget runs to millions (the sign-flipped example plugin's 1145428.781): it stays in
// its column, as do NaN's and infinity's.
TEST(TextTables, HugeRatiosKeepTheirColumn) {
  nlohmann::json census = {census_instance("rope", "rope.interleaved.engine_c", 2.19),
                           census_instance("rope", "rope.halfsplit.engine_c", 2.36),
                           census_instance("rope", "rope.nan_c", 1)};
  census[0]["bands"][0]["max_budget_ratio"]["value"] = 1145428.781;
  census[1]["bands"][0]["max_budget_ratio"]["value"] = 999.9994;
  census[2]["bands"][0]["max_budget_ratio"]["value"] = std::numeric_limits<double>::infinity();
  expect_aligned(census_instance_table(census), {"max ulp", "err/bud"});
  expect_aligned(census_table(census), {"budget", "err/bud"});
  EXPECT_NE(census_instance_table(census).find(" 1.15e+06  pass"), std::string::npos)
      << census_instance_table(census);
}

// A column with nothing in any row is not printed; a variant that writes 16-bit data only shows its own
// type's error and speed instead of "-".
TEST(VariantSummary, EmptyColumnsLeftOutSixteenBitVariantsInTheirType) {
  nlohmann::json bf16 = census_instance("rope", "rope.torch_bf16", 3e-3);
  bf16["instance"] = "rope.torch_bf16/bf16";
  bf16["dtype"] = "bf16";
  const nlohmann::json census = {census_instance("rope", "rope.hwy", 1e-7), bf16};
  const std::vector<VariantRow> without_bench = variant_rows(census, {}, nlohmann::json());
  for (const std::string& text : {variant_table(without_bench), variant_markdown(without_bench)}) {
    EXPECT_EQ(text.find("ns/el"), std::string::npos) << text;
    EXPECT_EQ(text.find("fill"), std::string::npos) << text;
    EXPECT_EQ(text.find("props"), std::string::npos) << text;
    EXPECT_NE(text.find("0.003 (bf16)"), std::string::npos) << text;
  }
  BenchRecord b = record("rope", "rope.torch_bf16", "rope", 2048, 32, 128, "start", 0.75);
  b.dtype = "bf16";
  const std::vector<VariantRow> rows = variant_rows(census, {b}, nlohmann::json());
  EXPECT_EQ(rows[1].primary_dtype, "bf16");
  EXPECT_EQ(rows[1].ns_per_element, 0.75);
  EXPECT_NE(variant_markdown(rows).find("| 0.75 |"), std::string::npos) << variant_markdown(rows);
}

// Pareto labels: a cluster of front points a few pixels apart gets boxes that cover no marker and no
// other label (the old plot put each name at a fixed offset from its point: they overprinted).
TEST(ParetoPlot, LabelsDoNotOverlap) {
  std::vector<std::array<double, 2>> points;
  std::vector<std::size_t> chars;
  for (int k = 0; k < 10; ++k) {
    points.push_back({300.0 + 3 * k, 300.0 - 4 * k});  // a staircase, as a front is
    chars.push_back(20 + static_cast<std::size_t>(k));
  }
  const std::vector<LabelBox> boxes = place_labels(points, chars, kLabelCharWidth, kLabelHeight);
  ASSERT_EQ(boxes.size(), points.size());
  for (std::size_t i = 0; i < boxes.size(); ++i) {
    for (std::size_t j = 0; j < boxes.size(); ++j) {
      const LabelBox& a = boxes[i];
      if (i != j) {
        const LabelBox& b = boxes[j];
        EXPECT_FALSE(a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1) << i << " overlaps " << j;
      }
      const auto& p = points[j];
      EXPECT_FALSE(a.x0 < p[0] + 6 && p[0] - 6 < a.x1 && a.y0 < p[1] + 6 && p[1] - 6 < a.y1)
          << "label " << i << " covers point " << j;
    }
  }
}

bool has_gnuplot() { return gnuplot_available(); }

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// RoPE in quick mode: T2048 from 0 and the decode shape T1 at 2^20 (rope.cc's Quick grid). The speed
// plot has both lengths (the decode point marked), where it had one point and no plot.
TEST(SpeedPlot, RopeQuickGridHasAPlot) {
  if (!has_gnuplot()) GTEST_SKIP() << "no gnuplot";
  const std::string dir = (std::filesystem::temp_directory_path() / "pe_reports_unit_speed").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::vector<BenchRecord> bench;
  for (const char* v : {"rope.hwy", "rope.exact"}) {
    bench.push_back(record("rope", v, "rope", 1, 32, 128, "far", 2.0));
    bench.push_back(record("rope", v, "rope", 2048, 32, 128, "start", 0.5));
    bench.push_back(record("rope", v, "rope", 2048, 32, 128, "start", 0.5));
    bench.back().scaling = "yarn";  // not the headline's
  }
  const std::vector<std::string> svgs = plot_speed(bench, dir);
  EXPECT_NE(std::find(svgs.begin(), svgs.end(), "speed_rope.svg"), svgs.end());
  const std::string dat = read(dir + "/speed_rope.hwy.dat");
  EXPECT_NE(dat.find("\n1 "), std::string::npos) << dat;
  EXPECT_NE(dat.find("\n2048 "), std::string::npos) << dat;
  EXPECT_EQ(std::count(dat.begin(), dat.end(), '\n'), 3) << dat;               // the header and two lengths
  EXPECT_NE(dat.find("\n1 8.192 0.5 16384 0 6\n"), std::string::npos) << dat;  // T1 from 2^20: an open circle
  const std::string gp = read(dir + "/speed_rope.gp");
  EXPECT_NE(gp.find("head\\_dim"), std::string::npos) << gp;  // no subscript in the enhanced title
  // Two lengths: points, no line through them; no heap anywhere: no memory panel of identical lines.
  EXPECT_EQ(gp.find(" w lp "), std::string::npos) << gp;
  EXPECT_NE(gp.find(" w p "), std::string::npos) << gp;
  EXPECT_EQ(gp.find("title 'memory'"), std::string::npos) << gp;
  EXPECT_NE(gp.find("layout 1,2"), std::string::npos) << gp;
  std::filesystem::remove_all(dir);
}

// ALiBi's errors and budgets grow with the distance (a bias of |m·d|): the accuracy plot's y range reaches
// the largest plotted value instead of stopping at 10.
TEST(AccuracyPlot, YRangeReachesTheLargestValue) {
  const std::string dir = (std::filesystem::temp_directory_path() / "pe_reports_unit_accuracy").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  nlohmann::json band = {{"lo", 1000000},
                         {"hi", 9999999},
                         {"max_abs", {{"value", 3.5e4}}},
                         {"p99_abs", 2e4},
                         {"budget_at_max_abs", 7e4}};
  const nlohmann::json census = nlohmann::json::array(
      {{{"family", "alibi"}, {"dtype", "f32"}, {"variant", "alibi.scalar_f32"}, {"bands", {band}}}});
  plot_accuracy(census, dir);
  const std::string gp = read(dir + "/accuracy_alibi.gp");
  EXPECT_NE(gp.find("set yrange [1e-12:1e+06]"), std::string::npos) << gp;
  std::filesystem::remove_all(dir);
}

// The Pareto plot names the front only, each label placed at a screen position; report.md's table names
// every point.
TEST(ParetoPlot, FrontLabelledDominatedListed) {
  if (!has_gnuplot()) GTEST_SKIP() << "no gnuplot";
  const std::string dir = (std::filesystem::temp_directory_path() / "pe_reports_unit_pareto").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  nlohmann::json census = nlohmann::json::array();
  std::vector<BenchRecord> bench;
  const char* names[] = {"rope.a", "rope.b", "rope.c", "rope.d_dominated", "rope.e_dominated"};
  const double ns[] = {0.1, 0.2, 0.4, 0.21, 0.22}, err[] = {1e-5, 1e-6, 1e-8, 2e-6, 3e-6};
  for (int k = 0; k < 5; ++k) {
    census.push_back(census_instance("rope", names[k], err[k]));
    bench.push_back(record("rope", names[k], "rope", 2048, 32, 128, "start", ns[k]));
  }
  const std::vector<std::string> svgs = plot_pareto(census, bench, dir);
  ASSERT_EQ(svgs, std::vector<std::string>{"pareto_rope.svg"});
  const std::string gp = read(dir + "/pareto_rope.gp");
  for (const char* front : {"rope.a", "rope.b", "rope.c"})
    EXPECT_NE(gp.find(std::string("'") + front + "' at screen"), std::string::npos) << gp;
  EXPECT_EQ(gp.find("rope.d_dominated"), std::string::npos) << gp;
  EXPECT_EQ(gp.find("w labels"), std::string::npos) << gp;
  const std::string md = pareto_markdown("rope", variant_rows(census, bench, nlohmann::json()));
  EXPECT_NE(md.find("| `rope.d_dominated` | T2048·H32·D128 | 0.21 | 2e-06 | no |"), std::string::npos) << md;
  EXPECT_NE(md.find("| `rope.b` | T2048·H32·D128 | 0.2 | 1e-06 | **yes** |"), std::string::npos) << md;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace pe::reports

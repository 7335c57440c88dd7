// The property suite split across processes (property_parts.h): the listing read as GoogleTest writes it,
// the tests dealt so that every one runs exactly once, and the parts' reports merged into the report of
// one run in the list's order.
#include "property_parts.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace pe::cli {
namespace {

using Names = std::vector<std::string>;

TEST(PropertyParts, ListingGivesFullNamesInOrder) {
  const std::string listing =
      "RapidCheck: RC_PARAMS=\"seed=1\" (set RC_PARAMS to override)\n"
      "ScalingBoundaries.\n"
      "  YarnRamp\n"
      "Registry/RopeProps.  # TypeParam = int\n"
      "  Agrees/rope_hwy_f32  # GetParam() = rope.hwy/f32\n"
      "  Agrees/rope_hwy_f64  # GetParam() = rope.hwy/f64\n"
      "\n"
      "note: a line of no suite\n"
      "  Stray\n";
  EXPECT_EQ(listed_tests(listing),
            (Names{"ScalingBoundaries.YarnRamp", "Registry/RopeProps.Agrees/rope_hwy_f32",
                   "Registry/RopeProps.Agrees/rope_hwy_f64"}));
}

TEST(PropertyParts, DealingRunsEveryTestOnce) {
  const Names tests = {"S.a", "S.b", "S.c", "T.d", "T.e"};
  EXPECT_EQ(deal_tests(tests, 2), (std::vector<Names>{{"S.a", "S.c", "T.e"}, {"S.b", "T.d"}}));
  EXPECT_EQ(deal_tests(tests, 8).size(), 5u);  // no empty part
  EXPECT_EQ(deal_tests({"S.a"}, 2).size(), 1u);
  // A name GoogleTest's filter would read as a pattern or a separator: not split.
  EXPECT_TRUE(deal_tests({"S.a-b", "S.c"}, 2).empty());
  EXPECT_TRUE(deal_tests({"S.a*", "S.c"}, 2).empty());
}

nlohmann::json test(const std::string& name, bool failed) {
  nlohmann::json t = {{"name", name}, {"classname", "S"}, {"time", "1s"}};
  if (failed) t["failures"] = {{{"failure", "x"}}};
  return t;
}

// A GoogleTest report of suites (name, tests) holding these tests.
nlohmann::json report(const std::string& time, const std::string& timestamp,
                      const std::vector<std::pair<std::string, nlohmann::json>>& suites) {
  nlohmann::json r = {{"disabled", 0}, {"errors", 0}, {"time", time}, {"timestamp", timestamp}};
  r["testsuites"] = nlohmann::json::array();
  int tests = 0, failures = 0;
  for (const auto& [name, cases] : suites) {
    int failed = 0;
    for (const nlohmann::json& c : cases) failed += c.contains("failures") ? 1 : 0;
    const int n = static_cast<int>(cases.size());
    r["testsuites"].push_back({{"name", name},
                               {"tests", n},
                               {"failures", failed},
                               {"time", fmt::format("{:.3f}s", 0.5 * n)},
                               {"testsuite", cases}});
    tests += n;
    failures += failed;
  }
  r["tests"] = tests;
  r["failures"] = failures;
  return r;
}

TEST(PropertyParts, MergedReportIsOneRunsInTheListedOrder) {
  const nlohmann::json first = report("3.000s", "2026-12-05T06:00:01Z",
                                      {{"S", nlohmann::json::array({test("a", false), test("c", true)})}});
  const nlohmann::json second = report(
      "5.000s", "2026-12-05T06:00:00Z",
      {{"S", nlohmann::json::array({test("b", false)})}, {"T", nlohmann::json::array({test("d", false)})}});
  const nlohmann::json merged = merge_reports({first, second}, {"S.a", "S.b", "S.c", "T.d"});
  EXPECT_EQ(merged["tests"], 4);
  EXPECT_EQ(merged["failures"], 1);
  EXPECT_EQ(merged["time"], "5.000s");  // side by side: the longer part
  EXPECT_EQ(merged["timestamp"], "2026-12-05T06:00:00Z");
  ASSERT_EQ(merged["testsuites"].size(), 2u);
  const nlohmann::json& s = merged["testsuites"][0];
  EXPECT_EQ(s["name"], "S");
  EXPECT_EQ(s["tests"], 3);
  EXPECT_EQ(s["failures"], 1);
  EXPECT_EQ(s["time"], "1.500s");  // the parts' times added
  ASSERT_EQ(s["testsuite"].size(), 3u);
  EXPECT_EQ(s["testsuite"][0]["name"], "a");
  EXPECT_EQ(s["testsuite"][1]["name"], "b");
  EXPECT_EQ(s["testsuite"][2]["name"], "c");
  EXPECT_TRUE(s["testsuite"][2].contains("failures"));
  EXPECT_EQ(merged["testsuites"][1]["testsuite"][0]["name"], "d");
  // A test the list does not hold is kept, after the listed ones.
  const nlohmann::json partial = merge_reports({first, second}, {"T.d"});
  ASSERT_EQ(partial["testsuites"].size(), 2u);
  EXPECT_EQ(partial["testsuites"][0]["name"], "T");
  EXPECT_EQ(partial["testsuites"][1]["testsuite"].size(), 3u);
}

}  // namespace
}  // namespace pe::cli

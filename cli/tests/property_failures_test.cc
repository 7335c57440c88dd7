// verify's one line per assertion GoogleTest worded itself (property_failures.h): each shape of GoogleTest's
// failure text (as GoogleTest 1.12 writes it into its JSON report) keeps what was compared, both sides, the
// message the test streamed in and its trace.
#include "property_failures.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace pe::cli {
namespace {

// The terminal lines failed_properties gives one failed test holding this one failure.
std::string shown(const std::string& failure) {
  const nlohmann::json gtest = {
      {"testsuites",
       {{{"name", "Suite"},
         {"testsuite",
          {{{"name", "Test"}, {"classname", "Suite"}, {"failures", {{{"failure", failure}}}}}}}}}}};
  const std::string out = failed_properties(gtest, "pe-suite verify", "*", "/tmp/props.log");
  const std::size_t from = out.find("):\n") + 3;  // after "N assertion(s) failed (... the log):"
  return out.substr(from, out.find('\n', from) - from);
}

TEST(PropertyFailures, EqualityKeepsBothSidesAndTheMessage) {
  EXPECT_EQ(
      shown("scaling_props.cc:372\nExpected equality of these values:\n  plan.gain()[j]\n    Which is: 0.5\n"
            "  1.0\npair 3\n"),
      "    plan.gain()[j] = 0.5, expected 1.0: pair 3");
  EXPECT_EQ(shown("t.cc:9\nExpected equality of these values:\n  a\n    Which is: 2\n  b\n    Which is: 3\n"),
            "    a = 2, expected 3");
}

TEST(PropertyFailures, AListThatMustBeEmptyShowsTheList) {
  EXPECT_EQ(
      shown("t.cc:9\nExpected equality of these values:\n  problems(plan)\n    Which is: \"p=1 channel 36: "
            "error 0.000466 > budget 3.29e-07\"\n  \"\"\n\nGoogle Test trace:\nt.cc:5: llama3 s = 0.5\n"),
      "    p=1 channel 36: error 0.000466 > budget 3.29e-07 (llama3 s = 0.5)");
}

TEST(PropertyFailures, ABooleanKeepsItsExpressionAndTheMessage) {
  EXPECT_EQ(
      shown(
          "threads_props.cc:88\nValue of: differing_elements(a, b).empty()\n  Actual: false\nExpected: true\n"
          "rope.hwy: 3 elements differ with a pool\n"),
      "    differing_elements(a, b).empty() is false, expected true: rope.hwy: 3 elements differ with a "
      "pool");
}

TEST(PropertyFailures, AnotherShapeKeepsItsFirstLineAndTheMessage) {
  EXPECT_EQ(shown("t.cc:9\nExpected: (err) <= (budget), actual: 0.2 vs 0.1\nat position 7\n"),
            "    Expected: (err) <= (budget), actual: 0.2 vs 0.1: at position 7");
}

}  // namespace
}  // namespace pe::cli

#include "property_failures.h"

#include <fmt/format.h>

#include <sstream>

namespace pe::cli {
namespace {

// GoogleTest's JSON escapes each byte of a UTF-8 message as its own code point (U+00C2 U+00B1 for "±"):
// every code point below U+0100 back to its byte.
std::string bytes_of(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto b = static_cast<unsigned char>(s[i]);
    if ((b == 0xC2 || b == 0xC3) && i + 1 < s.size() &&
        (static_cast<unsigned char>(s[i + 1]) & 0xC0) == 0x80) {
      out += static_cast<char>(((b & 0x1F) << 6) | (static_cast<unsigned char>(s[++i]) & 0x3F));
    } else {
      out += s[i];
    }
  }
  return out;
}

// The failure's text without GoogleTest's location line and its bare "Failed", indented.
std::string indented(const std::string& failure) {
  std::istringstream in(bytes_of(failure));
  std::string line, out;
  bool first = true;
  while (std::getline(in, line)) {
    if (first || line == "Failed") {
      first = false;
      continue;
    }
    out += "    " + line + "\n";
  }
  return out;
}

}  // namespace

namespace {

// The property suite's own report ("property: ...", the minimal case, its diagnosis), as opposed to an
// assertion GoogleTest words itself.
bool readable(const std::string& indented_failure) { return indented_failure.starts_with("    property: "); }

// An assertion GoogleTest worded itself, on one line: the value it showed (EXPECT_EQ's "Which is: ...",
// EXPECT_TRUE's "Actual: ..."), else its first line; then its SCOPED_TRACE messages. GoogleTest's nine
// lines an assertion (the expression's names, "Expected equality of these values:") stay in the log.
std::string one_line(const std::string& failure) {
  std::istringstream in(bytes_of(failure));
  std::string line, value, first, trace;
  bool in_trace = false;
  std::getline(in, line);  // the location
  while (std::getline(in, line)) {
    const std::size_t text = line.find_first_not_of(' ');
    if (text == std::string::npos || line == "Failed") continue;
    line.erase(0, text);
    if (line == "Google Test trace:") {
      in_trace = true;
    } else if (in_trace) {  // "file:line: message"
      const std::size_t colon = line.find(": ");
      trace += (trace.empty() ? "" : "; ") + (colon == std::string::npos ? line : line.substr(colon + 2));
    } else if (value.empty() && (line.starts_with("Which is: ") || line.starts_with("Actual: "))) {
      value = line.substr(line.find(": ") + 2);
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"')
        value = value.substr(1, value.size() - 2);
    } else if (first.empty()) {
      first = line;
    }
  }
  return (value.empty() ? first : value) + (trace.empty() ? "" : " (" + trace + ")");
}

// Up to this many of a test's raw assertions are shown, a line each; the rest are counted.
constexpr std::size_t kRawShown = 8;

// One failed test: the property suite's reports whole, GoogleTest's own assertions a line each.
std::string test_failures(const nlohmann::json& failures, const std::string& log) {
  std::string reports, raw;
  std::size_t n_raw = 0;
  for (const auto& f : failures) {
    const std::string text = f.value("failure", "");
    if (const std::string mine = indented(text); readable(mine)) {
      reports += mine;
    } else if (++n_raw <= kRawShown) {
      raw += "    " + one_line(text) + "\n";
    }
  }
  if (n_raw == 0) return reports;
  if (n_raw > kRawShown) raw += fmt::format("    ... and {} more\n", n_raw - kRawShown);
  return reports +
         fmt::format("    {} assertion{} failed (GoogleTest's text in the property log, {}):\n", n_raw,
                     n_raw == 1 ? "" : "s", log) +
         raw;
}

}  // namespace

std::string failed_properties(const nlohmann::json& gtest, const std::string& rerun, const std::string& glob,
                              const std::string& log) {
  // The tests with a minimal case first: a reader sees the readable cases before the one-line assertions.
  std::string with_case, without;
  for (const auto& suite : gtest.value("testsuites", nlohmann::json::array())) {
    for (const auto& tc : suite.value("testsuite", nlohmann::json::array())) {
      const auto failures = tc.value("failures", nlohmann::json::array());
      if (failures.empty()) continue;
      const std::string classname = tc.value("classname", suite.value("name", "")),
                        name = tc.value("name", "");
      const std::string body = test_failures(failures, log);
      std::string& out = readable(body) ? with_case : without;
      out += fmt::format("  FAILED {}.{}\n", classname, name) + body;
      // Registry/RopeProps + Agrees.../rope_halfsplit_x_f32: *RopeProps.Agrees...* over its one instance.
      const std::string suite_name = classname.substr(classname.rfind('/') + 1),
                        test = name.substr(0, name.find('/'));
      // A parameter that is not an instance name (a suite of its own kind) keeps the run's selection.
      std::string variant = tc.value("value_param", glob);
      if (variant.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/@") !=
          std::string::npos)
        variant = glob;
      out += fmt::format("    rerun: {} --variant '{}' --property '*{}.{}*'\n", rerun, variant, suite_name,
                         test);
    }
  }
  return with_case + without;
}

std::vector<sweep::PropertyVerdict> property_verdicts(const PropertyRun& run) {
  std::vector<sweep::PropertyVerdict> out;
  for (const auto& suite : run.gtest.value("testsuites", nlohmann::json::array())) {
    for (const auto& tc : suite.value("testsuite", nlohmann::json::array())) {
      sweep::PropertyVerdict v;
      v.test = tc.value("classname", suite.value("name", "")) + "." + tc.value("name", "");
      const auto failures = tc.value("failures", nlohmann::json::array());
      if (!failures.empty()) {
        v.result = "failed";
        // The "failure: ..." line of the property suite's report, else the failure's first line.
        std::istringstream in(indented(failures.front().value("failure", "")));
        for (std::string line; std::getline(in, line);) {
          line.erase(0, line.find_first_not_of(' '));
          if (v.message.empty() || line.starts_with("failure: ")) v.message = line;
          if (line.starts_with("failure: ")) break;
        }
      } else {
        v.result = tc.value("result", "") == "SKIPPED" ? "skipped" : "passed";
      }
      out.push_back(std::move(v));
    }
  }
  // The binary failed (a sanitizer's report at exit, a failure outside any test) with every test passed:
  // the run's own verdict, so that the merged sweep fails as the task did.
  const int failed_tests = run.gtest.value("failures", 0) + run.gtest.value("errors", 0);
  if (run.failures > failed_tests + static_cast<int>(run.crashed.size()))
    out.push_back({"(the property binary)", "failed", "it exited with an error while no test failed"});
  for (const std::string& c : run.crashed) {  // "Suite.Test: signal 11 (...) in plugin ...; last case ..."
    const std::size_t colon = c.find(": ");
    out.push_back({c.substr(0, colon), c.find(": hung: ") != std::string::npos ? "hung" : "crashed",
                   colon == std::string::npos ? "" : c.substr(colon + 2)});
  }
  return out;
}

}  // namespace pe::cli

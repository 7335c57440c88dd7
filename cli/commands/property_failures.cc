#include "property_failures.h"

#include <fmt/format.h>

#include <sstream>
#include <utility>
#include <vector>

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

std::string unquoted(std::string v) {
  return v.size() >= 2 && v.front() == '"' && v.back() == '"' ? v.substr(1, v.size() - 2) : v;
}

// An assertion GoogleTest worded itself, on one line, its parts in the order a reader needs them: what was
// compared (EXPECT_EQ's operands, each with its value where GoogleTest showed one: "gain[j] = 0.5, expected
// 1.0"; EXPECT_TRUE's "Value of: x" with its actual and expected; or the first line of another shape), then
// the message the test streamed in, then its SCOPED_TRACE messages. EXPECT_EQ(list, "") (a list of
// problems that must be empty) shows the list alone. GoogleTest's full text stays in the log.
std::string one_line(const std::string& failure) {
  std::istringstream in(bytes_of(failure));
  std::string line, compared, message, trace;
  std::vector<std::pair<std::string, std::string>> operands;  // EXPECT_EQ's (expression, value)
  bool equality = false, in_trace = false;
  const auto join = [](std::string& to, const std::string& part) { to += (to.empty() ? "" : "; ") + part; };
  std::getline(in, line);  // the location
  while (std::getline(in, line)) {
    const std::size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos || line == "Failed") continue;
    const std::string text = line.substr(indent);
    if (text == "Google Test trace:") {
      in_trace = true;
    } else if (in_trace) {  // "file:line: message"
      const std::size_t colon = text.find(": ");
      join(trace, colon == std::string::npos ? text : text.substr(colon + 2));
    } else if (text == "Expected equality of these values:") {
      equality = true;
    } else if (equality && indent == 2) {
      operands.emplace_back(text, "");
    } else if (equality && indent == 4 && text.starts_with("Which is: ") && !operands.empty()) {
      operands.back().second = unquoted(text.substr(10));
    } else if (text.starts_with("Value of: ") && compared.empty()) {
      compared = text.substr(10);
    } else if (text.starts_with("Actual: ") && !compared.empty()) {
      compared += " is " + unquoted(text.substr(8));
    } else if (text.starts_with("Expected: ") && !compared.empty()) {
      compared += ", expected " + text.substr(10);
    } else if (compared.empty() && operands.empty()) {
      compared = text;  // another assertion's own first line ("Expected: (a) <= (b), actual: 1 vs 2")
    } else {
      join(message, text);
    }
  }
  if (operands.size() == 2 && operands[1].first == "\"\"") {
    compared = operands[0].second.empty() ? operands[0].first : operands[0].second;
  } else if (operands.size() == 2) {
    const auto shown = [](const std::pair<std::string, std::string>& o) {
      return o.second.empty() ? o.first : o.first + " = " + o.second;
    };
    compared = shown(operands[0]) + ", expected " +
               (operands[1].second.empty() ? operands[1].first : operands[1].second);
  }
  return compared + (message.empty() ? "" : ": " + message) + (trace.empty() ? "" : " (" + trace + ")");
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

#include "junit.h"

#include <fmt/format.h>

#include "pe/reports/summary.h"

namespace pe::cli {
namespace {

std::string escape(const std::string& s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        // XML 1.0 has no control characters besides tab and newlines.
        if (static_cast<unsigned char>(c) >= 0x20 || c == '\n' || c == '\t') out += c;
    }
  }
  return out;
}

double seconds(const nlohmann::json& t) {
  if (!t.is_string()) return 0;
  try {
    return std::stod(t.get<std::string>());  // GoogleTest writes "0.123s"
  } catch (const std::exception&) {
    return 0;
  }
}

}  // namespace

std::string junit_xml(const nlohmann::json& gtest, const nlohmann::json& census,
                      const std::string& rc_params) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"pe-suite verify\">\n";
  if (gtest.is_object()) {
    for (const auto& suite : gtest.value("testsuites", nlohmann::json::array())) {
      const auto cases = suite.value("testsuite", nlohmann::json::array());
      out += fmt::format("  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">\n",
                         escape(suite.value("name", "")), cases.size(), suite.value("failures", 0));
      out += fmt::format("    <properties><property name=\"RC_PARAMS\" value=\"{}\"/></properties>\n",
                         escape(rc_params));
      for (const auto& tc : cases) {
        out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"",
                           escape(suite.value("name", "")), escape(tc.value("name", "")),
                           seconds(tc.value("time", nlohmann::json())));
        const auto failures = tc.value("failures", nlohmann::json::array());
        if (failures.empty()) {
          out += "/>\n";
          continue;
        }
        out += ">\n";
        for (const auto& f : failures) {
          const std::string text = f.value("failure", "");
          out += fmt::format("      <failure message=\"{}\">{}</failure>\n",
                             escape(text.substr(0, text.find('\n'))), escape(text));
        }
        out += "    </testcase>\n";
      }
      out += "  </testsuite>\n";
    }
  }
  std::size_t failed = 0;
  for (const auto& inst : census) failed += inst.value("within_contract", false) ? 0 : 1;
  out += fmt::format("  <testsuite name=\"census\" tests=\"{}\" failures=\"{}\">\n", census.size(), failed);
  for (const auto& inst : census) {
    out += fmt::format("    <testcase classname=\"census\" name=\"{}\"", escape(inst.value("instance", "")));
    if (inst.value("within_contract", false)) {
      out += "/>\n";
      continue;
    }
    std::string detail = reports::run_failure(inst);
    if (!detail.empty()) detail += "\n";
    for (const auto& b : inst["bands"]) {
      if (b.value("verdict", "") == "pass") continue;
      detail += fmt::format(
          "positions [{}, {}]: |err| {:.3g} at position {} channel {} is {:.3g}x the budget\n",
          b["lo"].get<std::int64_t>(), b["hi"].get<std::int64_t>(), b["max_abs"]["value"].get<double>(),
          b["max_budget_ratio"]["position"].get<std::int64_t>(),
          b["max_budget_ratio"]["channel"].get<std::int64_t>(), b["max_budget_ratio"]["value"].get<double>());
    }
    out += fmt::format(">\n      <failure message=\"outside its contract\">{}</failure>\n    </testcase>\n",
                       escape(detail));
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace pe::cli

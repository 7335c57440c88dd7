#include "property_parts.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace pe::cli {

namespace {

// GoogleTest's "12.345s" as 12.345; 0 for anything else.
double seconds_of(const nlohmann::json& time) {
  if (!time.is_string()) return 0;
  try {
    return std::stod(time.get<std::string>());
  } catch (const std::exception&) {
    return 0;
  }
}

std::string seconds_text(double s) { return fmt::format("{:.3f}s", s); }

constexpr const char* kCounts[] = {"tests", "failures", "disabled", "errors"};

// Adds `from`'s counts and time to `into`.
void add_counts(nlohmann::json& into, const nlohmann::json& from) {
  if (into.is_null()) into = nlohmann::json::object();
  for (const char* key : kCounts) into[key] = into.value(key, 0) + from.value(key, 0);
  into["time"] = seconds_text(seconds_of(into.value("time", nlohmann::json())) +
                              seconds_of(from.value("time", nlohmann::json())));
}

// The array under `key`, by reference (merge_reports keeps pointers into it); an empty one when absent.
const nlohmann::json& items(const nlohmann::json& object, const char* key) {
  static const nlohmann::json none = nlohmann::json::array();
  const auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : none;
}

}  // namespace

std::vector<std::string> listed_tests(const std::string& listing) {
  std::vector<std::string> out;
  std::istringstream in(listing);
  std::string suite;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    if (!line.starts_with(' ')) {
      const std::string token = line.substr(0, line.find_first_of(" \t"));
      suite = token.ends_with('.') ? token : "";
    } else if (line.starts_with("  ") && !suite.empty()) {
      const std::string name = line.substr(2, line.find_first_of(" \t", 2) - 2);
      if (!name.empty()) out.push_back(suite + name);
    }
  }
  return out;
}

std::vector<std::vector<std::string>> deal_tests(const std::vector<std::string>& tests, std::size_t parts) {
  const bool exact = std::none_of(tests.begin(), tests.end(), [](const std::string& t) {
    return t.find_first_of(":-*?") != std::string::npos;
  });
  if (!exact || parts == 0) return {};
  std::vector<std::vector<std::string>> out(std::min(parts, tests.size()));
  for (std::size_t k = 0; k < tests.size(); ++k) out[k % out.size()].push_back(tests[k]);
  return out;
}

nlohmann::json merge_reports(const std::vector<nlohmann::json>& parts,
                             const std::vector<std::string>& order) {
  nlohmann::json out = {{"name", "AllTests"}, {"testsuites", nlohmann::json::array()}};
  for (const char* key : kCounts) out[key] = 0;
  double longest = 0;
  std::string first_start;
  std::map<std::string, nlohmann::json> suite_totals;  // by suite name: counts and time over the parts
  std::map<std::string, std::pair<const nlohmann::json*, const nlohmann::json*>> found;  // suite, test
  const std::set<std::string> listed(order.begin(), order.end());
  std::vector<std::string> unlisted;
  for (const nlohmann::json& part : parts) {
    for (const char* key : kCounts) out[key] = out.value(key, 0) + part.value(key, 0);
    longest = std::max(longest, seconds_of(part.value("time", nlohmann::json())));
    const std::string start = part.value("timestamp", "");
    if (first_start.empty() || (!start.empty() && start < first_start)) first_start = start;
    for (const nlohmann::json& suite : items(part, "testsuites")) {
      const std::string name = suite.value("name", "");
      add_counts(suite_totals[name], suite);
      for (const nlohmann::json& test : items(suite, "testsuite")) {
        const std::string full = name + "." + test.value("name", "");
        found[full] = {&suite, &test};
        if (!listed.contains(full)) unlisted.push_back(full);
      }
    }
  }
  std::vector<std::string> sequence;
  for (const std::string& name : order) {
    if (found.contains(name)) sequence.push_back(name);
  }
  sequence.insert(sequence.end(), unlisted.begin(), unlisted.end());
  nlohmann::json& suites = out["testsuites"];
  for (const std::string& name : sequence) {
    const auto& [suite, test] = found.at(name);
    const std::string suite_name = suite->value("name", "");
    if (suites.empty() || suites.back().value("name", "") != suite_name) {
      nlohmann::json merged = *suite;
      merged.update(suite_totals[suite_name]);
      merged["testsuite"] = nlohmann::json::array();
      suites.push_back(std::move(merged));
    }
    suites.back()["testsuite"].push_back(*test);
  }
  out["time"] = seconds_text(longest);
  if (!first_start.empty()) out["timestamp"] = first_start;
  return out;
}

}  // namespace pe::cli

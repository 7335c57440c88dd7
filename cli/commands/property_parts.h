// The property suite split across processes, one per core: the selected tests listed once and dealt
// out in turn, each part's GoogleTest report merged back in the list's order, so that a split run
// reports as one run would.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace pe::cli {

// The full names ("Suite.Test") in GoogleTest's --gtest_list_tests output, in its order; lines that are
// neither a suite ("Suite.", maybe a "# TypeParam" comment) nor a test under one are skipped.
std::vector<std::string> listed_tests(const std::string& listing);

// `tests` dealt into at most `parts` lists in turn (test k to list k mod parts): neighbours in the list
// are one property over similar instances, so the lists take about as long. No list is empty; none when
// a name holds a character that a --gtest_filter reads as a pattern or a separator.
std::vector<std::vector<std::string>> deal_tests(const std::vector<std::string>& tests, std::size_t parts);

// The GoogleTest JSON reports of disjoint parts of one run as one report: the counts added, the suites
// and their tests in `order` (full names; any test not in it after them), each suite's time the sum of
// its parts', the run's time the longest part's (they ran side by side).
nlohmann::json merge_reports(const std::vector<nlohmann::json>& parts, const std::vector<std::string>& order);

}  // namespace pe::cli

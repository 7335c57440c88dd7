// Regression comparison of two Google Benchmark JSON runs. Per benchmark: the change of the median
// real time, a two-sided Mann-Whitney U test on the repetitions (normal approximation with tie and
// continuity corrections, Boost.Math's normal distribution), and Benjamini-Hochberg adjusted
// p-values over all compared benchmarks, so that hundreds of benchmarks on a noisy machine do not
// produce false alarms at the nominal rate. A regression needs both: the median slower by more than
// the threshold and the adjusted p below alpha; where both runs recorded the machine's pace at each
// repetition (pe_bench's `pace_ns`, bench/pace.h), the same must hold for the times divided by it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "pe/harness/enum_json.h"

namespace pe::reports {

struct CompareOptions {
  double threshold = 0.05;  // relative change of the median
  double alpha = 0.05;      // false discovery rate
};

enum class Verdict { Same, Regression, Improvement, Error, Missing, Machine };
std::string_view to_string(Verdict v) noexcept;

}  // namespace pe::reports

template <>
struct pe::EnumNames<pe::reports::Verdict> {
  using V = pe::reports::Verdict;
  static constexpr EnumRow<V> rows[] = {
      {V::Same, "same"},   {V::Regression, "REGRESSION"}, {V::Improvement, "improvement"},
      {V::Error, "ERROR"}, {V::Missing, "missing"},       {V::Machine, "machine"}};
};

namespace pe::reports {

struct Comparison {
  std::string name;
  std::size_t n_base = 0, n_new = 0;
  double base_median = 0, new_median = 0, change = 0;  // change: new/base - 1
  double p = 1, p_adjusted = 1;
  bool paced = false;  // both runs recorded the pace of every repetition
  double paced_change = 0, paced_p = 1, paced_p_adjusted = 1;  // of real_time / pace_ns
  Verdict verdict = Verdict::Same;
  std::string note;
};

// Two-sided p-value of the Mann-Whitney U test of samples a and b.
double mann_whitney_p(const std::vector<double>& a, const std::vector<double>& b);

// Benjamini-Hochberg adjusted p-values, in the order given.
std::vector<double> benjamini_hochberg(const std::vector<double>& p);

std::vector<Comparison> compare_runs(const nlohmann::json& base, const nlohmann::json& next,
                                     const CompareOptions& options);
bool has_regression(const std::vector<Comparison>& rows);

// One row: every field by name, the verdict as its word; reading takes absent fields as their defaults and
// null numbers (NaN, infinities) as NaN.
void to_json(nlohmann::json& j, const Comparison& c);
void from_json(const nlohmann::json& j, Comparison& c);
// {"threshold", "alpha", "rows", "regression"}.
nlohmann::json to_json(const std::vector<Comparison>& rows, const CompareOptions& options);
// The rows of to_json's output (the report reads a comparison back with it).
std::vector<Comparison> rows_from_json(const nlohmann::json& compared);
// Counts, then every regression, improvement and error (all rows with `all`).
std::string compare_markdown(const std::vector<Comparison>& rows, const CompareOptions& options, bool all);

}  // namespace pe::reports

// Errors of an outside implementation's output, per position band (the census's edges), with the
// worst elements kept for the report: what `pe-suite check` prints and bases its verdict on.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pe::cli {

struct ElementError {
  std::int64_t row = 0, position = 0, channel = 0;
  double value = 0, exact = 0, error = 0, budget = 0;
};

class ErrorBands {
 public:
  explicit ErrorBands(std::size_t keep_worst = 10);

  void add(const ElementError& e);
  bool pass() const { return violations_ == 0; }
  std::size_t violations() const { return violations_; }
  std::size_t count() const { return count_; }
  double max_error() const;

  // Per band: elements, max and p99 |error|, the budget at the max, worst error/budget, verdict;
  // then the worst elements by error/budget.
  std::string table() const;

 private:
  struct Band {
    std::int64_t lo = 0, hi = 0;
    std::vector<double> errors;
    double max = 0, max_ratio = 0, budget_at_max = 0;
    std::size_t violations = 0;
  };
  std::vector<Band> bands_;
  std::vector<ElementError> worst_;
  std::size_t keep_, count_ = 0, violations_ = 0;
};

}  // namespace pe::cli

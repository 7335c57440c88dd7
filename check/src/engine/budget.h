// The budget a request's data is held to (check.h's BudgetOptions), with the words that say where it came
// from, for the report's "budget:" line.
#pragma once

#include <string>

#include "pe/check/check.h"
#include "pe/harness/measure.h"

namespace pe::check {

struct Budget : harness::Budget {
  std::string text;
};

// BadRequest naming contract or max_abs for both given, a negative bound, an unknown contract, one of
// another family or one that promises nothing for the data's type; naming dtype when no variant of the
// family computes that type.
Budget budget_for(const BudgetOptions& o, Family family, DType dtype, const Names& names);
// The largest position every contract of the budget promises (Measurement::promise), -1 under a flat bound.
std::int64_t promised_up_to(const Budget& budget);

}  // namespace pe::check

// The text `pe-suite check` prints for a measurement: per position band the elements, max and p99
// |error|, max and p99 ULP, the budget at the max, the worst error/budget and a verdict; then the
// worst elements.
#pragma once

#include <string>

#include "pe/harness/measure.h"
#include "pe/types.h"

namespace pe::check {

// ALiBi's elements are (query, head, distance, key): its columns say so.
std::string band_table(const harness::Measurement& m, Family family = Family::Rope);

}  // namespace pe::check

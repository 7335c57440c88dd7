// The pieces of the family rows that live in files of their own.
#pragma once

#include <cstdint>
#include <memory>

#include "pe/harness/exhaustive_table.h"
#include "pe/harness/instance.h"

namespace pe::harness::detail {

bool rope_exhaustive_applies(const Instance& in);
std::unique_ptr<ExhaustiveTable> rope_exhaustive_table(const Instance& in, std::int64_t dim, double base,
                                                       std::int64_t max_position);
bool sinusoidal_exhaustive_applies(const Instance& in);
std::unique_ptr<ExhaustiveTable> sinusoidal_exhaustive_table(const Instance& in, std::int64_t dim,
                                                             double base, std::int64_t max_position);

}  // namespace pe::harness::detail

// The parts of a report every family's check writes alike.
#pragma once

#include <string>
#include <vector>

#include "budget.h"
#include "contract_class.h"
#include "pe/check/check.h"

namespace pe::check {

// The budget line, the band table, the verdict and (with a tally) the contracts met and missed.
void report_verdict(const harness::Measurement& bands, const Budget& budget, Report& out,
                    const ContractTally* tally = nullptr);

// BadRequest unless `b` has `a`'s shape and type (`a_parameter` is a's canonical name).
void require_same(const DataView& b, const DataView& a, std::string_view a_parameter, const Names& names);

std::string shape_words(const std::vector<std::size_t>& shape);

}  // namespace pe::check

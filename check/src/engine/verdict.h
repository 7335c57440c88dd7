// The parts of a report every family's check writes alike.
#pragma once

#include <string>
#include <vector>

#include "engine/budget.h"
#include "engine/contract_class.h"
#include "pe/check/check.h"

namespace pe::check {

// What the undecidable bands' words read: the family's contracts to name one that decides, the RoPE
// plan their budgets read (null for tables), and the front end's names (the contract's flag).
struct Judging {
  Family family;
  const RopePlan* plan = nullptr;
  const Names* names = nullptr;
};

// The budget line, the band table, the verdict and (with a tally) the contracts met and missed. A band
// whose every element's budget reaches the largest error an output could have is "undecidable": named
// with the contracts' largest position and a contract that decides there (`judging`), and the verdict is
// not PASS.
void report_verdict(const harness::Measurement& bands, const Budget& budget, Report& out,
                    const ContractTally* tally = nullptr, const Judging* judging = nullptr);

// The family's contracts for `dtype` whose budget at element `e` stays below its reach (they can fail
// there), loosest first.
std::vector<const Variant*> deciding_contracts(Family family, DType dtype, const RopePlan* plan,
                                               const harness::ElementRecord& e);

// BadRequest unless `b` has `a`'s shape and type (`a_parameter` is a's canonical name).
void require_same(const DataView& b, const DataView& a, std::string_view a_parameter, const Names& names);

std::string shape_words(const std::vector<std::size_t>& shape);

}  // namespace pe::check

// ContractTally::add for rows of table elements (ALiBi's bias: |φ| = 1, no gain, no extra term), each
// element passed on only where it could raise a contract's worst ratio, so that a large table costs a
// compare per element: the same worst ratios as add() of every element.
#pragma once

#include <vector>

#include "engine/contract_class.h"
#include "pe/harness/measure.h"

namespace pe::check {

class TallyScreen {
 public:
  // `tally` receives nothing else while the screen feeds it (its worsts are mirrored here).
  TallyScreen(ContractTally& tally, DType dtype);
  void add_row(const harness::RopeRow& row);
  // One element, as ContractTally::add (measure_alibi_screened's loud keys).
  void add(const harness::ElementRecord& e);
  // A table element of `pair` (|φ| = 1, no gain, no extra) whose rounded |y − exact| <= bar·|exact| (rounded
  // too) raises no contract's worst: line(pair)·(1 − 2^-45). 0 where a contract's budget is not of that form.
  double bar(std::size_t pair) { return line(pair) * (1 - 0x1p-45); }

 private:
  // min over contracts of worst·relative at `pair` (the budgets' slope in |exact|), the line below which no
  // element of that pair raises a worst.
  double line(std::size_t pair);
  // line() as the worsts stand, without lines_: the screens ask once per run of keys, the worsts change
  // only in add(), which empties lines_.
  double line_now(std::size_t pair);
  std::vector<double> lines_;  // per pair, line() since the last change (NaN: not asked)
  // Per pair, each contract's relative term (NaN: not of the form relative·scale + floor), made once.
  const std::vector<double>& relative(std::size_t pair);
  std::vector<std::vector<double>> relative_;

  ContractTally& tally_;
  std::vector<const Contract*> contracts_;  // the tally's, in its order
  std::vector<double> worst_;               // its worst ratios, computed as it does
  DType dtype_;
};

}  // namespace pe::check

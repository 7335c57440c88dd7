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

 private:
  void add(const harness::ElementRecord& e);
  // min over contracts of worst·relative at `pair` (the budgets' slope in |exact|), the line below which no
  // element of that pair raises a worst.
  double line(std::size_t pair) const;

  ContractTally& tally_;
  std::vector<const Contract*> contracts_;  // the tally's, in its order
  std::vector<double> worst_;               // its worst ratios, computed as it does
  DType dtype_;
};

}  // namespace pe::check

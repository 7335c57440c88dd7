// check's contract tally (check/src/engine/contract_class.h, which the harness's tests do not link) as the
// screened table passes feed it: each contract's worst ratio, from the elements measured exactly, and the
// line below which no worst can rise (TableSinks::line).
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "pe/harness/measure.h"
#include "pe/harness/sinusoidal_screen.h"

namespace pe::harness {

struct TallyStandIn {
  std::vector<const Contract*> contracts;
  DType dtype = DType::F32;
  std::vector<double> worst;
  std::optional<TableBudgetBounds> bounds;
  TallyStandIn() = default;
  TallyStandIn(std::vector<const Contract*> c, DType d)
      : contracts(std::move(c)), dtype(d), worst(contracts.size()) {}
  void add(const ElementRecord& e) {
    for (std::size_t k = 0; k < contracts.size(); ++k) {
      const double r =
          ElementRecord::ratio_of(e.abs_error, Budget{contracts[k], dtype}(nullptr, e.abs_phi, e.pair, 1));
      if (!(r <= worst[k])) worst[k] = r;
    }
  }
  void line(std::span<const ref::dd::DD> omegas, std::int64_t max_position, std::span<const double> phi_lo,
            double* out) {
    if (!bounds) bounds.emplace(contracts, omegas, max_position, dtype, 0.0);
    for (std::size_t j = 0; j < phi_lo.size(); ++j) {
      out[j] = INFINITY;
      for (std::size_t k = 0; k < contracts.size(); ++k) {
        if (std::isnan(worst[k])) continue;
        const double bar = worst[k] * bounds->lower(k, j, phi_lo[j]);
        out[j] = std::min(out[j], bar >= 0 ? bar * (1 - 0x1p-45) : 0.0);
      }
    }
  }
};

}  // namespace pe::harness

#include "rotation_allowance.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "pe/contract.h"
#include "pe/variant.h"

namespace pe::check {

std::vector<double> rotation_allowance(const RopePlan& plan, const RopeBatch& batch,
                                       std::span<const double> x, DType rotation) {
  if (rotation != DType::BF16 && rotation != DType::F16) rotation = DType::F32;
  const std::string name = std::string("rope.torch_") + std::string(to_string(rotation));
  const Variant* v = find_variant(name);
  if (v == nullptr) throw std::logic_error("the registry has no " + name);
  const RopeBudgetTerms terms(v->contract(), plan, rotation);
  std::vector<double> eps(x.size(), 0.0);
  for (std::size_t t = 0; t < batch.tokens(); ++t)
    for (std::size_t h = 0; h < batch.heads; ++h) {
      const std::size_t row = batch.row(t, h);
      for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
        const auto [i0, i1] = plan.input_channels(j);
        const auto [o0, o1] = plan.output_channels(j);
        const double phi =
            std::fabs(static_cast<double>(batch.position(t, plan.axis_of_pair(j))) * plan.inv_freq()[j]);
        eps[row + o0] = eps[row + o1] =
            terms.slope(phi, j) * (std::fabs(x[row + i0]) + std::fabs(x[row + i1])) + terms.floor();
      }
    }
  return eps;
}

}  // namespace pe::check

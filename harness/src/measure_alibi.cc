#include "pe/harness/measure_alibi.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "pe/ref/alibi.h"

namespace pe::harness {
namespace {

void record(const ref::Alibi& reference, std::size_t h, const ref::Enclosure& exact, double y,
            const Budget& budget, ElementRecord& e, const Sink& sink) {
  e.head = static_cast<std::int64_t>(h);
  e.dim = static_cast<std::int64_t>(reference.plan().n_heads());
  e.base = reference.plan().max_bias();
  e.y = y;
  e.exact = exact.value.convert_to<double>();
  const double magnitude = std::fabs(e.exact);
  // The budget is relative to the bias: |φ| = 1, scale = |m·s| (pe/contract.h).
  e.abs_phi = 1.0;
  e.pair = static_cast<std::size_t>(reference.plan().power(h));
  // A bias of exactly 0 (s = 0: the diagonal) has no relative budget: it is held to its head's smallest
  // nonzero bias's, at s = 1 (|m_h|), where a relative floor of the denormals alone (4e-45 in float32)
  // would turn any error into a ratio of 1e40.
  e.scale = magnitude > 0 ? magnitude : std::fabs(reference.slope_enclosure(h).value.convert_to<double>());
  e.budget = budget(nullptr, 1.0, e.pair, e.scale);
  // A bias of that magnitude and the wrong sign is 2·|bias| off; a bias of exactly 0 (the diagonal) shows
  // no slope and is never counted as undecidable.
  e.reach = magnitude > 0 ? 2 * magnitude : INFINITY;
  // A bias at the edge of the type's range (float16 from 65520 on) rounds to infinity: right is
  // the rounding of any value within the budget (the largest finite value or the infinity).
  if (std::isinf(y) || std::isinf(ref::round_to(exact.value, budget.dtype))) {
    const double r = e.budget / std::max(magnitude, 1e-300);
    const bool within = y == ref::round_to(ref::Real(exact.value * (1 - r)), budget.dtype) ||
                        y == ref::round_to(ref::Real(exact.value * (1 + r)), budget.dtype);
    e.abs_error = e.ulp = within ? 0.0 : INFINITY;
  } else {
    e.abs_error = ref::abs_error(y, exact.value);
    e.ulp = e.abs_error / ref::ulp_of(exact.value, budget.dtype);
  }
  sink(e);
}

}  // namespace

void measure_alibi(const AlibiParams& params, std::span<const std::int64_t> queries,
                   std::span<const std::int64_t> keys, Values y, const Budget& budget, const Sink& sink,
                   const Sample& sample) {
  const ref::Alibi reference(params);
  const std::size_t Q = queries.size(), K = keys.size();
  const std::vector<std::size_t> rows = chosen_or_all(sample.rows, Q),
                                 columns = chosen_or_all(sample.pairs, K);
  for (std::size_t h = 0; h < reference.plan().n_heads(); ++h) {
    for (std::size_t q : rows) {
      for (std::size_t k : columns) {
        ElementRecord e{.row = static_cast<std::int64_t>(q),
                        .position = std::llabs(reference.plan().multiplier(queries[q], keys[k])),
                        .channel = static_cast<std::int64_t>(k)};
        record(reference, h, reference.bias(h, queries[q], keys[k]), y[(h * Q + q) * K + k], budget, e, sink);
      }
    }
  }
}

void measure_alibi_slopes(const AlibiParams& params, Values y, const Budget& budget, const Sink& sink) {
  const ref::Alibi reference(params);
  for (std::size_t h = 0; h < reference.plan().n_heads(); ++h) {
    ElementRecord e{.position = 1, .channel = static_cast<std::int64_t>(h)};
    record(reference, h, reference.slope_enclosure(h), y[h], budget, e, sink);
  }
}

}  // namespace pe::harness

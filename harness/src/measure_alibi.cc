#include "pe/harness/measure_alibi.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <utility>
#include <vector>

#include "pe/harness/alibi_rows_vector.h"
#include "pe/ref/alibi.h"

namespace pe::harness {
namespace {

// The element's comparison (e's row, position and channel given): the MPFR path every other one equals.
void compare(const ref::Alibi& reference, std::size_t h, const ref::Enclosure& exact, double y,
             const Budget& budget, ElementRecord& e) {
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
}

void record(const ref::Alibi& reference, std::size_t h, const ref::Enclosure& exact, double y,
            const Budget& budget, ElementRecord& e, const Sink& sink) {
  compare(reference, h, exact, y, budget, e);
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

namespace {

// A head's constants for the vectors (AlibiLanes): its slope as two doubles and its budget's terms, or
// nothing (`vectors` false) where the vectors cannot equal the MPFR path: not float32, no target, or a
// member's budget that is not RN(RN(relative·scale) + floor) with the terms read back here.
struct HeadLanes {
  AlibiLanes lanes;
  std::vector<double> relative, floor;
  bool vectors = false;

  HeadLanes(const ref::Alibi& reference, std::size_t h, const Budget& budget) {
    const ref::Real& m = reference.slope(h);
    lanes.slope_hi = m.convert_to<double>();
    lanes.slope_lo = ref::Real(m - lanes.slope_hi).convert_to<double>();
    // A power of two: hi·s is exact, and so is the reference's product.
    int e = 0;
    lanes.exact_slope = lanes.slope_lo == 0 && std::frexp(lanes.slope_hi, &e) == 0.5;
    const auto pair = static_cast<std::size_t>(reference.plan().power(h));
    bool fits = budget.dtype == DType::F32 && !alibi_targets().empty();
    for (const Contract* c : budget.members()) {
      // element_budget is relative·scale + floor: at scale 2^600 the floor is far below the last bit.
      relative.push_back(element_budget(*c, budget.dtype, 1.0, pair, 0x1p600) * 0x1p-600);
      floor.push_back(element_budget(*c, budget.dtype, 1.0, pair, 0.0));
      for (const double scale : {1.0, 3.7, 1e6, lanes.slope_hi})
        fits = fits &&
               element_budget(*c, budget.dtype, 1.0, pair, scale) == relative.back() * scale + floor.back();
    }
    lanes.relative = relative.data();
    lanes.floor = floor.data();
    lanes.members = relative.size();
    lanes.extra = budget.extra;
    lanes.max_abs = budget.max_abs;
    vectors = fits;
  }
};

// A run's row, whose columns constant over a head (pair, |φ|, gain, extra, unchanged) stay written across
// runs: `constant` leading elements hold them (a shrinking resize drops the rest, a growing one writes
// zeros).
struct RunRow {
  RopeRow row;
  std::size_t constant = 0;

  void start(std::size_t h) {
    row.head = static_cast<std::int64_t>(h);
    constant = 0;
  }
  void resize(std::size_t n, std::size_t pair) {
    if (n < row.size()) constant = std::min(constant, n);
    row.resize(n);
    for (std::size_t i = constant; i < n; ++i) {
      row.pair[i] = pair;
      row.abs_phi[i] = row.gain[i] = 1;
      row.gain_extra[i] = 0;
      row.unchanged[i] = 0;
    }
    constant = std::max(constant, n);
  }
};

// The (h, q) row's keys [k0, k1) into `out`, its values from the vectors and MPFR where they are undecided
// (`s`, `position`: the row's multipliers).
void fill_run(const ref::Alibi& reference, HeadLanes& head, std::int64_t query,
              std::span<const std::int64_t> keys, const float* y, const std::vector<double>& s,
              const std::vector<std::int64_t>& position, std::size_t k0, std::size_t k1, bool vectors,
              const Budget& budget, RunRow& out) {
  const std::size_t n = k1 - k0;
  RopeRow& row = out.row;
  const auto h = static_cast<std::size_t>(row.head);
  out.resize(n, static_cast<std::size_t>(reference.plan().power(h)));
  std::copy(position.begin() + static_cast<std::ptrdiff_t>(k0),
            position.begin() + static_cast<std::ptrdiff_t>(k1), row.position.begin());
  for (std::size_t i = 0; i < n; ++i) row.channel[i] = static_cast<std::int64_t>(k0 + i);
  std::size_t undecided = n;
  if (vectors) {
    AlibiLanes& l = head.lanes;
    l.y = y + k0;
    l.s = s.data() + k0;
    l.y_out = row.y.data(), l.exact = row.exact.data(), l.abs_error = row.abs_error.data();
    l.ulp = row.ulp.data(), l.budget = row.budget.data(), l.scale = row.scale.data(),
    l.reach = row.reach.data();
    undecided = alibi_lanes(l, n);
  }
  for (std::size_t i = 0; i < n && undecided > 0; ++i) {
    if (vectors && !(row.abs_error[i] < 0)) continue;
    --undecided;
    ElementRecord e{.row = row.row, .position = row.position[i], .channel = row.channel[i]};
    compare(reference, h, reference.bias(h, query, keys[k0 + i]), y[k0 + i], budget, e);
    row.y[i] = e.y, row.exact[i] = e.exact, row.abs_error[i] = e.abs_error, row.ulp[i] = e.ulp;
    row.budget[i] = e.budget, row.scale[i] = e.scale, row.reach[i] = e.reach;
  }
}

// The row's multipliers s as doubles and |s|, one loop per form; false where one is beyond 2^53.
bool multipliers(const AlibiPlan& plan, std::int64_t query, std::span<const std::int64_t> keys,
                 std::vector<double>& s, std::vector<std::int64_t>& position) {
  std::int64_t largest = 0;
  const auto each = [&](auto multiplier) {
    for (std::size_t k = 0; k < keys.size(); ++k) {
      const std::int64_t m = multiplier(keys[k]);
      const std::int64_t a = m < 0 ? -m : m;
      s[k] = static_cast<double>(m);
      position[k] = a;
      largest = a > largest ? a : largest;
    }
  };
  switch (plan.form()) {
    case AlibiForm::Causal:
      each([&](std::int64_t j) { return j - query; });
      break;
    case AlibiForm::Symmetric:
      each([&](std::int64_t j) { return query > j ? j - query : query - j; });
      break;
    case AlibiForm::Bloom:
      each([&](std::int64_t j) { return j; });
      break;
  }
  return largest <= (std::int64_t{1} << 53);
}

// The band (band_edges()) position p lies in, as [lo, hi].
std::pair<std::int64_t, std::int64_t> band_around(std::int64_t p) {
  const auto edges = band_edges();
  std::size_t b = 0;
  while (b + 2 < edges.size() && p >= edges[b + 1]) ++b;
  return {edges[b], b + 2 < edges.size() ? edges[b + 1] - 1 : std::numeric_limits<std::int64_t>::max()};
}

}  // namespace

void measure_alibi_rows(const AlibiParams& params, std::span<const std::int64_t> queries,
                        std::span<const std::int64_t> keys, std::span<const float> y, const Budget& budget,
                        const RowSink& sink, bool unmasked_only) {
  const ref::Alibi reference(params);
  const AlibiPlan& plan = reference.plan();
  const std::size_t Q = queries.size(), K = keys.size();
  RunRow run;
  RopeRow& row = run.row;
  row.dim = static_cast<std::int64_t>(plan.n_heads());
  row.base = plan.max_bias();
  std::vector<double> s(K);
  std::vector<std::int64_t> position(K);
  for (std::size_t h = 0; h < plan.n_heads(); ++h) {
    HeadLanes head(reference, h, budget);
    run.start(h);
    for (std::size_t q = 0; q < Q; ++q) {
      const bool exact_s = multipliers(plan, queries[q], keys, s, position);
      row.row = static_cast<std::int64_t>(q);
      const float* yq = y.data() + (h * Q + q) * K;
      const auto masked = [&](std::size_t k) { return unmasked_only && keys[k] > queries[q]; };
      // Runs of unmasked keys within one band: Measurement::add_row takes each whole.
      for (std::size_t k = 0; k < K;) {
        if (masked(k)) {
          ++k;
          continue;
        }
        const auto [lo, hi] = band_around(position[k]);
        std::size_t end = k + 1;
        while (end < K && !masked(end) && position[end] >= lo && position[end] <= hi) ++end;
        fill_run(reference, head, queries[q], keys, yq, s, position, k, end, head.vectors && exact_s, budget,
                 run);
        sink(row);
        k = end;
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

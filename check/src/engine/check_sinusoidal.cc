// An outside sinusoidal table [positions, dim] against the exact reference (check.h).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <span>

#include "engine/against.h"
#include "engine/verdict.h"
#include "explain/explanation.h"
#include "pe/check/check.h"
#include "pe/harness/measure.h"
#include "pe/harness/sinusoidal_screen.h"
#include "pe/pe.h"

namespace pe::check {
namespace {

// expect_band once per run of positions in one band ([edge k, edge k + 1), the last edge's band open above,
// a negative position in the first), not once a position: each call is a band search.
void expect_bands(harness::Measurement& bands, std::span<const std::int64_t> positions, std::size_t dim) {
  const auto edges = harness::band_edges();
  for (std::size_t i = 0; i < positions.size();) {
    const auto above = std::upper_bound(edges.begin(), edges.end() - 1, positions[i]);
    const std::int64_t lo = above == edges.begin() ? std::numeric_limits<std::int64_t>::min() : above[-1];
    const std::int64_t hi = above == edges.end() - 1 ? std::numeric_limits<std::int64_t>::max() : *above;
    std::size_t j = i;
    while (j < positions.size() && positions[j] >= lo && positions[j] < hi) ++j;
    bands.expect_band(positions[i], (j - i) * dim);
    i = j;
  }
}

}  // namespace

Report check_sinusoidal(const SinusoidalRequest& r, const Names& names) {
  std::vector<double> storage, against_storage;
  // The table in place (the screened pass reads its own type); as doubles only where a reader needs them.
  const DataView& a = r.table;
  std::optional<DataView> doubles;
  const auto as_double = [&]() -> const DataView& {
    if (!doubles) doubles = as_doubles(r.table, storage);
    return *doubles;
  };
  const std::optional<DataView> b =
      r.against ? std::optional(as_doubles(*r.against, against_storage)) : std::nullopt;
  validate_positions(r.positions, names);
  const std::vector<std::int64_t>& positions = r.positions.values;
  if (a.shape.size() != 2)
    names.fail("table", fmt::format("expected [positions, dim], {} has rank {}", a.name, a.shape.size()));
  if (a.shape[0] != positions.size())
    names.fail("table",
               fmt::format("{} has {} rows, the positions are {}", a.name, a.shape[0], positions.size()));
  if (r.dim != 0 && static_cast<std::size_t>(r.dim) != a.shape[1])
    names.fail("dim", fmt::format("{} given, {} has {} columns", r.dim, a.name, a.shape[1]));
  const Layout layout = r.layout.value_or(default_layout(Family::Sinusoidal));
  const SinusoidalParams params{static_cast<std::int64_t>(a.shape[1]), r.base, layout};
  SinusoidalPlan plan = [&] {
    try {
      return SinusoidalPlan(params);  // validates dim, base, layout
    } catch (const InvalidArgument& e) {
      rethrow_named(e, names);
    }
  }();
  const Budget budget = budget_for(r.budget, Family::Sinusoidal, a.dtype, names);
  if (b) require_same(*b, a, "table", names);

  Report out;
  out.say("checking {}: {} positions x dim {}, {}, {}, base {:g}\n", a.name, positions.size(), plan.dim(),
          to_string(a.dtype), to_string(params.layout), params.base);
  harness::Measurement bands;
  bands.promise(promised_up_to(budget));
  bands.expect(positions.size() * plan.dim());  // the tails keep each band's largest 1% only
  expect_bands(bands, positions, plan.dim());
  ContractTally tally(Family::Sinusoidal, a.dtype);
  harness::TableSinks sinks;
  sinks.sole = true;  // `bands` is this check's own, and takes no other element
  sinks.row = [&](std::size_t row) {
    if (r.progress) r.progress(row, positions.size());
  };
  sinks.exact = [&](const harness::ElementRecord& e) { tally.add(e); };
  sinks.line = [&](std::span<const ref::dd::DD> omegas, std::int64_t max_position,
                   std::span<const double> phi_lo,
                   double* line) { tally.table_screen_line(omegas, max_position, phi_lo, line); };
  if (!harness::measure_sinusoidal_screened(params, positions, a.read(), budget, bands, sinks)) {
    harness::measure_sinusoidal(params, positions, as_double().values, budget,
                                [&](const harness::ElementRecord& e) {
                                  if (r.progress)
                                    r.progress(static_cast<std::size_t>(e.row), positions.size());
                                  bands.add(e);
                                  tally.add(e);
                                });
  }
  out.doc.family = "sinusoidal";
  out.doc.table = a.name;
  out.doc.parameters = {{"dim", plan.dim()},
                        {"base", params.base},
                        {"layout", to_string(params.layout)},
                        {"positions", {positions.front(), positions.back()}}};
  const Judging judging{Family::Sinusoidal, nullptr, &names};
  report_verdict(bands, budget, out, &tally, &judging);
  const Convention given{params.layout, params.base};
  std::optional<Against> against;
  if (b) {
    against.emplace(as_double().values, promised_up_to(budget));
    harness::measure_sinusoidal(params, positions, b->values, budget, [&](const harness::ElementRecord& e) {
      against->add(e, static_cast<std::size_t>(e.row) * plan.dim() + static_cast<std::size_t>(e.channel));
    });
    out.say("{}", against->table(bands, a.name, r.against->name));
    out.doc.against = against->to_json(bands, a.dtype, r.against->name);
    out.passed = out.passed && against->b().verdict_pass();
  }
  // The diagnosis is the wrong one's: A's, or B's when only B fails.
  const bool b_only = against && bands.pass() && !against->b().pass();
  const harness::Measurement& failing = b_only ? against->b() : bands;
  if (!failing.pass() && failing.max_abs() >= 1e-3) {
    if (b_only) out.say("\nB ({}):", r.against->name);
    // Every sin and cos is within [-1, 1].
    print_diagnosis(
        diagnose_sinusoidal(b_only ? b->values : as_double().values, plan.dim(), positions, given), given,
        failing, out, names,
        fit_tolerance(b_only ? r.against->dtype : a.dtype, 1.0,
                      *std::max_element(positions.begin(), positions.end())));
  }
  return out;
}

}  // namespace pe::check

// An outside sinusoidal table [rows, dim] against the exact reference (check.h): the paper's table at integer
// positions through the screened pass, every other form (real positions, a scale, an odd dim, padding_idx, a
// grid) through pe/harness/sinusoidal_rows.h's.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <span>

#include "engine/against.h"
#include "engine/verdict.h"
#include "explain/explanation.h"
#include "explain/table_fit.h"
#include "pe/check/check.h"
#include "pe/harness/measure.h"
#include "pe/harness/sinusoidal_rows.h"
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
    bands.expect_band(positions[i], (j - i) * dim, j - i);
    i = j;
  }
}

// The check's own measurement of rows at `bands_of` (its tails keep each band's largest 1% only). `sample`: a
// large band's p99 over 1 table row in 8, in blocks of harness::table_sample_block(dim) rows; not for the
// rows pass (a timestep's or a grid's rows), whose screen keeps its estimates without asking.
harness::Measurement check_bands(const Budget& budget, std::span<const std::int64_t> bands_of,
                                 std::size_t dim, bool sample) {
  harness::Measurement bands;
  bands.promise(promised_up_to(budget));
  bands.expect(bands_of.size() * dim);
  expect_bands(bands, bands_of, dim);
  if (sample) bands.sample_percentiles(harness::table_sample_block(dim));
  return bands;
}

// Each row's band (harness::row_band: its largest angle scale·t).
std::vector<std::int64_t> row_bands(const harness::SinusoidalRows& rows) {
  std::vector<std::int64_t> out(rows.rows(), 0);
  for (std::size_t r = 0; r < out.size(); ++r) out[r] = harness::row_band(rows, r);
  return out;
}

// ", flip_sin_to_cos true, downscale_freq_shift 1, grid [12,20]": the switches given, for the header.
std::string switches(const SinusoidalSpec& s) {
  std::string out;
  for (const SpecEntry& e : entries(s))
    if (e.name != "base" && e.name != "layout") out += fmt::format(", {} {}", e.name, e.value.dump());
  return out;
}

// What a diffusers config gave, said before the header and recorded in the JSON.
void say_config(const std::vector<HfValue>& taken, const HfSource& hf, Report& out) {
  if (taken.empty()) return;
  std::vector<std::string> words;
  nlohmann::json values = nlohmann::json::array();
  for (const HfValue& v : taken) {
    words.push_back(fmt::format("{} {} ({})", v.name, v.value.dump(), v.key));
    values.push_back({{"name", v.name}, {"value", v.value}, {"key", v.key}});
  }
  out.say("from {}: {}\n", hf.label, fmt::join(words, ", "));
  out.doc.hf_config = {{"file", hf.file}, {"values", values}};
}

// The JSON's parameters: the table's, every switch given, the positions' first and last.
void record_parameters(const SinusoidalRequest& r, const SinusoidalSpec& spec, const SinusoidalParams& params,
                       Report& out) {
  out.doc.parameters = {{"dim", static_cast<std::size_t>(params.dim)},
                        {"base", params.base},
                        {"layout", to_string(params.layout)}};
  for (const SpecEntry& e : entries(spec))
    if (e.name != "base" && e.name != "layout") out.doc.parameters[std::string(e.name)] = e.value;
  if (!r.real_positions.empty())
    out.doc.parameters["positions"] = {r.real_positions.front(), r.real_positions.back()};
  else if (!spec.grid)
    out.doc.parameters["positions"] = {r.positions.values.front(), r.positions.values.back()};
}

}  // namespace

harness::SinusoidalRows sinusoidal_rows(const SinusoidalSpec& s, const SinusoidalParams& params,
                                        const Positions& positions, std::span<const double> real_positions,
                                        const Names& names, std::optional<std::size_t> table_rows) {
  try {
    if (s.grid) {
      if (!positions.values.empty() || !real_positions.empty())
        names.fail("positions",
                   fmt::format("a grid's rows are its cells: give {} or positions, not both", names("grid")));
      const harness::GridSpec g = grid_spec(s);
      // Before the rows are built: a grid the table cannot hold is refused without allocating it.
      if (const std::size_t cells = harness::grid_cells(g); table_rows && cells != *table_rows)
        names.fail("table", fmt::format("the table has {} rows, the grid's cells (and extra tokens) are {}",
                                        *table_rows, cells));
      return harness::grid_rows(params, g);
    }
    if (!real_positions.empty()) {
      if (s.padding_idx) names.fail("padding_idx", "applies to integer positions only");
      return harness::one_axis_rows(params, {real_positions.begin(), real_positions.end()});
    }
    validate_positions(positions, names);
    return harness::one_axis_rows(params, {positions.values.begin(), positions.values.end()}, s.padding_idx);
  } catch (const InvalidArgument& e) {
    rethrow_named(e, names);
  }
}

bool screened_table(const SinusoidalSpec& s, const SinusoidalParams& params,
                    std::span<const double> real_positions) {
  return !s.grid && real_positions.empty() && params.scale == 1 && params.dim % 2 == 0 && !s.padding_idx &&
         !(params.flip_sin_to_cos && params.layout == Layout::Interleaved);
}

namespace {

// The budget asked for, each contract's scaled or real table terms charged where the rows are scaled or at
// real positions.
Budget sinusoidal_check_budget(const BudgetOptions& o, DType dtype,
                               const std::optional<harness::SinusoidalRows>& rows, const Names& names) {
  Budget budget = budget_for(o, Family::Sinusoidal, dtype, names);
  budget.real_scale = rows ? harness::rows_real_scale(*rows) : 0;
  return budget;
}

// Every sinusoidal contract's tally, the scaled or real table terms charged where `budget` charges them.
ContractTally sinusoidal_check_tally(DType dtype, const Budget& budget) {
  ContractTally tally(Family::Sinusoidal, dtype);
  tally.charge_scale(budget.real_scale);
  return tally;
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
  if (a.shape.size() != 2)
    names.fail("table", fmt::format("expected [positions, dim], {} has rank {}", a.name, a.shape.size()));
  if (r.dim != 0 && static_cast<std::size_t>(r.dim) != a.shape[1])
    names.fail("dim", fmt::format("{} given, {} has {} columns", r.dim, a.name, a.shape[1]));
  std::vector<HfValue> taken;  // what a diffusers config gave
  const SinusoidalSpec spec = r.hf.config.is_null() ? r.spec : sinusoidal_spec_from(r.hf, r.spec, taken);
  const SinusoidalParams params = sinusoidal_params(spec, static_cast<std::int64_t>(a.shape[1]), names);
  // The paper's table at integer positions goes through the screened pass; every other form through its rows.
  std::optional<harness::SinusoidalRows> rows;
  if (screened_table(spec, params, r.real_positions))
    validate_positions(r.positions, names);
  else
    rows = sinusoidal_rows(spec, params, r.positions, r.real_positions, names, a.shape[0]);
  const std::vector<std::int64_t> bands_of = rows ? row_bands(*rows) : r.positions.values;
  const std::size_t n_rows = bands_of.size();
  if (a.shape[0] != n_rows)
    names.fail("table", fmt::format("{} has {} rows, the {} are {}", a.name, a.shape[0],
                                    spec.grid ? "grid's cells (and extra tokens)" : "positions", n_rows));
  const std::size_t dim = a.shape[1];
  const Budget budget = sinusoidal_check_budget(r.budget, a.dtype, rows, names);
  if (b) require_same(*b, a, "table", names);

  Report out;
  say_config(taken, r.hf, out);
  out.say("checking {}: {} rows x dim {}, {}, {}, base {:g}{}\n", a.name, n_rows, dim, to_string(a.dtype),
          to_string(params.layout), params.base, switches(spec));
  harness::Measurement bands = check_bands(budget, bands_of, dim, !rows && !r.exact_percentiles);
  ContractTally tally = sinusoidal_check_tally(a.dtype, budget);
  const auto measure = [&](harness::Values y, const harness::Sink& sink) {
    if (rows) return harness::measure_sinusoidal_rows(*rows, y, budget, sink);
    harness::measure_sinusoidal(params, r.positions.values, y, budget, sink);
  };
  harness::TableSinks sinks;
  sinks.sole = true;  // `bands` is this check's own, and takes no other element
  // No sink without a listener: the pass then asks nothing per row.
  if (r.progress) sinks.row = [&](std::size_t row) { r.progress(row, n_rows); };
  // The rows' blocks each feed a tally of their own (its lower bounds are one block's ω), merged after.
  std::vector<ContractTally> block_tallies(rows ? rows->blocks.size() : 0, tally);
  ContractTally* to = &tally;
  sinks.block = [&](std::size_t k) { to = &block_tallies[k]; };
  sinks.exact = [&](const harness::ElementRecord& e) { to->add(e); };
  sinks.seed = sinks.exact;  // a contract's worst is a largest: taken ahead, it is the same at the end
  sinks.line = [&](std::span<const ref::dd::DD> omegas, std::int64_t max_position,
                   std::span<const double> phi_lo,
                   double* line) { to->table_screen_line(omegas, max_position, phi_lo, line); };
  const bool screened =
      rows ? harness::measure_sinusoidal_rows_screened(*rows, a.read(), budget, bands, sinks)
           : harness::measure_sinusoidal_screened(params, r.positions.values, a.read(), budget, bands, sinks);
  if (rows && screened)
    for (const ContractTally& t : block_tallies) tally.merge(t);
  if (!screened) {
    measure(as_double().values, [&](const harness::ElementRecord& e) {
      if (r.progress) r.progress(static_cast<std::size_t>(e.row), n_rows);
      bands.add(e);
      tally.add(e);
    });
  }
  out.doc.family = "sinusoidal";
  out.doc.table = a.name;
  record_parameters(r, spec, params, out);
  const Judging judging{Family::Sinusoidal, nullptr, &names};
  report_verdict(bands, budget, out, &tally, &judging);
  std::optional<Against> against;
  if (b) {
    against.emplace(as_double().values, promised_up_to(budget));
    measure(b->values, [&](const harness::ElementRecord& e) {
      against->add(e, static_cast<std::size_t>(e.row) * dim + static_cast<std::size_t>(e.channel));
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
    const harness::SinusoidalRows given_rows =
        rows ? *rows : harness::one_axis_rows(params, {r.positions.values.begin(), r.positions.values.end()});
    const TableDiagnosis d = diagnose_table(b_only ? b->values : as_double().values, given_rows, spec);
    // Every sin and cos is within [-1, 1].
    print_diagnosis(d.fits, d.given, failing, out, names,
                    fit_tolerance(b_only ? r.against->dtype : a.dtype, 1.0, d.max_angle), d.notes, d.claims);
  }
  return out;
}

}  // namespace pe::check

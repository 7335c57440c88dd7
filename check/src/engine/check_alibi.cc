// Outside ALiBi slopes [heads] or bias [heads, queries, keys] against the exact reference (check.h).
#include <fmt/format.h>

#include <algorithm>

#include "engine/tally_screen.h"
#include "engine/verdict.h"
#include "explain/alibi_convention_fit.h"
#include "pe/check/check.h"
#include "pe/harness/measure_alibi.h"

namespace pe::check {
namespace {

// The positions of an axis of `n`: the given ones (which must be n), or by default `fallback`.
std::vector<std::int64_t> positions_of(const std::vector<std::int64_t>& given, std::string_view parameter,
                                       std::size_t n, std::vector<std::int64_t> fallback,
                                       const Names& names) {
  if (given.empty()) return fallback;
  if (given.size() != n) names.fail(parameter, fmt::format("{} positions, the data has {}", given.size(), n));
  return given;
}

// The best fits; a claim when the best fits ten times better than the given and within 16 units of the
// data type's rounding (relative to the bias, as the residuals are), with what supports it.
void report_fits(const std::vector<AlibiFit>& fits, DType dtype, Report& out) {
  out.doc.diagnosis.emplace();
  for (const AlibiFit& f : fits) out.doc.diagnosis->push_back({f.description, f.residual});
  out.doc.explanations.emplace();
  out.say("\ndiagnosis (ALiBi conventions, long double model, max residual relative to the bias):\n");
  for (std::size_t k = 0; k < std::min<std::size_t>(3, fits.size()); ++k)
    out.say("  {:.3g}  {}\n", fits[k].residual, fits[k].description);
  const auto given = std::find_if(fits.begin(), fits.end(),
                                  [](const AlibiFit& f) { return f.description == "the conventions given"; });
  const AlibiFit& best = fits.front();
  const double tolerance = 16 * unit_roundoff(dtype);
  if (best.description == "the conventions given" || best.residual >= given->residual / 10) {
    out.say("no known convention fits better than the one given: the error is the implementation's\n");
  } else if (best.residual > tolerance) {
    out.say(
        "undetermined: the closest known convention, {}, leaves {:.3g}, more than the {:.3g} of {} data "
        "(16 units of its rounding); the conventions given leave {:.3g}\n",
        best.description, best.residual, tolerance, to_string(dtype), given->residual);
  } else {
    const std::string support = fmt::format(
        "max residual {:.3g} relative to the bias, within 16 units of {} rounding ({:.3g}); the conventions "
        "given leave {:.3g}",
        best.residual, to_string(dtype), tolerance, given->residual);
    out.say("the data fits: {} ({})\n", best.description, support);
    out.found({best.description, support, std::nullopt, std::nullopt});
  }
}

// The bias [heads, Q, K] into `bands` and `tally`: a float32 one read in place, another as doubles.
void measure_bias(const AlibiParams& params, const std::vector<std::int64_t>& queries,
                  const std::vector<std::int64_t>& keys, const DataView& data, const harness::Budget& budget,
                  harness::Measurement& bands, ContractTally& tally) {
  const bool causal = params.form == AlibiForm::Causal;
  const std::span<const float> f32 =
      data.typed != nullptr && data.dtype == DType::F32
          ? std::span<const float>(static_cast<const float*>(data.typed), data.count())
          : std::span<const float>();
  TallyScreen screen(tally, data.dtype);
  // One pass (measure_alibi_screened): most keys proved quiet in vectors, the loud ones and the runs the
  // screen cannot take measured exactly (the same records: measure_alibi_rows's), the tally fed only what
  // could raise a contract's worst; the percentiles the screen's, within its stated radius.
  harness::AlibiScreenedSinks sinks;
  sinks.row = [&](const harness::RopeRow& row) { screen.add_row(row); };
  sinks.loud = [&](const harness::ElementRecord& e) { screen.add(e); };
  sinks.line = [&](std::size_t power) { return screen.bar(power); };
  if (f32.empty()) {
    harness::measure_alibi(params, queries, keys, data.read(), budget, [&](const harness::ElementRecord& e) {
      if (causal && keys[static_cast<std::size_t>(e.channel)] > queries[static_cast<std::size_t>(e.row)])
        return;
      bands.add(e);
      tally.add(e);
    });
  } else if (!harness::measure_alibi_screened(params, queries, keys, f32, budget, bands, sinks, causal)) {
    // Keys out of order (or beyond 2^52): a run of keys at a time, in vectors (the same records,
    // measure_alibi_rows); the tally sees only the elements that could raise a contract's worst.
    harness::measure_alibi_rows(
        params, queries, keys, f32, budget,
        [&](const harness::RopeRow& row) {
          bands.add_row(row);
          screen.add_row(row);
        },
        causal);
  }
}

}  // namespace

Report check_alibi(const AlibiRequest& r, const Names& names) {
  // Read in place (as doubles only for the diagnosis, when the check fails).
  const DataView& data = r.table;
  const AlibiSpec& o = r.spec;
  const std::vector<std::int64_t> none, &given_queries = o.queries ? *o.queries : none,
                                        &given_keys = o.keys ? *o.keys : none;
  if (o.slopes_only.value_or(false))
    names.fail("slopes_only", "applies to export (check reads the array's rank)");
  std::vector<std::size_t> shape = data.shape;
  if (shape.size() == 4 && shape[0] == 1) shape.erase(shape.begin());  // a batch of one
  if (shape.size() != 1 && shape.size() != 3)
    names.fail("table",
               fmt::format("expected [heads] slopes or a [heads, queries, keys] bias, {} has rank {}",
                           data.name, data.shape.size()));
  const auto heads = static_cast<std::int64_t>(shape[0]);
  if (o.heads.value_or(0) != 0 && *o.heads != heads)
    names.fail("heads", fmt::format("{} given, {} has {} heads", *o.heads, data.name, heads));
  const AlibiParams params = to_alibi_params(o, heads, names);
  const Budget budget = budget_for(r.budget, Family::Alibi, data.dtype, names);
  Report out;
  harness::Measurement bands;
  bands.promise(promised_up_to(budget));
  ContractTally tally(Family::Alibi, data.dtype);
  const bool slopes = shape.size() == 1;
  std::vector<std::int64_t> queries, keys;
  if (slopes) {
    if (!given_queries.empty() || !given_keys.empty())
      throw BadRequest(
          fmt::format("{}/{}: the slopes [heads] have no positions", names("queries"), names("keys")),
          "queries");
    out.say("checking {}: {} slopes, {}, max_bias {:g}, {} rule\n", data.name, heads, to_string(data.dtype),
            params.max_bias, to_string(params.slopes));
    harness::measure_alibi_slopes(params, data.read(), budget, [&](const harness::ElementRecord& e) {
      bands.add(e);
      tally.add(e);
    });
  } else {
    // Default: keys 0..K-1 and the queries the last Q of them (a prefill chunk or a decode step).
    const std::size_t Q = shape[1], K = shape[2];
    if (Q == 0 || K == 0) names.fail("table", fmt::format("{} has no elements", data.name));
    std::vector<std::int64_t> k0(K);
    for (std::size_t k = 0; k < K; ++k) k0[k] = static_cast<std::int64_t>(k);
    keys = positions_of(given_keys, "keys", K, k0, names);
    std::vector<std::int64_t> q0;
    for (std::size_t q = 0; q < Q; ++q)
      q0.push_back(static_cast<std::int64_t>(K) - static_cast<std::int64_t>(Q) +
                   static_cast<std::int64_t>(q));
    if (given_queries.empty() && Q > K)
      names.fail("queries", fmt::format("{} queries against {} keys; give their positions", Q, K));
    queries = positions_of(given_queries, "queries", Q, q0, names);
    out.say(
        "checking {}: {} heads x {} queries [{}..{}] x {} keys [{}..{}], {}, max_bias {:g}, {} rule, {} "
        "form{}\n",
        data.name, heads, Q, queries.front(), queries.back(), K, keys.front(), keys.back(),
        to_string(data.dtype), params.max_bias, to_string(params.slopes), to_string(params.form),
        params.form == AlibiForm::Causal ? " (keys after the query are masked: not compared)" : "");
    bands.expect(data.count());  // at most every element: the tails keep their top ~1% only
    measure_bias(params, queries, keys, data, budget, bands, tally);
  }
  out.doc.family = "alibi";
  out.doc.table = data.name;
  out.doc.parameters = {
      {"heads", heads},
      {"max_bias", params.max_bias},
      {"slopes", to_string(params.slopes)},
      {"form", to_string(params.form)},
      {"queries", queries.empty() ? nlohmann::json() : nlohmann::json{queries.front(), queries.back()}},
      {"keys", keys.empty() ? nlohmann::json() : nlohmann::json{keys.front(), keys.back()}}};
  const Judging judging{Family::Alibi, nullptr, &names};
  report_verdict(bands, budget, out, &tally, &judging);
  if (!bands.pass()) {
    std::vector<double> storage;
    report_fits(diagnose_alibi(as_doubles(data, storage).values, params, queries, keys), data.dtype, out);
  }
  return out;
}

}  // namespace pe::check

#include <fmt/format.h>

#include <algorithm>

#include "alibi_cli.h"
#include "alibi_diagnose.h"
#include "args.h"
#include "check_json.h"
#include "common.h"
#include "contract_class.h"
#include "error_bands.h"
#include "pe/harness/measure_alibi.h"
#include "report_text.h"

namespace pe::cli {
namespace {

// The positions of an axis of `n`: the given range (which must hold n), or by default `fallback`.
std::vector<std::int64_t> positions_of(const std::string& range, const char* flag, std::size_t n,
                                       std::vector<std::int64_t> fallback) {
  if (range.empty()) return fallback;
  std::vector<std::int64_t> p = alibi_positions(range, flag);
  if (p.size() != n) throw UsageError(fmt::format("{}: {} positions, the data has {}", flag, p.size(), n));
  return p;
}

void print_fits(const std::vector<AlibiFit>& fits, CheckJson& out) {
  nlohmann::json candidates = nlohmann::json::array();
  for (const AlibiFit& f : fits)
    candidates.push_back({{"convention", f.description}, {"residual", f.residual}});
  out.j["diagnosis"] = candidates;
  say("\ndiagnosis (ALiBi conventions, long double model, max residual relative to the bias):\n");
  for (std::size_t k = 0; k < std::min<std::size_t>(3, fits.size()); ++k)
    say("  {:.3g}  {}\n", fits[k].residual, fits[k].description);
  const auto given = std::find_if(fits.begin(), fits.end(),
                                  [](const AlibiFit& f) { return f.description == "the conventions given"; });
  const AlibiFit& best = fits.front();
  if (best.description == "the conventions given" || best.residual >= given->residual / 10) {
    say("no known convention fits better than the one given: the error is the implementation's\n");
  } else {
    say("the data fits: {} (residual {:.3g}; the conventions given leave {:.3g})\n", best.description,
        best.residual, given->residual);
    out.j["fits"] = best.description;
  }
}

}  // namespace

int check_alibi(const NpyArray& data, const std::string& path, const AlibiFlags& flags,
                const harness::Budget& budget, const std::string& budget_text, const std::string& json_path) {
  if (flags.slopes_only) throw UsageError("--slopes-only: applies to export (check reads the array's rank)");
  std::vector<std::size_t> shape = data.shape;
  if (shape.size() == 4 && shape[0] == 1) shape.erase(shape.begin());  // a batch of one
  if (shape.size() != 1 && shape.size() != 3)
    throw UsageError(
        fmt::format("TABLE: expected [heads] slopes or a [heads, queries, keys] bias, {} has rank {}", path,
                    data.shape.size()));
  const auto heads = static_cast<std::int64_t>(shape[0]);
  if (flags.heads != 0 && flags.heads != heads)
    throw UsageError(fmt::format("--heads: {} given, {} has {} heads", flags.heads, path, heads));
  const AlibiParams params = to_alibi_params(flags, heads);
  harness::Measurement bands;
  ContractTally tally(Family::Alibi, data.dtype);
  const bool slopes = shape.size() == 1;
  std::vector<std::int64_t> queries, keys;
  if (slopes) {
    if (!flags.queries.empty() || !flags.keys.empty())
      throw UsageError("--queries/--keys: the slopes [heads] have no positions");
    say("checking {}: {} slopes, {}, max_bias {:g}, {} rule\n", path, heads, to_string(data.dtype),
        params.max_bias, to_string(params.slopes));
    harness::measure_alibi_slopes(params, data.values, budget, [&](const harness::ElementRecord& e) {
      bands.add(e);
      tally.add(e);
    });
  } else {
    // Default: keys 0..K-1 and the queries the last Q of them (a prefill chunk or a decode step).
    const std::size_t Q = shape[1], K = shape[2];
    if (Q == 0 || K == 0) throw UsageError(fmt::format("TABLE: {} has no elements", path));
    std::vector<std::int64_t> k0(K);
    for (std::size_t k = 0; k < K; ++k) k0[k] = static_cast<std::int64_t>(k);
    keys = positions_of(flags.keys, "--keys", K, k0);
    std::vector<std::int64_t> q0;
    for (std::size_t q = 0; q < Q; ++q)
      q0.push_back(static_cast<std::int64_t>(K) - static_cast<std::int64_t>(Q) +
                   static_cast<std::int64_t>(q));
    if (flags.queries.empty() && Q > K)
      throw UsageError(fmt::format("--queries: {} queries against {} keys; give their positions", Q, K));
    queries = positions_of(flags.queries, "--queries", Q, q0);
    say("checking {}: {} heads x {} queries [{}..{}] x {} keys [{}..{}], {}, max_bias {:g}, {} rule, {} "
        "form{}\n",
        path, heads, Q, queries.front(), queries.back(), K, keys.front(), keys.back(), to_string(data.dtype),
        params.max_bias, to_string(params.slopes), to_string(params.form),
        params.form == AlibiForm::Causal ? " (keys after the query are masked: not compared)" : "");
    const bool causal = params.form == AlibiForm::Causal;
    harness::measure_alibi(params, queries, keys, data.values, budget, [&](const harness::ElementRecord& e) {
      if (causal && keys[static_cast<std::size_t>(e.channel)] > queries[static_cast<std::size_t>(e.row)])
        return;
      bands.add(e);
      tally.add(e);
    });
  }
  say("budget: {}\n\n{}\n", budget_text, band_table(bands));
  say("verdict: {} ({} of {} elements over budget; max |err| {:.3g})\n", bands.pass() ? "PASS" : "FAIL",
      bands.violations(), bands.count(), bands.max_abs());
  say("contracts: {}\n", tally.summary());
  CheckJson out{json_path};
  out.measured(bands, data.dtype, budget_text);
  out.j["family"] = "alibi";
  out.j["table"] = path;
  out.j["contracts"] = tally.to_json();
  out.j["parameters"] = {
      {"heads", heads},
      {"max_bias", params.max_bias},
      {"slopes", to_string(params.slopes)},
      {"form", to_string(params.form)},
      {"queries", queries.empty() ? nlohmann::json() : nlohmann::json{queries.front(), queries.back()}},
      {"keys", keys.empty() ? nlohmann::json() : nlohmann::json{keys.front(), keys.back()}}};
  if (!bands.pass()) print_fits(diagnose_alibi(data.values, params, queries, keys), out);
  out.write();
  return bands.pass() ? kOk : kCheckFailed;
}

}  // namespace pe::cli

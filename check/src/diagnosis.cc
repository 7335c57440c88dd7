// check's explanation of a failure: the diagnosis's candidates printed best first, and for RoPE the
// rows a fast path skipped, the positions and the frequencies read back (check.cc measures; this explains).
#include "diagnosis.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "frequency_fit.h"
#include "frequency_recovery.h"
#include "pe/errors.h"
#include "position_recovery.h"

namespace pe::check {

void print_diagnosis(const std::vector<Fit>& fits, const Convention& given, const harness::Measurement& bands,
                     Report& out, const std::string& recovered) {
  if (bands.pass() || bands.max_abs() < 1e-3) return;
  // The best ten (the others stop once they cannot rank among the best three: their residuals are
  // lower bounds) and the conventions given.
  nlohmann::json candidates = nlohmann::json::array();
  for (std::size_t k = 0; k < fits.size(); ++k) {
    const std::string what = describe(fits[k].convention, given);
    if (k < 10 || what == "the conventions given")
      candidates.push_back({{"convention", what}, {"residual", fits[k].residual}});
  }
  out.j["diagnosis"] = candidates;
  const auto it = std::find_if(fits.begin(), fits.end(), [&](const Fit& f) {
    return describe(f.convention, given) == "the conventions given";
  });
  const double given_residual = it != fits.end() ? it->residual : NAN;
  out.say("\ndiagnosis (known conventions, long double model, max residual over a sample):\n");
  // The best three distinct descriptions (candidates that differ only where the data cannot tell
  // read the same), and the given one's residual when it is not among them.
  std::vector<std::string> shown;
  for (std::size_t k = 0; k < fits.size() && shown.size() < 3; ++k) {
    const std::string what = describe(fits[k].convention, given);
    if (std::find(shown.begin(), shown.end(), what) != shown.end()) continue;
    shown.push_back(what);
    out.say("  {:.3g}  {}\n", fits[k].residual, what);
  }
  if (it != fits.end() && std::find(shown.begin(), shown.end(), "the conventions given") == shown.end())
    out.say("  {:.3g}  the conventions given\n", given_residual);
  const Fit& best = fits.front();
  if (!recovered.empty()) out.j["positions_recovered"] = recovered;
  const bool undetermined = recovered.rfind("positions undetermined", 0) == 0;
  if (undetermined) out.say("positions read back from the data: {}\n", recovered.substr(10));
  if ((describe(best.convention, given) == "the conventions given" || best.residual >= given_residual / 10) &&
      !recovered.empty() && !undetermined) {
    out.say("the data fits: {}\n", recovered);
    out.j["fits"] = recovered;
  } else if (describe(best.convention, given) == "the conventions given" ||
             best.residual >= given_residual / 10) {
    out.say(
        "no known convention fits better than the one given: the error is the implementation's, or a check "
        "argument the diagnosis does not model\n");
  } else {
    out.say("the data fits: {} (residual {:.3g}; the conventions given leave {:.3g})\n",
            describe(best.convention, given), best.residual, given_residual);
    out.j["fits"] = describe(best.convention, given);
  }
}

std::vector<Convention> other_layers(const std::vector<HfRopeSetting>& settings, const Convention& given,
                                     std::size_t head_dim, const std::vector<std::int64_t>& positions,
                                     const Names& names) {
  std::vector<Convention> out;
  for (const HfRopeSetting& s : settings) {
    if (static_cast<std::size_t>(s.head_dim) != head_dim) continue;
    Convention c = given;
    c.base = s.base;
    c.rotary_dim = s.rotary_dim;
    if (const auto layout = parse_layout(s.layout); layout && !s.layout.empty()) c.layout = *layout;
    try {
      c.scaling = rope_scaling_of(
          s, [&positions] { return positions; }, names);
    } catch (const BadRequest&) {
      continue;  // a setting the flags cannot express is no candidate
    }
    c.label = fmt::format("the {} layers' RoPE ({})", s.name, s.summary());
    out.push_back(c);
  }
  return out;
}

namespace {
// The frequencies read back, in words when they differ from the given ones, and pair by pair in the JSON.
void report_frequencies(const RecoveredFrequencies& r, const RopePlan& plan, Report& out) {
  const std::string words = frequency_pattern(r, plan);
  nlohmann::json pairs = nlohmann::json::array();
  for (const RecoveredPair& p : r.pairs) {
    pairs.push_back({{"pair", p.pair},
                     {"given", plan.inv_freq()[p.pair]},
                     {"theta", p.theta ? nlohmann::json(*p.theta) : nlohmann::json(nullptr)},
                     {"lo", p.theta ? nlohmann::json(p.lo) : nlohmann::json(nullptr)},
                     {"hi", p.theta ? nlohmann::json(p.hi) : nlohmann::json(nullptr)},
                     {"gain", p.gain},
                     {"rows", p.rows}});
  }
  out.j["frequencies_read_back"] = {{"tokens", r.tokens}, {"words", words}, {"pairs", pairs}};
  if (words.empty()) return;
  out.say("{}\n", words);
  if (const auto fit = fit_frequencies(r, plan.params())) {
    out.say("the frequencies read back fit: {} (every one of the {} determined pairs within its interval)\n",
            fit->words, fit->pairs);
    out.j["frequencies_read_back"]["fit"] = fit->words;
  }
}
}  // namespace

void diagnose_rope_output(const RopeData& data, const RopePlan& plan, const Convention& given,
                          const harness::Measurement& bands, const std::vector<bool>& over, Report& out,
                          const std::vector<Convention>& alternatives) {
  const RopeBatch& batch = data.batch;
  const std::size_t heads = batch.heads;
  // Rows a fast path skipped: when they hold every failure, that is the whole diagnosis.
  if (const UnrotatedRows skipped = bands.pass() ? UnrotatedRows{} : unrotated_rows(data, plan);
      skipped.count > 0) {
    bool only_cause = true;
    for (std::size_t k = 0; k < over.size() && only_cause; ++k)
      only_cause = !over[k] || left_unrotated(data, plan, k / heads, k % heads);
    const std::string words = unrotated_words(skipped, only_cause);
    out.j["unrotated_rows"] = skipped.count;
    if (only_cause) {
      out.say("\nthe data fits: {}\n", words);
      out.j["fits"] = words;
      return;
    }
    out.say("\nalso: {}\n", words);
  }
  if (!bands.pass() && bands.max_abs() >= 1e-3) {
    std::string recovered;
    if (plan.params().form.is_text()) {  // one position axis: read each sampled row's position back
      std::vector<std::size_t> tokens;
      const std::size_t n = batch.tokens(), step = std::max<std::size_t>(1, n / 32);
      for (std::size_t t = 0; t < n; t += step) tokens.push_back(t);
      std::int64_t top = std::int64_t{1} << 31;
      for (std::size_t t = 0; t < n; ++t) top = std::max(top, 2 * batch.position(t));
      recovered = position_pattern(data, recover_positions(data, plan, tokens, std::min(top, kMaxPosition)));
    }
    print_diagnosis(diagnose_rope(data, given, alternatives), given, bands, out, recovered);
    if (plan.params().form.is_text() && given.temperature.type == AttnTemperatureType::None)
      report_frequencies(recover_frequencies(data, plan), plan, out);
  }
}

}  // namespace pe::check

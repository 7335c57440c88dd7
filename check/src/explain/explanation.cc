// check's explanation of a failure: the diagnosis's candidates printed best first, and for RoPE the
// rows a fast path skipped, the positions and the frequencies read back (check.cc measures; this explains).
#include "explain/explanation.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "explain/axial_readback.h"
#include "explain/frequency_fit.h"
#include "explain/section_fit.h"
#include "pe/errors.h"
#include "readback/axis_recovery.h"
#include "readback/channel_mixing.h"
#include "readback/frequency_recovery.h"
#include "readback/position_recovery.h"

namespace pe::check {

FitTolerance fit_tolerance(DType dtype, double max_magnitude, std::int64_t max_position) {
  const double data = 16 * unit_roundoff(dtype),
               angle = 4 * 0x1p-24 * (static_cast<double>(max_position) + 1);
  return {(data + angle) * max_magnitude,
          fmt::format("16 units of {} rounding and a float32 angle's at position {} on |value| {:.3g}",
                      to_string(dtype), max_position, max_magnitude),
          data + angle >= 2};
}

namespace {
void claim(Finding f, const Names& names, Report& out) {
  out.say("the data fits: {} ({})\n", f.fits, f.support);
  if (f.hypothesis) {
    f.restated = names.restate(entries(*f.hypothesis));
    out.say("  {}, to check the hypothesis: {}\n", f.restated->label, f.restated->text);
  }
  out.found(std::move(f));
}
}  // namespace

void print_diagnosis(const std::vector<Fit>& fits, const Convention& given, const harness::Measurement& bands,
                     Report& out, const Names& names, const FitTolerance& tolerance,
                     const std::vector<std::string>& notes, const std::vector<Finding>& claims) {
  if (bands.pass() || bands.max_abs() < 1e-3) return;
  // The best ten (the others stop once they cannot rank among the best three: their residuals are
  // lower bounds) and the conventions given.
  out.doc.diagnosis.emplace();
  for (std::size_t k = 0; k < fits.size(); ++k) {
    const std::string what = describe(fits[k].convention, given);
    if (k < 10 || what == "the conventions given") out.doc.diagnosis->push_back({what, fits[k].residual});
  }
  out.doc.explanations.emplace();
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
  for (const std::string& n : notes) out.say("{}\n", n);
  const Fit& best = fits.front();
  const std::string best_words = describe(best.convention, given);
  const bool better = best_words != "the conventions given" && best.residual < given_residual / 10;
  if (better && tolerance.vacuous) {
    out.say(
        "undetermined among the known conventions: their tolerance here ({:.3g}: {}) spans every rotation of "
        "the data, so none can be told apart by its residual\n",
        tolerance.value, tolerance.basis);
  } else if (better && best.residual <= tolerance.value) {
    claim({best_words,
           fmt::format("max residual {:.3g} over {} sampled rows, within {:.3g}: {}; the conventions given "
                       "leave {:.3g}",
                       best.residual, best.rows, tolerance.value, tolerance.basis, given_residual),
           std::nullopt, std::nullopt},
          names, out);
  } else if (better) {
    out.say(
        "undetermined: the closest known convention, {}, leaves {:.3g} over {} sampled rows, more than the "
        "{:.3g} a kernel of it would ({}); the conventions given leave {:.3g}\n",
        best_words, best.residual, best.rows, tolerance.value, tolerance.basis, given_residual);
  }
  // A convention within its tolerance explains every sampled row; what was read back only adds to it.
  if (!(better && !tolerance.vacuous && best.residual <= tolerance.value))
    for (const Finding& c : claims) claim(c, names, out);
  if (!better && claims.empty())
    out.say(
        "no known convention fits better than the one given: the error is the implementation's, or a check "
        "argument the diagnosis does not model\n");
}

std::vector<Convention> other_layers(const std::vector<HfRopeSetting>& settings, const Convention& given,
                                     std::size_t head_dim, const std::vector<std::int64_t>& positions,
                                     const Names& names) {
  std::vector<Convention> out;
  for (const HfRopeSetting& s : settings) {
    if (static_cast<std::size_t>(s.head_dim()) != head_dim) continue;
    Convention c = given;
    c.base = s.spec.base.value_or(c.base);
    c.rotary_dim = s.spec.rotary_dim.value_or(c.rotary_dim);
    c.layout = s.spec.layout.value_or(c.layout);
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
// The frequencies read back: their pattern as a note when they differ from the given ones (pair by pair in
// the JSON), and the fit as a claim.
void frequencies_read_back(const RecoveredFrequencies& r, const RopePlan& plan, const RopeBatch& batch,
                           Report& out, std::vector<std::string>& notes, std::vector<Finding>& claims) {
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
  out.doc.frequencies_read_back = {{"tokens", r.tokens}, {"words", words}, {"pairs", pairs}};
  if (words.empty()) return;
  notes.push_back(words);
  if (const auto fit = fit_frequencies(r, plan.params())) {
    claims.push_back({fit->words,
                      fmt::format("frequencies read back from {} tokens x {} heads: every one of "
                                  "the {} determined pairs (of {}) within its interval",
                                  r.tokens, batch.heads, fit->pairs, r.pairs.size()),
                      fit->hypothesis, std::nullopt});
    (*out.doc.frequencies_read_back)["fit"] = fit->words;
  }
}

// The tokens whose positions are read back: up to 16 spread over the data and up to 16 spread over the
// tokens with a row over budget. A spread alone can land on positions where a mistake happens to vanish
// (multiples of 32 are exact in bfloat16 up to 8192: positions rounded to it go unseen at 1024 tokens),
// so the rows where the data is wrong always take part and the claim does not depend on the token count.
std::vector<std::size_t> position_sample(const RopeBatch& batch, std::size_t heads,
                                         const std::vector<bool>& over) {
  std::vector<std::size_t> failing;
  for (std::size_t t = 0; t < batch.tokens(); ++t) {
    for (std::size_t h = 0; h < heads; ++h) {
      if (t * heads + h < over.size() && over[t * heads + h]) {
        failing.push_back(t);
        break;
      }
    }
  }
  std::set<std::size_t> tokens;
  const auto spread_over = [&](std::size_t n, auto at) {
    const std::size_t k = std::min<std::size_t>(n, 16);
    for (std::size_t i = 0; i < k; ++i) tokens.insert(at(k == 1 ? 0 : i * (n - 1) / (k - 1)));
  };
  spread_over(batch.tokens(), [](std::size_t i) { return i; });
  spread_over(failing.size(), [&](std::size_t i) { return failing[i]; });
  return {tokens.begin(), tokens.end()};
}

// The (token, head) rows read back: head 0 of every sampled token, and up to 7 other heads spread over the
// rest (the last among them) at up to 8 of those tokens spread over them, so that rows turned by their head's
// index rather than their token's position are seen: at most 88 rows (32 before heads were read), read only
// once a check has failed.
std::vector<SampledRow> position_rows(const std::vector<std::size_t>& tokens, std::size_t heads) {
  std::vector<SampledRow> rows;
  for (const std::size_t t : tokens) rows.push_back({t, 0});
  const auto evenly = [](std::size_t n, std::size_t most) {
    std::set<std::size_t> at;
    const std::size_t k = std::min(n, most);
    for (std::size_t i = 0; i < k; ++i) at.insert(k == 1 ? 0 : i * (n - 1) / (k - 1));
    return at;
  };
  if (heads < 2 || tokens.empty()) return rows;
  for (const std::size_t i : evenly(tokens.size(), 8))
    for (const std::size_t h : evenly(heads - 1, 7)) rows.push_back({tokens[i], h + 1});
  return rows;
}

// Each sampled row's position read back, its pattern a claim where it fits, else a note.
PositionPattern positions_read_back(const RopeData& data, const RopePlan& plan, const std::vector<bool>& over,
                                    std::int64_t top, Report& out, std::vector<std::string>& notes,
                                    std::vector<Finding>& claims) {
  const std::size_t heads = data.batch.heads;
  const std::vector<std::size_t> tokens = position_sample(data.batch, heads, over);
  // Beyond int32's range, its wrapped positions too (int64 ids read as int32 go negative from 2^31).
  const std::int64_t bottom = top >= (std::int64_t{1} << 31) ? -(std::int64_t{1} << 31) : 0;
  const PositionPattern positions = position_pattern(
      data, recover_positions(data, plan, position_rows(tokens, heads),
                              std::min(std::max(std::int64_t{1} << 31, 2 * top), kMaxPosition), bottom));
  if (!positions.words.empty()) out.doc.positions_recovered = positions.words;
  if (positions.fits)
    claims.push_back({positions.words, positions.support, std::nullopt, std::nullopt});
  else if (!positions.words.empty())
    notes.push_back(fmt::format(
        "positions read back from the data: {}",
        positions.words.rfind("positions ", 0) == 0 ? positions.words.substr(10) : positions.words));
  return positions;
}

// Every unrotated row in head 0 (where a turn by the head index is the identity).
bool only_head_zero(const RopeData& data, const RopePlan& plan, const UnrotatedRows& skipped) {
  std::size_t head_zero = 0;
  for (std::size_t t = 0; t < data.batch.tokens(); ++t) head_zero += left_unrotated(data, plan, t, 0) ? 1 : 0;
  return skipped.count == head_zero;
}

double max_magnitude(std::span<const double> v) {
  double m = 0;
  for (const double a : v)
    if (std::isfinite(a)) m = std::max(m, std::fabs(a));
  return m;
}
}  // namespace

void diagnose_rope_output(const RopeData& in, const RopePlan& plan, const Convention& given,
                          const harness::Measurement& bands, const std::vector<bool>& over, Report& out,
                          const Names& names, const std::vector<Convention>& alternatives, DType dtype,
                          const std::vector<Finding>& measured) {
  RopeData data = in;
  data.unit = dtype == DType::F64 ? 0.0 : unit_roundoff(dtype);  // the angles read back are that far off
  const RopeBatch& batch = data.batch;
  const std::size_t heads = batch.heads;
  // Rows a fast path skipped: when they hold every failure, that is the whole diagnosis.
  const UnrotatedRows skipped = bands.pass() ? UnrotatedRows{} : unrotated_rows(data, plan);
  if (skipped.count > 0) {
    bool only_cause = true;
    for (std::size_t k = 0; k < over.size() && only_cause; ++k)
      only_cause = !over[k] || left_unrotated(data, plan, k / heads, k % heads);
    out.doc.unrotated_rows = skipped.count;
    if (only_cause) {
      out.say("\n");
      claim({unrotated_words(skipped, true),
             fmt::format("every one of the {} rows over budget holds its input bit for bit",
                         std::count(over.begin(), over.end(), true)),
             std::nullopt, std::nullopt},
            names, out);
      return;
    }
  }
  // Said after the positions are read back: rows turned by their head index leave head 0's unchanged.
  std::string also = skipped.count > 0 ? unrotated_words(skipped, false) : "";
  if (bands.pass() || bands.max_abs() < 1e-3) {
    if (!also.empty()) out.say("\nalso: {}\n", also);
    return;
  }
  std::vector<std::string> notes;
  std::vector<Finding> claims = measured;
  std::int64_t top = 0;
  for (std::size_t t = 0; t < batch.tokens(); ++t) top = std::max(top, batch.position(t));
  // One position axis: read each sampled row's position back (not under LongRoPE's per-token switch,
  // whose tokens on either side of L hold different tables than the plan's).
  if (plan.params().form.is_text() && !switches_per_token(plan.params().scaling)) {
    const PositionPattern positions = positions_read_back(data, plan, over, top, out, notes, claims);
    if (positions.row_index && only_head_zero(data, plan, skipped))
      also = fmt::format(
          "{} of {} rows hold their input unchanged: head 0's, which a turn by the head index leaves as it "
          "is",
          skipped.count, skipped.rows);
    if (given.temperature.type == AttnTemperatureType::None) {
      frequencies_read_back(recover_frequencies(data, plan), plan, batch, out, notes, claims);
      // Which channels mix, when neither layout's pairing is what the data shows.
      const ChannelMixing mixing = recover_channel_mixing(data, plan);
      if (mixing.fits) {
        out.doc.channel_mixing = mixing.words;
        claims.push_back({mixing.words, mixing.support, std::nullopt, std::nullopt});
      }
    }
  }
  if (!also.empty()) out.say("\nalso: {}\n", also);
  // Axial RoPE: each axis's ladder read back on its own (its base or its exponent's dim).
  if (!plan.params().form.axes_dim.empty() && given.temperature.type == AttnTemperatureType::None) {
    for (const AxisLadderReading& a : read_axis_ladders(recover_frequencies(data, plan), plan))
      claims.push_back({a.words, a.support, std::nullopt, std::nullopt});
  }
  // Several position axes (M-RoPE): which axis each pair read, and the sections that says.
  if (!plan.params().form.mrope_section.empty()) {
    const RecoveredAxes axes = recover_axes(data, plan);
    const SectionFit sections = fit_sections(axes, plan.params().form);
    if (!sections.words.empty()) {
      nlohmann::json per_pair = nlohmann::json::array();
      for (const auto& a : axes.axis) per_pair.push_back(a ? nlohmann::json(*a) : nlohmann::json(nullptr));
      out.doc.axes_read_back = {{"words", sections.words}, {"support", sections.support}, {"axes", per_pair}};
      if (sections.fits)
        claims.push_back({sections.words, sections.support, sections.hypothesis, std::nullopt});
      else
        notes.push_back(sections.words + " (" + sections.support + ")");
    }
  }
  const FitTolerance tolerance =
      fit_tolerance(dtype, std::max(max_magnitude(data.y), max_magnitude(data.x)), top);
  print_diagnosis(diagnose_rope(data, given, alternatives), given, bands, out, names, tolerance, notes,
                  claims);
}

}  // namespace pe::check

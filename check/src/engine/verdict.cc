#include "engine/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "engine/band_table.h"

namespace pe::check {

std::string shape_words(const std::vector<std::size_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

std::vector<const Variant*> deciding_contracts(Family family, DType dtype, const RopePlan* plan,
                                               const harness::ElementRecord& e) {
  std::vector<std::pair<double, const Variant*>> deciding;
  for (const Variant* v : contracts_for(family, dtype)) {
    const Contract& c = v->contract();
    // A RoPE contract promises nothing past its largest position, whatever its formula would give there.
    if (plan != nullptr && (e.position > c.max_position || e.position < -c.max_position)) continue;
    const double term = plan != nullptr ? rope_element_budget(c, *plan, dtype, e.abs_phi, e.pair, e.scale)
                                        : element_budget(c, dtype, e.abs_phi, e.pair, e.scale);
    const double budget = e.gain * term + e.gain_extra;
    if (!harness::ElementRecord::undecidable_at(budget, e.reach)) deciding.emplace_back(budget, v);
  }
  std::stable_sort(deciding.begin(), deciding.end(),
                   [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<const Variant*> out;
  for (const auto& d : deciding) out.push_back(d.second);
  return out;
}

namespace {

std::string band_words(const harness::BandStats& b) {
  return b.hi == std::numeric_limits<std::int64_t>::max() ? fmt::format("positions >= {}", b.lo)
                                                          : fmt::format("positions {}..{}", b.lo, b.hi);
}

// Why a band cannot be judged, which contracts promise nothing there and which one would judge it.
void say_undecidable(const harness::BandStats& b, const Budget& budget, const Judging& judging, Report& out) {
  const harness::ElementRecord& e = b.max_vacuity.at;
  const bool rope = judging.family == Family::Rope;
  out.say(
      "undecidable: {}: {} of its {} elements cannot be judged, their budget (here up to {:.3g}) reaching "
      "the largest error any output of its magnitude could have ({}): whatever the data holds passes them",
      band_words(b), b.undecidable, b.encoding, e.budget,
      rope                              ? "the exact pair's norm plus |exact|, at most 2 x the norm"
      : judging.family == Family::Alibi ? "2 x |bias|"
                                        : "1 + |exact|, at most 2");
  if (b.undecidable < b.encoding)
    out.say(", and the {} left (the slowest frequencies) cannot see an offset or a fast frequency",
            b.encoding - b.undecidable);
  if (budget.members().empty()) return out.say(" (a flat bound: give a smaller one)\n");
  const auto deciding = deciding_contracts(judging.family, budget.dtype, judging.plan, e);
  // The budget's own contracts that cannot judge the element (a class's, or the one --contract named, a
  // compiled target's included), by the variants that declare them.
  std::vector<const Variant*> vacuous;
  std::int64_t max_position = 0;
  for (const Contract* c : budget.members()) {
    const auto v = std::find_if(registry().begin(), registry().end(),
                                [&](const Variant* r) { return &r->contract() == c; });
    if (v == registry().end() || std::find(deciding.begin(), deciding.end(), *v) != deciding.end()) continue;
    vacuous.push_back(*v);
    max_position = std::max(max_position, c->max_position);
  }
  out.say("; {} promise{} nothing there (largest position {})", names_of(vacuous),
          vacuous.size() == 1 ? "s" : "", max_position);
  const std::string flag = judging.names != nullptr ? (*judging.names)("contract") : "contract";
  const std::size_t shown = std::min<std::size_t>(3, deciding.size());
  if (deciding.empty()) return out.say("; no registered contract decides there\n");
  out.say("; a contract that decides there: {} ({} {})\n",
          names_of(std::vector<const Variant*>(deciding.begin(),
                                               deciding.begin() + static_cast<std::ptrdiff_t>(shown))),
          flag, deciding.front()->name());
}

}  // namespace

void report_verdict(const harness::Measurement& bands, const Budget& budget, Report& out,
                    const ContractTally* tally, const Judging* judging) {
  out.measured(bands, budget.dtype, budget.text);
  out.passed = bands.verdict_pass();
  if (out.quiet) return;
  if (tally != nullptr) out.doc.contracts = tally->to_json();
  out.say("budget: {}\n\n{}\n", budget.text,
          band_table(bands, judging != nullptr ? judging->family : Family::Rope));
  for (const harness::BandStats& b : bands.bands())
    if (b.samples > 0 && b.undecidable_band() && judging != nullptr)
      say_undecidable(b, budget, *judging, out);
  const std::size_t undecidable = bands.undecidable();
  // A partly undecidable run says how many elements its verdict rests on.
  const std::string judged =
      undecidable == 0
          ? ""
          : fmt::format("; judged {} of {} elements, the other {} within budget whatever they hold",
                        bands.count() - undecidable, bands.count(), undecidable);
  out.say("verdict: {} ({} of {} elements over budget; max |err| {:.3g}{})\n", enum_name(bands.verdict()),
          bands.violations(), bands.count(), bands.max_abs(), judged);
  if (tally != nullptr) out.say("contracts: {}\n", tally->summary());
}

void require_same(const DataView& b, const DataView& a, std::string_view a_parameter, const Names& names) {
  if (b.shape != a.shape || b.dtype != a.dtype)
    names.fail("against", fmt::format("{} holds {} {}, {} {} {}: compare two outputs of one shape and type",
                                      b.name, to_string(b.dtype), shape_words(b.shape), names(a_parameter),
                                      to_string(a.dtype), shape_words(a.shape)));
}

}  // namespace pe::check

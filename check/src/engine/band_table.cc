#include "engine/band_table.h"

#include <fmt/format.h>

#include <limits>

namespace pe::check {
namespace {
// A band's verdict, with how many of its elements were judged where some could not be.
std::string verdict_words(const harness::BandStats& b) {
  const bool partly = b.undecidable > 0 && !b.undecidable_band();
  const std::string judged = fmt::format("{} of {} judged", b.judged(), b.samples);
  if (!b.pass()) return fmt::format("FAIL ({} over budget{})", b.violations, partly ? "; " + judged : "");
  return partly ? "pass (" + judged + ")" : b.verdict();
}
}  // namespace

std::string band_table(const harness::Measurement& m, Family family) {
  const bool alibi = family == Family::Alibi;
  // The last three columns are one element's: the worst by error/budget (its |err| need not be the
  // band's max |err|).
  std::string out =
      fmt::format("{:>23}  {:>9}  {:>10}  {:>10}  {:>9}  {:>9}  {:>10}  {:>10}  {:>10}  {}\n",
                  alibi ? "distance band" : "position band", "elements", "max |err|", "p99 |err|", "max ulp",
                  "p99 ulp", "worst: err", "budget", "err/budget", "verdict");
  for (const harness::BandStats& b : m.bands()) {
    if (b.samples == 0) continue;
    const std::string range = b.hi == std::numeric_limits<std::int64_t>::max()
                                  ? fmt::format(">= {}", b.lo)
                                  : fmt::format("{}..{}", b.lo, b.hi);
    out += fmt::format(
        "{:>23}  {:>9}  {:>10.3g}  {:>10.3g}  {:>9.3g}  {:>9.3g}  {:>10.3g}  {:>10.3g}  {:>10.3g}  {}\n",
        range, b.samples, b.max_abs.value, b.p99_abs, b.max_ulp.value, b.p99_ulp, b.max_ratio.at.abs_error,
        b.max_ratio.at.budget, b.max_ratio.value, verdict_words(b));
  }
  // A relative measure explodes where the exact value nears 0 (a zero of sin or cos, a slope times a
  // distance of 0): a passing band can show a huge max ulp. Say so rather than let it read as a failure.
  bool unbounded_ulp = false;
  for (const harness::BandStats& b : m.bands())
    unbounded_ulp = unbounded_ulp || (b.pass() && !b.undecidable_band() && b.max_ulp.value > 1e3);
  if (unbounded_ulp)
    out +=
        "(max ulp: ULP error is unbounded where the exact value nears 0, at the zeros of sin and cos; the "
        "budget bounds the absolute error, which decides the verdict)\n";
  std::size_t sampled = 0, of = 0;
  bool none = false;  // a band whose sample met none of its rows: its p99s are nan
  for (const harness::BandStats& b : m.bands())
    if (b.percentiles_sampled())
      sampled += b.percentile_samples, of += b.samples, none = none || b.percentile_samples == 0;
  const std::string unit = m.sample_block() > 1     ? fmt::format("block of {} rows", m.sample_block())
                           : family == Family::Rope ? "token"
                                                    : "row";
  if (of != 0)
    out += fmt::format(
        "(p99 columns of the bands of {} elements and more: over {} of their {} elements, 1 {} in {}{}; the "
        "maxima, worst elements and verdicts are every element's. Every element's p99: --exact-p99, or "
        "exact_p99=True in Python)\n",
        harness::Measurement::kSampledFrom, sampled, of, unit, harness::Measurement::kSampleEvery,
        none ? " (nan: a band whose sample met none of its rows)" : "");
  out += fmt::format(
      "\nworst elements (by error / budget):\n{:>8}  {:>5}  {:>12}  {:>7}  {:>14}  {:>14}  {:>10}  {:>9}  "
      "{:>10}\n",
      alibi ? "query" : "row", "head", alibi ? "distance" : "position", alibi ? "key" : "channel", "value",
      "exact", "|err|", "ulp", "budget");
  for (const harness::ElementRecord& e : m.worst()) {
    out += fmt::format("{:>8}  {:>5}  {:>12}  {:>7}  {:>14.7g}  {:>14.7g}  {:>10.3g}  {:>9.3g}  {:>10.3g}\n",
                       e.row, e.head, e.position, e.channel, e.y, e.exact, e.abs_error, e.ulp, e.budget);
  }
  return out;
}

}  // namespace pe::check

#include "error_bands.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace pe::cli {
namespace {

constexpr std::int64_t kEdges[] = {
    0, 1'000, 10'000, 100'000, 1'000'000, 10'000'000, 100'000'000, 1'000'000'000, std::int64_t{1} << 31};

double ratio(const ElementError& e) {
  if (std::isnan(e.error)) return INFINITY;
  return e.budget > 0 ? e.error / e.budget : (e.error > 0 ? INFINITY : 0.0);
}

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
  return v[k];
}

}  // namespace

ErrorBands::ErrorBands(std::size_t keep_worst) : keep_(keep_worst) {
  for (std::size_t k = 0; k + 1 < std::size(kEdges); ++k) {
    Band band;
    band.lo = kEdges[k];
    band.hi = kEdges[k + 1] - 1;
    bands_.push_back(band);
  }
  bands_.back().hi = INT64_MAX;  // the last band takes every larger position
}

void ErrorBands::add(const ElementError& e) {
  ++count_;
  const double r = ratio(e);
  Band& b =
      *std::find_if(bands_.begin(), bands_.end(), [&](const Band& band) { return e.position <= band.hi; });
  const double err = std::isnan(e.error) ? INFINITY : e.error;
  b.errors.push_back(err);
  b.max_ratio = std::max(b.max_ratio, r);
  if (err >= b.max) {
    b.max = err;
    b.budget_at_max = e.budget;
  }
  if (r > 1) {
    ++violations_;
    ++b.violations;
  }
  if (worst_.size() < keep_ || r > ratio(worst_.back())) {
    worst_.push_back(e);
    std::stable_sort(worst_.begin(), worst_.end(),
                     [](const ElementError& x, const ElementError& y) { return ratio(x) > ratio(y); });
    if (worst_.size() > keep_) worst_.pop_back();
  }
}

double ErrorBands::max_error() const {
  double m = 0;
  for (const Band& b : bands_) m = std::max(m, b.max);
  return m;
}

std::string ErrorBands::table() const {
  std::string out = fmt::format("{:>23}  {:>9}  {:>10}  {:>10}  {:>10}  {:>10}  {}\n", "positions",
                                "elements", "max |err|", "p99 |err|", "budget", "err/budget", "verdict");
  for (const Band& b : bands_) {
    if (b.errors.empty()) continue;
    const std::string range =
        b.hi == INT64_MAX ? fmt::format(">= {}", b.lo) : fmt::format("{}..{}", b.lo, b.hi);
    out += fmt::format("{:>23}  {:>9}  {:>10.3g}  {:>10.3g}  {:>10.3g}  {:>10.3g}  {}\n", range,
                       b.errors.size(), b.max, percentile(b.errors, 0.99), b.budget_at_max, b.max_ratio,
                       b.violations == 0 ? "pass" : fmt::format("FAIL ({} over budget)", b.violations));
  }
  out += fmt::format(
      "\nworst elements (by error / budget):\n{:>8}  {:>12}  {:>7}  {:>14}  {:>14}  {:>10}  {:>10}\n", "row",
      "position", "channel", "value", "exact", "|err|", "budget");
  for (const ElementError& e : worst_) {
    out += fmt::format("{:>8}  {:>12}  {:>7}  {:>14.7g}  {:>14.7g}  {:>10.3g}  {:>10.3g}\n", e.row,
                       e.position, e.channel, e.value, e.exact, e.error, e.budget);
  }
  return out;
}

}  // namespace pe::cli

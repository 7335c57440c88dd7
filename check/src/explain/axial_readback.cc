#include "explain/axial_readback.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

namespace pe::check {
namespace {

// The interval of ln θ / D an axis's determined pairs k >= 1 all hold (each widened by a float32 frequency's
// rounding, as frequency_recovery's as_given), and how many; nullopt-like (pairs 0) where its pair 0 turns by
// anything but 1 (the positions or a gain are wrong: not a ladder's matter) or the pairs disagree.
struct LogRatio {
  double lo = -INFINITY, hi = INFINITY;
  std::size_t pairs = 0;
  std::size_t first = 0, last = 0;
};

LogRatio log_ratio(const RecoveredFrequencies& r, std::size_t first, std::size_t n) {
  LogRatio out;
  constexpr double kSlack = 4 * 0x1p-24;
  for (std::size_t k = 0; k < n; ++k) {
    const RecoveredPair& p = r.pairs[first + k];
    if (!p.theta) continue;
    const double lo = p.lo * (1 - kSlack), hi = p.hi * (1 + kSlack);
    if (k == 0) {
      if (!(lo <= 1 && 1 <= hi)) return {};
      continue;
    }
    if (!(lo > 0)) continue;
    const auto twice_k = static_cast<double>(2 * k);
    out.lo = std::max(out.lo, -std::log(hi) / twice_k);
    out.hi = std::min(out.hi, -std::log(lo) / twice_k);
    if (out.pairs++ == 0) out.first = first + k;
    out.last = first + k;
  }
  if (out.pairs < 2 || !(out.lo <= out.hi)) return {};
  return out;
}

std::string reading_words(std::size_t axis, std::int64_t dim, double base, const LogRatio& l) {
  const double ln_base = std::log(base), mid = 0.5 * (l.lo + l.hi);
  const auto holds = [&](double v) { return l.lo <= v && v <= l.hi; };
  // Another exponent denominator at the given base: an even dim whose ratio the interval holds.
  const double over = 2 * std::round(ln_base / mid / 2);
  if (over >= 2 && holds(ln_base / over))
    return fmt::format("axis {}'s ladder over {:g} where its dim is {} (θ^(-2k/{:g}))", axis, over, dim,
                       over);
  // Another base at the axis's own dim, said to three significant digits where those hold it.
  const double b = std::exp(mid * static_cast<double>(dim));
  const double shown = std::stod(fmt::format("{:.3g}", b));
  if (holds(std::log(shown) / static_cast<double>(dim)))
    return fmt::format("axis {}'s base {:g} (given {:g}): θ^(-2k/{}) at θ = {:g}", axis, shown, base, dim,
                       shown);
  return fmt::format("axis {}'s ladder θ^(-2k/{}) at θ = {:.6g} (given {:g})", axis, dim, b, base);
}

}  // namespace

std::vector<AxisLadderReading> read_axis_ladders(const RecoveredFrequencies& r, const RopePlan& plan) {
  std::vector<AxisLadderReading> out;
  const std::vector<std::int64_t>& axes = plan.params().form.axes_dim;
  if (axes.empty() || r.pairs.size() != plan.n_pairs() || plan.params().scaling.type != RopeScalingType::None)
    return out;
  const double base = plan.params().base;
  std::size_t first = 0;
  for (std::size_t a = 0; a < axes.size(); ++a) {
    const auto n = static_cast<std::size_t>(axes[a] / 2);
    const LogRatio l = log_ratio(r, first, n);
    first += n;
    if (l.pairs == 0) continue;
    const double given = std::log(base) / static_cast<double>(axes[a]);
    const double slack = 1e-6 * std::fabs(given);
    if (l.lo - slack <= given && given <= l.hi + slack) continue;
    out.push_back(
        {reading_words(a, axes[a], base, l),
         fmt::format("axis {}'s pairs {}-{} read back from {} tokens: each pair's frequency gives "
                     "ln θ / {} in [{:.6g}, {:.6g}], every one of its {} determined pairs (the given "
                     "ln {:g} / {} = {:.6g})",
                     a, l.first, l.last, r.tokens, axes[a], l.lo, l.hi, l.pairs, base, axes[a], given)});
  }
  return out;
}

}  // namespace pe::check

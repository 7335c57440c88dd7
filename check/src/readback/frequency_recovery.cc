#include "readback/frequency_recovery.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "pe/half.h"
#include "readback/rotation_angles.h"

namespace pe::check {
namespace {

// One token's pair: its angle (all heads' maps summed, so each head weighs by its |x|²) and gain.
struct TokenAngle {
  double p = 0, alpha = 0, weight = 0, gain = 0;
};

std::vector<TokenAngle> token_angles(const RopeData& d, const RopePlan& plan, std::size_t j,
                                     const std::vector<std::size_t>& tokens) {
  const auto [i0, i1] = plan.input_channels(j);
  const auto [o0, o1] = plan.output_channels(j);
  std::vector<TokenAngle> out;
  for (std::size_t t : tokens) {
    double c = 0, s = 0, xx = 0, yy = 0;
    for (std::size_t h = 0; h < d.batch.heads; ++h) {
      const std::size_t row = d.batch.row(t, h);
      const double xa = d.x[row + i0], xb = d.x[row + i1], ya = d.y[row + o0], yb = d.y[row + o1];
      if (!std::isfinite(xa) || !std::isfinite(xb) || !std::isfinite(ya) || !std::isfinite(yb)) continue;
      s += xa * yb - xb * ya;  // (|x|² sin φ for a rotation by φ)
      c += xa * ya + xb * yb;  // (|x|² cos φ)
      xx += xa * xa + xb * xb;
      yy += ya * ya + yb * yb;
    }
    if (!(xx > 1e-6) || !(yy > 1e-6)) continue;
    // The pair's own axis (an axial or M-RoPE pair reads its axis's position; text RoPE's is axis 0).
    const std::int64_t p = d.batch.position(t, plan.axis_of_pair(j));
    out.push_back({static_cast<double>(p), std::atan2(s, c), xx, std::sqrt(yy / xx)});
  }
  std::sort(out.begin(), out.end(), [](const TokenAngle& a, const TokenAngle& b) { return a.p < b.p; });
  return out;
}

struct FrequencyCandidate {
  double theta = 0, lo = -INFINITY, hi = INFINITY;
  std::size_t rows = 0;
};

// From anchor a: every token's angle relative to a's is θ·(p - p_a) turned some whole turns; taken from
// the nearest positions outward, each turn count from the estimate so far, θ by least squares. The
// candidate stands when every token fits within both tokens' tolerances; [lo, hi] is where they all do.
std::optional<FrequencyCandidate> relative_fit(const std::vector<TokenAngle>& ta, std::size_t a,
                                               double theta0, double unit) {
  std::vector<std::size_t> order(ta.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t u, std::size_t v) {
    return std::fabs(ta[u].p - ta[a].p) < std::fabs(ta[v].p - ta[a].p);
  });
  double theta = theta0, sxy = 0, sxx = 0;
  std::vector<double> beta(ta.size());
  for (std::size_t i : order) {
    const double delta = ta[i].p - ta[a].p;
    if (delta == 0) continue;
    const double raw = ta[i].alpha - ta[a].alpha;
    const double turns = std::nearbyint((theta * delta - raw) / kFullTurn);
    beta[i] = raw + kFullTurn * turns;
    const double w = std::min(ta[i].weight, ta[a].weight);
    sxy += w * delta * beta[i];
    sxx += w * delta * delta;
    theta = sxy / sxx;
  }
  FrequencyCandidate c{theta};
  for (std::size_t i = 0; i < ta.size(); ++i) {
    const double delta = ta[i].p - ta[a].p;
    if (delta == 0) continue;
    const double tol = angle_tolerance(ta[i].p, theta, unit) + angle_tolerance(ta[a].p, theta, unit);
    if (std::fabs(wrapped_angle(ta[i].alpha - ta[a].alpha - theta * delta)) > tol) return std::nullopt;
    const double u = (beta[i] - tol) / delta, v = (beta[i] + tol) / delta;
    c.lo = std::max(c.lo, std::min(u, v));
    c.hi = std::min(c.hi, std::max(u, v));
    ++c.rows;
  }
  if (c.rows == 0 || c.lo > c.hi) return std::nullopt;
  return c;
}

// Narrower: the absolute angles p·θ (no offset in the positions) where one turn count fits every token.
std::optional<FrequencyCandidate> absolute_fit(const std::vector<TokenAngle>& ta,
                                               const FrequencyCandidate& rel, double unit) {
  const TokenAngle& far = ta.back();
  if (far.p <= 0) return std::nullopt;
  std::optional<FrequencyCandidate> found;
  const auto first = static_cast<long long>(std::floor((rel.lo * far.p - far.alpha) / kFullTurn));
  const auto last = static_cast<long long>(std::ceil((rel.hi * far.p - far.alpha) / kFullTurn));
  if (last - first > 64) return std::nullopt;  // too many turns to tell apart
  for (long long n = first; n <= last; ++n) {
    const double theta = (far.alpha + kFullTurn * static_cast<double>(n)) / far.p;
    FrequencyCandidate c{theta};
    bool fits = true;
    for (const TokenAngle& t : ta) {
      const double tol = angle_tolerance(t.p, theta, unit);
      const double r = wrapped_angle(t.alpha - theta * t.p);
      if (std::fabs(r) > tol) {
        fits = false;
        break;
      }
      if (t.p == 0) continue;
      const double turned = theta * t.p + r;  // the token's angle with its turns
      c.lo = std::max(c.lo, (turned - tol) / t.p);
      c.hi = std::min(c.hi, (turned + tol) / t.p);
      ++c.rows;
    }
    if (!fits || c.lo > c.hi) continue;
    if (found) return std::nullopt;  // two turn counts fit: keep the relative interval
    found = c;
  }
  return found;
}

RecoveredPair recover_pair(const RopeData& d, const RopePlan& plan, std::size_t j,
                           const std::vector<std::size_t>& tokens) {
  RecoveredPair out;
  out.pair = j;
  const std::vector<TokenAngle> ta = token_angles(d, plan, j, tokens);
  std::vector<double> gains;
  for (const TokenAngle& t : ta) gains.push_back(t.gain);
  if (!gains.empty()) {
    std::nth_element(gains.begin(), gains.begin() + static_cast<std::ptrdiff_t>(gains.size() / 2),
                     gains.end());
    out.gain = gains[gains.size() / 2];
    out.gain_lo = *std::min_element(gains.begin(), gains.end());
    out.gain_hi = *std::max_element(gains.begin(), gains.end());
  }
  // The anchor: the two nearest distinct positions, whose difference Δ leaves the fewest turn counts.
  std::size_t a = ta.size();
  double delta = INFINITY;
  for (std::size_t i = 0; i + 1 < ta.size(); ++i) {
    const double dp = ta[i + 1].p - ta[i].p;
    if (dp > 0 && dp < delta) delta = dp, a = i;
  }
  if (a == ta.size()) return out;  // fewer than two positions
  // At integer positions θ and θ + 2π turn every row alike: θ is read in (-π, π] (every RoPE frequency is
  // below 1), one candidate per turn the anchor's Δ may hold.
  const double base = wrapped_angle(ta[a + 1].alpha - ta[a].alpha) / delta, step = kFullTurn / delta;
  std::vector<FrequencyCandidate> fits;
  for (double k = -std::ceil(std::numbers::pi / step) - 1; k <= std::ceil(std::numbers::pi / step) + 1; ++k) {
    const double theta0 = base + k * step;
    if (!(std::fabs(theta0) <= std::numbers::pi)) continue;
    if (const auto c = relative_fit(ta, a, theta0, d.unit)) {
      const bool seen = std::any_of(fits.begin(), fits.end(), [&](const FrequencyCandidate& f) {
        return c->theta >= f.lo && c->theta <= f.hi;
      });
      if (!seen) fits.push_back(*c);
    }
    if (fits.size() > 1) return out;  // two frequencies fit: undetermined
  }
  if (fits.size() != 1) return out;
  FrequencyCandidate best = fits.front();
  if (const auto abs = absolute_fit(ta, best, d.unit)) best = *abs;
  // Too little rotation to tell (a slow pair at small positions): the interval spans more than 5%.
  if (!(best.hi - best.lo <= 0.05 * std::fabs(best.theta))) return out;
  out.theta = best.theta;
  out.lo = best.lo;
  out.hi = best.hi;
  out.rows = best.rows + 1;
  return out;
}

std::string range(std::size_t a, std::size_t b) {
  return a == b ? fmt::format("pair {}", a) : fmt::format("pairs {}-{}", a, b);
}

std::string ratio_words(double r) {
  if (r < 0) return fmt::format("turned the other way ({:.4g} times the given frequency)", -r);
  if (r < 1) return fmt::format("divided by {:.4g}", 1 / r);
  return fmt::format("multiplied by {:.4g}", r);
}

}  // namespace

RecoveredFrequencies recover_frequencies(const RopeData& d, const RopePlan& plan, std::size_t max_tokens) {
  RecoveredFrequencies out;
  const std::size_t n = d.batch.tokens(),
                    step = std::max<std::size_t>(1, n / std::max<std::size_t>(1, max_tokens));
  std::vector<std::size_t> tokens;
  for (std::size_t t = 0; t < n && tokens.size() < max_tokens; t += step) tokens.push_back(t);
  // Consecutive tokens first: the nearest positions anchor the turn counts.
  if (tokens.size() >= 2 && step > 1 && tokens[1] != 1 && n > 1) tokens.insert(tokens.begin() + 1, 1);
  out.tokens = tokens.size();
  out.unit = d.unit;
  for (std::size_t j = 0; j < plan.n_pairs(); ++j) out.pairs.push_back(recover_pair(d, plan, j, tokens));
  return out;
}

namespace {

// A pair is as given when its interval holds the given θ_j, widened by a float32 frequency's rounding.
bool as_given(const RecoveredPair& p, const RopePlan& plan) {
  const double w = plan.inv_freq()[p.pair], slack = 4 * 0x1p-24 * std::fabs(w);
  return p.lo - slack <= w && w <= p.hi + slack;
}

// A run of determined pairs: as given, or one ratio every pair's interval holds (widened by 1e-4 relative).
struct Run {
  std::size_t first, last;
  bool given;
  double ratio;
};

std::vector<Run> ratio_runs(const std::vector<RecoveredPair>& pairs, const RopePlan& plan) {
  std::vector<Run> runs;
  for (std::size_t k = 0; k < pairs.size();) {
    if (!pairs[k].theta) {
      ++k;
      continue;
    }
    const double w = plan.inv_freq()[pairs[k].pair];
    const bool g = as_given(pairs[k], plan);
    double lo = pairs[k].lo / w, hi = pairs[k].hi / w;
    std::size_t end = k;
    for (std::size_t m = k + 1; m < pairs.size(); ++m) {
      if (!pairs[m].theta) continue;
      const double wm = plan.inv_freq()[pairs[m].pair];
      if (g || as_given(pairs[m], plan)) {
        if (g != as_given(pairs[m], plan)) break;
        end = m;
        continue;
      }
      const double l = std::max(lo, pairs[m].lo / wm * (1 - 1e-4));
      const double h = std::min(hi, pairs[m].hi / wm * (1 + 1e-4));
      if (l > h) break;
      lo = l, hi = h, end = m;
    }
    runs.push_back({pairs[k].pair, pairs[end].pair, g, 0.5 * (lo + hi)});
    k = end + 1;
  }
  return runs;
}

// The runs in words; three or more single pairs in a row, each its own ratio, are a ramp (Llama-3's and
// YaRN's blends).
std::string runs_words(const std::vector<Run>& runs) {
  std::string words;
  for (std::size_t k = 0; k < runs.size();) {
    std::size_t end = k;
    while (end + 1 < runs.size() && !runs[end + 1].given && runs[end + 1].first == runs[end + 1].last &&
           !runs[k].given && runs[k].first == runs[k].last)
      ++end;
    if (end - k >= 2) {
      double lo = INFINITY, hi = -INFINITY;
      for (std::size_t m = k; m <= end; ++m)
        lo = std::min(lo, runs[m].ratio), hi = std::max(hi, runs[m].ratio);
      words += fmt::format(
          "{}pairs {}-{} each their own ratio, between {:.4g} and {:.4g} times the given frequency",
          words.empty() ? "" : "; ", runs[k].first, runs[end].last, lo, hi);
    } else {
      end = k;
      words += fmt::format("{}{} {}", words.empty() ? "" : "; ", range(runs[k].first, runs[k].last),
                           runs[k].given ? "as given" : ratio_words(runs[k].ratio));
    }
    k = end + 1;
  }
  return words;
}

// The gain |y|/|x| (the median over pairs) when it is not the attention factor (one dropped or doubled).
std::string gain_words(const RecoveredFrequencies& r, const RopePlan& plan) {
  std::vector<double> gains;
  for (const RecoveredPair& p : r.pairs)
    if (p.gain > 0) gains.push_back(p.gain);
  if (gains.empty()) return "";
  std::nth_element(gains.begin(), gains.begin() + static_cast<std::ptrdiff_t>(gains.size() / 2), gains.end());
  const double g = gains[gains.size() / 2];
  if (std::fabs(g - plan.attention_factor()) <= 2e-3 * plan.attention_factor()) return "";
  return fmt::format("; gain |y|/|x| {:.4g} (given {:.4g})", g, plan.attention_factor());
}

}  // namespace

std::string frequency_pattern(const RecoveredFrequencies& r, const RopePlan& plan) {
  std::size_t determined = 0, given = 0, bf16 = 0, not_given_resolved = 0;
  for (const RecoveredPair& p : r.pairs) {
    if (!p.theta) continue;
    ++determined;
    const double w = plan.inv_freq()[p.pair], b = to_float(to_bfloat16(w));
    if (as_given(p, plan))
      ++given;
    else
      ++not_given_resolved;
    if (p.lo - 4 * 0x1p-24 * b <= b && b <= p.hi + 4 * 0x1p-24 * b) ++bf16;
  }
  const std::string gain = gain_words(r, plan);
  if (determined == 0 && gain.empty()) return "";
  if (given == determined) {
    if (gain.empty()) return "";
    return fmt::format("frequencies read back ({} tokens, every head; {} of {} pairs determined): {}{}",
                       r.tokens, determined, r.pairs.size(), determined == 0 ? "none" : "every one as given",
                       gain);
  }
  std::string words = runs_words(ratio_runs(r.pairs, plan));
  // Rounded to bfloat16 explains every pair at once: said instead of the runs it leaves.
  if (bf16 == determined && not_given_resolved >= 3)
    words = fmt::format(
        "every one is the given frequency rounded to bfloat16 ({} of them resolved apart from "
        "the given one: a module cast to bfloat16 with its inv_freq buffer)",
        not_given_resolved);
  return fmt::format("frequencies read back ({} tokens, every head; {} of {} pairs determined): {}", r.tokens,
                     determined, r.pairs.size(), words) +
         gain;
}

}  // namespace pe::check

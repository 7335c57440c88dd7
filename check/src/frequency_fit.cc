#include "frequency_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "pe/errors.h"

namespace pe::check {
namespace {

// Whether every determined pair's interval holds the candidate's frequency (widened by a float32
// frequency's rounding, which a kernel's table carries).
std::size_t pairs_inside(const RecoveredFrequencies& r, const RopeParams& candidate) {
  std::optional<RopePlan> plan;
  try {
    plan.emplace(candidate);
  } catch (const InvalidArgument&) {
    return 0;
  }
  std::size_t inside = 0;
  for (const RecoveredPair& p : r.pairs) {
    if (!p.theta) continue;
    const double w = plan->inv_freq()[p.pair], slack = 4 * 0x1p-24 * std::fabs(w);
    if (p.lo - slack <= w && w <= p.hi + slack) ++inside;
  }
  return inside;
}

std::string number(double v) { return fmt::format("{:g}", v); }

// "factor 16 (given 8), original_max_position 2048 (given 8192)": the fields that differ.
std::string differences(const RopeParams& fit, const RopeParams& given) {
  std::vector<std::string> parts;
  const RopeScaling &f = fit.scaling, &g = given.scaling;
  const bool same_method = f.type == g.type;
  const auto field = [&](const char* name, double a, double b, bool used) {
    if (!used) return;
    if (!same_method)
      parts.push_back(fmt::format("{} {}", name, number(a)));
    else if (a != b)
      parts.push_back(fmt::format("{} {} (given {})", name, number(a), number(b)));
  };
  if (fit.base != given.base)
    parts.push_back(fmt::format("base {} (given {})", number(fit.base), number(given.base)));
  const bool scaled = f.type != RopeScalingType::None;
  field("factor", f.factor, g.factor, scaled);
  field("low_freq_factor", f.low_freq_factor, g.low_freq_factor, f.type == RopeScalingType::Llama3);
  field("high_freq_factor", f.high_freq_factor, g.high_freq_factor, f.type == RopeScalingType::Llama3);
  field("beta_fast", f.beta_fast, g.beta_fast, f.type == RopeScalingType::Yarn);
  field("beta_slow", f.beta_slow, g.beta_slow, f.type == RopeScalingType::Yarn);
  field("original_max_position", static_cast<double>(f.original_max_position),
        static_cast<double>(g.original_max_position),
        f.type == RopeScalingType::Llama3 || f.type == RopeScalingType::Yarn);
  std::string method = same_method ? std::string(to_string(f.type))
                                   : fmt::format("{} (given {})", to_string(f.type), to_string(g.type));
  if (!scaled) method = same_method ? "" : fmt::format("no scaling (given {})", to_string(g.type));
  std::string out = method;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  return out;
}

// The median of θ_plain,j / θ̂_j over determined pairs at or beyond `from` (the divided ones).
double median_divisor(const RecoveredFrequencies& r, const RopePlan& plain, std::size_t from) {
  std::vector<double> v;
  for (const RecoveredPair& p : r.pairs)
    if (p.theta && p.pair >= from && *p.theta > 0) v.push_back(plain.inv_freq()[p.pair] / *p.theta);
  if (v.empty()) return 1;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

// Factors as configs write them: the estimate rounded to a quarter when it is that close.
double tidy(double f) {
  const double q = std::round(f * 4) / 4;
  return std::fabs(q - f) <= 1e-3 * f ? q : f;
}

// How many of a Llama-3 or YaRN candidate's fields differ from the given scaling's (3: another method).
std::size_t changes(const RopeScaling& c, const RopeScaling& g) {
  if (c.type != g.type) return 3;
  const bool llama3 = c.type == RopeScalingType::Llama3;
  return (c.factor != g.factor) + (c.original_max_position != g.original_max_position) +
         (llama3 ? (c.low_freq_factor != g.low_freq_factor) + (c.high_freq_factor != g.high_freq_factor)
                 : (c.beta_fast != g.beta_fast) + (c.beta_slow != g.beta_slow));
}

}  // namespace

std::optional<FrequencyFit> fit_frequencies(const RecoveredFrequencies& r, const RopeParams& given) {
  std::size_t determined = 0;
  for (const RecoveredPair& p : r.pairs) determined += p.theta ? 1 : 0;
  if (determined < 8) return std::nullopt;
  if (pairs_inside(r, given) == determined) return std::nullopt;  // the given frequencies fit
  RopeParams plain_params = given;
  plain_params.scaling = {};
  const RopePlan plain(plain_params);
  const std::size_t n = plain.n_pairs(), d = plain.rotary_dim();
  // Candidates by how many fields they change: the first group that holds every pair wins.
  std::vector<std::vector<RopeParams>> groups(4);
  const auto add = [&](std::size_t changes, RopeParams p) {
    groups[std::min<std::size_t>(changes, 3)].push_back(p);
  };
  // Another base (NTK's is one): from the fastest determined pair past the first.
  for (const RecoveredPair& p : r.pairs) {
    if (!p.theta || p.pair == 0 || *p.theta <= 0) continue;
    const double b =
        std::exp(-std::log(*p.theta) * static_cast<double>(d) / (2.0 * static_cast<double>(p.pair)));
    for (const double base : {b, std::round(b), std::round(b / 1000) * 1000}) {
      RopeParams c = plain_params;
      c.base = base;
      add(given.scaling.type == RopeScalingType::None ? 1 : 2, c);
    }
    break;
  }
  // No scaling at all.
  if (given.scaling.type != RopeScalingType::None) add(1, plain_params);
  // Linear: every pair divided by one factor.
  {
    RopeParams c = plain_params;
    c.scaling.type = RopeScalingType::Linear;
    c.scaling.factor = tidy(median_divisor(r, plain, 0));
    add(given.scaling.type == RopeScalingType::Linear ? 1 : 2, c);
  }
  std::vector<double> originals = {256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
  if (given.scaling.original_max_position > 0)
    originals.push_back(static_cast<double>(given.scaling.original_max_position));
  // Llama-3: the slow pairs' divisor is the factor; original, low and high on their usual grids.
  for (const double original : originals) {
    for (const double low : {1.0, 2.0, 4.0}) {
      for (const double high : {1.0, 2.0, 4.0, 8.0, 16.0}) {
        if (high < low) continue;
        std::size_t from = n;
        for (std::size_t j = 0; j < n; ++j)
          if (2 * std::numbers::pi / plain.inv_freq()[j] > original / low) {
            from = j;
            break;
          }
        RopeParams c = plain_params;
        c.scaling.type = RopeScalingType::Llama3;
        c.scaling.factor = tidy(median_divisor(r, plain, from));
        c.scaling.low_freq_factor = low;
        c.scaling.high_freq_factor = high;
        c.scaling.original_max_position = static_cast<std::int64_t>(original);
        add(changes(c.scaling, given.scaling), c);
      }
    }
  }
  // YaRN: the slow pairs' divisor is the factor; betas (either order) and original on their grids.
  for (const double original : originals) {
    for (const double fast : {32.0, 16.0, 64.0, 8.0, 1.0}) {
      for (const double slow : {1.0, 2.0, 0.5, 32.0}) {
        RopeParams c = plain_params;
        c.scaling.type = RopeScalingType::Yarn;
        c.scaling.factor = tidy(median_divisor(r, plain, n - std::max<std::size_t>(1, n / 8)));
        c.scaling.beta_fast = fast;
        c.scaling.beta_slow = slow;
        c.scaling.original_max_position = static_cast<std::int64_t>(original);
        c.scaling.truncate = given.scaling.type == RopeScalingType::Yarn ? given.scaling.truncate : true;
        add(changes(c.scaling, given.scaling), c);
      }
    }
  }
  for (const auto& group : groups) {
    for (const RopeParams& c : group) {
      if (pairs_inside(r, c) == determined) return FrequencyFit{c, differences(c, given), determined};
    }
  }
  return std::nullopt;
}

}  // namespace pe::check

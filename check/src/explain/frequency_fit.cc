#include "explain/frequency_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "pe/errors.h"
#include "pe/half.h"

namespace pe::check {
namespace {

// A hypothesis: a plan's frequencies, perhaps with YaRN's blend inverted, seen through positions divided
// by `scale`; `changes`: how many of the given parameters it changes (fewest first).
struct FitCandidate {
  RopeParams params;
  double scale = 1;
  bool inverted = false;
  std::size_t changes = 0;
  std::optional<DType> rounded;  // the table stored in a 16-bit type (a module cast with the model)
};

// The candidate's frequencies as the rows see them; nullopt for parameters no plan takes.
std::optional<std::vector<double>> table_of(const FitCandidate& c) {
  std::optional<RopePlan> plan;
  try {
    plan.emplace(c.params);
  } catch (const InvalidArgument&) {
    return std::nullopt;
  }
  std::vector<double> w(plan->inv_freq().begin(), plan->inv_freq().end());
  // YaRN's θ'_j = θ_j·g_j with g_j = (1 - e_j)/s + e_j (e_j = 1 - ramp): the other blend is g'_j = 1 + 1/s -
  // g_j.
  if (c.inverted)
    for (std::size_t j = 0; j < w.size(); ++j)
      w[j] = w[j] / plan->gain()[j] * (1 + 1 / c.params.scaling.factor - plan->gain()[j]);
  for (double& v : w) v /= c.scale;
  if (c.rounded == DType::BF16)
    for (double& v : w) v = to_float(to_bfloat16(v));
  if (c.rounded == DType::F16)
    for (double& v : w) v = to_float(to_float16(v));
  return w;
}

// A frequency's interval widened by a float32 frequency's rounding, which a kernel's table carries.
bool inside(const RecoveredPair& p, double w) {
  const double slack = 4 * 0x1p-24 * std::fabs(w);
  return p.lo - slack <= w && w <= p.hi + slack;
}

std::size_t pairs_inside(const RecoveredFrequencies& r, const std::vector<double>& w) {
  std::size_t n = 0;
  for (const RecoveredPair& p : r.pairs) n += p.theta && inside(p, w[p.pair]) ? 1 : 0;
  return n;
}

std::string number(double v) { return fmt::format("{:g}", v); }

// A value in [lo, hi] as configs write it: a quarter (or a whole number) when one lies inside, else the
// middle; nullopt when the interval is empty.
std::optional<double> pick_within(double lo, double hi) {
  if (!(lo <= hi) || !std::isfinite(hi) || !(hi > 0)) return std::nullopt;
  const double mid = 0.5 * (lo + hi);
  for (const double q : {std::round(mid), std::round(mid * 4) / 4})
    if (q >= lo && q <= hi && q > 0) return q;
  return mid;
}

// The ratio s with w_j / s inside the interval of every determined pair in [from, to): from their
// intersection (pick_within); nullopt when no pair is determined there or they disagree.
std::optional<double> ratio_between(const RecoveredFrequencies& r, std::span<const double> w,
                                    std::size_t from, std::size_t to) {
  double lo = 0, hi = INFINITY;
  for (const RecoveredPair& p : r.pairs) {
    if (!p.theta || !(p.lo > 0) || p.pair < from || p.pair >= to) continue;
    lo = std::max(lo, w[p.pair] / p.hi * (1 - 4 * 0x1p-24));
    hi = std::min(hi, w[p.pair] / p.lo * (1 + 4 * 0x1p-24));
  }
  return pick_within(lo, hi);
}

// How many of a Llama-3 or YaRN candidate's fields differ from the given scaling's (3: another method).
std::size_t changes(const RopeScaling& c, const RopeScaling& g) {
  if (c.type != g.type) return 3;
  const bool llama3 = c.type == RopeScalingType::Llama3;
  return (c.factor != g.factor) + (c.original_max_position != g.original_max_position) +
         (llama3 ? (c.low_freq_factor != g.low_freq_factor) + (c.high_freq_factor != g.high_freq_factor)
                 : (c.beta_fast != g.beta_fast) + (c.beta_slow != g.beta_slow));
}

// The base b and position scale s of θ̂_j = b^(-2j/d) / s, by least squares on log θ̂_j.
std::pair<double, double> base_and_scale(const RecoveredFrequencies& r, std::size_t d) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const RecoveredPair& p : r.pairs) {
    if (!p.theta || *p.theta <= 0) continue;
    const double x = 2.0 * static_cast<double>(p.pair) / static_cast<double>(d), y = std::log(*p.theta);
    n += 1, sx += x, sy += y, sxx += x * x, sxy += x * y;
  }
  const double slope = (n * sxy - sx * sy) / (n * sxx - sx * sx), intercept = (sy - slope * sx) / n;
  return {std::exp(-slope), std::exp(-intercept)};
}

// A method that keeps some pairs, divides others by its factor and blends between (Llama-3, YaRN either
// blend): its factor, from the pairs it divides (those its plan at factor 2 halves) against θ̂. nullopt when
// none of them is determined or they disagree.
std::optional<double> factor_of(const RecoveredFrequencies& r, std::span<const double> plain,
                                FitCandidate c) {
  c.params.scaling.factor = 2;
  const auto halved = table_of(c);
  if (!halved) return std::nullopt;
  RecoveredFrequencies divided;
  for (const RecoveredPair& p : r.pairs)
    if (std::fabs(2 * (*halved)[p.pair] - plain[p.pair]) <= 1e-12 * plain[p.pair]) divided.pairs.push_back(p);
  return ratio_between(divided, plain, 0, plain.size());
}

// The hypotheses at one position scale, and what each is built from.
struct Hypotheses {
  const RopeParams& given;
  double scale;
  RopeParams plain_params = without_scaling(given);
  RopePlan plain{plain_params};
  RecoveredFrequencies unscaled;  // θ̂ as the rows would show it at undivided positions
  std::vector<FitCandidate> out;

  Hypotheses(const RecoveredFrequencies& r, const RopeParams& g, double s) : given(g), scale(s), unscaled(r) {
    for (RecoveredPair& p : unscaled.pairs)
      if (p.theta) *p.theta *= scale, p.lo *= scale, p.hi *= scale;
  }
  static RopeParams without_scaling(RopeParams p) {
    p.scaling = {};
    return p;
  }
  void add(std::size_t changed, const RopeParams& p, bool inverted = false) {
    out.push_back({p, scale, inverted, changed + (scale != 1 ? 1 : 0), std::nullopt});
  }
  // A method that divides some pairs by its factor, the factor read from those pairs.
  void add_factored(RopeParams c, bool inverted) {
    const auto f = factor_of(unscaled, plain.inv_freq(), FitCandidate{c, 1, inverted, 0, std::nullopt});
    if (!f || (inverted && *f <= 1)) return;
    c.scaling.factor = *f;
    add(changes(c.scaling, given.scaling) + (inverted ? 1 : 0), c, inverted);
  }
};

// Another base: b from the least-squares line (the scale is already out); NTK's and dynamic's bases are
// their methods' factor and length. Round values first (as configs write them), NTK's base for the nearest
// quarter factor, then b itself.
void add_bases(Hypotheses& h) {
  const RopeParams& given = h.given;
  const RopeScaling& g = given.scaling;
  const std::size_t d = h.plain.rotary_dim();
  const auto [b, s] = base_and_scale(h.unscaled, d);
  if (!std::isfinite(b) || b <= 1) return;
  const double exponent = static_cast<double>(d - 2) / static_cast<double>(d);
  const double q = std::round(std::pow(b / given.base, exponent) * 4) / 4;
  const double ntk = given.base * std::pow(q, static_cast<double>(d) / static_cast<double>(d - 2));
  for (const double base : {std::round(b / 1000) * 1000, std::round(b), ntk, b}) {
    if (std::fabs(base - given.base) <= 1e-6 * given.base) continue;
    RopeParams c = h.plain_params;
    c.base = base;
    h.add(g.type != RopeScalingType::None ? 2 : 1, c);
  }
  const double ratio = std::pow(b / given.base, exponent);
  if (g.type == RopeScalingType::Ntk) {
    RopeParams c = given;
    c.scaling.factor = pick_within(ratio * (1 - 1e-4), ratio * (1 + 1e-4)).value_or(ratio);
    h.add(1, c);
  }
  if (g.type == RopeScalingType::Dynamic && g.factor > 1) {
    RopeParams c = given;  // base' = b·(s·n/L - (s - 1))^(d/(d-2))
    c.scaling.seq_len = static_cast<std::int64_t>(
        std::llround(static_cast<double>(g.original_max_position) * (ratio + g.factor - 1) / g.factor));
    h.add(1, c);
  }
}

// Llama-3's usual factors and the given ones (either way round: HF's formula with them swapped divides every
// wavelength beyond L/high_freq_factor and smooths none, which is low = high = the given high); YaRN's usual
// betas, either blend.
void add_blends(Hypotheses& h, const std::vector<double>& originals) {
  const RopeScaling& g = h.given.scaling;
  std::vector<double> lows = {1.0, 2.0, 4.0}, highs = {1.0, 2.0, 4.0, 8.0, 16.0};
  if (g.type == RopeScalingType::Llama3)
    for (const double v : {g.low_freq_factor, g.high_freq_factor}) {
      if (std::find(lows.begin(), lows.end(), v) == lows.end()) lows.push_back(v);
      if (std::find(highs.begin(), highs.end(), v) == highs.end()) highs.push_back(v);
    }
  for (const double original : originals)
    for (const double low : lows)
      for (const double high : highs) {
        if (high < low) continue;
        RopeParams c = h.plain_params;
        c.scaling.type = RopeScalingType::Llama3;
        c.scaling.low_freq_factor = low;
        c.scaling.high_freq_factor = high;
        c.scaling.original_max_position = static_cast<std::int64_t>(original);
        h.add_factored(c, false);
      }
  for (const double original : originals)
    for (const double fast : {32.0, 16.0, 64.0, 8.0, 1.0})
      for (const double slow : {1.0, 2.0, 0.5, 32.0}) {
        RopeParams c = h.plain_params;
        c.scaling.type = RopeScalingType::Yarn;
        c.scaling.beta_fast = fast;
        c.scaling.beta_slow = slow;
        c.scaling.original_max_position = static_cast<std::int64_t>(original);
        c.scaling.truncate = g.type == RopeScalingType::Yarn ? g.truncate : true;
        h.add_factored(c, false);
        h.add_factored(c, true);
      }
}

// Every hypothesis, the positions divided by `scale` (1: not): another base (NTK's and dynamic's among
// them), no scaling, a linear factor, Llama-3 and YaRN (either blend) over their parameters' usual grids
// (factors from the pairs they divide).
std::vector<FitCandidate> candidates(const RecoveredFrequencies& r, const RopeParams& given, double scale) {
  Hypotheses h(r, given, scale);
  const RopeScaling& g = given.scaling;
  const bool scaled = g.type != RopeScalingType::None;
  // The given frequencies stored in a 16-bit type: HF's inv_freq buffer after model.to(torch.bfloat16).
  if (scale == 1)
    for (const DType t : {DType::BF16, DType::F16}) h.out.push_back({given, 1, false, 1, t});
  // The given method with the positions divided: every parameter as given (without a method or with the
  // linear one, that is the linear candidate below).
  if (scale != 1 && scaled && g.type != RopeScalingType::Linear) h.add(0, given);
  add_bases(h);
  if (scaled && scale == 1) h.add(1, h.plain_params);  // (with a scale: the linear candidate)
  if (scale == 1) {
    RopeParams c = h.plain_params;
    c.scaling.type = RopeScalingType::Linear;
    if (const auto f = ratio_between(h.unscaled, h.plain.inv_freq(), 0, h.plain.n_pairs())) {
      c.scaling.factor = *f;
      h.add(g.type == RopeScalingType::Linear ? 1 : 2, c);
    }
  }
  std::vector<double> originals = {256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072};
  if (g.original_max_position > 0) originals.push_back(static_cast<double>(g.original_max_position));
  add_blends(h, originals);
  return std::move(h.out);
}

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
  field("factor", f.factor, g.factor, scaled && f.type != RopeScalingType::LongRope);
  field("low_freq_factor", f.low_freq_factor, g.low_freq_factor, f.type == RopeScalingType::Llama3);
  field("high_freq_factor", f.high_freq_factor, g.high_freq_factor, f.type == RopeScalingType::Llama3);
  field("beta_fast", f.beta_fast, g.beta_fast, f.type == RopeScalingType::Yarn);
  field("beta_slow", f.beta_slow, g.beta_slow, f.type == RopeScalingType::Yarn);
  field("original_max_position", static_cast<double>(f.original_max_position),
        static_cast<double>(g.original_max_position),
        f.type == RopeScalingType::Llama3 || f.type == RopeScalingType::Yarn);
  field("seq_len", static_cast<double>(f.seq_len), static_cast<double>(g.seq_len),
        f.type == RopeScalingType::Dynamic);
  std::string method = same_method ? std::string(to_string(f.type))
                                   : fmt::format("{} (given {})", to_string(f.type), to_string(g.type));
  if (!scaled) method = same_method ? "" : fmt::format("no scaling (given {})", to_string(g.type));
  if (same_method && parts.empty()) return "frequencies as given";
  std::string out = method;
  for (const std::string& p : parts) out += (out.empty() ? "" : ", ") + p;
  // Another base that is NTK's for a round factor: say so.
  if (fit.base != given.base && !scaled) {
    const double d = static_cast<double>(fit.rotary_dim != 0 ? fit.rotary_dim : fit.head_dim);
    const double s = std::pow(fit.base / given.base, (d - 2) / d);
    const double q = std::round(s * 4) / 4;
    if (s > 1.01 && std::fabs(q - s) <= 1e-4 * s) out += fmt::format(": NTK's base for factor {}", number(q));
  }
  return out.empty() ? "frequencies as given" : out;
}

struct GainWords {
  std::string words;
  std::optional<double> exact;  // the named attention factor's value; nullopt: no formula's (only measured)
};

// The gain read back against the attention factors the methods apply: unnamed when it is the fitted
// method's own (within 2e-3 relative, the recovered gain's spread), else which one it is.
std::optional<GainWords> gain_words(double gain, const RopePlan& fit, const RopePlan& given) {
  const double own = fit.attention_factor();
  const auto near = [gain](double v) { return std::fabs(gain - v) <= 2e-3 * v; };
  if (gain <= 0 || near(own)) return std::nullopt;
  const RopeScaling& g = given.params().scaling;
  const double s =
      fit.params().scaling.type != RopeScalingType::None ? fit.params().scaling.factor : g.factor;
  std::string what;
  std::optional<double> exact;
  const double longrope =
      g.original_max_position > 1
          ? std::sqrt(1 + std::log(s) / std::log(static_cast<double>(g.original_max_position)))
          : 0;
  if (near(1)) {
    what = "no attention factor", exact = 1;
  } else if (near(given.attention_factor())) {
    what = fmt::format("the given {}'s attention factor", to_string(g.type)),
    exact = given.attention_factor();
  } else if (s > 1 && near(0.1 * std::log(s) + 1)) {
    what = fmt::format("YaRN's attention factor 0.1·ln({}) + 1", number(s)), exact = 0.1 * std::log(s) + 1;
  } else if (s > 1 && longrope > 0 && near(longrope)) {
    what = fmt::format("LongRoPE's attention factor √(1 + ln {}/ln {})", number(s), g.original_max_position);
    exact = longrope;
  } else {
    what = "no method's attention factor";
  }
  return GainWords{fmt::format("gain |y|/|x| {:.4g} ({}) where {} applies {:.4g}", gain, what,
                               fit.params().scaling.type == given.params().scaling.type
                                   ? std::string("the method")
                                   : std::string(to_string(fit.params().scaling.type)),
                               own),
                   exact};
}

// The fit as the parameters to rerun the check with, every one the method reads (values as configs write
// them, exact where a formula gave them); none where the parameters cannot state it.
std::optional<RopeSpec> hypothesis_of(const RopeParams& p, double scale, bool scale_exact,
                                      std::optional<double> attention) {
  using T = RopeScalingType;
  const RopeScaling& s = p.scaling;
  if (s.type == T::LongRope) return std::nullopt;
  RopeSpec out;
  ScalingSpec& o = out.scaling;
  out.base = p.base;
  if (s.type != T::None) {
    o.method = s.type;
    o.factor = s.factor;
    if (reads_field(s.type, "original_max_position") && s.original_max_position > 0)
      o.original_max_position = s.original_max_position;
    if (s.type == T::Dynamic && s.seq_len > 0) o.seq_len = s.seq_len;
    if (s.type == T::Dynamic && s.dynamic_semantics != DynamicSemantics::Live)
      o.dynamic_semantics = s.dynamic_semantics;
    if (s.type == T::Dynamic) o.alpha = s.alpha;
    if (s.type == T::Proportional) o.partial_rotary_factor = s.partial_rotary_factor;
    if (s.type == T::Llama3) o.low_freq_factor = s.low_freq_factor, o.high_freq_factor = s.high_freq_factor;
    if (s.type == T::Yarn) {
      o.beta_fast = s.beta_fast, o.beta_slow = s.beta_slow;
      if (!s.truncate) o.truncate = false;
      if (s.mscale && s.mscale_all_dim && !attention && !s.attention_factor)
        o.mscale = s.mscale, o.mscale_all_dim = s.mscale_all_dim;
      if (s.yarn_attention != YarnAttention::Replace && !attention) {
        o.yarn_attention = s.yarn_attention;
        if (s.mscale && s.mscale_all_dim) o.mscale = s.mscale, o.mscale_all_dim = s.mscale_all_dim;
      }
    }
  }
  // The given position scale and attention factor carry over unless the fit replaces them.
  const double positions = s.position_scale * scale;
  if (positions != 1) {
    if (scale != 1 && !scale_exact) return std::nullopt;
    o.position_scale = positions;
  }
  o.attention_factor = attention ? attention : s.attention_factor;
  return out;
}

}  // namespace

double median_gain(const RecoveredFrequencies& r) {
  std::vector<double> gains;
  for (const RecoveredPair& p : r.pairs)
    if (p.gain > 0) gains.push_back(p.gain);
  if (gains.empty()) return 0;
  std::nth_element(gains.begin(), gains.begin() + static_cast<std::ptrdiff_t>(gains.size() / 2), gains.end());
  return gains[gains.size() / 2];
}

namespace {

// The simplest candidate (fewest parameters changed) whose table holds every determined pair: the given
// parameters when they do; candidates at a position scale rank after those without.
std::optional<FitCandidate> best_candidate(const RecoveredFrequencies& r, const RopeParams& given,
                                           const std::vector<double>& given_table, std::size_t determined) {
  if (pairs_inside(r, given_table) == determined) return FitCandidate{given, 1, false, 0, std::nullopt};
  // The positions' scale, from the pairs a scaling leaves alone (the fastest quarter) and from the given
  // method's own frequencies; candidates with it rank after those without.
  RopeParams plain = given;
  plain.scaling = {};
  const std::vector<double> plain_table = *table_of(FitCandidate{plain, 1, false, 0, std::nullopt});
  std::vector<double> scales = {1};
  const std::size_t quarter = std::max<std::size_t>(1, plain_table.size() / 4);
  for (const auto& s : {ratio_between(r, plain_table, 0, quarter), ratio_between(r, given_table, 0, quarter)})
    if (s && std::fabs(*s - 1) > 1e-3 && std::find(scales.begin(), scales.end(), *s) == scales.end())
      scales.push_back(*s);
  std::vector<FitCandidate> all;
  for (const double s : scales)
    for (FitCandidate& c : candidates(r, given, s)) all.push_back(std::move(c));
  std::stable_sort(all.begin(), all.end(),
                   [](const FitCandidate& a, const FitCandidate& b) { return a.changes < b.changes; });
  for (FitCandidate& c : all) {
    auto table = table_of(c);
    if (!table) continue;
    if (c.scale != 1) {  // the scale that holds every pair for these frequencies, if one does
      for (double& v : *table) v *= c.scale;
      const auto s = ratio_between(r, *table, 0, table->size());
      if (!s) continue;
      c.scale = *s;
      for (double& v : *table) v /= c.scale;
    }
    // A candidate that is the given table again (linear factor 1, a base within rounding) explains nothing.
    bool same = c.scale == 1;
    for (std::size_t j = 0; j < table->size() && same; ++j)
      same = std::fabs((*table)[j] - given_table[j]) <= 1e-9 * std::fabs(given_table[j]);
    if (same) continue;
    if (pairs_inside(r, *table) == determined) return c;
  }
  return std::nullopt;
}

// The gain read back in words: one gain for every token and pair, or none to name (a gain that moves with
// the position, a temperature the check was not given, is no attention factor, whatever its median).
std::optional<GainWords> observed_gain(const RecoveredFrequencies& r, const RopePlan& fitted,
                                       const RopePlan& given_plan) {
  double lo = INFINITY, hi = 0;
  for (const RecoveredPair& p : r.pairs)
    if (p.gain > 0) lo = std::min(lo, p.gain_lo), hi = std::max(hi, p.gain_hi);
  const bool one_gain = !(hi > 0) || hi - lo <= (4e-3 + 16 * r.unit) * median_gain(r);
  return one_gain
             ? gain_words(median_gain(r), fitted, given_plan)
             : std::optional<GainWords>(GainWords{
                   fmt::format("gain |y|/|x| varies from {:.4g} to {:.4g} over the rows (no one attention "
                               "factor: a gain that moves with the position)",
                               lo, hi),
                   std::nullopt});
}

}  // namespace

std::optional<FrequencyFit> fit_frequencies(const RecoveredFrequencies& r, const RopeParams& given) {
  std::size_t determined = 0;
  for (const RecoveredPair& p : r.pairs) determined += p.theta ? 1 : 0;
  if (determined < 8) return std::nullopt;
  const RopePlan given_plan(given);
  const std::vector<double> given_table(given_plan.inv_freq().begin(), given_plan.inv_freq().end());
  const std::optional<FitCandidate> best = best_candidate(r, given, given_table, determined);
  if (!best) return std::nullopt;
  FrequencyFit fit;
  fit.params = best->params;
  fit.position_scale = best->scale;
  fit.inverted_blend = best->inverted;
  fit.rounded = best->rounded;
  fit.pairs = determined;
  const RopePlan fitted(best->params);
  const std::optional<GainWords> gain = observed_gain(r, fitted, given_plan);
  const bool as_given = best->changes == 0 && best->scale == 1;
  if (as_given && !gain) return std::nullopt;
  fit.gain = gain ? std::optional<double>(median_gain(r)) : std::nullopt;
  fit.words = differences(best->params, given);
  const RopeScaling &fs = best->params.scaling, &gs = given.scaling;
  if (fs.type == RopeScalingType::Llama3 && gs.type == RopeScalingType::Llama3 &&
      gs.low_freq_factor < gs.high_freq_factor && fs.low_freq_factor == fs.high_freq_factor &&
      fs.high_freq_factor == gs.high_freq_factor)
    fit.words +=
        " (a step at L/high_freq_factor with no smoothing: what HF's formula computes with "
        "low_freq_factor and high_freq_factor swapped, or low_freq_factor set to high_freq_factor)";
  if (best->inverted)
    fit.words = (fit.words == "frequencies as given" ? std::string(to_string(best->params.scaling.type))
                                                     : fit.words) +
                ", its blend inverted (ramp where HF blends by 1 - ramp)";
  if (best->rounded) {
    const std::string rounded = fmt::format(
        "inv_freq rounded to {} (the rotary module cast with the model: model.to(torch.{}) turns its "
        "inv_freq buffer to {})",
        to_string(*best->rounded), best->rounded == DType::BF16 ? "bfloat16" : "float16",
        to_string(*best->rounded));
    fit.words = fit.words == "frequencies as given" ? rounded : fit.words + ", " + rounded;
  }
  double scale = best->scale;
  bool scale_exact = scale == std::round(scale * 4) / 4;  // pick_within's quarter: as a config writes it
  if (best->scale != 1) {
    const std::string words = fmt::format("positions divided by {:.6g}", best->scale);
    fit.words = fit.words == "frequencies as given" ? words : fit.words + ", " + words;
    if (std::fabs(best->scale - given_plan.attention_factor()) <= 1e-4 * best->scale &&
        given_plan.attention_factor() != 1) {
      fit.words += " (the given attention factor)";
      scale = given_plan.attention_factor(), scale_exact = true;
    }
  }
  if (gain) fit.words += "; " + gain->words;
  // The gain as an attention factor: the named formula's value (none named: the fit is not restated).
  std::optional<double> attention;
  if (gain && gain->exact) attention = *gain->exact;
  if (!best->inverted && !best->rounded && (!gain || gain->exact))
    fit.hypothesis = hypothesis_of(best->params, scale, scale_exact, attention);
  return fit;
}

}  // namespace pe::check

#include "explain/convention_fit.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <optional>
#include <set>

#include "explain/axial_candidates.h"
#include "pe/detail/rope_scaling_math.h"
#include "pe/errors.h"
#include "pe/plan.h"

namespace pe::check {
namespace {

std::vector<std::size_t> spread(std::size_t n, std::size_t at_most) {
  std::set<std::size_t> s;
  if (n == 0) return {};
  for (std::size_t k = 0; k < std::min(n, at_most); ++k)
    s.insert(k * (n - 1) / std::max<std::size_t>(1, std::min(n, at_most) - 1));
  return {s.begin(), s.end()};
}

std::string axis_name(std::size_t a) { return std::string(1, "thwe"[a]); }

long double inv_freq(const Convention& c, std::size_t i, std::size_t dim) {
  const long double half = static_cast<long double>(dim / 2);
  const long double exponent = c.t2t_exponent
                                   ? (half > 1 ? static_cast<long double>(i) / (half - 1) : 0.0L)
                                   : 2.0L * static_cast<long double>(i) / static_cast<long double>(dim);
  return std::pow(static_cast<long double>(c.base), -exponent);
}

// Every combination of the known conventions, with the given base and the common ones.
std::vector<Convention> candidates(const Convention& given, bool rope) {
  std::vector<double> bases = {given.base};
  for (double b : {1e4, 1e5, 5e5, 1e6, 1e7}) {
    if (b != given.base) bases.push_back(b);
  }
  std::vector<Layout> layouts = {given.layout};
  for (Layout l : rope ? std::vector<Layout>{Layout::HalfSplit, Layout::Interleaved, Layout::Deinterleave}
                       : std::vector<Layout>{Layout::Interleaved, Layout::Concatenated}) {
    if (l != given.layout) layouts.push_back(l);
  }
  std::vector<Convention> out;
  for (Layout layout : layouts) {
    for (bool swapped : {false, true}) {
      for (bool t2t : {false, true}) {
        for (std::int64_t shift : {0, 1, -1, 2, -2}) {
          for (double base : bases) {
            for (bool inverse : rope ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
              Convention c = given;
              c.layout = layout;
              c.base = base;
              c.swapped = swapped;
              c.t2t_exponent = t2t;
              c.shift = shift;
              c.inverse = inverse;
              out.push_back(c);
            }
          }
        }
      }
    }
  }
  return out;
}

std::vector<Fit> ranked(std::vector<Fit> fits) {
  std::stable_sort(fits.begin(), fits.end(),
                   [](const Fit& a, const Fit& b) { return a.residual < b.residual; });
  return fits;
}

}  // namespace

namespace {

// The temperature's position convention in words: llama4 reads ⌊(p + 1)/F⌋, mistral ⌊p/L⌋.
std::string temperature_difference(const Convention& c, const Convention& given) {
  const AttnTemperature& g = given.temperature;
  if (c.temperature.type == AttnTemperatureType::None) {
    return g.type == AttnTemperatureType::None
               ? ""
               : fmt::format("no attention temperature (given: {})", to_string(g.type));
  }
  if (g.type == AttnTemperatureType::None)
    return fmt::format("attention temperature {} at its defaults (given: none)",
                       to_string(c.temperature.type));
  if (c.temperature_shift == 0) return "";
  const bool to_llama4 = g.type == AttnTemperatureType::Mistral && c.temperature_shift == 1;
  const bool to_mistral = g.type == AttnTemperatureType::Llama4 && c.temperature_shift == -1;
  const char* convention = to_llama4 ? ": Llama-4's floor((p + 1)/F) convention, given mistral's floor(p/L)"
                           : to_mistral ? ": Mistral's floor(p/L) convention, given llama4's floor((p + 1)/F)"
                                        : "";
  return fmt::format("attention temperature read at p{:+}, the position convention off by {}{}",
                     c.temperature_shift, c.temperature_shift > 0 ? "one (+1)" : "one (-1)", convention);
}

}  // namespace

namespace {

std::string scaling_words(const RopeScaling& s) {
  if (s.type == RopeScalingType::None) return "no scaling";
  if (s.type == RopeScalingType::Yarn || s.type == RopeScalingType::Llama3)
    return fmt::format("{} factor {:g}, original_max_position {}", to_string(s.type), s.factor,
                       s.original_max_position);
  if (s.type == RopeScalingType::Dynamic && s.alpha)  // Hunyuan's alpha: the factor unread
    return fmt::format("dynamic alpha {:g}", *s.alpha);
  return fmt::format("{} factor {:g}", to_string(s.type), s.factor);
}

long double attention_of(const RopeScaling& s) {
  return ScalingRule<long double>(s, 2, 10000.0, std::numbers::pi_v<long double>).attention();
}

// The factor with the formula it matches: "0.1*ln(s) + 1 = 1.139", "1 (none)". The formulas read
// the given mscale keys (`keys`), which a candidate with its own factor has dropped.
std::string attention_words(const RopeScaling& s, const RopeScaling& keys) {
  const double a = static_cast<double>(attention_of(s)), ln_s = std::log(s.factor);
  RopeScaling hf = s;
  hf.attention_factor.reset();
  const double hf_default = static_cast<double>(attention_of(hf));
  const auto near = [a](double v) { return std::fabs(a - v) <= 1e-12 * std::max(1.0, std::fabs(v)); };
  std::string formula;
  if (!s.attention_factor && s.mscale && s.mscale_all_dim)
    return fmt::format("HF's ratio get_mscale(s, {:g})/get_mscale(s, {:g}) = {:.6g}", *s.mscale,
                       *s.mscale_all_dim, a);
  if (near(1)) return "1 (none)";
  if (near(0.1 * ln_s + 1))
    formula = "0.1*ln(s) + 1";
  else if (s.original_max_position > 1 &&
           near(std::sqrt(1 + ln_s / std::log(static_cast<double>(s.original_max_position)))))
    formula = "sqrt(1 + ln(s)/ln(L))";
  else if (keys.mscale_all_dim && near(0.1 * *keys.mscale_all_dim * ln_s + 1))
    formula = "0.1*mscale_all_dim*ln(s) + 1";
  else if (keys.mscale && near(0.1 * *keys.mscale * ln_s + 1))
    formula = "0.1*mscale*ln(s) + 1";
  else if (near(hf_default * hf_default))
    formula = "applied twice";
  return formula.empty() ? fmt::format("{:.6g}", a) : fmt::format("{} = {:.6g}", formula, a);
}

std::string longrope_list(const RopeScaling& s) {
  return ScalingRule<long double>::longrope_uses_long(s) ? "long_factor" : "short_factor";
}

// Dynamic NTK's two engine readings: HF's live n = max(seq_len, L), vLLM's and SGLang's static n = factor·L.
std::string dynamic_semantics_difference(const RopeScaling& c, const RopeScaling& g) {
  const auto static_n = static_cast<std::int64_t>(c.factor * static_cast<double>(c.original_max_position));
  if (c.dynamic_semantics == DynamicSemantics::Static)
    return fmt::format(
        "dynamic NTK computed with vLLM's static base (n = factor·L = {}, dynamic_semantics static) where "
        "HF's "
        "live length was expected (n = max(seq_len, L) = {})",
        static_n, std::max(g.seq_len, g.original_max_position));
  return fmt::format(
      "dynamic NTK computed with HF's live length (n = max(seq_len, L) = {}, dynamic_semantics live) where "
      "vLLM's static base was expected (n = factor·L = {})",
      std::max(c.seq_len, c.original_max_position), static_n);
}

std::string dynamic_alpha_difference(const RopeScaling& c, const RopeScaling& g) {
  if (!c.alpha)
    return fmt::format("dynamic without alpha (given alpha {:g}: Hunyuan's base·alpha^(d/(d-2)))", *g.alpha);
  if (!g.alpha)
    return fmt::format(
        "dynamic with alpha {:g} (Hunyuan's base·alpha^(d/(d-2)), vLLM's NTK alpha; given none)", *c.alpha);
  return fmt::format("dynamic alpha {:g} (given {:g})", *c.alpha, *g.alpha);
}

// How a candidate's scaling differs from the given one, in the words of the mistake.
std::string scaling_difference(const RopeScaling& c, const RopeScaling& g) {
  if (c.type == RopeScalingType::None && g.type == RopeScalingType::Dynamic && !g.alpha &&
      g.dynamic_semantics == DynamicSemantics::Static)  // HF's live base' is b itself while n = L
    return fmt::format(
        "scaling ignored: plain RoPE (given: {}, dynamic_semantics static), or dynamic NTK with HF's live "
        "length where vLLM's static base was expected (at n = max(seq_len, L) = L = {} the live base' is the "
        "plain base)",
        scaling_words(g), g.original_max_position);
  if (c.type == RopeScalingType::None)
    return fmt::format("scaling ignored: plain RoPE (given: {})", scaling_words(g));
  if (g.type == RopeScalingType::None) return fmt::format("scaling {} (given: none)", scaling_words(c));
  if (c.type != g.type) return fmt::format("scaling {} (given: {})", scaling_words(c), scaling_words(g));
  if (c.factor != g.factor)
    return fmt::format("{} factor {:g} (given {:g})", to_string(c.type), c.factor, g.factor);
  if (c.truncate != g.truncate)
    return fmt::format("yarn truncate {} (given: {})", c.truncate ? "on" : "off", g.truncate ? "on" : "off");
  if (c.longrope_switch != g.longrope_switch)
    return fmt::format("longrope switch {} (given: {}){}", to_string(c.longrope_switch),
                       to_string(g.longrope_switch),
                       switches_per_token(c) ? fmt::format(": short_factor below original_max_position {}, "
                                                           "long_factor from it, inside one sequence",
                                                           c.original_max_position)
                                             : "");
  if (c.type == RopeScalingType::LongRope && longrope_list(c) != longrope_list(g))
    return fmt::format("longrope {} (given: {}, seq_len {} against original_max_position {})",
                       longrope_list(c), longrope_list(g), g.seq_len, g.original_max_position);
  if (c.type == RopeScalingType::Dynamic && c.alpha != g.alpha) return dynamic_alpha_difference(c, g);
  if (c.type == RopeScalingType::Yarn && c.yarn_attention != g.yarn_attention &&
      c.attention_factor == g.attention_factor)
    return fmt::format("yarn attention_factor {} its mscale ({}: {:.6g}) where {} was expected ({:.6g})",
                       c.yarn_attention == YarnAttention::Multiply ? "multiplying" : "replacing",
                       c.yarn_attention == YarnAttention::Multiply
                           ? "vLLM's and SGLang's yarn_attention multiply"
                           : "HF's yarn_attention replace",
                       static_cast<double>(attention_of(c)),
                       g.yarn_attention == YarnAttention::Multiply ? "vLLM's product" : "HF's replacement",
                       static_cast<double>(attention_of(g)));
  if (c.type == RopeScalingType::Dynamic && c.dynamic_semantics != g.dynamic_semantics)
    return dynamic_semantics_difference(c, g);
  if (c.seq_len != g.seq_len)
    return fmt::format("{} seq_len {} (given {})", to_string(c.type), c.seq_len, g.seq_len);
  if (attention_of(c) != attention_of(g))
    return fmt::format("{} attention factor {} (given: {})", to_string(c.type), attention_words(c, g),
                       attention_words(g, g));
  return "scaling " + scaling_words(c);
}

bool same_scaling(const RopeScaling& a, const RopeScaling& b) {
  return a.type == b.type && a.factor == b.factor && a.truncate == b.truncate && a.beta_fast == b.beta_fast &&
         a.beta_slow == b.beta_slow && a.seq_len == b.seq_len && a.attention_factor == b.attention_factor &&
         a.original_max_position == b.original_max_position && a.longrope_switch == b.longrope_switch &&
         a.position_scale == b.position_scale && a.dynamic_semantics == b.dynamic_semantics &&
         a.yarn_attention == b.yarn_attention && a.alpha == b.alpha &&
         a.partial_rotary_factor == b.partial_rotary_factor;
}

}  // namespace

std::string describe(const Convention& c, const Convention& given) {
  std::vector<std::string> parts;
  if (!given.rotated) {  // a NoPE layer: the rotation is the mistake, its parameters say which
    if (c.rotated) {
      parts.push_back(fmt::format("rotated a NoPE layer: RoPE base {:g}, rotary dim {}, layout {}", c.base,
                                  c.rotary_dim, to_string(c.layout)));
    }
    if (const std::string t = temperature_difference(c, given); !t.empty()) parts.push_back(t);
    if (parts.empty()) return "the conventions given";
    std::string s;
    for (const std::string& p : parts) s += (s.empty() ? "" : "; ") + p;
    return s;
  }
  if (!c.label.empty() && !c.inv_freq) return c.label;  // a whole other setting, named by its label
  if (const std::string t = temperature_difference(c, given); !t.empty()) parts.push_back(t);
  if (c.layout != given.layout)
    parts.push_back(fmt::format("layout {} (given: {})", to_string(c.layout), to_string(given.layout)));
  if (c.swapped) parts.push_back("sin and cos swapped");
  if (c.t2t_exponent) parts.push_back("tensor2tensor/fairseq exponent i/(d/2-1)");
  if (c.shift != 0)
    parts.push_back(fmt::format("positions shifted by {:+} (row for p holds p{:+})", c.shift, c.shift));
  if (c.base != given.base) parts.push_back(fmt::format("base {:g} (given: {:g})", c.base, given.base));
  if (c.inverse) parts.push_back("inverse rotation (angle negated)");
  if (c.rotated && c.rotary_dim != given.rotary_dim)
    parts.push_back(fmt::format("rotary dim {} (given: {})", c.rotary_dim, given.rotary_dim));
  if (!c.label.empty()) {
    parts.push_back(c.label);
  } else if (c.scaling) {
    const RopeScaling& g = given.scaling.value_or(RopeScaling{});
    if (!same_scaling(*c.scaling, g)) parts.push_back(scaling_difference(*c.scaling, g));
  }
  if (c.rotary_offset != given.rotary_offset) {
    parts.push_back(fmt::format("rotary channels at the {} (offset {}; given: {})",
                                c.rotary_offset < given.rotary_offset ? "start" : "end", c.rotary_offset,
                                given.rotary_offset));
  }
  if (c.one_d && !given.form.axes_dim.empty()) {
    parts.push_back(
        fmt::format("axial RoPE (axes_dim {}) run as 1-D RoPE on the first axis's positions, one "
                    "ladder over the rotary dim instead of one per axis",
                    fmt::join(given.form.axes_dim, ",")));
  } else if (c.one_d) {
    parts.push_back(fmt::format("{} run as 1-D RoPE on the t positions",
                                given.form.vision != VisionRope::None ? "2-D vision RoPE" : "M-RoPE"));
  }
  if (!c.one_d && c.form.mrope_layout != given.form.mrope_layout && !given.form.mrope_section.empty()) {
    parts.push_back(fmt::format("M-RoPE {} (given: {})", to_string(c.form.mrope_layout),
                                to_string(given.form.mrope_layout)));
  }
  if (c.form.axes_dim != given.form.axes_dim) {
    parts.push_back(fmt::format("axes_dim {} (given: {})", fmt::join(c.form.axes_dim, ","),
                                fmt::join(given.form.axes_dim, ",")));
  }
  if (!c.one_d && c.axes != given.axes) {
    const std::size_t n = n_axes(given.form);
    std::vector<std::size_t> moved;
    for (std::size_t a = 0; a < n; ++a) {
      if (c.axes[a] != a) moved.push_back(a);
    }
    const auto name = [&](std::size_t a) {
      if (!given.form.axes_dim.empty()) return std::to_string(a);
      return given.form.vision != VisionRope::None ? std::string(a == 0 ? "h" : "w") : axis_name(a);
    };
    if (moved.size() == 2) {
      parts.push_back(fmt::format("axes {} and {} swapped", name(moved[0]), name(moved[1])));
    } else {
      std::string order;
      for (std::size_t a = 0; a < n; ++a) order += (a == 0 ? "" : ", ") + name(c.axes[a]);
      parts.push_back(fmt::format("axes read in the order ({})", order));
    }
  }
  if (parts.empty()) return "the conventions given";
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

std::vector<Fit> diagnose_sinusoidal(std::span<const double> table, std::size_t dim,
                                     const std::vector<std::int64_t>& positions, const Convention& given) {
  const std::size_t half = dim / 2;
  const auto rows = spread(positions.size(), 64);
  const auto pairs = spread(half, 128);
  std::vector<Fit> fits;
  for (const Convention& c : candidates(given, false)) {
    double worst = 0;
    for (std::size_t r : rows) {
      const auto p = static_cast<long double>(positions[r] + c.shift);
      for (std::size_t i : pairs) {
        const long double phi = p * inv_freq(c, i, dim);
        long double s = std::sin(phi), co = std::cos(phi);
        if (c.swapped) std::swap(s, co);
        const std::size_t ch_sin = c.layout == Layout::Interleaved ? 2 * i : i;
        const std::size_t ch_cos = c.layout == Layout::Interleaved ? 2 * i + 1 : half + i;
        const double e1 = std::fabs(table[r * dim + ch_sin] - static_cast<double>(s));
        const double e2 = std::fabs(table[r * dim + ch_cos] - static_cast<double>(co));
        worst = std::max({worst, std::isnan(e1) ? INFINITY : e1, std::isnan(e2) ? INFINITY : e2});
      }
    }
    fits.push_back({c, worst, rows.size()});
  }
  return ranked(fits);
}

namespace {

// A candidate's model of the data: the plan of its form, layout, base and offset, each pair's
// position from the data's axis the candidate reads, in long double, times the candidate's gain on q.
// Candidates whose plan is invalid for the data (sections of another rotary dim) are skipped. A NoPE
// candidate is the gain alone; one with its own rotary dim is also held to its pass-through channels.
// Stops once the residual passes `cutoff` (a candidate that cannot rank among the best): what it
// returns is then only a lower bound.
double rope_residual(const RopeData& d, const Convention& c, const std::vector<std::size_t>& tokens,
                     const std::vector<std::size_t>& heads, double cutoff = INFINITY) {
  const std::size_t rotary = c.rotary_dim != 0 ? static_cast<std::size_t>(c.rotary_dim) : d.rotary_dim;
  RopeParams params{static_cast<std::int64_t>(d.head_dim), static_cast<std::int64_t>(rotary), c.base,
                    c.layout, c.scaling.value_or(d.scaling)};
  params.form = c.one_d ? RopeForm{} : c.form;
  params.rotary_offset = c.rotary_offset;
  std::optional<RopePlan> plan, plan_from;  // plan_from: LongRoPE per token, the tokens from L on
  const std::int64_t L = params.scaling.original_max_position;
  TemperatureSteps steps;
  try {
    steps = validate(c.temperature);
    if (c.rotated && switches_per_token(params.scaling)) {
      RopeParams below = params, from = params;
      const PerTokenSides sides = per_token_sides(params.scaling);
      below.scaling = sides.below;
      from.scaling = sides.from;
      plan.emplace(below);
      plan_from.emplace(from);
    } else if (c.rotated) {
      plan.emplace(params);
    }
  } catch (const InvalidArgument&) {
    return INFINITY;
  }
  const auto gain_at = [&](std::size_t t) {
    const std::int64_t p = std::max<std::int64_t>(0, d.batch.position(t) + c.temperature_shift);
    return static_cast<long double>(attn_temperature(steps, p));
  };
  const auto channel_error = [&](std::size_t i, long double model) {
    const double e = std::fabs(d.y[i] - static_cast<double>(model));
    return std::isnan(e) ? INFINITY : e;
  };
  const bool own_rotary_dim =
      (c.rotary_dim != 0 && static_cast<std::size_t>(c.rotary_dim) != d.rotary_dim) || !c.rotated;
  const std::size_t half = plan ? plan->n_pairs() : 0;
  const long double attention = plan ? plan->attention_factor() : 1.0L;
  // The sampled pairs and channels, and each pair's sine and cosine at a token, are the same for every head:
  // computed once (the long double sine at a large phase is most of a diagnosis's time).
  const std::vector<std::size_t> pairs = spread(half, 64), channels = spread(d.head_dim, 64);
  std::vector<long double> t2t_w;
  if (c.t2t_exponent)
    for (std::size_t j : pairs) t2t_w.push_back(inv_freq(c, j, d.rotary_dim));
  std::vector<long double> sines(pairs.size()), cosines(pairs.size());
  double worst = 0;
  for (std::size_t t : tokens) {
    const long double g = gain_at(t);
    const RopePlan* token_plan = plan_from && d.batch.position(t) >= L ? &*plan_from
                                 : plan                                ? &*plan
                                                                       : nullptr;
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      const std::size_t j = pairs[k], axis = c.axes[plan->axis_of_pair(j)];
      if (axis >= d.batch.n_axes) return INFINITY;
      const auto p = static_cast<long double>(d.batch.position(t, axis) + c.shift);
      const long double w = c.inv_freq       ? (*c.inv_freq)[j]
                            : c.t2t_exponent ? t2t_w[k]
                                             : token_plan->inv_freq()[j];
      const long double phi = (c.inverse ? -p : p) * w;
      sines[k] = g * attention * std::sin(phi), cosines[k] = g * attention * std::cos(phi);
      if (c.swapped) std::swap(sines[k], cosines[k]);
    }
    for (std::size_t h : heads) {
      const std::size_t row = d.batch.row(t, h);
      for (std::size_t k = 0; k < pairs.size(); ++k) {
        const long double s = sines[k], co = cosines[k];
        const auto [i0, i1] = plan->input_channels(pairs[k]);
        const auto [o0, o1] = plan->output_channels(pairs[k]);
        const long double xa = d.x[row + i0], xb = d.x[row + i1];
        worst = std::max(
            {worst, channel_error(row + o0, xa * co - xb * s), channel_error(row + o1, xb * co + xa * s)});
      }
      if (own_rotary_dim) {
        for (std::size_t ch : channels) {
          if (!plan || plan->passes_through(ch))
            worst = std::max(worst, channel_error(row + ch, g * d.x[row + ch]));
        }
      }
      if (worst > cutoff) return worst;
    }
  }
  return worst;
}

// The sample's tokens: spread over the data, and those next to a step of the given temperature
// (where reading it one position off shows).
std::vector<std::size_t> sample_tokens(const RopeData& d, const AttnTemperature& temperature) {
  std::vector<std::size_t> tokens = spread(d.batch.tokens(), 32);
  if (temperature.type == AttnTemperatureType::None) return tokens;
  const TemperatureSteps steps = validate(temperature);
  std::set<std::size_t> near;
  for (std::size_t t = 0; t < d.batch.tokens() && near.size() < 32; ++t) {
    const std::int64_t p = d.batch.position(t);
    if (temperature_step(steps, std::max<std::int64_t>(0, p - 1)) != temperature_step(steps, p + 1))
      near.insert(t);
  }
  near.insert(tokens.begin(), tokens.end());
  return {near.begin(), near.end()};
}

// The gain's mistakes at the given rotation: left out, read one position early or late; without a
// given gain, llama4's at HF's defaults.
std::vector<Convention> temperature_candidates(const Convention& given) {
  std::vector<Convention> out;
  if (given.temperature.type == AttnTemperatureType::None) {
    Convention c = given;
    c.temperature.type = AttnTemperatureType::Llama4;
    out.push_back(c);
    return out;
  }
  for (std::int64_t shift : {1, -1}) {
    Convention c = given;
    c.temperature_shift = shift;
    out.push_back(c);
  }
  Convention none = given;
  none.temperature = {};
  out.push_back(none);
  return out;
}

// The form's alternatives at the given base, direction and positions: other pairings, the rotary
// channels at the other end, M-RoPE's other layout, every permutation of the axes, 1-D on t.
std::vector<Convention> form_candidates(const Convention& given, std::size_t head_dim,
                                        std::size_t rotary_dim) {
  std::vector<std::int64_t> offsets = {given.rotary_offset};
  if (given.rotary_offset != 0) offsets.push_back(0);
  if (given.rotary_offset == 0 && rotary_dim < head_dim)
    offsets.push_back(static_cast<std::int64_t>(head_dim - rotary_dim));
  std::vector<MropeLayout> mrope_layouts = {given.form.mrope_layout};
  if (!given.form.mrope_section.empty()) {
    for (const MropeLayout l : {MropeLayout::Sectioned, MropeLayout::Interleaved, MropeLayout::Ernie}) {
      const auto& s = given.form.mrope_section;  // ERNIE's only where its sections hold (h == w)
      if (l != given.form.mrope_layout && (l != MropeLayout::Ernie || (s.size() == 3 && s[1] == s[2])))
        mrope_layouts.push_back(l);
    }
  }
  const std::size_t axes = std::min<std::size_t>(n_axes(given.form), 4);
  std::vector<Convention> out;
  for (Layout layout : {Layout::HalfSplit, Layout::Interleaved, Layout::Deinterleave}) {
    for (std::int64_t offset : offsets) {
      Convention c = given;
      c.layout = layout;
      c.rotary_offset = offset;
      if (axes > 1) {
        Convention flat = c;
        flat.one_d = true;
        out.push_back(flat);
      }
      for (MropeLayout ml : mrope_layouts) {
        c.form.mrope_layout = ml;
        std::array<std::uint8_t, 4> perm = {0, 1, 2, 3};
        // ERNIE's layout in the given axis order only: with its axes permuted as well it reads pairs as a
        // sectioned rule's reordered sections do, two mistakes where one explains the data.
        const bool orders = ml != MropeLayout::Ernie || ml == given.form.mrope_layout;
        do {
          c.axes = perm;
          out.push_back(c);
        } while (orders && std::next_permutation(perm.data(), perm.data() + axes));
      }
    }
  }
  return out;
}

std::vector<Fit> best_first(const RopeData& d, const std::vector<Convention>& all, const Convention& given,
                            const std::vector<std::size_t>& tokens) {
  const auto heads = spread(d.batch.heads, 2);
  // Only the best three are printed, with the given convention's residual: the others may stop early.
  std::vector<Fit> fits;
  std::vector<double> best;
  for (const Convention& c : all) {
    const bool is_given = describe(c, given) == "the conventions given";
    const double cutoff = is_given || best.size() < 3 ? INFINITY : best[2];
    fits.push_back({c, rope_residual(d, c, tokens, heads, cutoff), tokens.size() * heads.size()});
    best.insert(std::upper_bound(best.begin(), best.end(), fits.back().residual), fits.back().residual);
  }
  return ranked(fits);
}

}  // namespace

namespace {

RopeScaling method(RopeScalingType type, double factor, std::int64_t original_max_position = 0) {
  RopeScaling s;
  s.type = type;
  s.factor = factor;
  s.original_max_position = original_max_position;
  return s;
}

std::int64_t max_position(const RopeData& d) {
  std::int64_t top = 0;
  for (std::size_t t = 0; t < d.batch.tokens(); ++t) top = std::max(top, d.batch.position(t));
  return top;
}

std::int64_t min_position(const RopeData& d) {
  std::int64_t bottom = std::numeric_limits<std::int64_t>::max();
  for (std::size_t t = 0; t < d.batch.tokens(); ++t) bottom = std::min(bottom, d.batch.position(t));
  return bottom;
}

// Another rotary dim: all of head_dim, half of it, half or twice the given (a fused kernel that
// ignores rotary_dim, a shared rope object that halved it).
void rotary_dim_candidates(const Convention& given, const RopeData& d, std::vector<Convention>& out) {
  const std::set<std::size_t> dims = {d.head_dim, d.head_dim / 2, d.rotary_dim / 2, 2 * d.rotary_dim};
  for (std::size_t dim : dims) {
    if (dim == d.rotary_dim || dim < 2 || dim > d.head_dim || dim % 2 != 0) continue;
    Convention c = given;
    c.rotary_dim = static_cast<std::int64_t>(dim);
    out.push_back(c);
  }
}

// Without a given scaling: the methods of released configs at their factors (linear 2..32; Llama-3's
// 8, 16, 32 at L 8192; YaRN's 4 at 32768 (Qwen2.5), 40 at 4096 (DeepSeek-V2), 2..32 at 4096).
std::vector<RopeScaling> unscaled_alternatives() {
  std::vector<RopeScaling> out;
  for (double f : {2.0, 4.0, 8.0, 16.0, 32.0}) out.push_back(method(RopeScalingType::Linear, f));
  for (double f : {8.0, 16.0, 32.0}) out.push_back(method(RopeScalingType::Llama3, f, 8192));
  out.push_back(method(RopeScalingType::Yarn, 4, 32768));
  for (double f : {2.0, 4.0, 8.0, 16.0, 32.0, 40.0}) out.push_back(method(RopeScalingType::Yarn, f, 4096));
  return out;
}

// Dynamic NTK's length taken from elsewhere (HF: max(position_ids) + 1; engines: the allocated context), the
// other engine's semantics (vLLM's static table at n = factor·L for HF's live length, which also stands for
// a live seq_len of factor·L, or the reverse) and Hunyuan's alpha dropped.
void dynamic_alternatives(const RopeScaling& g, std::int64_t top, std::vector<RopeScaling>& out) {
  const bool live = g.dynamic_semantics == DynamicSemantics::Live && !g.alpha;
  if (g.alpha) {
    RopeScaling s = g;
    s.alpha.reset();
    s.seq_len = top + 1;
    out.push_back(s);
  }
  RopeScaling other = g;
  other.dynamic_semantics = live ? DynamicSemantics::Static : DynamicSemantics::Live;
  if (!live) other.seq_len = top + 1;
  if (!g.alpha) out.push_back(other);
  if (!live) return;  // the static table and alpha read no length
  const auto static_n = static_cast<std::int64_t>(g.factor * static_cast<double>(g.original_max_position));
  for (std::int64_t n : {top + 1, static_n, 2 * g.seq_len, g.seq_len / 2}) {
    RopeScaling s = g;
    s.seq_len = n;
    if (n > 0 && n != g.seq_len && n != static_n) out.push_back(s);
  }
}

// The given scaling's mistakes: ignored; the factor halved, doubled, quartered, or a released one;
// another method at the same factor (at the given L, or the common ones without one); YaRN's truncate
// flipped; the runtime length (dynamic's seq_len, LongRoPE's list) taken from elsewhere; the attention
// factor's other formulas.
std::vector<RopeScaling> scaled_alternatives(const RopeScaling& g, std::int64_t top, std::int64_t bottom) {
  std::vector<RopeScaling> out = {RopeScaling{}};
  std::set<double> factors;
  for (double k : {0.5, 2.0, 0.25, 4.0}) factors.insert(g.factor * k);
  for (double f : {2.0, 4.0, 8.0, 16.0, 32.0, 40.0, 64.0}) factors.insert(f);
  factors.erase(g.factor);
  for (double f : factors) {
    RopeScaling s = g;
    s.factor = f;
    out.push_back(s);
  }
  const std::vector<std::int64_t> lengths = g.original_max_position > 0
                                                ? std::vector<std::int64_t>{g.original_max_position}
                                                : std::vector<std::int64_t>{2048, 4096, 8192, 32768};
  for (RopeScalingType t : {RopeScalingType::Linear, RopeScalingType::Ntk, RopeScalingType::Yarn,
                            RopeScalingType::Llama3, RopeScalingType::Dynamic}) {
    if (t == g.type) continue;
    const bool needs_length = t != RopeScalingType::Linear && t != RopeScalingType::Ntk;
    for (std::int64_t L : needs_length ? lengths : std::vector<std::int64_t>{0}) {
      RopeScaling s = method(t, g.factor, L);
      if (t == RopeScalingType::Dynamic) s.seq_len = top + 1;
      out.push_back(s);
    }
  }
  if (g.type == RopeScalingType::Yarn) {
    RopeScaling t = g;
    t.truncate = !g.truncate;
    out.push_back(t);
    if (g.attention_factor) {  // the other engine's precedence of attention_factor over the mscale
      RopeScaling a = g;
      a.yarn_attention =
          g.yarn_attention == YarnAttention::Replace ? YarnAttention::Multiply : YarnAttention::Replace;
      out.push_back(a);
    }
  }
  if (g.type == RopeScalingType::Dynamic) dynamic_alternatives(g, top, out);
  if (g.type == RopeScalingType::LongRope) {  // the other list (chosen by the allocated context)
    RopeScaling s = g;
    s.longrope_switch = LongRopeSwitch::PerSequence;
    s.seq_len = ScalingRule<long double>::longrope_uses_long(g) ? 0 : g.original_max_position + 1;
    out.push_back(s);
    // The other switch (TGI's per token against HF's per sequence), where the positions straddle L (else
    // both switches pick one list for every token).
    if (bottom < g.original_max_position && top >= g.original_max_position) {
      RopeScaling w = g;
      w.longrope_switch = switches_per_token(g) ? LongRopeSwitch::PerSequence : LongRopeSwitch::PerToken;
      if (!switches_per_token(w)) w.seq_len = top + 1;
      out.push_back(w);
    }
  }
  if (g.type == RopeScalingType::Yarn || g.type == RopeScalingType::LongRope) {
    const double ln_s = std::log(g.factor);
    std::vector<double> attention = {1.0, 0.1 * ln_s + 1};
    if (g.type == RopeScalingType::LongRope && g.original_max_position > 1)
      attention.push_back(std::sqrt(1 + ln_s / std::log(static_cast<double>(g.original_max_position))));
    if (g.mscale_all_dim) attention.push_back(0.1 * *g.mscale_all_dim * ln_s + 1);
    if (g.mscale) attention.push_back(0.1 * *g.mscale * ln_s + 1);
    const long double given_attention =
        ScalingRule<long double>(g, 2, 10000.0, std::numbers::pi_v<long double>).attention();
    attention.push_back(static_cast<double>(given_attention * given_attention));  // applied twice
    std::sort(attention.begin(), attention.end());
    attention.erase(std::unique(attention.begin(), attention.end()), attention.end());
    for (double a : attention) {
      RopeScaling s = g;
      s.attention_factor = a;
      s.yarn_attention = YarnAttention::Replace;  // a itself is the factor on cos and sin
      s.mscale.reset();
      s.mscale_all_dim.reset();
      if (std::fabs(a - static_cast<double>(given_attention)) > 1e-12) out.push_back(s);
    }
  }
  return out;
}

// Rules no plan models, as frequencies: YaRN's betas swapped (torchtitan PR #3787; the ramp runs
// backwards) and Llama-3's wavelength taken as 1/θ instead of 2π/θ.
void rule_candidates(const Convention& given, const RopeData& d, std::vector<Convention>& out) {
  const RopeScaling& g = d.scaling;
  const std::size_t pairs = d.rotary_dim / 2;
  const auto frequencies = [&](auto&& omega) {
    auto w = std::make_shared<std::vector<long double>>(pairs);
    for (std::size_t j = 0; j < pairs; ++j) (*w)[j] = omega(j);
    return w;
  };
  const long double pi = std::numbers::pi_v<long double>;
  const auto dim = static_cast<std::int64_t>(d.rotary_dim);
  if (g.type == RopeScalingType::Yarn && g.beta_fast != g.beta_slow) {
    RopeScaling swapped = g;
    std::swap(swapped.beta_fast, swapped.beta_slow);
    const ScalingRule<long double> rule(swapped, dim, given.base, pi);
    Convention c = given;
    c.inv_freq = frequencies([&](std::size_t j) { return rule.inv_freq(j); });
    c.label =
        fmt::format("yarn beta_fast and beta_slow swapped (fast {:g}, slow {:g}; given fast {:g}, slow {:g})",
                    swapped.beta_fast, swapped.beta_slow, g.beta_fast, g.beta_slow);
    out.push_back(c);
  }
  if (g.type == RopeScalingType::Llama3) {
    const ScalingRule<long double> rule(g, dim, given.base, pi);
    Convention c = given;
    c.inv_freq = frequencies([&](std::size_t j) {
      const long double w = rule.unscaled(j);
      return w * ScalingRule<long double>::llama3_gain(1 / w, g);
    });
    c.label = "llama3 wavelength taken as 1/theta (HF: 2*pi/theta)";
    out.push_back(c);
  }
}

// Gemma 4's proportional RoPE (HF rope_type "proportional") and HF's partial rotary read the same
// partial_rotary_factor F two ways: proportional turns the whole head, its exponent over head_dim, the pairs
// past int(F·head_dim // 2) at frequency 0; partial rotary turns int(head_dim·F) channels, its exponent over
// that rotary dim. Each is the other's mistake.
void proportional_candidates(const Convention& given, const RopeData& d, std::vector<Convention>& out) {
  const RopeScaling& g = d.scaling;
  const auto head = static_cast<std::int64_t>(d.head_dim), rotary = static_cast<std::int64_t>(d.rotary_dim);
  if (g.type != RopeScalingType::Proportional && rotary < head && given.rotary_offset == 0 &&
      (g.type == RopeScalingType::None || g.type == RopeScalingType::Linear)) {
    Convention c = given;
    c.rotary_dim = head;
    RopeScaling s;
    s.type = RopeScalingType::Proportional;
    s.factor = g.type == RopeScalingType::Linear ? g.factor : 1.0;
    s.partial_rotary_factor = static_cast<double>(rotary) / static_cast<double>(head);
    // F = rotary/head as a double: nudged up where its product with head_dim rounds below rotary.
    while (proportional_pairs(s, head) < rotary / 2)
      s.partial_rotary_factor = std::nextafter(s.partial_rotary_factor, 2.0);
    c.scaling = s;
    c.label = fmt::format(
        "proportional (partial_rotary_factor {:g}): exponent over head_dim {}, every channel turning, the "
        "pairs "
        "past {} at frequency 0 (Gemma 4, HF rope_type proportional); checked as HF's partial rotary (rotary "
        "dim {}, exponent over rotary_dim)",
        s.partial_rotary_factor, head, rotary / 2, rotary);
    out.push_back(c);
  }
  if (g.type == RopeScalingType::Proportional) {
    const std::int64_t pairs = proportional_pairs(g, rotary);
    if (pairs < 1 || 2 * pairs == rotary) return;
    Convention c = given;
    c.rotary_dim = 2 * pairs;
    RopeScaling s;
    if (g.factor != 1.0) s = method(RopeScalingType::Linear, g.factor);
    c.scaling = s;
    c.label = fmt::format(
        "HF's partial rotary (rotary dim {}, exponent over rotary_dim, the rest passing through); checked as "
        "proportional (partial_rotary_factor {:g}, exponent over head_dim {})",
        2 * pairs, g.partial_rotary_factor, rotary);
    out.push_back(c);
    // The whole head turning as proportional's does, but its ladder over the turning pairs' dim 2·pairs (an
    // engine's port that takes F as a rotary dim for the exponent only).
    Convention over = given;
    auto w = std::make_shared<std::vector<long double>>(static_cast<std::size_t>(rotary / 2), 0.0L);
    for (std::int64_t j = 0; j < pairs; ++j)
      (*w)[static_cast<std::size_t>(j)] =
          std::pow(static_cast<long double>(given.base), -static_cast<long double>(j) / pairs) / g.factor;
    over.inv_freq = w;
    over.label = fmt::format(
        "proportional's exponent over the turning pairs' dim {} (2·int(F·d // 2)) where HF's is over "
        "head_dim {} "
        "(partial_rotary_factor {:g}: the pairs past {} at frequency 0 either way)",
        2 * pairs, rotary, g.partial_rotary_factor, pairs);
    out.push_back(over);
  }
}

// The check arguments' mistakes at the given conventions: the rotary dim, the scaling and its rules.
std::vector<Convention> argument_candidates(const Convention& given, const RopeData& d) {
  std::vector<Convention> out;
  rotary_dim_candidates(given, d, out);
  const std::int64_t top = max_position(d);
  const bool scaled = d.scaling.type != RopeScalingType::None;
  for (const RopeScaling& s :
       scaled ? scaled_alternatives(d.scaling, top, min_position(d)) : unscaled_alternatives()) {
    Convention c = given;
    c.scaling = s;
    out.push_back(c);
  }
  // A layer given another layer type's parameters (Gemma-3: sliding 10^4 unscaled, full 10^6 linear 8;
  // vLLM PR #29111, llama.cpp #14367): the base and the scaling both differ.
  for (double base : {1e4, 1e5, 5e5, 1e6, 1e7}) {
    if (base == given.base) continue;
    for (const RopeScaling& s : scaled ? std::vector<RopeScaling>{RopeScaling{}} : unscaled_alternatives()) {
      Convention c = given;
      c.base = base;
      c.scaling = s;
      out.push_back(c);
    }
  }
  rule_candidates(given, d, out);
  proportional_candidates(given, d, out);
  return out;
}

}  // namespace

std::vector<Fit> diagnose_rope(const RopeData& d, const Convention& given,
                               const std::vector<Convention>& alternatives) {
  const auto tokens = sample_tokens(d, given.temperature);
  // A model's own other settings first: they win ties with the generic candidates that equal them.
  std::vector<Convention> all(alternatives.begin(), alternatives.end());
  for (Convention c : candidates(given, true)) {
    if (c.t2t_exponent && !given.form.is_text()) continue;  // the exponent mistake of text tables
    all.push_back(c);
  }
  for (const Convention& c : form_candidates(given, d.head_dim, d.rotary_dim)) all.push_back(c);
  axial_candidates(given, d.rotary_dim / 2, all);
  for (const Convention& c : temperature_candidates(given)) all.push_back(c);
  for (const Convention& c : argument_candidates(given, d)) all.push_back(c);
  return best_first(d, all, given, tokens);
}

// Real configs' bases: 1e4 (RoFormer, Llama 2), 5e4 (Cohere2), 1e5, 5e5 (Llama 3, Llama 4), 1e6 (Qwen2,
// Mistral), 5e6 (SmolLM3), 1e7, 1e8 (Mistral Small 3); the given --base first.
std::vector<Fit> diagnose_nope(const RopeData& d, const Convention& given) {
  std::vector<Convention> all = {given};
  for (const Convention& c : temperature_candidates(given)) all.push_back(c);
  std::vector<double> bases = {given.base};
  for (double b : {1e4, 5e4, 1e5, 5e5, 1e6, 5e6, 1e7, 1e8}) {
    if (b != given.base) bases.push_back(b);
  }
  std::vector<std::size_t> dims = {d.head_dim};
  if (d.head_dim % 4 == 0) dims.push_back(d.head_dim / 2);
  for (std::size_t dim : dims) {
    for (Layout layout : {Layout::HalfSplit, Layout::Interleaved}) {
      for (double base : bases) {
        Convention c = given;
        c.rotated = true;
        c.rotary_dim = static_cast<std::int64_t>(dim);
        c.layout = layout;
        c.base = base;
        all.push_back(c);
      }
    }
  }
  return best_first(d, all, given, sample_tokens(d, given.temperature));
}

}  // namespace pe::check

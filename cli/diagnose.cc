#include "diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

#include "pe/errors.h"
#include "pe/plan.h"

namespace pe::cli {
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
  if (s.type == RopeScalingType::Yarn)
    return fmt::format("yarn factor {:g}, original_max_position {}", s.factor, s.original_max_position);
  return fmt::format("{} factor {:g}", to_string(s.type), s.factor);
}

// How a candidate's scaling differs from the given one, in the words of the mistake.
std::string scaling_difference(const RopeScaling& c, const RopeScaling& g) {
  if (c.type == RopeScalingType::None)
    return fmt::format("scaling ignored: plain RoPE (given: {})", scaling_words(g));
  if (g.type == RopeScalingType::None) return fmt::format("scaling {} (given: none)", scaling_words(c));
  if (c.type != g.type) return fmt::format("scaling {} (given: {})", scaling_words(c), scaling_words(g));
  if (c.factor != g.factor)
    return fmt::format("{} factor {:g} (given {:g})", to_string(c.type), c.factor, g.factor);
  if (c.truncate != g.truncate)
    return fmt::format("yarn truncate {} (given: {})", c.truncate ? "on" : "off", g.truncate ? "on" : "off");
  return "scaling " + scaling_words(c);
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
  if (c.scaling) {
    const RopeScaling& g = given.scaling.value_or(RopeScaling{});
    const RopeScaling& k = *c.scaling;
    if (k.type != g.type || k.factor != g.factor || k.truncate != g.truncate || k.beta_fast != g.beta_fast ||
        k.beta_slow != g.beta_slow)
      parts.push_back(scaling_difference(k, g));
  }
  if (c.rotary_offset != given.rotary_offset) {
    parts.push_back(fmt::format("rotary channels at the {} (offset {}; given: {})",
                                c.rotary_offset < given.rotary_offset ? "start" : "end", c.rotary_offset,
                                given.rotary_offset));
  }
  if (c.one_d) parts.push_back("M-RoPE run as 1-D RoPE on the t positions");
  if (!c.one_d && c.form.mrope_layout != given.form.mrope_layout && !given.form.mrope_section.empty()) {
    parts.push_back(fmt::format("M-RoPE {} (given: {})", to_string(c.form.mrope_layout),
                                to_string(given.form.mrope_layout)));
  }
  if (!c.one_d && c.axes != given.axes) {
    const std::size_t n = n_axes(given.form);
    std::vector<std::size_t> moved;
    for (std::size_t a = 0; a < n; ++a) {
      if (c.axes[a] != a) moved.push_back(a);
    }
    const auto name = [&](std::size_t a) {
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

std::vector<Fit> diagnose_sinusoidal(const std::vector<double>& table, std::size_t dim,
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
    fits.push_back({c, worst});
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
  std::optional<RopePlan> plan;
  TemperatureSteps steps;
  try {
    steps = validate(c.temperature);
    if (c.rotated) plan.emplace(params);
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
  double worst = 0;
  for (std::size_t t : tokens) {
    const long double g = gain_at(t);
    for (std::size_t h : heads) {
      const std::size_t row = d.batch.row(t, h);
      for (std::size_t j : spread(half, 64)) {
        const std::size_t axis = c.axes[plan->axis_of_pair(j)];
        if (axis >= d.batch.n_axes) return INFINITY;
        const auto p = static_cast<long double>(d.batch.position(t, axis) + c.shift);
        const long double w = c.t2t_exponent ? inv_freq(c, j, d.rotary_dim) : plan->inv_freq()[j];
        const long double phi = (c.inverse ? -p : p) * w;
        long double s = g * attention * std::sin(phi), co = g * attention * std::cos(phi);
        if (c.swapped) std::swap(s, co);
        const auto [i0, i1] = plan->input_channels(j);
        const auto [o0, o1] = plan->output_channels(j);
        const long double xa = d.x[row + i0], xb = d.x[row + i1];
        worst = std::max(
            {worst, channel_error(row + o0, xa * co - xb * s), channel_error(row + o1, xb * co + xa * s)});
      }
      if (own_rotary_dim) {
        for (std::size_t ch : spread(d.head_dim, 64)) {
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
    mrope_layouts.push_back(given.form.mrope_layout == MropeLayout::Sectioned ? MropeLayout::Interleaved
                                                                              : MropeLayout::Sectioned);
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
        do {
          c.axes = perm;
          out.push_back(c);
        } while (std::next_permutation(perm.data(), perm.data() + axes));
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
    fits.push_back({c, rope_residual(d, c, tokens, heads, cutoff)});
    best.insert(std::upper_bound(best.begin(), best.end(), fits.back().residual), fits.back().residual);
  }
  return ranked(fits);
}

}  // namespace

namespace {

RopeScaling linear(double factor) {
  RopeScaling s;
  s.type = RopeScalingType::Linear;
  s.factor = factor;
  return s;
}

// The check arguments' mistakes at the given conventions: another rotary dim (all of head_dim, half
// of it, half or twice the given), and the scaling: ignored, its factor halved, doubled or
// quartered, linear or YaRN at the given factor (YaRN at the given L, or at 2048, 4096, 8192 and
// 32768 without one), YaRN's truncate flipped; without a given scaling, linear at factors 2 to 32.
// (YaRN's betas swapped is not a plan RopePlan accepts: beta_fast < beta_slow is refused.)
std::vector<Convention> argument_candidates(const Convention& given, const RopeData& d) {
  std::vector<Convention> out;
  std::set<std::size_t> dims = {d.head_dim, d.head_dim / 2, d.rotary_dim / 2, 2 * d.rotary_dim};
  for (std::size_t dim : dims) {
    if (dim == d.rotary_dim || dim < 2 || dim > d.head_dim || dim % 2 != 0) continue;
    Convention c = given;
    c.rotary_dim = static_cast<std::int64_t>(dim);
    out.push_back(c);
  }
  const RopeScaling& g = d.scaling;
  std::vector<RopeScaling> scalings;
  if (g.type == RopeScalingType::None) {
    for (double f : {2.0, 4.0, 8.0, 16.0, 32.0}) scalings.push_back(linear(f));
  } else {
    scalings.push_back({});
    for (double k : {0.5, 2.0, 0.25, 4.0}) {
      RopeScaling s = g;
      s.factor = g.factor * k;
      scalings.push_back(s);
    }
    if (g.type != RopeScalingType::Linear) scalings.push_back(linear(g.factor));
    if (g.type != RopeScalingType::Yarn) {
      for (std::int64_t L : g.original_max_position > 0
                                ? std::vector<std::int64_t>{g.original_max_position}
                                : std::vector<std::int64_t>{2048, 4096, 8192, 32768}) {
        RopeScaling s;
        s.type = RopeScalingType::Yarn;
        s.factor = g.factor;
        s.original_max_position = L;
        scalings.push_back(s);
      }
    }
    if (g.type == RopeScalingType::Yarn) {
      RopeScaling t = g;
      t.truncate = !g.truncate;
      scalings.push_back(t);
    }
  }
  for (const RopeScaling& s : scalings) {
    Convention c = given;
    c.scaling = s;
    out.push_back(c);
  }
  return out;
}

}  // namespace

std::vector<Fit> diagnose_rope(const RopeData& d, const Convention& given) {
  const auto tokens = sample_tokens(d, given.temperature);
  std::vector<Convention> all;
  for (Convention c : candidates(given, true)) {
    if (c.t2t_exponent && !given.form.is_text()) continue;  // the exponent mistake of text tables
    all.push_back(c);
  }
  for (const Convention& c : form_candidates(given, d.head_dim, d.rotary_dim)) all.push_back(c);
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

}  // namespace pe::cli

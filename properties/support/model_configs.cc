#include "model_configs.h"

#include <algorithm>
#include <cmath>

#include "generators.h"

namespace pe::testing {
namespace {

constexpr int kSteps = 1 << 20;  // a variate in [0, 1) on a grid of 2^-20

rc::Gen<double> gen_unit() {
  return rc::gen::resize(rc::kNominalSize, rc::gen::map(rc::gen::inRange(0, kSteps), [](int k) {
                           return static_cast<double>(k) / kSteps;
                         }));
}

// Whether a parameter with a share is given (shrinks toward given, the ordinary case).
bool given(const harness::ParamSpec& p, const char* what) {
  if (p.share >= 1) return true;
  return *gen_unit().as(what) < p.share;
}

std::int64_t integer(const harness::ParamSpec& p, const char* what) {
  return static_cast<std::int64_t>(std::llround(*gen_param(p).as(what)));
}

// `threshold`: the original context a length-dependent method switches at (0: none), which a crossing call's
// positions straddle as config_space.crossing_start places them: all rows but the last two end at threshold
// - 1.
std::vector<std::int64_t> scenario_positions(const std::string& scenario, std::size_t tokens,
                                             std::int64_t max_position, std::int64_t threshold) {
  std::vector<std::int64_t> p;
  const auto n = static_cast<std::int64_t>(tokens);
  if (scenario == "prefill") {
    for (std::size_t k = 0; k < tokens; ++k) p.push_back(static_cast<std::int64_t>(k));
  } else if (scenario == "decode" || scenario == "chunked" || scenario == "crossing") {
    const auto top = std::max<std::int64_t>(2, max_position - n);
    // Log-uniform offsets in [1, top], as config_space.draw_positions.
    const double u = *gen_unit().as("offset (log-uniform variate)");
    auto offset = static_cast<std::int64_t>(std::exp(u * std::log(static_cast<double>(top))));
    if (scenario == "crossing" && threshold > 0)
      offset =
          std::max<std::int64_t>(0, std::min(threshold - std::max<std::int64_t>(1, n - 2), max_position - n));
    for (std::size_t k = 0; k < tokens; ++k) p.push_back(offset + static_cast<std::int64_t>(k));
  } else if (scenario == "packed") {
    while (p.size() < tokens) {
      const auto left = static_cast<std::int64_t>(tokens - p.size());
      const auto length = *rc::gen::inRange<std::int64_t>(1, left + 1).as("packed sequence length");
      for (std::int64_t k = 0; k < length; ++k) p.push_back(k);
    }
  } else {  // left_padding: HF's pads at position 1
    const auto pads = *rc::gen::inRange<std::size_t>(0, tokens).as("left pads");
    p.assign(pads, 1);
    for (std::size_t k = 0; k + pads < tokens; ++k) p.push_back(static_cast<std::int64_t>(k));
  }
  return p;
}

RopeScaling scaling_of(const harness::ConfigSpace& s, const std::string& kind, std::int64_t rotary_dim) {
  using T = RopeScalingType;
  RopeScaling out;
  if (kind == "default") return out;
  out.factor = kind == "longrope" ? 1 : *gen_param(s.param(kind, "factor")).as("factor");
  if (kind == "linear") {
    out.type = T::Linear;
  } else if (kind == "dynamic") {
    out.type = T::Dynamic;
    out.original_max_position = integer(s.param(kind, "max_position_embeddings"), "max_position_embeddings");
  } else if (kind == "yarn") {
    out.type = T::Yarn;
    out.original_max_position =
        integer(s.param(kind, "original_max_position_embeddings"), "original_max_position_embeddings");
    if (given(s.param(kind, "beta_fast"), "betas given (variate)")) {
      out.beta_fast = *gen_param(s.param(kind, "beta_fast")).as("beta_fast");
      out.beta_slow = *gen_param(s.param(kind, "beta_slow")).as("beta_slow");
    }
    if (given(s.param(kind, "attention_factor"), "attention_factor given (variate)"))
      out.attention_factor = *gen_param(s.param(kind, "attention_factor")).as("attention_factor");
  } else if (kind == "llama3") {
    out.type = T::Llama3;
    out.low_freq_factor = *gen_param(s.param(kind, "low_freq_factor")).as("low_freq_factor");
    out.high_freq_factor = out.low_freq_factor * *gen_param(s.param(kind, "high_over_low")).as("high / low");
    out.original_max_position =
        integer(s.param(kind, "original_max_position_embeddings"), "original_max_position_embeddings");
  } else if (kind == "longrope") {
    out.type = T::LongRope;
    const auto pairs = static_cast<std::size_t>(rotary_dim / 2);
    out.short_factor =
        *rc::gen::container<std::vector<double>>(pairs, gen_param(s.param(kind, "short_factor")))
             .as("short_factor");
    out.long_factor = *rc::gen::container<std::vector<double>>(pairs, gen_param(s.param(kind, "long_factor")))
                           .as("long_factor");
    std::sort(out.short_factor.begin(), out.short_factor.end());
    std::sort(out.long_factor.begin(), out.long_factor.end());
    out.original_max_position =
        integer(s.param(kind, "original_max_position_embeddings"), "original_max_position_embeddings");
    // HF's factor: max_position_embeddings / original_max_position_embeddings (its attention factor's s).
    out.factor = static_cast<double>(integer(s.param(kind, "max_over_original"), "max / original"));
  }
  return out;
}

}  // namespace

std::ostream& operator<<(std::ostream& os, const ModelRope& m) {
  os << m.rope_type << ", " << m.form << ", " << m.scenario << ": head_dim " << m.params.head_dim
     << ", rotary_dim " << m.params.rotary_dim << ", rope_theta " << m.params.base << ", "
     << m.params.scaling;
  if (!m.params.form.mrope_section.empty()) {
    os << ", mrope_section";
    for (const std::int64_t v : m.params.form.mrope_section) os << ' ' << v;
  }
  os << ", positions";
  for (const std::int64_t p : m.positions) os << ' ' << p;
  return os;
}

rc::Gen<double> gen_param(const harness::ParamSpec& spec) {
  return rc::gen::apply([spec](double pick, double u) { return harness::value_of(spec, pick, u); },
                        gen_unit(), gen_unit());
}

rc::Gen<ModelRope> gen_model_rope(Layout layout, std::int64_t max_head_dim, std::int64_t max_position,
                                  std::int64_t max_tokens) {
  return rc::gen::exec([layout, max_head_dim, max_position, max_tokens] {
    const harness::ConfigSpace& s = harness::config_space();
    ModelRope m;
    m.rope_type = *rc::gen::elementOf(s.rope_types).as("rope_type");
    m.form = *rc::gen::elementOf(s.forms).as("form");
    // The crossing (consecutive positions across the original context) is drawn last: every other pick keeps
    // the value it had before the space had it, and the seeded properties their cases.
    std::vector<std::string> plain;
    for (const std::string& scenario : s.scenarios)
      if (scenario != "crossing") plain.push_back(scenario);
    m.scenario = *rc::gen::elementOf(plain).as("scenario");
    std::vector<std::int64_t> dims;
    for (const std::int64_t d : s.head_dims)
      if (d <= max_head_dim && (m.rope_type != "dynamic" || d >= 4)) dims.push_back(d);
    const std::int64_t head_dim = *rc::gen::elementOf(dims).as("head_dim");
    std::int64_t rotary_dim = head_dim;
    // HF: rotary_dim = int(head_dim * partial_rotary_factor), even, in [2, head_dim).
    if (m.form == "partial") {
      std::vector<std::int64_t> dims_of;
      for (const double f : s.partial_rotary_factor.choice) {
        const auto r = static_cast<std::int64_t>(static_cast<double>(head_dim) * f);
        if (r % 2 == 0 && r >= (m.rope_type == "dynamic" ? 4 : 2) && r < head_dim) dims_of.push_back(r);
      }
      if (dims_of.empty())
        m.form = "text";
      else
        rotary_dim = *rc::gen::elementOf(dims_of).as("rotary_dim (partial_rotary_factor)");
    }
    double base = 0;
    if (given(s.rope_theta, "rope_theta listed (variate)"))
      base = *gen_param(s.rope_theta).as("rope_theta");
    else
      base = *gen_param(s.rope_theta.otherwise.front()).as("rope_theta");
    m.params = RopeParams{head_dim, rotary_dim, base, layout};
    m.params.scaling = scaling_of(s, m.rope_type, rotary_dim);
    const std::int64_t pairs = rotary_dim / 2;
    if (m.form == "mrope" && pairs >= 3) {  // three sections of at least one pair each (t, h, w)
      const auto t = *rc::gen::inRange<std::int64_t>(1, pairs - 1).as("M-RoPE t pairs");
      const auto h = *rc::gen::inRange<std::int64_t>(1, pairs - t).as("M-RoPE h pairs");
      m.params.form.mrope_section = {t, h, pairs - t - h};
    } else if (m.form == "mrope") {
      m.form = "text";
    }
    const auto range = m.scenario == "decode" ? s.decode_tokens : s.other_tokens;
    const auto tokens = static_cast<std::size_t>(
        *rc::gen::inRange<std::int64_t>(range.first, std::min(range.second, max_tokens) + 1).as("tokens"));
    const std::int64_t original = m.params.scaling.original_max_position;
    std::vector<std::int64_t> p = scenario_positions(m.scenario, tokens, max_position, original);
    std::vector<std::int64_t> backs;  // text tokens have t = h = w; patches sit a few back
    if (!m.params.form.mrope_section.empty())
      for (const std::int64_t back : {3, 5})
        for (std::size_t t = 0; t < p.size(); ++t)
          backs.push_back(*rc::gen::inRange<std::int64_t>(0, back + 1).as("M-RoPE back"));
    if (plain.size() < s.scenarios.size() &&
        *rc::gen::inRange<std::size_t>(0, s.scenarios.size()).as("crossing (variate)") ==
            s.scenarios.size() - 1) {
      m.scenario = "crossing";
      p = scenario_positions(m.scenario, tokens, max_position, original);
    }
    m.positions = p;
    for (std::size_t i = 0; i < backs.size(); ++i)
      m.positions.push_back(std::max<std::int64_t>(0, p[i % p.size()] - backs[i]));
    // HF's runtime length (dynamic_rope_update): seq_len = max(position_ids) + 1.
    if (m.rope_type == "dynamic" || m.rope_type == "longrope")
      m.params.scaling.seq_len = *std::max_element(m.positions.begin(), m.positions.end()) + 1;
    return m;
  });
}

}  // namespace pe::testing

#include "support/generators.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <utility>

#include "pe/half.h"
#include "pe/plan.h"

namespace pe {

std::ostream& operator<<(std::ostream& os, const RopeScaling& s) {
  os << to_string(s.type);
  if (!scales(s)) return os;
  os << "(factor=" << s.factor << ", L=" << s.original_max_position << ", seq_len=" << s.seq_len;
  if (s.position_scale != 1) os << ", position_scale=" << s.position_scale;
  if (s.type == RopeScalingType::Yarn) {
    os << ", beta_fast=" << s.beta_fast << ", beta_slow=" << s.beta_slow << ", truncate=" << s.truncate;
    if (s.mscale) os << ", mscale=" << *s.mscale;
    if (s.mscale_all_dim) os << ", mscale_all_dim=" << *s.mscale_all_dim;
  }
  if (s.attention_factor) os << ", attention_factor=" << *s.attention_factor;
  if (s.type == RopeScalingType::Llama3)
    os << ", low=" << s.low_freq_factor << ", high=" << s.high_freq_factor;
  if (s.type == RopeScalingType::Proportional) os << ", partial_rotary_factor=" << s.partial_rotary_factor;
  if (s.type == RopeScalingType::Dynamic) {
    os << ", " << to_string(s.dynamic_semantics);
    if (s.alpha) os << ", alpha=" << *s.alpha;
  }
  if (s.type == RopeScalingType::LongRope) {
    for (const auto* list : {&s.short_factor, &s.long_factor}) {
      os << (list == &s.short_factor ? ", short=[" : "], long=[");
      for (std::size_t j = 0; j < list->size(); ++j) os << (j ? " " : "") << (*list)[j];
    }
    os << "]";
  }
  return os << ")";
}

}  // namespace pe

namespace pe::testing {
void draw_table_switches(SinusoidalParams& params, const Contract& contract, const std::string& tag) {
  if (!contract.table_switches) return;
  params.flip_sin_to_cos = *rc::gen::arbitrary<bool>().as(tag + "flip_sin_to_cos");
  params.downscale_freq_shift = *rc::gen::element(0.0, 1.0, 0.5).as(tag + "downscale_freq_shift");
  if (sinusoidal_frequency_dim(params) < 1) params.downscale_freq_shift = 0;
  RC_CLASSIFY(params.flip_sin_to_cos, "flipped");
  RC_CLASSIFY(params.downscale_freq_shift != 0, "shifted");
}

namespace {

int floor_log2(std::int64_t v) { return 63 - __builtin_clzll(static_cast<unsigned long long>(v)); }

struct BitLayout {
  int significand_bits;  // stored bits, without the implicit one
  int bias;
};

BitLayout bit_layout(DType t) {
  switch (t) {
    case DType::F64:
      return {52, 1023};
    case DType::F32:
      return {23, 127};
    case DType::BF16:
      return {7, 127};
    case DType::F16:
      return {10, 15};
  }
  return {23, 127};
}

double from_bits(DType t, bool negative, std::uint64_t biased_exponent, std::uint64_t significand) {
  if (t == DType::F64) {
    const std::uint64_t bits = (std::uint64_t{negative} << 63) | (biased_exponent << 52) | significand;
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
  }
  if (t == DType::BF16 || t == DType::F16) {
    const int shift = t == DType::BF16 ? 7 : 10;
    const auto bits = static_cast<std::uint16_t>((std::uint64_t{negative} << 15) |
                                                 (biased_exponent << shift) | significand);
    return t == DType::BF16 ? to_float(BFloat16{bits}) : to_float(Float16{bits});
  }
  const auto bits =
      static_cast<std::uint32_t>((std::uint64_t{negative} << 31) | (biased_exponent << 23) | significand);
  float v;
  std::memcpy(&v, &bits, sizeof v);
  return v;
}

}  // namespace

rc::Gen<std::int64_t> gen_position(std::int64_t max_position) {
  if (max_position <= 0) return rc::gen::just<std::int64_t>(0);
  const int top = floor_log2(std::max<std::int64_t>(max_position, 1));
  std::vector<std::int64_t> landmarks = {0, 1, 2, max_position, max_position - 1};
  for (std::int64_t v : {(std::int64_t{1} << 24) - 1, std::int64_t{1} << 24, (std::int64_t{1} << 24) + 1}) {
    landmarks.push_back(v);
  }
  std::erase_if(landmarks, [&](std::int64_t v) { return v < 0 || v > max_position; });
  return rc::gen::weightedOneOf<std::int64_t>({
      {2, rc::gen::elementOf(landmarks)},
      {3, rc::gen::map(rc::gen::inRange(0, top + 1), [](int k) { return std::int64_t{1} << k; })},
      {2, rc::gen::inRange<std::int64_t>(0, std::min<std::int64_t>(max_position, 1000) + 1)},
      {3, rc::gen::inRange<std::int64_t>(0, max_position + 1)},
  });
}

rc::Gen<std::vector<std::int64_t>> gen_positions(std::int64_t max_position, std::size_t max_count) {
  return rc::gen::mapcat(rc::gen::inRange<std::size_t>(1, max_count + 1), [max_position](std::size_t n) {
    return rc::gen::container<std::vector<std::int64_t>>(n, gen_position(max_position));
  });
}

rc::Gen<std::vector<std::int64_t>> gen_axes_positions(std::size_t n_axes, std::int64_t max_position,
                                                      std::size_t max_tokens) {
  return rc::gen::mapcat(rc::gen::inRange<std::size_t>(1, max_tokens + 1), [=](std::size_t n) {
    return rc::gen::container<std::vector<std::int64_t>>(n * n_axes, gen_position(max_position));
  });
}

std::vector<std::int64_t> draw_mrope_sections(std::int64_t pairs) {
  const std::size_t n = *rc::gen::element<std::size_t>(3, 4).as("M-RoPE axes");
  // n - 1 cut points in [0, pairs]: sections of any size, zeros included.
  auto cuts =
      *rc::gen::container<std::vector<std::int64_t>>(n - 1, rc::gen::inRange<std::int64_t>(0, pairs + 1))
           .as("M-RoPE section cuts");
  std::sort(cuts.begin(), cuts.end());
  cuts.push_back(pairs);
  std::vector<std::int64_t> sections;
  std::int64_t last = 0;
  for (std::int64_t c : cuts) {
    sections.push_back(c - last);
    last = c;
  }
  return sections;
}

std::vector<std::int64_t> draw_axes_dim(std::int64_t pairs) {
  const auto n = std::min<std::int64_t>(
      pairs, *rc::gen::weightedElement<std::int64_t>({{1, 1}, {2, 2}, {4, 3}, {1, 4}}).as("axial axes"));
  // Every axis one pair, then each but the last draws extra pairs from what is left (the last takes the
  // rest).
  std::int64_t left = pairs - n;
  std::vector<std::int64_t> dims;
  for (std::int64_t a = 0; a + 1 < n; ++a) {
    const auto extra = *rc::gen::inRange<std::int64_t>(0, left + 1).as("axial extra pairs");
    dims.push_back(2 * (1 + extra));
    left -= extra;
  }
  dims.push_back(2 * (1 + left));
  return dims;
}

std::vector<std::int64_t> draw_mrope_sections(std::int64_t pairs, MropeLayout layout) {
  if (layout != MropeLayout::Ernie) return draw_mrope_sections(pairs);
  const auto h = *rc::gen::inRange<std::int64_t>(0, pairs / 2 + 1).as("ERNIE h = w pairs");
  return {pairs - 2 * h, h, h};
}

rc::Gen<MropeLayout> gen_mrope_layout() {
  return rc::gen::element(MropeLayout::Sectioned, MropeLayout::Interleaved, MropeLayout::Ernie);
}

void draw_rope_form(RopeParams& p) {
  const auto pairs = p.rotary_dim / 2;
  int kind = *rc::gen::weightedElement<int>({{4, 0}, {3, 1}, {1, 2}, {2, 3}})
                  .as("form (text, M-RoPE, vision, axial)");
  if (kind == 2 && p.head_dim % 4 != 0) kind = 1;
  if (kind == 3) {
    p.form.axes_dim = draw_axes_dim(pairs);
    p.scaling = {};
  } else if (kind == 2) {
    p.form.vision = *rc::gen::element(VisionRope::Qwen2vl, VisionRope::Pixtral).as("vision");
    p.rotary_dim = p.head_dim;
    p.scaling = {};
  } else if (kind == 1) {
    p.form.mrope_layout = *gen_mrope_layout().as("M-RoPE layout");
    p.form.mrope_section = draw_mrope_sections(pairs, p.form.mrope_layout);
  } else if (p.rotary_dim < p.head_dim && *rc::gen::arbitrary<bool>().as("rotary at the end")) {
    p.rotary_offset = p.head_dim - p.rotary_dim;
  }
  if (p.layout == Layout::Interleaved &&
      *rc::gen::weightedElement<int>({{2, 0}, {1, 1}}).as("deinterleave") == 1) {
    p.layout = Layout::Deinterleave;
  }
  RC_CLASSIFY(true, form_class(p));
}

std::string form_class(const RopeParams& p) {
  std::string s;
  if (p.form.vision != VisionRope::None) {
    s = "vision " + std::string(to_string(p.form.vision));
  } else if (!p.form.mrope_section.empty()) {
    s = "M-RoPE " + std::string(to_string(p.form.mrope_layout)) + " " +
        std::to_string(p.form.mrope_section.size()) + " axes";
  } else if (!p.form.axes_dim.empty()) {
    s = "axial " + std::to_string(p.form.axes_dim.size()) + " axes";
  } else {
    s = p.rotary_offset > 0 ? "text, rotary at the end" : "text";
  }
  if (p.layout == Layout::Deinterleave) s += ", deinterleave";
  return s;
}

rc::Gen<PositionKind> gen_position_kind() {
  return rc::gen::resize(rc::kNominalSize, rc::gen::elementOf(kPositionKinds));
}

namespace {

// Strictly increasing from `start` by the gaps, cut at max_position (at least the start).
std::vector<std::int64_t> ascending(std::int64_t start, const std::vector<std::int64_t>& gaps,
                                    std::int64_t max_position) {
  std::vector<std::int64_t> p = {start};
  for (std::int64_t g : gaps) {
    if (p.back() > max_position - g) break;
    p.push_back(p.back() + g);
  }
  return p;
}

rc::Gen<std::vector<std::int64_t>> gen_ascending(std::int64_t max_position, rc::Gen<std::int64_t> gap) {
  return rc::gen::apply(
      [max_position](std::int64_t start, const std::vector<std::int64_t>& gaps) {
        return ascending(start, gaps, max_position);
      },
      gen_position(max_position / 2),  // room for the gaps
      rc::gen::mapcat(rc::gen::inRange<std::size_t>(1, 8), [gap](std::size_t n) {
        return rc::gen::container<std::vector<std::int64_t>>(n, gap);
      }));
}

}  // namespace

rc::Gen<std::vector<std::int64_t>> gen_positions_of(PositionKind kind, std::int64_t max_position,
                                                    std::size_t min_run, std::size_t max_run) {
  switch (kind) {
    case PositionKind::Run:  // any length from the first case on: RapidCheck keeps early ranges small
      return rc::gen::mapcat(
          rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::size_t>(min_run, max_run + 1)),
          [max_position](std::size_t n) {
            const std::int64_t last_start =
                std::max<std::int64_t>(0, max_position - static_cast<std::int64_t>(n) + 1);
            return rc::gen::map(gen_position(last_start), [n](std::int64_t start) {
              std::vector<std::int64_t> p(n);
              for (std::size_t k = 0; k < n; ++k) p[k] = start + static_cast<std::int64_t>(k);
              return p;
            });
          });
    case PositionKind::Sorted:
      return gen_ascending(max_position, rc::gen::inRange<std::int64_t>(1, 5000));
    case PositionKind::Reversed:
      return rc::gen::map(gen_ascending(max_position, rc::gen::inRange<std::int64_t>(1, 5000)),
                          [](std::vector<std::int64_t> p) {
                            std::reverse(p.begin(), p.end());
                            return p;
                          });
    case PositionKind::Repeated:
      return rc::gen::apply([](std::int64_t p, std::size_t n) { return std::vector<std::int64_t>(n, p); },
                            gen_position(max_position), rc::gen::inRange<std::size_t>(2, 9));
    case PositionKind::Strided:
      return rc::gen::mapcat(rc::gen::inRange<std::int64_t>(2, 4097), [max_position](std::int64_t stride) {
        return gen_ascending(max_position, rc::gen::just(stride));
      });
    case PositionKind::Scattered:
      return gen_positions(max_position, 8);
    case PositionKind::NonMonotone:
      return gen_non_monotone(max_position);
  }
  return gen_positions(max_position, 8);
}

rc::Gen<std::vector<std::int64_t>> gen_run_then(PositionKind kind, std::int64_t max_position,
                                                std::size_t min_run, std::size_t max_run) {
  return rc::gen::apply(
      [](std::vector<std::int64_t> run, const std::vector<std::int64_t>& then) {
        run.insert(run.end(), then.begin(), then.end());
        return run;
      },
      gen_positions_of(PositionKind::Run, max_position, min_run, max_run),
      gen_positions_of(kind, max_position, min_run, max_run));
}

rc::Gen<std::vector<std::int64_t>> gen_non_monotone(std::int64_t max_position) {
  // Three distinct values a < b < c as (a, c, b): up, then down; then up to 2 more of any kind.
  const std::int64_t top = std::max<std::int64_t>(max_position, 2);
  return rc::gen::apply(
      [top](std::int64_t a, std::int64_t gap1, std::int64_t gap2, const std::vector<std::int64_t>& more) {
        const std::int64_t lo = std::min(a, top - 2);
        const std::int64_t mid = std::min(lo + gap1, top - 1);
        const std::int64_t hi = std::min(mid + gap2, top);
        std::vector<std::int64_t> p = {lo, hi, mid};
        p.insert(p.end(), more.begin(), more.end());
        return p;
      },
      gen_position(top), rc::gen::inRange<std::int64_t>(1, 5000), rc::gen::inRange<std::int64_t>(1, 5000),
      rc::gen::mapcat(rc::gen::inRange<std::size_t>(0, 3), [top](std::size_t n) {
        return rc::gen::container<std::vector<std::int64_t>>(n, gen_position(top));
      }));
}

rc::Gen<std::int64_t> gen_tail_dim(std::int64_t max_blocks) {
  const auto lanes = static_cast<std::int64_t>(kWidestFloatLanes);
  return rc::gen::apply([lanes](std::int64_t m, std::int64_t t) { return 2 * (lanes * m + 2 * t + 1); },
                        rc::gen::inRange<std::int64_t>(0, max_blocks + 1),
                        // At full size from the first case: the quick effort's 25 cases draw every tail.
                        rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::int64_t>(0, lanes / 2)));
}

rc::Gen<bool> gen_kept_while_needed() {
  return [](const rc::Random& /*random*/, int /*size*/) {
    return rc::shrinkable::shrinkRecur(true,
                                       [](bool v) { return v ? rc::seq::just(false) : rc::Seq<bool>(); });
  };
}

std::string tail_class(std::size_t pairs) {
  return "tail " + std::to_string(pairs % kWidestFloatLanes) + " of " + std::to_string(kWidestFloatLanes) +
         " lanes";
}

rc::Gen<std::int64_t> gen_dim(std::int64_t max_dim) {
  // Ascending, so that a failing case shrinks toward the smallest head dim that still fails.
  std::vector<std::int64_t> shapes = {48, 72, 80, 96, 120};
  for (std::int64_t d = 2; d <= max_dim; d *= 2) shapes.push_back(d);
  std::sort(shapes.begin(), shapes.end());
  shapes.erase(std::remove_if(shapes.begin(), shapes.end(), [&](auto d) { return d > max_dim; }),
               shapes.end());
  // By index, which shrinks toward 0 (RapidCheck's elementOf does not shrink at all).
  // At full size: inRange's range grows with RapidCheck's size, and the shapes must not.
  const auto shape =
      rc::gen::resize(rc::kNominalSize, rc::gen::map(rc::gen::inRange<std::size_t>(0, shapes.size()),
                                                     [shapes](std::size_t i) { return shapes[i]; }));
  return rc::gen::weightedOneOf<std::int64_t>({
      {3, shape},
      {1, rc::gen::map(rc::gen::inRange<std::int64_t>(1, max_dim / 2 + 1),
                       [](std::int64_t h) { return 2 * h; })},
  });
}

rc::Gen<std::int64_t> gen_odd_dim() {
  return rc::gen::map(rc::gen::inRange<std::int64_t>(0, 4097), [](std::int64_t h) { return 2 * h + 1; });
}

rc::Gen<double> gen_base() {
  return rc::gen::weightedOneOf<double>({
      {3, rc::gen::resize(rc::kNominalSize, rc::gen::map(rc::gen::inRange(0, 3),
                                                         [](int i) {
                                                           return std::array{1e4, 5e5, 1e6}[i];
                                                         }))},
      {1, rc::gen::map(rc::gen::inRange(0, 1 << 20),
                       [](int u) { return 1.5 * std::pow(1e7 / 1.5, u / double(1 << 20)); })},
  });
}

namespace {

// k/16 for k in [lo·16, hi·16]: factors on a grid fine enough to be arbitrary, exact in binary.
rc::Gen<double> gen_sixteenths(double lo, double hi) {
  return rc::gen::map(rc::gen::inRange(static_cast<int>(lo * 16), static_cast<int>(hi * 16) + 1),
                      [](int k) { return k / 16.0; });
}

rc::Gen<double> gen_factor() {
  return rc::gen::weightedOneOf<double>(
      {{2, rc::gen::element(1.0, 2.0, 4.0, 8.0, 32.0, 40.0, 0.5, 1024.0, 1.0 / 64)},
       {3, gen_sixteenths(0.25, 64)}});
}

rc::Gen<std::int64_t> gen_original_max_position() {
  return rc::gen::weightedOneOf<std::int64_t>({{2, rc::gen::element<std::int64_t>(4096, 8192, 32768)},
                                               {1, rc::gen::inRange<std::int64_t>(16, (1 << 17) + 1)}});
}

rc::Gen<std::vector<double>> gen_factor_list(std::int64_t rotary_dim) {
  return rc::gen::container<std::vector<double>>(static_cast<std::size_t>(rotary_dim / 2),
                                                 gen_sixteenths(0.5, 64));
}

}  // namespace

rc::Gen<RopeScaling> gen_scaling_of(RopeScalingType type, std::int64_t rotary_dim) {
  using T = RopeScalingType;
  return rc::gen::exec([type, rotary_dim] {
    RopeScaling s;
    s.type = type;
    if (type == T::None) return s;
    s.factor = *gen_factor();
    s.original_max_position = *gen_original_max_position();
    const std::int64_t L = s.original_max_position;
    s.seq_len =
        *rc::gen::weightedOneOf<std::int64_t>({{1, rc::gen::element<std::int64_t>(0, L - 1, L, L + 1)},
                                               {2, rc::gen::inRange<std::int64_t>(0, 4 * L)}});
    if (type == T::Yarn) {
      s.beta_slow = *rc::gen::weightedOneOf<double>({{2, rc::gen::just(1.0)}, {1, gen_sixteenths(0.25, 8)}});
      s.beta_fast = *rc::gen::weightedOneOf<double>(
          {{2, rc::gen::just(std::max(32.0, s.beta_slow))},
           {1, rc::gen::just(s.beta_slow)},
           {1, rc::gen::map(gen_sixteenths(0, 64), [b = s.beta_slow](double d) { return b + d; })}});
      s.truncate = *rc::gen::arbitrary<bool>();
      switch (*rc::gen::inRange(0, 3)) {
        case 1:
          s.mscale = *rc::gen::element(0.707, 1.0, 0.5);
          s.mscale_all_dim = *rc::gen::element(0.707, 1.0, 0.5, 0.0625);
          break;
        case 2:
          s.attention_factor = *gen_sixteenths(0.5, 1.5);
          break;
        default:
          break;
      }
    }
    if (type == T::Llama3) {
      s.low_freq_factor =
          *rc::gen::weightedOneOf<double>({{2, rc::gen::just(1.0)}, {1, gen_sixteenths(0.25, 8)}});
      s.high_freq_factor = s.low_freq_factor + *rc::gen::weightedOneOf<double>(
                                                   {{2, rc::gen::just(3.0)}, {1, gen_sixteenths(0.0625, 8)}});
    }
    if (type == T::Dynamic) {  // the engines' readings now and then: vLLM's static table, Hunyuan's alpha
      // (static's base is b·(1 + s·(s - 1))^(d/(d-2)): factors of released configs, 1 to 64)
      if (*rc::gen::inRange(0, 4) == 3 && s.factor >= 1 && s.factor <= 64)
        s.dynamic_semantics = DynamicSemantics::Static;
      if (*rc::gen::inRange(0, 6) == 5) s.alpha = *rc::gen::element(1.5, 2.0, 8.0, 32.0);
    }
    if (type == T::Proportional) {  // Gemma 4's, at least one rotating pair
      s.partial_rotary_factor = *rc::gen::element(1.0, 0.25, 0.5, 0.3);
      if (proportional_pairs(s, rotary_dim) < 1) s.partial_rotary_factor = 1.0;
    }
    if (type == T::LongRope) {
      s.original_max_position = std::max<std::int64_t>(L, 2);
      s.short_factor = *gen_factor_list(rotary_dim);
      s.long_factor = *gen_factor_list(rotary_dim);
      if (*rc::gen::element(0, 0, 1) == 1) s.attention_factor = *gen_sixteenths(0.5, 1.5);
    }
    return s;
  });
}

rc::Gen<RopeScaling> gen_scaling(std::int64_t rotary_dim) {
  using T = RopeScalingType;
  std::vector<T> methods = {T::Linear, T::Yarn, T::Llama3, T::LongRope};
  if (rotary_dim >= 4) {
    methods.push_back(T::Ntk);
    methods.push_back(T::Dynamic);
  }
  methods.push_back(T::Proportional);
  // None a third of the time; by index, so that a failing case shrinks toward no scaling, then linear.
  const std::size_t n = methods.size();
  const auto method = rc::gen::mapcat(
      rc::gen::resize(rc::kNominalSize, rc::gen::inRange<std::size_t>(0, 3 * n)),
      [methods, n, rotary_dim](std::size_t k) {
        return k < n ? rc::gen::just(RopeScaling{}) : gen_scaling_of(methods[(k - n) / 2], rotary_dim);
      });
  // pe-suite's stated hypotheses beyond HF's configs, now and then: positions divided by a scale, an
  // attention factor with any method, YaRN's betas backwards (HF runs its ramp in either order).
  return rc::gen::exec([method] {
    RopeScaling s = *method;
    switch (*rc::gen::resize(rc::kNominalSize, rc::gen::inRange(0, 8))) {  // shrinks toward 0: none of them
      case 7:
        s.position_scale = *gen_sixteenths(0.5, 4);
        break;
      case 6:
        if (!s.attention_factor) s.attention_factor = *gen_sixteenths(0.5, 1.5);
        break;
      case 5:
        std::swap(s.beta_fast, s.beta_slow);
        break;
      default:
        break;
    }
    return s;
  });
}

void keep_ntk_base_above_one(RopeParams& params) {
  if (params.scaling.type != RopeScalingType::Ntk || !(params.scaling.factor < 1)) return;
  const double d = static_cast<double>(params.rotary_dim == 0 ? params.head_dim : params.rotary_dim);
  params.base = std::max(params.base, 1.5 / std::pow(params.scaling.factor, d / (d - 2)) * (1 + 0x1p-40));
}

namespace {
// 0 (zeros and subnormals) or the largest exponent allowed, shrinking to 1.0's (RapidCheck's element()
// does not shrink: a failing case would keep an extreme it does not need).
rc::Gen<std::uint64_t> gen_extreme_exponent(int bias, int max_exponent) {
  return [bias, max_exponent](const rc::Random& random, int /*size*/) {
    const auto one = static_cast<std::uint64_t>(std::min(bias, max_exponent));
    const std::uint64_t e =
        (rc::Random(random).next() & 1) != 0 ? static_cast<std::uint64_t>(max_exponent) : 0;
    return rc::shrinkable::shrinkRecur(
        e, [one](std::uint64_t v) { return v == one ? rc::Seq<std::uint64_t>() : rc::seq::just(one); });
  };
}
}  // namespace

rc::Gen<double> gen_value(DType type, double max_abs) {
  const BitLayout f = bit_layout(type);
  // Largest biased exponent whose values stay below max_abs and below half the type's range (so a
  // rotation or a sum of two of them stays finite).
  const int max_exponent =
      std::clamp(static_cast<int>(std::floor(std::log2(max_abs))) - 1 + f.bias, 0, 2 * f.bias - 1);
  const auto significand = rc::gen::inRange<std::uint64_t>(0, std::uint64_t{1} << f.significand_bits);
  // Exponents as offsets from 1.0's that shrink toward 0 (0, -1, 1, -2, ...), and the ordinary ones first:
  // a failing value shrinks toward ±1 and powers of two, never toward the extremes.
  const auto around_one = [f, max_exponent](int below, int above) {
    // The side first, then a distance within that side's own range (one range for both would pile the
    // shorter side's draws onto its end).
    return rc::gen::mapcat(rc::gen::arbitrary<bool>(), [f, max_exponent, below, above](bool down) {
      return rc::gen::map(
          rc::gen::inRange<int>(0, (down ? below : above) + 1), [f, max_exponent, down](int d) {
            return static_cast<std::uint64_t>(std::clamp(down ? f.bias - d : f.bias + d, 0, max_exponent));
          });
    });
  };
  const auto exponent_ordinary = around_one(8, 7);
  const auto exponent_any = around_one(f.bias, std::max(max_exponent - f.bias, 0));
  return rc::gen::apply(
      [type](bool negative, std::uint64_t e, std::uint64_t m) { return from_bits(type, negative, e, m); },
      rc::gen::arbitrary<bool>(),
      rc::gen::weightedOneOf<std::uint64_t>(
          {{4, exponent_ordinary}, {3, exponent_any}, {1, gen_extreme_exponent(f.bias, max_exponent)}}),
      significand);
}

rc::Gen<std::vector<double>> gen_values(DType type, double max_abs, std::size_t count) {
  return rc::gen::container<std::vector<double>>(count, gen_value(type, max_abs));
}

}  // namespace pe::testing

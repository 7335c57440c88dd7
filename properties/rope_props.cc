// Properties of every RoPE instance in the registry, each written once.

#include <numeric>

#include "pe/ref/reference.h"
#include "support/model_configs.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

// Largest finite values are below 2^(max_exponent + 1).
int max_exponent(DType t) { return t == DType::F16 ? 15 : t == DType::F64 ? 1023 : 127; }

// One generated case: params, positions, heads and input values within the contract.
// Positions are [n_axes][tokens] of the params' form.
struct Case {
  RopeParams params;
  std::vector<std::int64_t> positions;
  std::int64_t heads = 1;
  std::vector<double> x;
  bool edge = false;  // gen_edge_case's: large, measured on a sample of its pairs

  std::size_t tokens() const { return positions.size() / n_axes(params.form); }
  // The position pair j of token t turns by.
  std::int64_t position(const RopePlan& plan, std::size_t t, std::size_t j) const {
    return positions[plan.axis_of_pair(j) * tokens() + t];
  }
};

class RopeProps : public InstanceTest {
 protected:
  // Every rotary form (draw_rope_form) unless `text_only`.
  RopeParams gen_params(Layout layout, bool text_only = false) const {
    // Shapes at full size from the first case (RapidCheck starts at size 0: one pair, where no pairing or
    // frequency mistake shows and only the edge case could fail); the shrinker still takes them down.
    const std::int64_t head_dim = *rc::gen::resize(rc::kNominalSize, gen_dim(256)).as("head_dim");
    const std::int64_t rotary_dim =
        *rc::gen::resize(rc::kNominalSize,
                         rc::gen::weightedOneOf<std::int64_t>(
                             {{2, rc::gen::just(head_dim)},
                              {1, rc::gen::map(rc::gen::inRange<std::int64_t>(1, head_dim / 2 + 1),
                                               [](std::int64_t r) { return 2 * r; })}}))
             .as("rotary_dim");
    RopeParams p{head_dim, rotary_dim, *gen_base().as("base"), layout};
    p.scaling = *gen_scaling(rotary_dim).as("scaling");
    keep_ntk_base_above_one(p);
    if (!text_only) draw_rope_form(p);
    RC_CLASSIFY(true, to_string(p.scaling.type));
    // The contract's derivation covers bases up to max_base: NTK and dynamic raise the base.
    RC_PRE(RopePlan(p).effective_base() <= in().contract().max_base);
    return p;
  }
  Case gen_case(std::size_t max_tokens = 3, bool text_only = false) const {
    Case c;
    c.params = gen_params(in().layout, text_only);
    c.positions = *rc::gen::resize(rc::kNominalSize,
                                   gen_axes_positions(n_axes(c.params.form), max_position(), max_tokens))
                       .as("positions [axes][tokens]");
    c.heads = *rc::gen::inRange<std::int64_t>(1, 3).as("heads");
    // An attention factor above 1 grows the output: inputs a binade lower keep it finite.
    const double attention = RopePlan(c.params).attention_factor();
    c.x = *gen_values(in().dtype, input_limit(attention), c.tokens() * c.heads * c.params.head_dim).as("x");
    return c;
  }
  // The edges every case also covers, by construction: a rotary pair count that leaves a tail for
  // every vector width (gen_tail_dim), pass-through channels (rotary_dim < head_dim), positions that
  // are not monotone, two heads; the properties with a direction run it both ways.
  Case gen_edge_case() const {
    Case c;
    c.edge = true;
    const std::int64_t rotary_dim = *gen_tail_dim(2).as("edge rotary_dim");
    const std::int64_t head_dim =
        rotary_dim + 2 * *rc::gen::inRange<std::int64_t>(1, 9).as("edge pass-through pairs");
    c.params = {head_dim, rotary_dim, *gen_base().as("edge base"), in().layout};
    c.params.scaling = *gen_scaling(rotary_dim).as("edge scaling");
    // DeepSeek MLA's place for the rotary channels, and its output order.
    if (*rc::gen::arbitrary<bool>().as("edge rotary at the end"))
      c.params.rotary_offset = head_dim - rotary_dim;
    if (in().layout == Layout::Interleaved && *rc::gen::arbitrary<bool>().as("edge deinterleave")) {
      c.params.layout = Layout::Deinterleave;
    }
    keep_ntk_base_above_one(c.params);
    RC_PRE(RopePlan(c.params).effective_base() <= in().contract().max_base);
    const auto pairs = static_cast<std::size_t>(rotary_dim / 2);
    RC_CLASSIFY(true, tail_class(pairs));
    c.positions = *gen_non_monotone(max_position()).as("edge positions");
    c.heads = 2;
    // Ordinary magnitudes from a drawn seed (the drawn case covers zeros, subnormals and extremes):
    // cheap to draw for a thousand values.
    c.x = seeded_inputs(in().dtype, c.tokens() * c.heads * c.params.head_dim,
                        *rc::gen::arbitrary<std::uint64_t>().as("edge input seed"));
    return c;
  }
  // One small case of every rotary form besides text (M-RoPE sectioned, interleaved and ernie, 2-D vision
  // qwen2vl and pixtral), so that every form is compared in every case: the drawn case falls on a vision form
  // in about one case of sixteen, and a kernel whose pairs index the wrong frequency under one form passed a
  // quick run's 25 cases (cli/plugin_tests: PLUGTEST_VISION_INDEX).
  std::vector<Case> gen_form_cases() const {
    std::vector<Case> out;
    for (int form = 0; form < 5; ++form) {
      Case c;
      const std::int64_t head_dim = 4 * *rc::gen::inRange<std::int64_t>(1, 17).as("form case head_dim / 4");
      c.params = {head_dim, head_dim, *gen_base().as("form case base"), in().layout};
      if (form < 3) {
        c.params.form.mrope_layout = form == 0   ? MropeLayout::Sectioned
                                     : form == 1 ? MropeLayout::Interleaved
                                                 : MropeLayout::Ernie;
        c.params.form.mrope_section = draw_mrope_sections(head_dim / 2, c.params.form.mrope_layout);
      } else {
        c.params.form.vision = form == 3 ? VisionRope::Qwen2vl : VisionRope::Pixtral;
      }
      c.positions = *gen_axes_positions(n_axes(c.params.form), max_position(), 3)
                         .as("form case positions [axes][tokens]");
      c.x = seeded_inputs(in().dtype, c.tokens() * static_cast<std::size_t>(head_dim),
                          *rc::gen::arbitrary<std::uint64_t>().as("form case input seed"));
      out.push_back(std::move(c));
    }
    return out;
  }
  // The drawn case, the edge case and the form cases; the last drop out together while shrinking when the
  // drawn case fails without them (they cannot shrink to small shapes and simple values themselves).
  std::vector<Case> gen_cases() const {
    const bool edge = *gen_kept_while_needed().as("with the edge and form cases");
    std::vector<Case> out = {gen_case()};
    if (edge) {
      out.push_back(gen_edge_case());
      for (Case& c : gen_form_cases()) out.push_back(std::move(c));
    }
    return out;
  }
  double input_limit(double attention) const {
    const double limit = in().contract().max_input_abs;
    return attention > 1 ? std::min(limit, std::ldexp(1.0, max_exponent(in().dtype) - 1)) : limit;
  }
  // The budget of both outputs of pair j whose input is (a, b).
  double budget(const RopePlan& plan, std::int64_t p, std::size_t j, double a, double b) const {
    return rope_element_budget(in().contract(), plan, in().dtype, angle_bound(p, plan.inv_freq()[j]), j,
                               std::fabs(a) + std::fabs(b));
  }
  std::vector<double> rotated(const RopePlan& plan, const Case& c,
                              RopeDirection direction = RopeDirection::Forward) const {
    TypedBuffer y = buffer_of(in().dtype, c.x);
    run_rope(in(), plan, c.positions, c.heads, y, direction);
    return y.values();
  }
};

// Where a pair of one head row is: the input's two elements, the output's two, and the position.
struct PairAt {
  std::size_t in0, in1, out0, out1, pair;
  std::int64_t position;
};

// Calls f(PairAt) for every rotated pair of every head of a case.
template <class F>
void for_each_pair(const RopePlan& plan, const Case& c, F&& f) {
  for (std::size_t t = 0; t < c.tokens(); ++t) {
    for (std::int64_t h = 0; h < c.heads; ++h) {
      const std::size_t row = (t * c.heads + h) * plan.head_dim();
      for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
        const auto [i0, i1] = plan.input_channels(j);
        const auto [o0, o1] = plan.output_channels(j);
        f(PairAt{row + i0, row + i1, row + o0, row + o1, j, c.position(plan, t, j)});
      }
    }
  }
}

TEST_P(RopeProps, AgreesWithReferenceWithinBudget) {
  PE_RC_CHECK("|R(±p)x - exact| <= budget for every element", [&] {
    const std::vector<Case> cases = gen_cases();
    for (const Case& c : cases) {
      const RopePlan plan(c.params);
      for (RopeDirection d : {RopeDirection::Forward, RopeDirection::Inverse}) {
        if (d == RopeDirection::Inverse && &c == &cases.front())
          continue;  // the edge and form cases run both
        const std::vector<double> y = rotated(plan, c, d);
        // The edge case's pass-through channels are ChannelsBeyondRotaryDimAreUntouched's to check.
        const harness::Sample sample{{}, c.edge ? edge_pairs(plan.n_pairs()) : std::vector<std::size_t>{}};
        harness::measure_rope(c.params, c.positions, static_cast<std::size_t>(c.heads), c.x, y,
                              {&in().contract(), in().dtype}, fail_over_budget(), sample, d);
      }
    }
  });
}

// The shared model-config space (harness/data/config_space.json, the one pe_suite.verify_rope draws from): HF
// configs of every rope_type with realistic parameters, partial and M-RoPE forms, the position scenarios
// engines meet. A kernel given such a config (a v2 plugin reads it under HF's names) agrees with the exact
// reference.
TEST_P(RopeProps, AgreesUnderDrawnModelConfigs) {
  PE_RC_CHECK("|R(p)x - exact| <= budget under drawn model configs", [&] {
    const ModelRope m = *gen_model_rope(in().layout, 256, max_position(), 8).as("model RoPE");
    RC_CLASSIFY(true, m.rope_type);
    RC_CLASSIFY(true, m.form);
    RC_CLASSIFY(true, m.scenario);
    const RopePlan plan(m.params);
    // The contract's derivation covers bases up to max_base: dynamic raises the base with the length.
    RC_PRE(plan.effective_base() <= in().contract().max_base);
    const auto heads = *rc::gen::inRange<std::int64_t>(1, 3).as("heads");
    const std::size_t tokens = m.positions.size() / n_axes(m.params.form);
    Case c{m.params, m.positions, heads,
           *gen_values(in().dtype, input_limit(plan.attention_factor()),
                       tokens * static_cast<std::size_t>(heads) * static_cast<std::size_t>(m.params.head_dim))
                .as("x")};
    const std::vector<double> y = rotated(plan, c);
    harness::measure_rope(c.params, c.positions, static_cast<std::size_t>(c.heads), c.x, y,
                          {&in().contract(), in().dtype}, fail_over_budget(), {}, RopeDirection::Forward);
  });
}

TEST_P(RopeProps, FiniteInputsGiveFiniteOutputs) {
  PE_RC_CHECK("finite x within the contract's range gives finite R(p)x", [&] {
    for (const Case& c : gen_cases()) {
      for (double v : rotated(RopePlan(c.params), c)) RC_ASSERT(std::isfinite(v));
    }
  });
}

// ‖y‖ - A‖x‖ per pair (A the attention factor, 1 unless scaled): ‖y*‖ = A‖x‖ exactly, and
// ‖y - y*‖ <= hypot(b, b); hypot and A·‖x‖ in double add 4·2^-53·A‖x‖.
TEST_P(RopeProps, PreservesTheNormOfEveryPair) {
  PE_RC_CHECK("|‖R(p)x_j‖ - A‖x_j‖| within the contract", [&] {
    for (const Case& c : gen_cases()) {
      const RopePlan plan(c.params);
      const std::vector<double> y = rotated(plan, c);
      for_each_pair(plan, c, [&](const PairAt& at) {
        const double before = plan.attention_factor() * std::hypot(c.x[at.in0], c.x[at.in1]);
        const double after = std::hypot(y[at.out0], y[at.out1]);
        const double b = budget(plan, at.position, at.pair, c.x[at.in0], c.x[at.in1]);
        const double tol = std::sqrt(2.0) * b + 6 * kU64 * before;
        if (!(std::fabs(after - before) <= tol)) {
          RC_FAIL(fmt::format("pair {} at p={}: A‖x‖={:.17g} ‖y‖={:.17g}, diff {:.3g} > {:.3g}", at.pair,
                              at.position, before, after, std::fabs(after - before), tol));
        }
      });
    }
  });
}

// ⟨R(m)q, R(n)k⟩ = ⟨R(m-n)q, k⟩ (both equal the exact ⟨R(m)q, R(n)k⟩); with an attention factor A
// every rotation carries it, so ⟨A·R(m)q, A·R(n)k⟩ = A·⟨A·R(m-n)q, k⟩. For computed a, b within
// e_a, e_b of exact vectors: |⟨a,b⟩ - ⟨a*,b*⟩| <= Σ e_a(|b| + e_b) + |a|·e_b; sums in double add
// 2·n·2^-53·Σ|a·b|, and the product by A one more rounding.
TEST_P(RopeProps, InnerProductDependsOnlyOnRelativePosition) {
  PE_RC_CHECK("<R(m)q, R(n)k> = A<R(m-n)q, k> within the contract", [&] {
    const RopeParams params = gen_params(in().layout, /*text_only=*/true);  // RopeFormProps: per axis
    const RopePlan plan(params);
    const std::int64_t m = *gen_position(max_position()).as("m");
    const std::int64_t n = *gen_position(m).as("n");
    const std::size_t hd = plan.head_dim();
    const double A = plan.attention_factor();
    const auto q = *gen_values(in().dtype, std::min(0x1p20, input_limit(A)), hd).as("q");
    const auto k = *gen_values(in().dtype, std::min(0x1p20, input_limit(A)), hd).as("k");
    auto rotate = [&](const std::vector<double>& v, std::int64_t p) {
      TypedBuffer b = buffer_of(in().dtype, v);
      const std::vector<std::int64_t> pos = {p};
      run_rope(in(), plan, pos, 1, b);
      return b.values();
    };
    const auto a = rotate(q, m), b = rotate(k, n), r = rotate(q, m - n);
    InnerProductCheck ip{.attention = A};
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      const std::size_t i0 = plan.pair_first(j), i1 = i0 + plan.pair_offset();
      const double ea = budget(plan, m, j, q[i0], q[i1]), eb = budget(plan, n, j, k[i0], k[i1]);
      const double er = budget(plan, m - n, j, q[i0], q[i1]);
      for (std::size_t i : {i0, i1}) ip.add(a[i], b[i], r[i], k[i], ea, eb, er);
    }
    ip.check(hd);
  });
}

// Without an attention factor exactly the identity; with one, A·x within the budget at φ = 0.
TEST_P(RopeProps, PositionZeroIsTheIdentity) {
  PE_RC_CHECK("R(0)x == x exactly (A·x within the contract when scaled)", [&] {
    Case c = gen_case();
    std::fill(c.positions.begin(), c.positions.end(), 0);
    const RopePlan plan(c.params);
    const std::vector<double> y = rotated(plan, c);
    const double A = plan.attention_factor();
    RC_CLASSIFY(A != 1, "attention factor");
    if (A == 1) {  // deinterleave's identity moves the pairs to their output channels
      for_each_pair(plan, c, [&](const PairAt& at) {
        RC_ASSERT(y[at.out0] == c.x[at.in0]);
        RC_ASSERT(y[at.out1] == c.x[at.in1]);
      });
      return;
    }
    for_each_pair(plan, c, [&](const PairAt& at) {
      const double b = budget(plan, 0, at.pair, c.x[at.in0], c.x[at.in1]) +
                       kU64 * A * std::max(std::fabs(c.x[at.in0]), std::fabs(c.x[at.in1]));
      RC_ASSERT(std::fabs(y[at.out0] - A * c.x[at.in0]) <= b);
      RC_ASSERT(std::fabs(y[at.out1] - A * c.x[at.in1]) <= b);
    });
  });
}

// y = A·R(p)x within b1; z = A·R(-p)y within b2 of A·R(-p)y; A·R(-p) moves a pair's error (e0, e1)
// to components of at most A(e0 + e1), so |z - A²x| <= 2A·b1 + b2 (+ A²x's rounding in double).
TEST_P(RopeProps, InverseRotationUndoesForward) {
  PE_RC_CHECK("R(-p)R(p)x = A²x within the contract", [&] {
    for (const Case& c : gen_cases()) {
      const RopePlan plan(c.params);
      const std::vector<double> y = rotated(plan, c);
      TypedBuffer zb = buffer_of(in().dtype, y);
      run_rope(in(), plan, c.positions, c.heads, zb, RopeDirection::Inverse);
      const std::vector<double> z = zb.values();
      for_each_pair(plan, c, [&](const PairAt& at) {
        const std::int64_t p = at.position;
        const double A = plan.attention_factor(), A2 = A * A;
        const double tol = 2 * A * budget(plan, p, at.pair, c.x[at.in0], c.x[at.in1]) +
                           budget(plan, p, at.pair, y[at.out0], y[at.out1]) +
                           2 * kU64 * A2 * (std::fabs(c.x[at.in0]) + std::fabs(c.x[at.in1]));
        for (std::size_t i : {at.in0, at.in1}) {  // back where the input was
          if (!(std::fabs(z[i] - A2 * c.x[i]) <= tol)) {
            RC_FAIL(fmt::format("pair {} at p={}: A²x={:.17g} back to {:.17g}, diff {:.3g} > {:.3g}", at.pair,
                                p, A2 * c.x[i], z[i], std::fabs(z[i] - A2 * c.x[i]), tol));
          }
        }
      });
    }
  });
}

// The batch view: [heads, tokens, head_dim] (HF) and rows with gaps between them (a slice of a fused
// QKV tensor) give each row the same bits as [tokens, heads, head_dim], and leave the gaps alone.
TEST_P(RopeProps, EveryBatchLayoutRotatesEachRowAlike) {
  PE_RC_CHECK("rows rotate alike wherever the strides put them; elements between rows untouched", [&] {
    // At least 2 tokens and 2 heads, so that every stride is used.
    Case c;
    c.params = gen_params(in().layout, /*text_only=*/true);
    c.positions = *gen_positions(max_position(), 3).as("positions");
    c.positions.push_back(std::min(c.positions.back() + 1, max_position()));
    c.heads = *rc::gen::inRange<std::int64_t>(2, 4).as("heads");
    c.x = *gen_values(in().dtype, input_limit(RopePlan(c.params).attention_factor()),
                      c.positions.size() * c.heads * c.params.head_dim)
               .as("x");
    const RopePlan plan(c.params);
    const std::size_t tokens = c.positions.size(), heads = static_cast<std::size_t>(c.heads),
                      hd = plan.head_dim();
    const std::vector<double> want = rotated(plan, c);
    RopeBatch gapped = RopeBatch::tokens_first(c.positions, heads, hd);  // a Q slice of a fused QKV row
    gapped.head_stride = hd + 1;
    gapped.token_stride = heads * gapped.head_stride + 3;
    RopeBatch hf_gapped = RopeBatch::heads_first(c.positions, heads, hd);
    hf_gapped.token_stride = hd + 2;
    hf_gapped.head_stride = tokens * hf_gapped.token_stride + 1;
    for (const RopeBatch& batch : {RopeBatch::heads_first(c.positions, heads, hd), gapped, hf_gapped}) {
      const std::size_t size = batch.row(tokens - 1, heads - 1) + hd + 2;
      const double sentinel = 0.375;  // exact in every type
      TypedBuffer y(in().dtype, size);
      for (std::size_t i = 0; i < size; ++i) y.set(i, sentinel);
      std::vector<bool> in_row(size, false);
      for (std::size_t t = 0; t < tokens; ++t) {
        for (std::size_t h = 0; h < heads; ++h) {
          for (std::size_t k = 0; k < hd; ++k) {
            y.set(batch.row(t, h) + k, c.x[(t * heads + h) * hd + k]);
            in_row[batch.row(t, h) + k] = true;
          }
        }
      }
      rope_apply(*in().variant, plan, batch, y.view());
      for (std::size_t t = 0; t < tokens; ++t) {
        for (std::size_t h = 0; h < heads; ++h) {
          for (std::size_t k = 0; k < hd; ++k) {
            const double got = y.get(batch.row(t, h) + k), expected = want[(t * heads + h) * hd + k];
            if (!(got == expected || (std::isnan(got) && std::isnan(expected)))) {
              RC_FAIL(
                  fmt::format("strides (token {}, head {}): token {} head {} channel {}: {:.17g}, {:.17g} "
                              "contiguous",
                              batch.token_stride, batch.head_stride, t, h, k, got, expected));
            }
          }
        }
      }
      for (std::size_t i = 0; i < size; ++i) {
        if (!in_row[i]) RC_ASSERT(y.get(i) == sentinel);
      }
    }
  });
}

TEST_P(RopeProps, ChannelsBeyondRotaryDimAreUntouched) {
  PE_RC_CHECK("channels outside [rotary_offset, rotary_offset + rotary_dim) keep their bits", [&] {
    for (const Case& c : gen_cases()) {
      const RopePlan plan(c.params);
      TypedBuffer y = buffer_of(in().dtype, c.x);
      const TypedBuffer before = y;
      run_rope(in(), plan, c.positions, c.heads, y);
      const std::size_t w = size_of(in().dtype), hd = plan.head_dim();
      RC_CLASSIFY(plan.rotary_dim() < hd, "partial rotary");
      const auto was = before.bytes(), now = y.bytes();
      for (std::size_t row = 0; row < c.tokens() * c.heads; ++row) {
        for (std::size_t ch = 0; ch < hd; ++ch) {
          if (!plan.passes_through(ch)) continue;
          const auto from = static_cast<std::ptrdiff_t>((row * hd + ch) * w);
          RC_ASSERT(std::equal(was.begin() + from, was.begin() + from + static_cast<std::ptrdiff_t>(w),
                               now.begin() + from));
        }
      }
    }
  });
}

// Permuting an interleaved head into half-split order (2j -> j, 2j+1 -> j + R/2) commutes with the
// rotation: each side is within its budget of the same exact values.
// Instantiated on the interleaved instances of variants that support both layouts.
class RopeLayoutProps : public RopeProps {};

TEST_P(RopeLayoutProps, InterleavedEqualsHalfSplitUnderPermutation) {
  PE_RC_CHECK("P·R_interleaved(p)x = R_halfsplit(p)(P·x) within the contract", [&] {
    Case c = gen_case(3, /*text_only=*/true);
    const RopePlan il(c.params);
    RopeParams hs_params = c.params;
    hs_params.layout = Layout::HalfSplit;
    const RopePlan hs(hs_params);
    const std::size_t hd = il.head_dim(), half = il.n_pairs();
    std::vector<double> xp = c.x;
    for (std::size_t row = 0; row < c.positions.size() * c.heads; ++row) {
      for (std::size_t j = 0; j < half; ++j) {
        xp[row * hd + j] = c.x[row * hd + 2 * j];
        xp[row * hd + half + j] = c.x[row * hd + 2 * j + 1];
      }
    }
    const std::vector<double> y = rotated(il, c);
    TypedBuffer yb = buffer_of(in().dtype, xp);
    run_rope(in(), hs, c.positions, c.heads, yb);
    const std::vector<double> yp = yb.values();
    for (std::size_t t = 0; t < c.positions.size(); ++t) {
      for (std::int64_t h = 0; h < c.heads; ++h) {
        const std::size_t row = (t * c.heads + h) * hd;
        for (std::size_t j = 0; j < half; ++j) {
          const double tol = 2 * budget(il, c.positions[t], j, c.x[row + 2 * j], c.x[row + 2 * j + 1]);
          RC_ASSERT(std::fabs(y[row + 2 * j] - yp[row + j]) <= tol);
          RC_ASSERT(std::fabs(y[row + 2 * j + 1] - yp[row + half + j]) <= tol);
        }
        for (std::size_t i = il.rotary_dim(); i < hd; ++i) RC_ASSERT(y[row + i] == yp[row + i]);
      }
    }
  });
}

PE_INSTANTIATE(RopeProps, selected(Family::Rope));
PE_INSTANTIATE(RopeLayoutProps, interleaved_of_both_pairings());

}  // namespace
}  // namespace pe::testing

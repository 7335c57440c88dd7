// RoPE scaling methods (pe/rope_scaling.h): their defining properties, a boundary table run over
// every RoPE instance, and validation. The algebra properties of rope_props.cc run with generated
// scalings too; this file holds what is specific to each method.

#include <algorithm>
#include <functional>
#include <numbers>
#include <utility>

#include "pe/ref/reference.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

using T = RopeScalingType;

RopeParams gen_rope_params(std::int64_t max_dim = 256, std::int64_t min_rotary = 2) {
  const std::int64_t head_dim = std::max(*gen_dim(max_dim).as("head_dim"), min_rotary);
  return {head_dim, head_dim, *gen_base().as("base"),
          *rc::gen::element(Layout::Interleaved, Layout::HalfSplit)};
}

// Input values that every output type holds exactly: multiples of 1/8 in [-1, 1].
std::vector<double> eighths(std::size_t n) {
  std::vector<double> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = static_cast<double>(static_cast<int>((i * 37 + 5) % 17) - 8) / 8.0;
  return x;
}

// Runs `in` under `params` at `positions` (one head) and checks every element against the reference.
// Returns a description of the first element over budget, or "" when all are within.
std::string check_against_reference(const Instance& in, const RopeParams& params,
                                    const std::vector<std::int64_t>& positions) {
  const RopePlan plan(params);
  const std::vector<double> x = eighths(positions.size() * plan.head_dim());
  TypedBuffer y = buffer_of(in.dtype, x);
  run_rope(in, plan, positions, 1, y);
  std::string failure;
  harness::measure_rope(
      params, positions, 1, x, y, {&in.contract(), in.dtype}, [&](const harness::ElementRecord& e) {
        if (failure.empty() && !(e.ratio() <= 1)) {
          failure = fmt::format("{} at p={} channel {}: {:.17g}, error {:.3g} > budget {:.3g}", in.name(),
                                e.position, e.channel, e.y, e.abs_error, e.budget);
        }
      });
  return failure;
}

// ---- Per instance --------------------------------------------------------------------------------

class ScalingProps : public InstanceTest {
 protected:
  std::vector<double> rotated(const RopePlan& plan, const std::vector<std::int64_t>& positions,
                              const std::vector<double>& x) const {
    TypedBuffer y = buffer_of(in().dtype, x);
    run_rope(in(), plan, positions, 1, y);
    return y.values();
  }
};

// Factor 1 (LongRoPE: lists of ones; YaRN: the default attention) and dynamic NTK at seq_len <= L
// leave the plan's frequencies and attention exactly as unscaled, so every variant's output keeps
// every bit.
TEST_P(ScalingProps, FactorOneIsExactlyTheUnscaledEncoding) {
  PE_RC_CHECK("scaling with s = 1 (dynamic: seq_len <= L) == no scaling, bit for bit", [&] {
    RopeParams params = gen_rope_params(256, 4);
    params.layout = in().layout;
    const T type =
        *rc::gen::element(T::Linear, T::Ntk, T::Dynamic, T::Yarn, T::Llama3, T::LongRope).as("method");
    RopeScaling s = *gen_scaling_of(type, params.rotary_dim).as("scaling");
    s.dynamic_semantics = DynamicSemantics::Live;  // HF's: the static table and alpha read no length
    s.alpha.reset();
    if (type == T::Dynamic) {
      s.seq_len = *rc::gen::inRange<std::int64_t>(0, s.original_max_position + 1).as("seq_len <= L");
    } else {
      s.factor = 1;
      s.attention_factor.reset();
      std::fill(s.short_factor.begin(), s.short_factor.end(), 1.0);
      std::fill(s.long_factor.begin(), s.long_factor.end(), 1.0);
    }
    RopeParams scaled = params;
    scaled.scaling = s;
    const RopePlan plain(params), with(scaled);
    RC_ASSERT(with.attention_factor() == 1.0);
    RC_ASSERT(with.effective_base() == params.base);
    for (std::size_t j = 0; j < plain.n_pairs(); ++j) RC_ASSERT(with.inv_freq()[j] == plain.inv_freq()[j]);
    const auto positions = *gen_positions(in().contract().max_position, 3).as("positions");
    const auto x = *gen_values(in().dtype, 1e6, positions.size() * params.head_dim).as("x");
    TypedBuffer a = buffer_of(in().dtype, x), b = buffer_of(in().dtype, x);
    run_rope(in(), plain, positions, 1, a);
    run_rope(in(), with, positions, 1, b);
    RC_ASSERT(a.bytes() == b.bytes());
  });
}

// Position interpolation: R_s(p) = R(p/s). The variant under linear scaling at p is held to the
// exact *unscaled* rotation at p/s, so the scaling code is checked against the definition.
TEST_P(ScalingProps, LinearScalingIsPositionDivision) {
  PE_RC_CHECK("linear R_s(p)x = R(p/s)x within the contract", [&] {
    RopeParams params = gen_rope_params();
    params.layout = in().layout;
    const double s = *rc::gen::element(0.5, 2.0, 3.0, 4.0, 8.0, 16.0).as("factor");
    const std::int64_t max_p = in().contract().max_position;
    // p/s an integer: p = k·s for integer s, any p (p/s = 2p) for s = 1/2.
    std::int64_t p = 0, q = 0;
    if (s < 1) {
      p = *gen_position(max_p / 2).as("p");
      q = 2 * p;
    } else {
      q = *gen_position(max_p / static_cast<std::int64_t>(s)).as("p/s");
      p = q * static_cast<std::int64_t>(s);
    }
    RopeParams linear = params;
    linear.scaling.type = T::Linear;
    linear.scaling.factor = s;
    const RopePlan plan(linear);
    const std::vector<double> x = *gen_values(in().dtype, 1e6, plan.head_dim()).as("x");
    const std::vector<double> y = rotated(plan, {p}, x);
    const ref::Rope unscaled(params, q);
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      const std::size_t i0 = plan.pair_first(j), i1 = i0 + plan.pair_offset();
      const auto [e0, e1] = unscaled.rotate(q, j, x[i0], x[i1]);
      const double budget =
          rope_element_budget(in().contract(), plan, in().dtype, std::fabs(unscaled.angle(q, j)), j,
                              std::fabs(x[i0]) + std::fabs(x[i1]));
      RC_ASSERT(ref::abs_error(y[i0], e0.value) <= budget);
      RC_ASSERT(ref::abs_error(y[i1], e1.value) <= budget);
    }
  });
}

PE_INSTANTIATE(ScalingProps, selected(Family::Rope));

// ---- The methods' defining properties (plan and reference) -----------------------------------------

// Every method: the plan's θ'_j within its stated frequency_error of the reference's, the attention
// factor within 2^-52 relative.
TEST(Scaling, PlanFrequenciesMatchTheReference) {
  PE_RC_CHECK("|θ'_plan - θ'_exact| <= frequency_error·θ'", [] {
    RopeParams params = gen_rope_params(512);
    params.scaling = *gen_scaling(params.rotary_dim).as("scaling");
    keep_ntk_base_above_one(params);
    const RopePlan plan(params);
    const ref::Rope exact(params, 1);
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      const ref::Real& w = exact.inv_freq(j);
      const double err = ref::abs_error(plan.inv_freq()[j], w);
      if (!(err <= plan.frequency_error() * static_cast<double>(w))) {
        RC_FAIL(fmt::format("pair {}: plan {:.17g}, exact {:.17g}, relative {:.3g} > {:.3g}", j,
                            plan.inv_freq()[j], static_cast<double>(w), err / static_cast<double>(w),
                            plan.frequency_error()));
      }
    }
    RC_ASSERT(ref::abs_error(plan.attention_factor(), exact.attention()) <=
              0x1p-52 * plan.attention_factor());
  });
}

// YaRN: pairs at or below the correction range keep θ_j exactly, pairs at or above it get θ_j/s, and
// the gain moves monotonically from 1 to 1/s in between.
TEST(Scaling, YarnKeepsFastPairsDividesSlowOnesAndRampsMonotonically) {
  PE_RC_CHECK("YaRN: j <= lo keeps θ, j >= hi gets θ/s, monotone ramp", [] {
    RopeParams params = gen_rope_params(512);
    params.scaling = *gen_scaling_of(T::Yarn, params.rotary_dim).as("scaling");
    RopeParams plain_params = params;
    plain_params.scaling = {};
    const RopePlan plan(params), plain(plain_params);
    const ref::Rope exact(params, 1), unscaled(plain_params, 1);
    const double lo = static_cast<double>(exact.rule().correction_low());
    const double hi_raw = static_cast<double>(exact.rule().correction_high());
    const double hi = lo == hi_raw ? hi_raw + 0.001 : hi_raw;
    const double s = params.scaling.factor;
    RC_CLASSIFY(lo == hi_raw, "lo == hi");
    RC_CLASSIFY(params.scaling.truncate, "truncated");
    // HF clamps hi to dim - 1 (not dim/2 - 1): with L large against the base, lo can pass it and
    // the ramp runs backwards. pe-suite reproduces that; the property is about ordinary ranges.
    RC_CLASSIFY(lo > hi_raw, "lo > hi (inverted by the clamp)");
    if (lo > hi_raw) return;
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      const auto jd = static_cast<double>(j);
      if (jd <= lo) RC_ASSERT(plan.inv_freq()[j] == plain.inv_freq()[j]);
      if (jd >= hi) {
        const ref::Real target = unscaled.inv_freq(j) / ref::Real(s);
        RC_ASSERT(ref::abs_error(plan.inv_freq()[j], target) <= plan.frequency_error() * plan.inv_freq()[j]);
      }
      if (j > 0) {
        const double prev = plan.gain()[j - 1], g = plan.gain()[j];
        const bool monotone = s >= 1 ? g <= prev : g >= prev;
        RC_ASSERT(monotone);
      }
    }
  });
}

// HF accepts beta_fast < beta_slow (with a warning) and runs its formula as written: _compute_yarn_parameters
// re-derived here (find_correction_range floors the fast end and ceils the slow one, clamped to [0, dim-1];
// linear_ramp_factor clamps (j - low)/(high - low)): the fast pairs divided, the slow ones kept.
TEST(Scaling, YarnTakesItsBetasInEitherOrderAsHfDoes) {
  for (const auto& [fast, slow] : {std::pair{1.0, 32.0}, std::pair{2.0, 16.0}, std::pair{32.0, 1.0}}) {
    RopeParams params{128, 0, 10000.0, Layout::HalfSplit};
    params.scaling.type = T::Yarn;
    params.scaling.factor = 4;
    params.scaling.original_max_position = 4096;
    params.scaling.beta_fast = fast;
    params.scaling.beta_slow = slow;
    const RopePlan plan(params);
    const double d = 128, base = 10000, pi = std::numbers::pi;
    const auto correction_dim = [&](double rotations) {
      return d * std::log(4096 / (rotations * 2 * pi)) / (2 * std::log(base));
    };
    const double low = std::max(0.0, std::floor(correction_dim(fast)));
    double high = std::min(d - 1, std::ceil(correction_dim(slow)));
    if (low == high) high += 0.001;
    for (std::size_t j = 0; j < 64; ++j) {
      const double theta = std::pow(base, -2.0 * static_cast<double>(j) / d);
      const double ramp = std::clamp((static_cast<double>(j) - low) / (high - low), 0.0, 1.0);
      const double hf = theta / 4 * ramp + theta * (1 - ramp);
      EXPECT_NEAR(plan.inv_freq()[j], hf, 1e-14 * hf) << fast << " " << slow << " pair " << j;
    }
    if (fast < slow) {  // backwards: the fastest pair divided, the slowest kept
      EXPECT_EQ(plan.inv_freq()[0], 0.25);
      EXPECT_EQ(plan.gain()[63], 1.0);
    }
  }
}

// pe-suite's position scale, with any method: R(p/k) is the method's rotation with every frequency divided by
// k (p/k·θ'_j = p·θ'_j/k), and an attention factor given with any method is the one the plan applies.
TEST(Scaling, PositionScaleDividesEveryFrequencyAndAttentionFactorHoldsForAnyMethod) {
  PE_RC_CHECK("θ'_j(k) = θ'_j/k within both frequency errors; attention factor as given", [] {
    RopeParams params = gen_rope_params(512);
    params.scaling = *gen_scaling(params.rotary_dim).as("scaling");
    params.scaling.position_scale = 1;
    keep_ntk_base_above_one(params);
    RopeParams scaled = params;
    scaled.scaling.position_scale = *rc::gen::element(0.5, 1.1547, 2.0, 3.0, 8.0).as("position scale k");
    const double attention = *rc::gen::element(0.75, 1.0, 1.25).as("attention factor");
    scaled.scaling.attention_factor = attention;
    const RopePlan plain(params), with(scaled);
    RC_ASSERT(with.attention_factor() == attention);
    const double k = scaled.scaling.position_scale;
    for (std::size_t j = 0; j < plain.n_pairs(); ++j) {
      const double want = plain.inv_freq()[j] / k;
      RC_ASSERT(std::fabs(with.inv_freq()[j] - want) <=
                (plain.frequency_error() + with.frequency_error()) * want);
    }
  });
}

// Llama-3: every θ'_j lies between θ_j/s and θ_j; the gain never leaves [1/s, 1].
TEST(Scaling, Llama3FrequenciesLieBetweenThetaOverSAndTheta) {
  PE_RC_CHECK("Llama-3: θ/s <= θ' <= θ", [] {
    RopeParams params = gen_rope_params(512);
    params.scaling = *gen_scaling_of(T::Llama3, params.rotary_dim).as("scaling");
    const RopePlan plan(params);
    const double s = params.scaling.factor, inv_s = 1 / s;
    const double lo = std::min(1.0, inv_s), hi = std::max(1.0, inv_s);
    // g is formed in long double and rounded: one ULP of slack at each end.
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      RC_ASSERT(plan.gain()[j] >= lo * (1 - 0x1p-52));
      RC_ASSERT(plan.gain()[j] <= hi * (1 + 0x1p-52));
    }
  });
}

// Llama-3's rule is continuous at λ = L/low and λ = L/high: at the boundary itself (the smooth
// branch, HF's comparisons being strict) it equals the outer branch, and just inside/outside it
// differs by no more than the step in λ allows. Checked on the rule at ~334 bits and in long double.
template <class R>
void check_llama3_continuity(const RopeScaling& s, const R& tiny, const R& tolerance) {
  using std::abs;
  const R L(static_cast<long long>(s.original_max_position));
  const R one(1), inv_s = one / R(s.factor);
  const R low_wavelen = L / R(s.low_freq_factor), high_wavelen = L / R(s.high_freq_factor);
  const auto gain = [&](const R& w) { return ScalingRule<R>::llama3_gain(w, s); };
  const auto close = [&](const R& a, const R& b) { return abs(a - b) <= tolerance; };
  RC_ASSERT(close(gain(low_wavelen), inv_s));
  RC_ASSERT(close(gain(low_wavelen * (one + tiny)), inv_s));
  RC_ASSERT(close(gain(low_wavelen * (one - tiny)), inv_s));
  RC_ASSERT(close(gain(high_wavelen), one));
  RC_ASSERT(close(gain(high_wavelen * (one + tiny)), one));
  RC_ASSERT(close(gain(high_wavelen * (one - tiny)), one));
}

TEST(Scaling, Llama3IsContinuousAtBothWavelengthBoundaries) {
  PE_RC_CHECK("Llama-3 gain continuous at L/low and L/high", [] {
    const RopeScaling s = *gen_scaling_of(T::Llama3, 128).as("scaling");
    using std::abs;
    check_llama3_continuity<ref::Real>(s, ldexp(ref::Real(1), -200), ldexp(ref::Real(1), -150));
    // Long double: the step 2^-40 moves the smooth factor by at most (high/(high-low))·2^-40, and the
    // gain by |1 - 1/s| times that.
    const long double k = s.high_freq_factor / (s.high_freq_factor - s.low_freq_factor);
    const long double spread = std::max(1.0L, std::fabs(1 - 1.0L / s.factor));
    check_llama3_continuity<long double>(s, 0x1p-40L, 4 * k * spread * 0x1p-40L);
  });
}

// Dynamic NTK: base' never decreases as seq_len grows, is exactly b up to L, and is never NaN.
TEST(Scaling, DynamicBaseIsNonDecreasingInSeqLenAndNeverNan) {
  PE_RC_CHECK("dynamic: n1 <= n2 => base'(n1) <= base'(n2), finite", [] {
    RopeParams params = gen_rope_params(512, 4);
    params.scaling = *gen_scaling_of(T::Dynamic, params.rotary_dim).as("scaling");
    params.scaling.dynamic_semantics = DynamicSemantics::Live;  // HF's length-reading rule
    params.scaling.alpha.reset();
    params.scaling.factor = *rc::gen::weightedOneOf<double>({{3, rc::gen::just(params.scaling.factor)},
                                                             {1, rc::gen::element(1e-3, 0.999, 1.0, 1e3)}})
                                 .as("factor");
    const std::int64_t L = params.scaling.original_max_position;
    auto n = rc::gen::weightedOneOf<std::int64_t>(
        {{2, rc::gen::inRange<std::int64_t>(0, 8 * L)},
         {1, rc::gen::element<std::int64_t>(L - 1, L, L + 1, 1LL << 40)}});
    std::int64_t n1 = *n.as("n1"), n2 = *n.as("n2");
    if (n1 > n2) std::swap(n1, n2);
    RopeParams a = params, b = params;
    a.scaling.seq_len = n1;
    b.scaling.seq_len = n2;
    const double base1 = RopePlan(a).effective_base(), base2 = RopePlan(b).effective_base();
    RC_ASSERT(std::isfinite(base1));
    RC_ASSERT(std::isfinite(base2));
    RC_ASSERT(base1 <= base2);
    if (n1 <= L) RC_ASSERT(base1 == params.base);
    if (n2 > L) RC_ASSERT(base2 > params.base);
  });
}

// ---- Boundary table: every case over every RoPE instance -------------------------------------------

using BoundaryExpect = std::function<void(const RopePlan&, const ref::Rope&)>;

struct BoundaryCase {
  std::string name;
  RopeParams params;
  BoundaryExpect expect;  // case-specific checks on the plan
};

RopeParams params_of(RopeScaling s, std::int64_t dim = 64, double base = 10000.0) {
  RopeParams p{dim, dim, base, Layout::HalfSplit};
  p.scaling = std::move(s);
  return p;
}

RopeScaling scaling(T type, double factor, std::int64_t L, std::int64_t seq_len = 0) {
  RopeScaling s;
  s.type = type;
  s.factor = factor;
  s.original_max_position = L;
  s.seq_len = seq_len;
  return s;
}

// An identity scaling's plan: the unscaled frequencies, no attention factor.
void expect_same_as_unscaled(const RopePlan& plan, const ref::Rope&) {
  const RopePlan p(params_of({}, static_cast<std::int64_t>(plan.head_dim())));
  for (std::size_t j = 0; j < plan.n_pairs(); ++j)
    EXPECT_EQ(plan.inv_freq()[j], p.inv_freq()[j]) << "pair " << j;
  EXPECT_EQ(plan.attention_factor(), 1.0);
}

// YaRN's ramp where its ends meet (lo == hi, by beta_fast == beta_slow or clamped at 0), and with its
// correction dims truncated or not.
void add_yarn_cases(std::vector<BoundaryCase>& cases) {
  // lo == hi without truncation (beta_fast == beta_slow): HF's +0.001 makes the ramp a step.
  {
    RopeScaling s = scaling(T::Yarn, 8, 4096);
    s.beta_fast = s.beta_slow = 8;
    s.truncate = false;
    cases.push_back(
        {"yarn lo == hi, truncate off", params_of(s), [](const RopePlan& plan, const ref::Rope& r) {
           const double lo = static_cast<double>(r.rule().correction_low());
           EXPECT_EQ(lo, static_cast<double>(r.rule().correction_high()));
           for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
             const auto jd = static_cast<double>(j);
             if (jd <= lo) {
               EXPECT_EQ(plan.gain()[j], 1.0) << "pair " << j;
             } else if (jd >= lo + 0.001) {
               EXPECT_EQ(plan.gain()[j], 1.0 / 8) << "pair " << j;
             }
           }
         }});
  }
  // L so short that both correction dims are negative: clamped to lo == hi == 0.
  cases.push_back({"yarn lo == hi == 0 (clamped)", params_of(scaling(T::Yarn, 4, 6)),
                   [](const RopePlan& plan, const ref::Rope& r) {
                     EXPECT_EQ(static_cast<double>(r.rule().correction_low()), 0.0);
                     EXPECT_EQ(static_cast<double>(r.rule().correction_high()), 0.0);
                     EXPECT_EQ(plan.gain()[0], 1.0);
                     for (std::size_t j = 1; j < plan.n_pairs(); ++j)
                       EXPECT_EQ(plan.gain()[j], 0.25) << "pair " << j;
                   }});
  for (bool truncate : {true, false}) {
    RopeScaling s = scaling(T::Yarn, 16, 4096);
    s.truncate = truncate;
    cases.push_back({std::string("yarn truncate ") + (truncate ? "on" : "off"), params_of(s),
                     [truncate](const RopePlan&, const ref::Rope& r) {
                       const double lo = static_cast<double>(r.rule().correction_low());
                       const double hi = static_cast<double>(r.rule().correction_high());
                       EXPECT_EQ(truncate, lo == std::floor(lo) && hi == std::floor(hi)) << lo << " " << hi;
                     }});
  }
}

// Llama 3.1's own configuration (L = 8192, low 1, high 4, base 5e5, d = 128).
void add_llama3_case(std::vector<BoundaryCase>& cases) {
  RopeScaling s = scaling(T::Llama3, 8, 8192);
  // λ_j = 2π/θ_j: below L/high = 2048 the gain is 1, above L/low = 8192 it is 1/8, smooth between.
  cases.push_back(
      {"llama3 (Llama 3.1)", params_of(s, 128, 500000.0), [](const RopePlan& plan, const ref::Rope& r) {
         for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
           const double wavelen = 2 * M_PI / static_cast<double>(r.rule().unscaled(j));
           if (wavelen < 2048 * (1 - 1e-12)) {
             EXPECT_EQ(plan.gain()[j], 1.0) << "pair " << j;
           } else if (wavelen > 8192 * (1 + 1e-12)) {
             EXPECT_EQ(plan.gain()[j], 0.125) << "pair " << j;
           } else {
             EXPECT_GT(plan.gain()[j], 0.125) << "pair " << j;
             EXPECT_LT(plan.gain()[j], 1.0) << "pair " << j;
           }
         }
         EXPECT_EQ(plan.gain().front(), 1.0);
         EXPECT_EQ(plan.gain().back(), 0.125);
       }});
}

// Dynamic NTK around L: L-1 and L are unscaled, L+1 raises the base.
void add_dynamic_ntk_cases(std::vector<BoundaryCase>& cases) {
  for (std::int64_t d : {-1, 0, 1}) {
    cases.push_back(
        {fmt::format("dynamic seq_len = L{:+d}", d), params_of(scaling(T::Dynamic, 4, 4096, 4096 + d)),
         d <= 0 ? BoundaryExpect(expect_same_as_unscaled)
                : [](const RopePlan& plan, const ref::Rope&) { EXPECT_GT(plan.effective_base(), 10000.0); }});
  }
}

// LongRoPE switches lists past L.
void add_longrope_cases(std::vector<BoundaryCase>& cases) {
  for (std::int64_t seq_len : {4096, 4097}) {
    RopeScaling s = scaling(T::LongRope, 32, 4096, seq_len);
    s.short_factor.assign(32, 1.0);
    s.long_factor.assign(32, 4.0);
    cases.push_back({fmt::format("longrope seq_len = {}", seq_len), params_of(s),
                     [seq_len](const RopePlan& plan, const ref::Rope&) {
                       for (double g : plan.gain()) EXPECT_EQ(g, seq_len > 4096 ? 0.25 : 1.0);
                       EXPECT_NEAR(plan.attention_factor(), std::sqrt(1 + std::log(32.0) / std::log(4096.0)),
                                   1e-15);
                     }});
  }
}

// s <= 1 for every method: 1 is the identity scaling, 1/2 compresses (frequencies above 1 rad/step).
void add_identity_and_compressing_cases(std::vector<BoundaryCase>& cases) {
  for (double s : {1.0, 0.5}) {
    for (T type : {T::Linear, T::Ntk, T::Dynamic, T::Yarn, T::Llama3, T::LongRope}) {
      RopeScaling sc = scaling(type, s, 4096, 8192);
      sc.short_factor.assign(32, 1.0);
      sc.long_factor.assign(32, s);
      cases.push_back({fmt::format("{} s = {}", to_string(type), s), params_of(sc),
                       s == 1.0 && type != T::Dynamic && type != T::LongRope
                           ? BoundaryExpect(expect_same_as_unscaled)
                           : nullptr});
    }
  }
}

std::vector<BoundaryCase> boundary_cases() {
  std::vector<BoundaryCase> cases;
  add_yarn_cases(cases);
  add_llama3_case(cases);
  add_dynamic_ntk_cases(cases);
  add_longrope_cases(cases);
  add_identity_and_compressing_cases(cases);
  // A factor so small that θ'_0 = 8 rad exceeds a turn per position (the exact variant's phase
  // steps wrap modulo 2^64).
  cases.push_back({"linear s = 1/8 (θ'_0 = 8 > 2π)", params_of(scaling(T::Linear, 0.125, 4096)),
                   [](const RopePlan& plan, const ref::Rope&) { EXPECT_EQ(plan.inv_freq()[0], 8.0); }});
  return cases;
}

TEST(ScalingBoundaries, EveryCaseOverEveryRopeInstance) {
  // `pe-suite verify --variant GLOB` may select no RoPE instance at all.
  if (selected(Family::Rope).empty()) GTEST_SKIP() << "no RoPE instance selected ($PE_VARIANT)";
  std::size_t runs = 0;
  for (const BoundaryCase& c : boundary_cases()) {
    SCOPED_TRACE(c.name);
    const RopePlan plan(c.params);
    const ref::Rope exact(c.params, 1);
    if (c.expect) c.expect(plan, exact);
    const std::int64_t L = c.params.scaling.original_max_position;
    for (const Instance& in : selected(Family::Rope)) {
      if (plan.effective_base() > in.contract().max_base) continue;
      RopeParams p = c.params;
      p.layout = in.layout;
      std::vector<std::int64_t> positions;
      for (std::int64_t q : {std::int64_t{0}, std::int64_t{1}, L - 1, L, L + 1, std::int64_t{1} << 20}) {
        if (q <= in.contract().max_position) positions.push_back(q);
      }
      const std::string failure = check_against_reference(in, p, positions);
      EXPECT_EQ(failure, "");
      ++runs;
    }
  }
  RecordProperty("instance_runs", static_cast<int>(runs));
  EXPECT_GT(runs, 0u);
}

// ---- Validation ----------------------------------------------------------------------------------

struct InvalidCase {
  const char* parameter;  // what InvalidArgument must name
  std::function<void(RopeParams&)> break_it;
};

TEST(ScalingValidation, EveryInvalidParameterIsRejectedByName) {
  const double nan = std::nan(""), inf = INFINITY;
  const auto with = [](T type, std::function<void(RopeScaling&)> f) {
    return [type, f](RopeParams& p) {
      p.scaling = scaling(type, 4, 4096);
      p.scaling.short_factor.assign(static_cast<std::size_t>(p.rotary_dim / 2), 1.0);
      p.scaling.long_factor.assign(static_cast<std::size_t>(p.rotary_dim / 2), 2.0);
      f(p.scaling);
    };
  };
  std::vector<InvalidCase> cases;
  for (T type : {T::Linear, T::Ntk, T::Dynamic, T::Yarn, T::Llama3, T::LongRope}) {
    for (double f : {0.0, -1.0, nan, inf})
      cases.push_back({"factor", with(type, [f](RopeScaling& s) { s.factor = f; })});
    cases.push_back({"seq_len", with(type, [](RopeScaling& s) { s.seq_len = -1; })});
  }
  for (T type : {T::Dynamic, T::Yarn, T::Llama3, T::LongRope}) {
    for (std::int64_t L : {0, -4096}) {
      cases.push_back(
          {"original_max_position", with(type, [L](RopeScaling& s) { s.original_max_position = L; })});
    }
  }
  cases.push_back(
      {"original_max_position", with(T::LongRope, [](RopeScaling& s) { s.original_max_position = 1; })});
  cases.push_back({"beta_fast", with(T::Yarn, [nan](RopeScaling& s) { s.beta_fast = nan; })});
  cases.push_back({"beta_slow", with(T::Yarn, [](RopeScaling& s) { s.beta_slow = 0; })});
  cases.push_back({"mscale", with(T::Yarn, [](RopeScaling& s) { s.mscale = 0; })});
  cases.push_back({"mscale_all_dim", with(T::Yarn, [](RopeScaling& s) { s.mscale_all_dim = -1; })});
  cases.push_back({"attention_factor", with(T::Yarn, [](RopeScaling& s) { s.attention_factor = 0; })});
  cases.push_back(
      {"attention_factor", with(T::LongRope, [inf](RopeScaling& s) { s.attention_factor = inf; })});
  cases.push_back(
      {"low_freq_factor", with(T::Llama3, [](RopeScaling& s) { s.low_freq_factor = 5; })});  // > high
  cases.push_back({"low_freq_factor", with(T::Llama3, [](RopeScaling& s) { s.low_freq_factor = 0; })});
  cases.push_back({"high_freq_factor", with(T::Llama3, [nan](RopeScaling& s) { s.high_freq_factor = nan; })});
  cases.push_back({"short_factor", with(T::LongRope, [](RopeScaling& s) { s.short_factor.pop_back(); })});
  cases.push_back({"long_factor", with(T::LongRope, [](RopeScaling& s) { s.long_factor.push_back(1); })});
  cases.push_back({"long_factor", with(T::LongRope, [](RopeScaling& s) { s.long_factor[3] = 0; })});
  cases.push_back({"short_factor", with(T::LongRope, [nan](RopeScaling& s) { s.short_factor[0] = nan; })});
  // NTK and dynamic raise to d/(d-2): d = 2 divides by zero.
  for (T type : {T::Ntk, T::Dynamic}) {
    cases.push_back({"rotary_dim", [type](RopeParams& p) {
                       p.rotary_dim = 2;
                       p.scaling = scaling(type, 4, 4096, 8192);
                     }});
  }
  // Frequencies that overflow, and an NTK base pushed below 1.
  cases.push_back({"factor", with(T::Linear, [](RopeScaling& s) { s.factor = 1e-320; })});
  // Frequencies above 1024 rad per position: only aliases, and beyond what the reference resolves.
  cases.push_back({"factor", with(T::Linear, [](RopeScaling& s) { s.factor = 1.0 / 2048; })});
  cases.push_back({"short_factor", with(T::LongRope, [](RopeScaling& s) { s.short_factor[0] = 1e-4; })});
  cases.push_back({"long_factor", with(T::LongRope, [](RopeScaling& s) {
                     s.seq_len = 8192;
                     s.long_factor[0] = 1e-4;
                   })});
  cases.push_back({"factor", [](RopeParams& p) {
                     p.base = 10;
                     p.rotary_dim = 4;
                     p.scaling = scaling(T::Ntk, 0.01, 4096);
                   }});
  for (const InvalidCase& c : cases) {
    RopeParams p{64, 64, 10000.0, Layout::HalfSplit};
    c.break_it(p);
    try {
      const RopePlan plan(p);
      ADD_FAILURE() << "accepted " << p.scaling << ", expected an error naming " << c.parameter;
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.parameter(), c.parameter) << e.what();
      EXPECT_NE(std::string(e.what()).find(c.parameter), std::string::npos) << e.what();
    }
  }
}

TEST(ScalingValidation, PartialRotaryFactorGivesHfRotaryDim) {
  EXPECT_EQ(partial_rotary_dim(80, 0.4), 32);    // phi-2: int(80 * 0.4)
  EXPECT_EQ(partial_rotary_dim(128, 0.25), 32);  // StableLM, GPT-NeoX-style 25%
  EXPECT_EQ(partial_rotary_dim(64, 1.0), 64);
  for (double f : {0.0, -0.5, 1.5, std::nan("")}) {
    EXPECT_THROW(partial_rotary_dim(64, f), InvalidArgument) << f;
  }
  try {
    partial_rotary_dim(10, 0.5);  // int(5.0) = 5: odd
    ADD_FAILURE() << "odd rotary_dim accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.parameter(), "partial_rotary_factor");
  }
}

}  // namespace
}  // namespace pe::testing

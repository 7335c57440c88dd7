// Conformance with Hugging Face transformers' RoPE scaling formulas: for documented model configs
// (Llama-3.1/3.2, Qwen2.5 YaRN, DeepSeek-V2/V3 YaRN, gpt-oss YaRN untruncated, Phi-3/Phi-3.5
// LongRoPE, phi-2 partial rotary, linear, NTK-aware, dynamic NTK), RopePlan's frequencies,
// attention factor and effective base, and the MPFR reference's, are each within 1 ULP (float64)
// of values computed independently by scripts/hf_conformance.py from HF's modeling_rope_utils.py
// in 80-digit decimal arithmetic (reference/tests/hf_conformance_cases.inc, generated; its comments
// give each case's source and inputs).
//
// Rotary forms (HfConformanceForms): for Qwen2.5-VL sectioned and Qwen3-VL interleaved M-RoPE, the
// Qwen2-VL and Pixtral 2-D vision RoPE and DeepSeek-V2-Lite/V3 MLA (YaRN on a 64-channel rotary part
// at offset 128, de-interleaved), the plan's per-pair frequency (1 ULP), axis and channels equal what
// HF's bookkeeping gives, and the reference's cos/sin at positions up to 10^6 per axis are within
// 1 ULP of the oracle's in float64 and in float32 (reference/tests/hf_conformance_form_cases.inc).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "pe/detail/rope_scaling_math.h"
#include "pe/plan.h"
#include "pe/ref/reference.h"
#include "pe/rope_scaling.h"
#include "pe/types.h"

namespace {

struct Case {
  const char* name;
  pe::RopeParams params;
  double attention;
  double effective_base;
  std::vector<double> inv_freq;
};

const std::vector<Case> kCases = {
#include "hf_conformance_cases.inc"
};

// One ULP of |e| in T (the spacing above |e|; the smallest subnormal at 0).
template <class T>
double ulp_of(double e) {
  const T a = static_cast<T>(std::fabs(e));
  return static_cast<double>(std::nextafter(a, std::numeric_limits<T>::infinity()) - a);
}
template <class T>
double ulps_in(double got, double e) {
  return std::fabs(got - e) / ulp_of<T>(e);
}

template <class C>
std::string where(const C& c, const std::string& what) {
  return std::string("case ") + c.name + ", " + what;
}

// Expects `got` within n ULPs (of T) of HF's `e`; `what` names the value when it is not.
template <class T = double>
void expect_ulps(double got, double e, const std::string& what, double n = 1) {
  EXPECT_LE(std::fabs(got - e), n * ulp_of<T>(e))
      << what << ": got " << std::hexfloat << got << ", HF " << e << std::defaultfloat << " ("
      << ulps_in<T>(got, e) << " ulp)";
}

std::string pair(std::size_t j) { return " pair " + std::to_string(j); }

TEST(HfConformance, PlanFrequenciesAttentionAndBaseWithinOneUlp) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const pe::RopePlan plan(c.params);
    ASSERT_EQ(plan.inv_freq().size(), c.inv_freq.size()) << where(c, "n_pairs");
    for (std::size_t j = 0; j < c.inv_freq.size(); ++j)
      expect_ulps(plan.inv_freq()[j], c.inv_freq[j], where(c, "plan.inv_freq" + pair(j)));
    expect_ulps(plan.attention_factor(), c.attention, where(c, "plan.attention_factor"));
    expect_ulps(plan.effective_base(), c.effective_base, where(c, "plan.effective_base"));
  }
}

TEST(HfConformance, ReferenceFrequenciesAttentionAndBaseWithinOneUlp) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const pe::ref::Rope ref(c.params, std::int64_t{1} << 20);
    ASSERT_EQ(ref.n_pairs(), c.inv_freq.size()) << where(c, "n_pairs");
    for (std::size_t j = 0; j < c.inv_freq.size(); ++j)
      expect_ulps(static_cast<double>(ref.inv_freq(j)), c.inv_freq[j], where(c, "ref.inv_freq" + pair(j)));
    expect_ulps(static_cast<double>(ref.attention()), c.attention, where(c, "ref.attention"));
    expect_ulps(static_cast<double>(ref.rule().effective_base()), c.effective_base,
                where(c, "ref.effective_base"));
  }
}

// Informative: how much was compared, and each case's largest disagreement in ULPs.
TEST(HfConformance, Summary) {
  std::size_t pairs = 0;
  std::printf("%-28s %6s %10s %10s\n", "case", "pairs", "plan ulp", "ref ulp");
  for (const Case& c : kCases) {
    const pe::RopePlan plan(c.params);
    const pe::ref::Rope ref(c.params, std::int64_t{1} << 20);
    double w_plan = std::max(ulps_in<double>(plan.attention_factor(), c.attention),
                             ulps_in<double>(plan.effective_base(), c.effective_base));
    double w_ref =
        std::max(ulps_in<double>(static_cast<double>(ref.attention()), c.attention),
                 ulps_in<double>(static_cast<double>(ref.rule().effective_base()), c.effective_base));
    for (std::size_t j = 0; j < c.inv_freq.size() && j < plan.inv_freq().size(); ++j) {
      w_plan = std::max(w_plan, ulps_in<double>(plan.inv_freq()[j], c.inv_freq[j]));
      w_ref = std::max(w_ref, ulps_in<double>(static_cast<double>(ref.inv_freq(j)), c.inv_freq[j]));
    }
    std::printf("%-28s %6zu %10.3g %10.3g\n", c.name, c.inv_freq.size(), w_plan, w_ref);
    pairs += c.inv_freq.size();
  }
  RecordProperty("cases", static_cast<int>(kCases.size()));
  RecordProperty("pairs", static_cast<int>(pairs));
  SUCCEED() << kCases.size() << " cases, " << pairs << " pairs compared";
  std::printf("HF conformance: %zu cases, %zu pairs (plus attention and effective base per case)\n",
              kCases.size(), pairs);
}

// ---------------------------------------------------------------------------------------------
// Rotary forms.
// ---------------------------------------------------------------------------------------------

struct FormCase {
  const char* name;
  pe::RopeParams params;
  std::size_t n_axes;
  double attention;
  double softmax_multiplier;  // DeepSeek's yarn_get_mscale(factor, mscale_all_dim)^2; 0 where HF has none
  std::vector<double> inv_freq;
  std::vector<std::size_t> axis;
  std::vector<std::size_t> channels;    // per pair: input first, input second, output first, output second
  std::vector<std::int64_t> positions;  // per token, one entry per axis
  std::vector<double> cos_sin;          // per token and pair: cos f64, sin f64, cos f32, sin f32

  std::size_t n_pairs() const { return inv_freq.size(); }
  std::size_t n_tokens() const { return positions.size() / n_axes; }
  std::int64_t position(std::size_t token, std::size_t pair) const {
    return positions[token * n_axes + axis[pair]];
  }
  const double* expected(std::size_t token, std::size_t pair) const {
    return &cos_sin[(token * n_pairs() + pair) * 4];
  }
  std::int64_t max_position() const { return *std::max_element(positions.begin(), positions.end()); }
};

const std::vector<FormCase> kFormCases = {
#include "hf_conformance_form_cases.inc"
};

// Each case's worst disagreement in ULPs, and how many roundings differed at all.
struct FormWorst {
  double plan = 0, ref = 0, f64 = 0, f32 = 0;
  std::size_t f64_differ = 0, f32_differ = 0, values = 0;
};

FormWorst measure(const FormCase& c, const pe::RopePlan& plan, const pe::ref::Rope& ref) {
  FormWorst w;
  for (std::size_t j = 0; j < c.n_pairs() && j < plan.n_pairs(); ++j) {
    w.plan = std::max(w.plan, ulps_in<double>(plan.inv_freq()[j], c.inv_freq[j]));
    w.ref = std::max(w.ref, ulps_in<double>(static_cast<double>(ref.inv_freq(j)), c.inv_freq[j]));
  }
  for (std::size_t t = 0; t < c.n_tokens(); ++t) {
    for (std::size_t j = 0; j < c.n_pairs(); ++j) {
      const double* e = c.expected(t, j);
      const auto [cos64, sin64] = ref.cos_sin(c.position(t, j), j, pe::DType::F64);
      const auto [cos32, sin32] = ref.cos_sin(c.position(t, j), j, pe::DType::F32);
      w.f64 = std::max({w.f64, ulps_in<double>(cos64, e[0]), ulps_in<double>(sin64, e[1])});
      w.f32 = std::max({w.f32, ulps_in<float>(cos32, e[2]), ulps_in<float>(sin32, e[3])});
      w.f64_differ += (cos64 != e[0]) + (sin64 != e[1]);
      w.f32_differ += (cos32 != e[2]) + (sin32 != e[3]);
      w.values += 2;
    }
  }
  return w;
}

TEST(HfConformanceForms, PlanFrequenciesAxesAndChannelsMatchHf) {
  for (const FormCase& c : kFormCases) {
    SCOPED_TRACE(c.name);
    const pe::RopePlan plan(c.params);
    ASSERT_EQ(plan.n_pairs(), c.n_pairs()) << where(c, "n_pairs");
    ASSERT_EQ(c.axis.size(), c.n_pairs());
    ASSERT_EQ(c.channels.size(), 4 * c.n_pairs());
    EXPECT_EQ(plan.n_axes(), c.n_axes) << where(c, "n_axes");
    for (std::size_t j = 0; j < c.n_pairs(); ++j) {
      expect_ulps(plan.inv_freq()[j], c.inv_freq[j], where(c, "plan.inv_freq" + pair(j)));
      EXPECT_EQ(plan.axis_of_pair(j), c.axis[j]) << where(c, "axis_of_pair " + std::to_string(j));
      const auto in = plan.input_channels(j), out = plan.output_channels(j);
      const std::size_t got[4] = {in.first, in.second, out.first, out.second};
      for (int k = 0; k < 4; ++k)
        EXPECT_EQ(got[k], c.channels[4 * j + k])
            << where(c, std::string(k < 2 ? "input" : "output") + "_channels(" + std::to_string(j) +
                            (k % 2 ? ").second" : ").first"));
    }
    expect_ulps(plan.attention_factor(), c.attention, where(c, "plan.attention_factor"));
  }
}

TEST(HfConformanceForms, ReferenceFrequenciesAndCosSinWithinOneUlp) {
  for (const FormCase& c : kFormCases) {
    SCOPED_TRACE(c.name);
    const pe::ref::Rope ref(c.params, c.max_position() + 1);
    ASSERT_EQ(ref.n_pairs(), c.n_pairs()) << where(c, "n_pairs");
    for (std::size_t j = 0; j < c.n_pairs(); ++j)
      expect_ulps(static_cast<double>(ref.inv_freq(j)), c.inv_freq[j], where(c, "ref.inv_freq" + pair(j)));
    expect_ulps(static_cast<double>(ref.attention()), c.attention, where(c, "ref.attention"));
    for (std::size_t t = 0; t < c.n_tokens(); ++t) {
      for (std::size_t j = 0; j < c.n_pairs(); ++j) {
        const std::int64_t p = c.position(t, j);
        const double* e = c.expected(t, j);
        const auto [cos64, sin64] = ref.cos_sin(p, j, pe::DType::F64);
        const auto [cos32, sin32] = ref.cos_sin(p, j, pe::DType::F32);
        const std::string at =
            pair(j) + " (axis " + std::to_string(c.axis[j]) + ") position " + std::to_string(p);
        expect_ulps(cos64, e[0], where(c, "ref.cos_sin F64 cos," + at));
        expect_ulps(sin64, e[1], where(c, "ref.cos_sin F64 sin," + at));
        expect_ulps<float>(cos32, e[2], where(c, "ref.cos_sin F32 cos," + at));
        expect_ulps<float>(sin32, e[3], where(c, "ref.cos_sin F32 sin," + at));
      }
    }
  }
}

// pe-suite's yarn mscale(factor, mscale_all_dim), squared in long double and rounded to double.
double softmax_multiplier_of(const FormCase& c) {
  const pe::ScalingRule<long double> rule(c.params.scaling, c.params.rotary_dim, c.params.base,
                                          3.141592653589793238462643383279502884L);
  const long double m =
      rule.mscale_of(static_cast<long double>(c.params.scaling.mscale_all_dim.value_or(1.0)));
  return static_cast<double>(m * m);
}

// DeepSeek multiplies its softmax scale by yarn_get_mscale(factor, mscale_all_dim)^2, outside cos and
// sin (DeepseekV3Attention); pe-suite's rule exposes the same mscale for callers to apply.
TEST(HfConformanceForms, DeepSeekSoftmaxScaleMultiplierWithinTwoUlp) {
  std::size_t checked = 0;
  for (const FormCase& c : kFormCases) {
    if (c.softmax_multiplier == 0) continue;
    SCOPED_TRACE(c.name);
    ASSERT_TRUE(c.params.scaling.mscale_all_dim.has_value());
    expect_ulps(softmax_multiplier_of(c), c.softmax_multiplier, where(c, "mscale_of(mscale_all_dim)^2"), 2);
    ++checked;
  }
  EXPECT_EQ(checked, 2u) << "DeepSeek-V2-Lite and DeepSeek-V3";
}

// Informative: per form case, the largest disagreement in ULPs and how many roundings differ.
TEST(HfConformanceForms, Summary) {
  std::size_t pairs = 0, values = 0;
  std::printf("%-26s %5s %4s %9s %9s %9s %9s %12s %11s\n", "form case", "pairs", "axes", "plan ulp",
              "ref ulp", "f64 ulp", "f32 ulp", "differ/vals", "mscale2 ulp");
  for (const FormCase& c : kFormCases) {
    const pe::RopePlan plan(c.params);
    const pe::ref::Rope ref(c.params, c.max_position() + 1);
    const FormWorst w = measure(c, plan, ref);
    const std::string mscale2 =
        c.softmax_multiplier == 0
            ? std::string("-")
            : std::to_string(ulps_in<double>(softmax_multiplier_of(c), c.softmax_multiplier)).substr(0, 5);
    std::printf("%-26s %5zu %4zu %9.3g %9.3g %9.3g %9.3g %5zu+%zu/%zu %11s\n", c.name, c.n_pairs(), c.n_axes,
                w.plan, w.ref, w.f64, w.f32, w.f64_differ, w.f32_differ, w.values, mscale2.c_str());
    pairs += c.n_pairs();
    values += w.values;
  }
  RecordProperty("form_cases", static_cast<int>(kFormCases.size()));
  RecordProperty("form_cos_sin_values", static_cast<int>(values));
  std::printf(
      "HF conformance, rotary forms: %zu cases, %zu pairs, %zu cos/sin values (each in f64 and f32)\n",
      kFormCases.size(), pairs, values);
}

}  // namespace

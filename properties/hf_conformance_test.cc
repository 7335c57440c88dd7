// Conformance with Hugging Face transformers' RoPE scaling formulas: for documented model configs
// (Llama-3.1/3.2, Qwen2.5 YaRN, DeepSeek-V2/V3 YaRN, gpt-oss YaRN untruncated, Phi-3/Phi-3.5
// LongRoPE, phi-2 partial rotary, linear, NTK-aware, dynamic NTK), RopePlan's frequencies,
// attention factor and effective base, and the MPFR reference's, are each within 1 ULP (float64)
// of values computed independently by scripts/hf_conformance.py from HF's modeling_rope_utils.py
// in 80-digit decimal arithmetic (properties/hf_conformance_cases.inc, generated; its comments
// give each case's source and inputs).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "pe/plan.h"
#include "pe/ref/reference.h"
#include "pe/rope_scaling.h"

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

// The spacing of doubles just above the expected value e (> 0): one ULP at e.
double ulp_at(double e) { return std::nextafter(e, std::numeric_limits<double>::infinity()) - e; }

// |got - e| in ULPs of e.
double ulps(double got, double e) { return std::fabs(got - e) / ulp_at(e); }

std::string where(const Case& c, const char* what, std::size_t j = static_cast<std::size_t>(-1)) {
  std::string s = std::string("case ") + c.name + ", " + what;
  if (j != static_cast<std::size_t>(-1)) s += " pair " + std::to_string(j);
  return s;
}

// Each case's worst disagreement, for the summary.
struct Worst {
  double plan = 0, ref = 0;
};

TEST(HfConformance, PlanFrequenciesAttentionAndBaseWithinOneUlp) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const pe::RopePlan plan(c.params);
    ASSERT_EQ(plan.inv_freq().size(), c.inv_freq.size()) << where(c, "n_pairs");
    for (std::size_t j = 0; j < c.inv_freq.size(); ++j) {
      const double e = c.inv_freq[j], got = plan.inv_freq()[j];
      EXPECT_LE(std::fabs(got - e), ulp_at(e))
          << where(c, "plan.inv_freq", j) << ": got " << std::hexfloat << got << ", HF " << e
          << std::defaultfloat << " (" << ulps(got, e) << " ulp)";
    }
    EXPECT_LE(std::fabs(plan.attention_factor() - c.attention), ulp_at(c.attention))
        << where(c, "plan.attention_factor") << ": got " << std::hexfloat << plan.attention_factor()
        << ", HF " << c.attention;
    EXPECT_LE(std::fabs(plan.effective_base() - c.effective_base), ulp_at(c.effective_base))
        << where(c, "plan.effective_base") << ": got " << std::hexfloat << plan.effective_base() << ", HF "
        << c.effective_base;
  }
}

TEST(HfConformance, ReferenceFrequenciesAttentionAndBaseWithinOneUlp) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const pe::ref::Rope ref(c.params, std::int64_t{1} << 20);
    ASSERT_EQ(ref.n_pairs(), c.inv_freq.size()) << where(c, "n_pairs");
    for (std::size_t j = 0; j < c.inv_freq.size(); ++j) {
      const double e = c.inv_freq[j], got = static_cast<double>(ref.inv_freq(j));
      EXPECT_LE(std::fabs(got - e), ulp_at(e))
          << where(c, "ref.inv_freq", j) << ": got " << std::hexfloat << got << ", HF " << e
          << std::defaultfloat << " (" << ulps(got, e) << " ulp)";
    }
    const double att = static_cast<double>(ref.attention());
    EXPECT_LE(std::fabs(att - c.attention), ulp_at(c.attention))
        << where(c, "ref.attention") << ": got " << std::hexfloat << att << ", HF " << c.attention;
    const double base = static_cast<double>(ref.rule().effective_base());
    EXPECT_LE(std::fabs(base - c.effective_base), ulp_at(c.effective_base))
        << where(c, "ref.effective_base") << ": got " << std::hexfloat << base << ", HF " << c.effective_base;
  }
}

// Informative: how much was compared, and each case's largest disagreement in ULPs.
TEST(HfConformance, Summary) {
  std::size_t pairs = 0;
  std::printf("%-28s %6s %10s %10s\n", "case", "pairs", "plan ulp", "ref ulp");
  for (const Case& c : kCases) {
    const pe::RopePlan plan(c.params);
    const pe::ref::Rope ref(c.params, std::int64_t{1} << 20);
    Worst w;
    for (std::size_t j = 0; j < c.inv_freq.size() && j < plan.inv_freq().size(); ++j) {
      w.plan = std::max(w.plan, ulps(plan.inv_freq()[j], c.inv_freq[j]));
      w.ref = std::max(w.ref, ulps(static_cast<double>(ref.inv_freq(j)), c.inv_freq[j]));
    }
    w.plan = std::max(
        {w.plan, ulps(plan.attention_factor(), c.attention), ulps(plan.effective_base(), c.effective_base)});
    w.ref = std::max({w.ref, ulps(static_cast<double>(ref.attention()), c.attention),
                      ulps(static_cast<double>(ref.rule().effective_base()), c.effective_base)});
    std::printf("%-28s %6zu %10.3g %10.3g\n", c.name, c.inv_freq.size(), w.plan, w.ref);
    pairs += c.inv_freq.size();
  }
  RecordProperty("cases", static_cast<int>(kCases.size()));
  RecordProperty("pairs", static_cast<int>(pairs));
  SUCCEED() << kCases.size() << " cases, " << pairs << " pairs compared";
  std::printf("HF conformance: %zu cases, %zu pairs (plus attention and effective base per case)\n",
              kCases.size(), pairs);
}

}  // namespace

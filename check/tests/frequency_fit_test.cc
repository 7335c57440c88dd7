// The recovered frequency table explained by fitting (issue 32): kernels built from HF's formulas
// (hf_frequencies.h) with parameter values on no list the diagnosis tries, each named by the fields that
// differ; mixtures (one method's frequencies with another's gain), positions divided by a scale, YaRN's blend
// inverted; then 200 drawn wrong configurations whose fitted parameters must equal the drawn ones, and
// checks whose every "the data fits:" line carries its support.
#include "explain/frequency_fit.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "hf_frequencies.h"
#include "pe/check/check.h"
#include "test_words.h"

namespace pe::check {
namespace {

using namespace testing;

RopeScaling scaling(RopeScalingType type, double factor, std::int64_t original) {
  RopeScaling s;
  s.type = type;
  s.factor = factor;
  s.original_max_position = original;
  return s;
}

RopeScaling llama3(double factor, double low, double high, std::int64_t original) {
  RopeScaling s = scaling(RopeScalingType::Llama3, factor, original);
  s.low_freq_factor = low;
  s.high_freq_factor = high;
  return s;
}

RopeScaling yarn(double factor, double fast, double slow, std::int64_t original) {
  RopeScaling s = scaling(RopeScalingType::Yarn, factor, original);
  s.beta_fast = fast;
  s.beta_slow = slow;
  return s;
}

RopeParams params(double base, RopeScaling s = {}) { return {kDim, 0, base, Layout::HalfSplit, s}; }

std::optional<FrequencyFit> fit_of(const Kernel& k, const RopeParams& given) {
  return fit_frequencies(recover_frequencies(k.data(), RopePlan(given)), given);
}

// HF's Llama-3 formula with low_freq_factor and high_freq_factor swapped (issue 33's planted mistake) divides
// every wavelength beyond L/high and smooths none: low = high = the given high, said as such.
TEST(FrequencyFit, Llama3FactorsSwappedFitAStepAtTheGivenHigh) {
  const RopeParams given = params(500000, llama3(8, 1, 4, 8192));
  const auto fit = fit_of(Kernel(llama3_inv_freq(500000, 8, 4, 1, 8192)), given);
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->words,
            "llama3, low_freq_factor 4 (given 1) (a step at L/high_freq_factor with no smoothing: what HF's "
            "formula computes with low_freq_factor and high_freq_factor swapped, or low_freq_factor set to "
            "high_freq_factor)");
  // The given factors (8 and 16 are on no list the fit tries otherwise): found the same way.
  const auto far =
      fit_of(Kernel(llama3_inv_freq(500000, 8, 16, 2, 8192)), params(500000, llama3(8, 2, 16, 8192)));
  ASSERT_TRUE(far);
  EXPECT_NE(far->words.find("low_freq_factor 16 (given 2)"), std::string::npos) << far->words;
}

TEST(FrequencyFit, NamesTheParametersThatDiffer) {
  std::vector<double> linear = default_inv_freq(10000);
  for (double& w : linear) w /= 3.7;
  const RopeParams llama3_given = params(500000, llama3(8, 1, 4, 8192));
  struct Case {
    std::vector<double> kernel;
    RopeParams given;
    std::string words;
  };
  const std::vector<Case> cases = {
      {llama3_inv_freq(500000, 8, 1, 4, 2048), llama3_given,
       "llama3, original_max_position 2048 (given 8192)"},
      {llama3_inv_freq(500000, 32, 1, 2, 8192), llama3_given,
       "llama3, factor 32 (given 8), high_freq_factor 2 (given 4)"},
      // Another checkpoint's factor and high_freq_factor: 8 and 4 where 16 and 1 were given.
      {llama3_inv_freq(500000, 8, 1, 4, 8192), params(500000, llama3(16, 1, 1, 8192)),
       "llama3, factor 8 (given 16), high_freq_factor 4 (given 1)"},
      {linear, params(10000), "linear (given none), factor 3.7"},
      {default_inv_freq(1e6), params(500000), "base 1e+06 (given 500000)"},
  };
  for (const Case& c : cases) {
    const auto fit = fit_of(Kernel(c.kernel), c.given);
    ASSERT_TRUE(fit) << c.words;
    EXPECT_EQ(fit->words, c.words);
    EXPECT_GE(fit->pairs, 48u) << c.words;  // three quarters of the pairs or more
  }
  // YaRN (factor 4, its attention factor 0.1·ln 4 + 1 on cos and sin) with original_max_position 2048 where
  // 4096 was given: the gain is the method's, not named.
  const RopeParams yarn_given = params(10000, yarn(4, 32, 1, 4096));
  const double yarn_gain = 0.1 * std::log(4.0) + 1;
  const auto yarn_fit = fit_of(Kernel(yarn_inv_freq(10000, 4, 32, 1, 2048), yarn_gain), yarn_given);
  ASSERT_TRUE(yarn_fit);
  EXPECT_EQ(yarn_fit->words, "yarn, original_max_position 2048 (given 4096)");
  // Its attention factor dropped: the frequencies as given, the gain named.
  const auto no_gain = fit_of(Kernel(yarn_inv_freq(10000, 4, 32, 1, 4096)), yarn_given);
  ASSERT_TRUE(no_gain);
  EXPECT_EQ(no_gain->words,
            "frequencies as given; gain |y|/|x| 1 (no attention factor) where the method applies 1.139");
  // The given frequencies and gain: nothing to fit.
  EXPECT_FALSE(fit_of(Kernel(llama3_inv_freq(500000, 8, 1, 4, 8192)), llama3_given));
}

// YaRN whose ramp collapsed: every pair divided by the factor (linear) while YaRN's attention factor is
// still applied.
TEST(FrequencyFit, NamesOneMethodsFrequenciesWithAnothersGain) {
  std::vector<double> divided = default_inv_freq(10000);
  for (double& w : divided) w /= 4;
  const auto fit = fit_of(Kernel(divided, 0.1 * std::log(4.0) + 1), params(10000, yarn(4, 32, 1, 4096)));
  ASSERT_TRUE(fit);
  EXPECT_EQ(
      fit->words,
      "linear (given yarn), factor 4; gain |y|/|x| 1.139 (the given yarn's attention factor) where linear "
      "applies 1");
}

// Positions scaled: dynamic NTK's base and a linear division of the positions together; LongRoPE's
// attention factor dividing the positions while its gain on cos and sin is dropped.
TEST(FrequencyFit, NamesPositionsDividedByAScale) {
  RopeScaling dynamic = scaling(RopeScalingType::Dynamic, 4, 4096);
  dynamic.seq_len = 16384;
  const auto both =
      fit_of(Kernel(default_inv_freq(dynamic_base(10000, 4, 4096, 16384)), 1, 2), params(10000, dynamic));
  ASSERT_TRUE(both);
  EXPECT_EQ(both->words, "positions divided by 2");

  RopeScaling longrope = scaling(RopeScalingType::LongRope, 16, 4096);
  longrope.seq_len = 8192;  // above original_max_position: the long list
  std::mt19937_64 g(32);
  std::uniform_real_distribution<double> u(1, 1.5);
  for (std::size_t j = 0; j < kPairs; ++j) {
    longrope.short_factor.push_back(u(g));
    longrope.long_factor.push_back(1 + static_cast<double>(j) * 0.4 * u(g));
  }
  std::vector<double> long_freq = default_inv_freq(10000);
  for (std::size_t j = 0; j < kPairs; ++j) long_freq[j] /= longrope.long_factor[j];
  const double attention = std::sqrt(1 + std::log(16.0) / std::log(4096.0));  // HF's longrope default
  const auto fit = fit_of(Kernel(long_freq, 1, attention), params(10000, longrope));
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->words,
            fmt::format("positions divided by {:.6g} (the given attention factor); gain |y|/|x| 1 "
                        "(no attention factor) where the method applies {:.4g}",
                        attention, attention));
}

TEST(FrequencyFit, NamesYarnsBlendInverted) {
  const auto fit = fit_of(Kernel(yarn_inv_freq(10000, 8, 32, 1, 4096, true), 0.1 * std::log(8.0) + 1),
                          params(10000, yarn(8, 32, 1, 4096)));
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->words, "yarn, its blend inverted (ramp where HF blends by 1 - ramp)");
}

TEST(FrequencyFit, NamesNtksAndDynamicsBase) {
  const double ntk = 10000 * std::pow(4.0, static_cast<double>(kDim) / (kDim - 2));
  const auto fit = fit_of(Kernel(default_inv_freq(ntk)), params(10000));
  ASSERT_TRUE(fit);
  EXPECT_EQ(fit->words.rfind("base ", 0), 0u) << fit->words;
  EXPECT_NE(fit->words.find("(given 10000): NTK's base for factor 4"), std::string::npos) << fit->words;
  EXPECT_NEAR(fit->params.base, ntk, 1e-4 * ntk);
  // Dynamic's length taken from the allocated context (16384) where the sequence is 8192 long.
  RopeScaling dynamic = scaling(RopeScalingType::Dynamic, 4, 4096);
  dynamic.seq_len = 16384;
  const auto seq =
      fit_of(Kernel(default_inv_freq(dynamic_base(10000, 4, 4096, 8192))), params(10000, dynamic));
  ASSERT_TRUE(seq);
  EXPECT_EQ(seq->words, "dynamic, seq_len 8192 (given 16384)");
}

// 200 wrong configurations, each drawn off every list (factors and bases continuous, scales random): the
// fitted parameters must equal the drawn ones (factors, bases and scales within 1e-3 relative; grids
// exactly) in >= 95%. Where two parameter sets give the same frequencies to 1e-6 relative on every pair,
// the data cannot tell them apart and either counts.
TEST(FrequencyFit, FitsDrawnConfigurations) {
  std::mt19937_64 g(20261202);
  const auto uniform = [&g](double a, double b) { return std::uniform_real_distribution<double>(a, b)(g); };
  const auto pick = [&g](std::vector<double> v) {
    return v[std::uniform_int_distribution<std::size_t>(0, v.size() - 1)(g)];
  };
  const auto close = [](double a, double b) { return std::fabs(a - b) <= 1e-3 * std::fabs(b); };
  std::size_t right = 0, total = 200;
  std::vector<std::string> wrong;
  for (std::size_t k = 0; k < total; ++k) {
    const int kind = static_cast<int>(k % 6);
    RopeParams given, truth;
    double gain = 1, scale = 1;
    std::vector<double> table;
    switch (kind) {
      case 0: {  // a linear factor where none was given
        given = params(10000);
        truth = params(10000, scaling(RopeScalingType::Linear, uniform(1.5, 40), 0));
        table = default_inv_freq(10000);
        for (double& w : table) w /= truth.scaling.factor;
        break;
      }
      case 1: {  // another base
        given = params(10000);
        truth = params(std::exp(uniform(std::log(2e4), std::log(2e7))));
        table = default_inv_freq(truth.base);
        break;
      }
      case 2: {  // Llama-3 with another factor, low, high or original
        given = params(500000, llama3(8, 1, 4, 8192));
        const double low = pick({1, 2}), high = pick({2, 4, 8});
        truth = params(500000, llama3(uniform(2, 64), low, std::max(high, 2 * low),
                                      static_cast<std::int64_t>(pick({2048, 4096, 8192, 16384, 32768}))));
        const RopeScaling& s = truth.scaling;
        table = llama3_inv_freq(500000, s.factor, s.low_freq_factor, s.high_freq_factor,
                                static_cast<double>(s.original_max_position));
        break;
      }
      case 3: {  // YaRN with another factor, betas or original, its own attention factor applied
        given = params(10000, yarn(4, 32, 1, 4096));
        truth = params(10000, yarn(uniform(2, 40), pick({32, 16, 64}), pick({1, 2}),
                                   static_cast<std::int64_t>(pick({2048, 4096, 8192, 32768}))));
        const RopeScaling& s = truth.scaling;
        table = yarn_inv_freq(10000, s.factor, s.beta_fast, s.beta_slow,
                              static_cast<double>(s.original_max_position));
        gain = 0.1 * std::log(s.factor) + 1;
        break;
      }
      case 4: {  // Llama-3 as given, the positions divided by a scale
        given = truth = params(500000, llama3(8, 1, 4, 8192));
        scale = uniform(1.1, 4);
        table = llama3_inv_freq(500000, 8, 1, 4, 8192);
        break;
      }
      default: {  // YaRN's ramp collapsed: linear frequencies, YaRN's gain
        const double s = uniform(2, 40);
        given = params(10000, yarn(s, 32, 1, 4096));
        truth = params(10000, scaling(RopeScalingType::Linear, s, 0));
        table = default_inv_freq(10000);
        for (double& w : table) w /= s;
        gain = 0.1 * std::log(s) + 1;
        break;
      }
    }
    const auto fit = fit_of(Kernel(table, gain, scale), given);
    bool ok = fit.has_value() && fit->pairs >= 8 && !fit->words.empty();
    if (ok) {
      const RopeScaling &f = fit->params.scaling, &t = truth.scaling;
      const bool same =
          f.type == t.type && close(fit->params.base, truth.base) && close(fit->position_scale, scale) &&
          (t.type == RopeScalingType::None || close(f.factor, t.factor)) &&
          (t.type != RopeScalingType::Llama3 ||
           (f.low_freq_factor == t.low_freq_factor && f.high_freq_factor == t.high_freq_factor &&
            f.original_max_position == t.original_max_position)) &&
          (t.type != RopeScalingType::Yarn || (f.beta_fast == t.beta_fast && f.beta_slow == t.beta_slow &&
                                               f.original_max_position == t.original_max_position));
      bool same_table = f.type == t.type && close(fit->position_scale, scale);
      const RopePlan a(fit->params), b(truth);
      for (std::size_t j = 0; j < kPairs && same_table; ++j)
        same_table = std::fabs(a.inv_freq()[j] - b.inv_freq()[j]) <= 1e-6 * b.inv_freq()[j];
      // The gain: named when the kernel's is not the fitted method's attention factor.
      const bool gain_right =
          std::fabs(a.attention_factor() - gain) <= 1e-3 * gain ? !fit->gain : fit->gain.has_value();
      ok = (same || same_table) && gain_right && !fit->inverted_blend;
    }
    if (ok) {
      ++right;
    } else {
      wrong.push_back(fmt::format("case {} (kind {}): {}", k, kind, fit ? fit->words : "no fit"));
    }
  }
  std::string list;
  for (const std::string& w : wrong) list += w + "\n";
  EXPECT_GE(right, total * 95 / 100) << list;
}

// Through the whole check: every "the data fits:" line carries its support in parentheses, and the JSON's
// explanations hold the same claims with a non-empty support.
TEST(FrequencyFit, EveryClaimSaysWhatSupportsIt) {
  const std::vector<std::pair<std::vector<double>, RopeParams>> kernels = {
      {llama3_inv_freq(500000, 8, 1, 4, 2048), params(500000, llama3(8, 1, 4, 8192))},
      {default_inv_freq(10000), params(500000)},
      {yarn_inv_freq(10000, 4, 32, 1, 4096), params(10000, yarn(4, 32, 1, 4096))},
  };
  for (const auto& [table, given] : kernels) {
    const Kernel k(table);
    RopeRequest r;
    r.x = {k.x, {k.positions.size(), kHeads, kDim}, DType::F32, "x"};
    r.y = {k.y, {k.positions.size(), kHeads, kDim}, DType::F32, "y"};
    r.positions.values = k.positions;
    r.spec.base = given.base;
    r.spec.layout = Layout::HalfSplit;
    const RopeScaling& s = given.scaling;
    if (s.type != RopeScalingType::None) {
      r.spec.scaling.method = s.type;
      r.spec.scaling.factor = s.factor;
      r.spec.scaling.original_max_position = s.original_max_position;
    }
    const Report report = check_rope(r, Names());
    ASSERT_FALSE(report.passed) << report.text;
    const nlohmann::json j = report.json();
    ASSERT_TRUE(j.contains("explanations")) << report.text;
    ASSERT_FALSE(j["explanations"].empty()) << report.text;
    for (const auto& e : j["explanations"]) {
      EXPECT_FALSE(e["support"].get<std::string>().empty()) << report.text;
      const std::string line = fmt::format("the data fits: {} ({})\n", e["fits"].get<std::string>(),
                                           e["support"].get<std::string>());
      EXPECT_NE(report.text.find(line), std::string::npos) << line << report.text;
    }
    std::size_t lines = 0;
    for (std::size_t at = report.text.find("the data fits:"); at != std::string::npos;
         at = report.text.find("the data fits:", at + 1))
      ++lines;
    EXPECT_EQ(lines, j["explanations"].size()) << report.text;
  }
}

}  // namespace
}  // namespace pe::check

namespace pe::check {
namespace {

// The fit is a typed spec (the parameters to rerun with), restated by the front end's renderer: the engine
// writes no flag of its own, the JSON keeps the spec by canonical names beside the front end's words.
TEST(FrequencyFit, TheHypothesisIsATypedSpecTheFrontEndRestates) {
  const Kernel k(llama3_inv_freq(500000, 8, 1, 4, 2048));
  RopeRequest r;
  r.x = {k.x, {k.positions.size(), kHeads, kDim}, DType::F32, "x"};
  r.y = {k.y, {k.positions.size(), kHeads, kDim}, DType::F32, "y"};
  r.positions.values = k.positions;
  r.spec.base = 500000;
  r.spec.layout = Layout::HalfSplit;
  r.spec.scaling.method = RopeScalingType::Llama3;
  r.spec.scaling.factor = 8;
  r.spec.scaling.original_max_position = 8192;
  const Report plain = check_rope(r, Names());
  EXPECT_EQ(plain.text.find("--"), std::string::npos) << plain.text;
  const Names words = test_words();
  const Report report = check_rope(r, words);
  ASSERT_FALSE(report.passed) << report.text;
  EXPECT_NE(report.text.find("  in test words, to check the hypothesis: <base=500000.0><scaling=\"llama3\">"
                             "<factor=8.0><original_max_position=2048>"),
            std::string::npos)
      << report.text;
  const nlohmann::json j = report.json();
  const auto e = std::find_if(j["explanations"].begin(), j["explanations"].end(),
                              [](const nlohmann::json& x) { return x.contains("hypothesis"); });
  ASSERT_NE(e, j["explanations"].end()) << j.dump(2);
  EXPECT_EQ((*e)["hypothesis"]["original_max_position"], 2048);
  EXPECT_EQ((*e)["hypothesis"]["scaling"], "llama3");
  EXPECT_TRUE(e->contains("test_words"));
  // The document reads back into its typed form and writes the same JSON again.
  nlohmann::json again = j.get<CheckDocument>();
  again["schema"] = kCheckSchema;
  EXPECT_EQ(again, j);
  ASSERT_TRUE(report.doc.explanations.has_value());
  const auto typed = std::find_if(report.doc.explanations->begin(), report.doc.explanations->end(),
                                  [](const Finding& f) { return f.hypothesis.has_value(); });
  ASSERT_NE(typed, report.doc.explanations->end());
  EXPECT_EQ(typed->hypothesis->scaling.original_max_position, 2048);
  EXPECT_EQ(typed->hypothesis->scaling.method, RopeScalingType::Llama3);
}

// A spec's entries come in the order a hypothesis restates them, by canonical name, typed; read back whole.
TEST(Spec, EntriesInRestatingOrderByCanonicalName) {
  RopeSpec s;
  s.scaling.attention_factor = 1.5;
  s.scaling.truncate = false;
  s.scaling.beta_fast = 16;
  s.scaling.original_max_position = 4096;
  s.scaling.factor = 40;
  s.scaling.method = RopeScalingType::Yarn;
  s.base = 10000;
  s.form.mrope_section = std::vector<std::int64_t>{16, 24, 24};
  std::vector<std::string_view> names;
  for (const SpecEntry& e : entries(s)) names.push_back(e.name);
  EXPECT_EQ(names,
            (std::vector<std::string_view>{"base", "scaling", "factor", "original_max_position", "beta_fast",
                                           "attention_factor", "truncate", "mrope_section"}));
  const nlohmann::json j = s;
  EXPECT_EQ(j, nlohmann::json::parse(R"({"base": 10000.0, "scaling": "yarn", "factor": 40.0,
      "original_max_position": 4096, "beta_fast": 16.0, "truncate": false, "attention_factor": 1.5,
      "mrope_section": [16, 24, 24]})"));
  EXPECT_EQ(j.get<RopeSpec>(), s);
  EXPECT_TRUE(RopeSpec{}.scaling == ScalingSpec{});
  EXPECT_TRUE(entries(RopeSpec{}).empty());  // nothing given, nothing restated
}

}  // namespace
}  // namespace pe::check

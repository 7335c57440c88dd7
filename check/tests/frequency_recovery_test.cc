// Frequencies read back from a kernel's input and output (issue 32's recovery), on kernels built here from
// the published formulas (HF's modeling_rope_utils: default and Llama-3 inv_freq), rounded to float32 as a
// kernel writes them: the recovered intervals hold the kernel's own frequencies, and the words name the
// pair ranges that differ and by what ratio.
#include "frequency_recovery.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "frequency_fit.h"
#include "pe/half.h"

namespace pe::check {
namespace {

constexpr std::size_t kDim = 128, kPairs = 64, kHeads = 4;

// HF's default inv_freq: base^(-2j/d).
std::vector<double> default_inv_freq(double base) {
  std::vector<double> w(kPairs);
  for (std::size_t j = 0; j < kPairs; ++j) w[j] = std::pow(base, -2.0 * static_cast<double>(j) / kDim);
  return w;
}

// HF's _compute_llama3_parameters: wavelengths above original/low_freq_factor divided by the factor, below
// original/high_freq_factor kept, between a smooth blend.
std::vector<double> llama3_inv_freq(double base, double factor, double low, double high, double original) {
  std::vector<double> w = default_inv_freq(base);
  for (double& f : w) {
    const double wavelen = 2 * std::numbers::pi / f;
    if (wavelen > original / low) {
      f /= factor;
    } else if (wavelen >= original / high) {
      const double smooth = (original / wavelen - low) / (high - low);
      f = (1 - smooth) * f / factor + smooth * f;
    }
  }
  return w;
}

// HF's _compute_yarn_parameters (truncate): the ramp between find_correction_dim(beta_fast) floored and
// find_correction_dim(beta_slow) ceiled blends θ_j (fast pairs) into θ_j / factor (slow pairs).
std::vector<double> yarn_inv_freq(double base, double factor, double beta_fast, double beta_slow,
                                  double original) {
  const auto correction_dim = [&](double rotations) {
    return kDim * std::log(original / (rotations * 2 * std::numbers::pi)) / (2 * std::log(base));
  };
  const double low = std::max(0.0, std::floor(correction_dim(beta_fast)));
  double high = std::min(static_cast<double>(kDim - 1), std::ceil(correction_dim(beta_slow)));
  if (low == high) high += 0.001;
  std::vector<double> w = default_inv_freq(base);
  for (std::size_t j = 0; j < kPairs; ++j) {
    const double ramp = std::clamp((static_cast<double>(j) - low) / (high - low), 0.0, 1.0);
    const double extrapolation = 1 - ramp;
    w[j] = w[j] / factor * (1 - extrapolation) + w[j] * extrapolation;
  }
  return w;
}

// A batch rotated by `inv_freq` in double, times `gain` (an attention factor on cos and sin), rounded to
// float32: positions 0..31, then spread up to 200000.
struct Kernel {
  std::vector<std::int64_t> positions;
  std::vector<double> x, y;
  explicit Kernel(const std::vector<double>& inv_freq, double gain = 1) {
    for (std::int64_t p = 0; p < 32; ++p) positions.push_back(p);
    for (std::int64_t k = 1; k <= 32; ++k) positions.push_back(k * 6151);
    std::mt19937_64 g(20261202);
    std::normal_distribution<double> normal;
    x.resize(positions.size() * kHeads * kDim);
    for (double& v : x) v = static_cast<float>(normal(g));
    y.resize(x.size());
    for (std::size_t t = 0; t < positions.size(); ++t)
      for (std::size_t h = 0; h < kHeads; ++h)
        for (std::size_t j = 0; j < kPairs; ++j) {
          const std::size_t row = (t * kHeads + h) * kDim;  // half-split: (j, j + 64)
          const double phi =
              static_cast<double>(positions[t]) * static_cast<double>(static_cast<float>(inv_freq[j]));
          const double a = x[row + j], b = x[row + j + kPairs];
          y[row + j] = static_cast<float>(gain * (a * std::cos(phi) - b * std::sin(phi)));
          y[row + j + kPairs] = static_cast<float>(gain * (a * std::sin(phi) + b * std::cos(phi)));
        }
  }
  RopeData data() const { return {x, y, RopeBatch::tokens_first(positions, kHeads, kDim), kDim, kDim, {}}; }
};

RopeScaling llama3(double original) {
  RopeScaling s;
  s.type = RopeScalingType::Llama3;
  s.factor = 8;
  s.low_freq_factor = 1;
  s.high_freq_factor = 4;
  s.original_max_position = static_cast<std::int64_t>(original);
  return s;
}

TEST(FrequencyRecovery, IntervalsHoldTheKernelsFrequencies) {
  const std::vector<double> wrong = llama3_inv_freq(500000, 8, 1, 4, 2048);  // original 2048, not 8192
  const Kernel k(wrong);
  const RopePlan given(RopeParams{128, 0, 500000, Layout::HalfSplit, llama3(8192)});
  const RecoveredFrequencies r = recover_frequencies(k.data(), given);
  std::size_t determined = 0;
  for (const RecoveredPair& p : r.pairs) {
    if (!p.theta) continue;
    ++determined;
    const double truth = static_cast<float>(wrong[p.pair]);
    EXPECT_LE(p.lo, truth) << p.pair;
    EXPECT_GE(p.hi, truth) << p.pair;
    EXPECT_NEAR(p.gain, 1.0, 1e-3) << p.pair;
  }
  EXPECT_GE(determined, 60u);
}

// The scaling dropped (plain RoPE where Llama-3 was given): the fast pairs as given, the slow ones 8 times
// faster, the pairs between each their own ratio. The boundaries come from HF's rule.
TEST(FrequencyRecovery, NamesThePairRangesAndTheirRatios) {
  const Kernel k(default_inv_freq(500000));
  const RopePlan given(RopeParams{128, 0, 500000, Layout::HalfSplit, llama3(8192)});
  const std::string words = frequency_pattern(recover_frequencies(k.data(), given), given);
  std::size_t last_kept = 0, first_divided = kPairs;
  const std::vector<double> plain = default_inv_freq(500000);
  for (std::size_t j = 0; j < kPairs; ++j) {
    const double wavelen = 2 * std::numbers::pi / plain[j];
    if (wavelen < 8192.0 / 4) last_kept = j;
    if (wavelen > 8192.0 && first_divided == kPairs) first_divided = j;
  }
  EXPECT_NE(words.find(fmt::format("pairs 0-{} as given", last_kept)), std::string::npos) << words;
  const std::string slow = fmt::format("pairs {}-63 multiplied by 8", first_divided);
  const std::size_t at = words.find(slow);
  ASSERT_NE(at, std::string::npos) << words;
  EXPECT_TRUE(at + slow.size() == words.size() || words[at + slow.size()] == ';') << words;
  // Correct data: nothing to say.
  const Kernel right(llama3_inv_freq(500000, 8, 1, 4, 8192));
  EXPECT_EQ(frequency_pattern(recover_frequencies(right.data(), given), given), "");
}

// A module cast to bfloat16 with its inv_freq buffer: every frequency the given one rounded to bfloat16.
TEST(FrequencyRecovery, NamesFrequenciesRoundedToBfloat16) {
  std::vector<double> rounded = default_inv_freq(10000);
  for (double& w : rounded) w = to_float(to_bfloat16(w));
  const Kernel k(rounded);
  const RopePlan given(RopeParams{128, 0, 10000, Layout::HalfSplit});
  const std::string words = frequency_pattern(recover_frequencies(k.data(), given), given);
  EXPECT_NE(words.find("rounded to bfloat16"), std::string::npos) << words;
}

// Parameters off every list, fitted from the table: each names the fields that differ from the given ones.
TEST(FrequencyFit, NamesTheParametersThatDiffer) {
  const RopeParams llama3_given{128, 0, 500000, Layout::HalfSplit, llama3(8192)};
  struct Case {
    std::vector<double> kernel;
    RopeParams given;
    std::string words;
  };
  std::vector<double> linear = default_inv_freq(10000);
  for (double& w : linear) w /= 3.7;
  const std::vector<Case> cases = {
      {llama3_inv_freq(500000, 8, 1, 4, 2048), llama3_given,
       "llama3, original_max_position 2048 (given 8192)"},
      {llama3_inv_freq(500000, 32, 1, 2, 8192), llama3_given,
       "llama3, factor 32 (given 8), high_freq_factor 2 (given 4)"},
      {linear, RopeParams{128, 0, 10000, Layout::HalfSplit}, "linear (given none), factor 3.7"},
      {default_inv_freq(1e6), RopeParams{128, 0, 500000, Layout::HalfSplit}, "base 1e+06 (given 500000)"},
  };
  for (const Case& c : cases) {
    const Kernel k(c.kernel);
    const auto fit = fit_frequencies(recover_frequencies(k.data(), RopePlan(c.given)), c.given);
    ASSERT_TRUE(fit) << c.words;
    EXPECT_EQ(fit->words, c.words);
    EXPECT_GE(fit->pairs, 48u) << c.words;  // three quarters of the pairs or more
  }
  // YaRN (factor 4, its attention factor 0.1·ln 4 + 1 on cos and sin) with original_max_position 2048 where
  // 4096 was given.
  RopeScaling yarn;
  yarn.type = RopeScalingType::Yarn;
  yarn.factor = 4;
  yarn.original_max_position = 4096;
  const RopeParams yarn_given{128, 0, 10000, Layout::HalfSplit, yarn};
  const Kernel yarn_kernel(yarn_inv_freq(10000, 4, 32, 1, 2048), 0.1 * std::log(4.0) + 1);
  const RecoveredFrequencies yr = recover_frequencies(yarn_kernel.data(), RopePlan(yarn_given));
  const auto yarn_fit = fit_frequencies(yr, yarn_given);
  ASSERT_TRUE(yarn_fit);
  EXPECT_EQ(yarn_fit->words, "yarn, original_max_position 2048 (given 4096)");
  EXPECT_EQ(frequency_pattern(yr, RopePlan(yarn_given)).find("gain"), std::string::npos);  // the given one
  // YaRN's attention factor dropped: the frequencies as given, the gain named.
  const Kernel no_gain(yarn_inv_freq(10000, 4, 32, 1, 4096));
  const std::string gain_words =
      frequency_pattern(recover_frequencies(no_gain.data(), RopePlan(yarn_given)), RopePlan(yarn_given));
  EXPECT_NE(gain_words.find("every one as given; gain |y|/|x| 1 (given 1.139)"), std::string::npos)
      << gain_words;
  // The given frequencies themselves: nothing to fit.
  const Kernel right(llama3_inv_freq(500000, 8, 1, 4, 8192));
  EXPECT_FALSE(fit_frequencies(recover_frequencies(right.data(), RopePlan(llama3_given)), llama3_given));
}

}  // namespace
}  // namespace pe::check

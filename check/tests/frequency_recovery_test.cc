// Frequencies read back from a kernel's input and output (issue 32's recovery), on kernels built here from
// the published formulas (HF's modeling_rope_utils: default and Llama-3 inv_freq), rounded to float32 as a
// kernel writes them: the recovered intervals hold the kernel's own frequencies, and the words name the
// pair ranges that differ and by what ratio.
#include "readback/frequency_recovery.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "hf_frequencies.h"
#include "pe/half.h"

namespace pe::check {
namespace {

using namespace testing;

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

}  // namespace
}  // namespace pe::check

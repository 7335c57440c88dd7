// The recovered frequency table explained by fitting, not by listing (issue 32): each scaling method's
// parameters searched for the ones whose frequencies fall inside every determined pair's interval (another
// base and NTK's or dynamic's, a linear factor, Llama-3's factor, low and high frequency factors and
// original max position, YaRN's factor, betas and original max position, YaRN's blend inverted), each also
// with the positions divided by a scale; then the gain read back against the attention factors a method
// applies (one method's frequencies with another's gain). A fit is claimed only when every determined pair
// agrees with it; its words name each parameter that differs from the given one.
#pragma once

#include <optional>
#include <string>

#include "pe/check/spec.h"
#include "pe/plan.h"
#include "readback/frequency_recovery.h"

namespace pe::check {

struct FrequencyFit {
  RopeParams params;             // the fitted frequencies' plan (its attention factor is the method's)
  double position_scale = 1;     // the rows' positions divided by this before the rotation
  bool inverted_blend = false;   // YaRN's ramp where HF uses 1 - ramp
  std::optional<DType> rounded;  // the table stored in bf16 or f16
  std::optional<double> gain;    // the gain read back, when it is not the fitted method's attention factor
  std::string words;             // "llama3, original_max_position 2048 (given 8192)"
  std::size_t pairs = 0;         // determined pairs, every one inside its interval
  // The fit as the parameters to rerun the check with (base, scaling, position scale, attention factor);
  // none for a blend inverted, a table rounded or LongRoPE's lists, which no parameter states.
  std::optional<RopeSpec> hypothesis;
};

// The simplest fit (fewest parameters changed) that holds every determined pair, and the gain's words;
// nullopt when the given frequencies and gain fit, when none does, or fewer than 8 pairs are determined.
// `given`: the check's parameters.
std::optional<FrequencyFit> fit_frequencies(const RecoveredFrequencies& r, const RopeParams& given);

// The median gain |y|/|x| over the pairs that carry one (0 when none does).
double median_gain(const RecoveredFrequencies& r);

}  // namespace pe::check

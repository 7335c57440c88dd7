// The recovered frequency table explained by fitting, not by listing (issue 32): each scaling method's
// parameters searched for the ones whose frequencies fall inside every determined pair's interval, the
// given base, Llama-3's factor, low and high frequency factors and original max position, YaRN's factor,
// betas and original max position, a linear factor, another base. A fit is claimed only when every
// determined pair agrees with it; its words name each parameter that differs from the given one.
#pragma once

#include <optional>
#include <string>

#include "frequency_recovery.h"
#include "pe/plan.h"

namespace pe::check {

struct FrequencyFit {
  RopeParams params;      // the fitted plan's
  std::string words;      // "llama3 original_max_position 2048 (given 8192)"
  std::size_t pairs = 0;  // determined pairs, every one inside its interval
};

// The simplest fit (fewest parameters changed) that holds every determined pair; nullopt when none does, or
// fewer than 8 pairs are determined. `given`: the check's parameters.
std::optional<FrequencyFit> fit_frequencies(const RecoveredFrequencies& r, const RopeParams& given);

}  // namespace pe::check

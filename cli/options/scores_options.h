// The flags of `check --family scores` (--q, --k, --encoding, --softmax-scale, --scale-bias): attention
// scores with the encoding inside (pe/check/scores.h). The queries' and keys' positions are ALiBi's --queries
// and --keys ranges; the rotation's flags are RoPE's; the bias's ALiBi's.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "pe/check/scores.h"

namespace pe::cli {

struct ScoresFlags {
  std::string q, k, encoding = "alibi";
  double softmax_scale = 0;
  bool scale_bias = false;
  std::optional<double> scale;  // --softmax-scale, when given
  // --family t5
  std::string t5_table;
  std::int64_t num_buckets = 32, max_distance = 128;
  bool causal = false;
};

void add_scores_options(CLI::App& cmd, ScoresFlags& flags);
// After parsing: --softmax-scale into flags.scale.
void read_scores_flags(const CLI::App& cmd, ScoresFlags& flags);
// UsageError naming the first of scores' flags given, `why` after it (another family); t5's likewise.
void reject_scores_flags(const CLI::App& cmd, const std::string& why);
void reject_t5_flags(const CLI::App& cmd, const std::string& why);
// --encoding, parsed (UsageError naming it).
check::ScoreEncoding score_encoding_of(const ScoresFlags& flags);

}  // namespace pe::cli

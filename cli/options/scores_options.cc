#include "scores_options.h"

#include "common.h"

namespace pe::cli {
namespace {

constexpr const char* kScoresFlags[] = {"--q", "--k", "--encoding", "--softmax-scale", "--scale-bias"};
constexpr const char* kT5Flags[] = {"--t5-table", "--num-buckets", "--max-distance", "--causal"};

}  // namespace

void add_scores_options(CLI::App& cmd, ScoresFlags& f) {
  cmd.add_option("--q", f.q, "Scores: the queries before the encoding (.npy, [queries, heads, d])");
  cmd.add_option("--k", f.k, "Scores: the keys before the encoding (.npy, [keys, kv_heads, d])");
  cmd.add_option("--encoding", f.encoding,
                 "Scores: rope, alibi or none inside S = scale*q.k + bias (default alibi)");
  cmd.add_option("--softmax-scale", f.softmax_scale, "Scores: the scale of q.k (default 1/sqrt(d))");
  cmd.add_flag("--scale-bias", f.scale_bias,
               "Scores: the scale multiplies the bias too, scale*(q.k + bias) (Falcon)");
  cmd.add_option("--t5-table", f.t5_table,
                 "T5: the learned bias table [num_buckets, heads] (.npy); TABLE is then the bias [heads, "
                 "queries, keys]");
  cmd.add_option("--num-buckets", f.num_buckets, "T5: num_buckets (default 32)");
  cmd.add_option("--max-distance", f.max_distance, "T5: max_distance (default 128)");
  cmd.add_flag("--causal", f.causal, "T5: causal buckets (bidirectional=False, a decoder's)");
}

void read_scores_flags(const CLI::App& cmd, ScoresFlags& f) {
  if (cmd.count("--softmax-scale") > 0) f.scale = f.softmax_scale;
}

void reject_scores_flags(const CLI::App& cmd, const std::string& why) {
  for (const char* flag : kScoresFlags)
    if (cmd.count(flag) > 0) throw UsageError(std::string(flag) + ": " + why);
}

void reject_t5_flags(const CLI::App& cmd, const std::string& why) {
  for (const char* flag : kT5Flags)
    if (cmd.count(flag) > 0) throw UsageError(std::string(flag) + ": " + why);
}

check::ScoreEncoding score_encoding_of(const ScoresFlags& f) {
  if (const auto e = check::parse_score_encoding(f.encoding)) return *e;
  throw UsageError("--encoding: expected rope, alibi or none, got '" + f.encoding + "'");
}

}  // namespace pe::cli

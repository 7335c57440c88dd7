// The positions RoPE data was rotated by, read back from the data: each pair's angle from its input and
// output, then the integer position every pair agrees with, found from the slowest pair's candidates
// (one per turn it may have made) and confirmed by every faster one, each within the angle error a
// float32 implementation makes at that position. "Undetermined" where that error cannot tell p from
// p ± 1 (the fastest pair's angle at large p in float32), or where no position or two fit.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "explain/convention_fit.h"
#include "pe/plan.h"

namespace pe::check {

struct RecoveredRow {
  std::size_t token = 0;
  std::optional<std::int64_t> position;  // nullopt: undetermined
  std::size_t head = 0;
};

struct SampledRow {
  std::size_t token = 0, head = 0;
};

// Text RoPE rows (plan with one axis), the sampled (token, head) rows, searched over [min_position,
// max_position] (a negative min_position: what int64 positions beyond 2^31 become as int32).
std::vector<RecoveredRow> recover_positions(const RopeData& d, const RopePlan& plan,
                                            const std::vector<SampledRow>& rows, std::int64_t max_position,
                                            std::int64_t min_position = 0);
// Head 0 of each of `tokens`.
std::vector<RecoveredRow> recover_positions(const RopeData& d, const RopePlan& plan,
                                            const std::vector<std::size_t>& tokens, std::int64_t max_position,
                                            std::int64_t min_position = 0);

// A decode step, as far as its positions say: few tokens (16 at most), none at position 0 on any axis, and
// not one run p0, p0 + 1, ... of several (a prefill chunk): one token, or one token of each of a batch's
// sequences. Dropping the decode offset (the KV cache's length) puts every such step at position 0.
bool decode_step(const RopeBatch& b);

// The pattern of the recovered positions against the given ones, in words ("every row rotated by p - 1000:
// an offset dropped or added"); empty when they agree or nothing could be determined. Rows of several heads:
// first the patterns of a (token, head) row's index (readback/row_index_pattern.h: the sequence and head
// axes exchanged); otherwise the heads of each token must agree, and the tokens' positions are matched.
// `fits`: a claim, made only when most sampled rows (more than half) are determined and every determined one
// follows the pattern; `support` says how many ("30 of 32 sampled rows determined (32 tokens x 1 head),
// every determined one agreeing"). Otherwise the words only describe what was read back ("positions
// undetermined", "no offset pattern", heads of a token that disagree).
struct PositionPattern {
  std::string words, support;
  bool fits = false;
  bool row_index = false;  // the words name a (token, head) row's index (readback/row_index_pattern.h)
};
PositionPattern position_pattern(const RopeData& d, const std::vector<RecoveredRow>& rows);

// Rows (token, head) that hold their input bit for bit, every channel, though their position is not
// 0 on any axis: a fast path that skipped them (MLX before 0.32 left rows unrotated).
struct UnrotatedRows {
  std::size_t count = 0, rows = 0;  // unrotated rows, of the rows not at position 0 (where R = identity)
  std::size_t token = 0, head = 0;  // the first
  std::int64_t position = 0;
  bool decode_offset =
      false;  // every row unrotated in a decode step (decode_step()): its offset dropped fits
};
UnrotatedRows unrotated_rows(const RopeData& d, const RopePlan& plan);
bool left_unrotated(const RopeData& d, const RopePlan& plan, std::size_t token, std::size_t head);
// "3 of 64 rows hold their input unchanged ... (first: token 5, head 0, position 1005)"; `only_cause`:
// every element over budget lies in those rows.
std::string unrotated_words(const UnrotatedRows& u, bool only_cause);

}  // namespace pe::check

// check_rope's one pass over the judged tokens (check_rope.cc): the bands, the contracts' tally, the rows
// with an element over budget and the first pass-through channel that moved; on several threads where the
// batch is large, each over consecutive tokens, their passes merged in order (the same measurement but the
// bands' 99th percentiles, which move within the screen's bounds: each part measures its first rows exactly).
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "engine/budget.h"
#include "engine/contract_class.h"
#include "pe/check/check.h"
#include "pe/harness/measure.h"

namespace pe::check {

struct Pass {
  harness::Measurement bands;
  ContractTally tally;
  std::vector<bool> over;
  std::optional<harness::ElementRecord> moved;
};

// The pass over the `judged` tokens: the screened pass where it applies (float32, bfloat16 or float16 data,
// or doubles, read in place; no gain), else every element exactly, row by row (one thread). A large screened
// pass presumes its tails' floors from a sample (harness::rope_screen_tuning) and, where they did not hold,
// runs again without them (the same report as without presuming). `judged`
// unscanned (every token, no scan of the input made): nullopt, with nothing kept, where the screened pass
// met a non-finite input value or does not apply (the caller scans for the tokens to judge and measures
// again). `real`: real positions [n_axes][tokens] (the batch's integers their band keys), screened alike with
// each token's sines and cosines from the fast path at t·θ_j (measure_rope_screened), else row by row.
std::optional<Pass> measure_rope_pass(const RopeRequest& r, const RopeParams& params, const RopePlan& plan,
                                      const RopeBatch& batch, const Budget& budget,
                                      const harness::Sample& judged, bool scanned,
                                      const harness::OutputGain& gain, std::span<const double> real = {});

// How many threads a pass over `tokens` tokens of `elements` elements takes: `requested`, or with 0 one per
// 2^18 elements (a thread costs more to start than a smaller part saves); never more than the hardware's
// threads or than one per token.
std::size_t rope_pass_threads(std::size_t requested, std::size_t tokens, std::size_t elements);

}  // namespace pe::check

// check's explanation of a failure that rounding cannot explain (|err| >= 1e-3): the conventions,
// check arguments and (RoPE) positions and skipped rows that fit the data, printed and recorded in the
// check's JSON.
#pragma once

#include <string>
#include <vector>

#include "diagnose.h"
#include "pe/check/hf_config.h"
#include "pe/check/report.h"
#include "pe/harness/measure.h"
#include "pe/plan.h"

namespace pe::check {

// The best three candidates and the given convention's residual; "the data fits: ..." names the best
// when it fits ten times better than the given, else `recovered` (the positions read back) when there
// is a pattern. Nothing when the data passes or misses by less than 1e-3.
void print_diagnosis(const std::vector<Fit>& fits, const Convention& given, const harness::Measurement& bands,
                     Report& out, const std::string& recovered = "");

// With a model config, the model's other layer types' RoPE (Gemma-3's sliding layers for a full one) as
// candidates named by their layer type: the per-layer mix-up (vLLM PR #29111, llama.cpp #14367). Their
// runtime length (dynamic, longrope) is HF's, from the positions.
std::vector<Convention> other_layers(const std::vector<HfRopeSetting>& settings, const Convention& given,
                                     std::size_t head_dim, const std::vector<std::int64_t>& positions,
                                     const Names& names);

// A failing RoPE output, explained: rows a fast path skipped (when they hold every failure, that is
// the whole diagnosis), else the conventions and check arguments that fit and the positions read back.
// `over`: the rows (token·heads + head) with an element over budget.
void diagnose_rope_output(const RopeData& data, const RopePlan& plan, const Convention& given,
                          const harness::Measurement& bands, const std::vector<bool>& over, Report& out,
                          const std::vector<Convention>& alternatives);

}  // namespace pe::check

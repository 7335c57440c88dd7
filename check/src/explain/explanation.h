// check's explanation of a failure that rounding cannot explain (|err| >= 1e-3): the conventions,
// check arguments and (RoPE) positions and skipped rows that fit the data, printed and recorded in the
// check's JSON.
#pragma once

#include <string>
#include <vector>

#include "explain/convention_fit.h"
#include "pe/check/hf_config.h"
#include "pe/check/report.h"
#include "pe/check/spec.h"
#include "pe/harness/measure.h"
#include "pe/plan.h"

namespace pe::check {

// The residual a correct kernel of a hypothesis leaves against the hypothesis's long double model: 16 units
// of the data type's rounding on the data's largest magnitude, and a float32 angle's (p·θ and θ each
// rounded: 4·2^-24·(p + 1) radians) at the largest position on that magnitude. A convention "fits" only
// within it; `basis` says so in words. `vacuous` when the tolerance spans twice the magnitude (a float32
// angle's error of 2 radians or more, from position 2^23 on): every rotation of the data then "fits", so no
// convention can be told apart by it and none is claimed.
struct FitTolerance {
  double value = INFINITY;
  std::string basis;
  bool vacuous = false;
};
FitTolerance fit_tolerance(DType dtype, double max_magnitude, std::int64_t max_position);

// The best three candidates and the given convention's residual, then what was read back (`notes`), then
// the claims: the best candidate when it fits ten times better than the given and within `tolerance`
// (otherwise "undetermined" with its residual), and `claims` (positions, frequencies read back). Nothing
// when the data passes or misses by less than 1e-3.
void print_diagnosis(const std::vector<Fit>& fits, const Convention& given, const harness::Measurement& bands,
                     Report& out, const Names& names, const FitTolerance& tolerance,
                     const std::vector<std::string>& notes = {}, const std::vector<Finding>& claims = {});

// With a model config, the model's other layer types' RoPE (Gemma-3's sliding layers for a full one) as
// candidates named by their layer type: the per-layer mix-up (vLLM PR #29111, llama.cpp #14367). Their
// runtime length (dynamic, longrope) is HF's, from the positions.
std::vector<Convention> other_layers(const std::vector<HfRopeSetting>& settings, const Convention& given,
                                     std::size_t head_dim, const std::vector<std::int64_t>& positions,
                                     const Names& names);

// A failing RoPE output, explained: rows a fast path skipped (when they hold every failure, that is
// the whole diagnosis), else the conventions and check arguments that fit and the positions read back.
// `over`: the rows (token·heads + head) with an element over budget.
// `dtype`: the output's, for the tolerance of a claim. `measured`: claims the caller measured (a contract
// class the data meets), printed with the ones read back when no convention fits.
void diagnose_rope_output(const RopeData& data, const RopePlan& plan, const Convention& given,
                          const harness::Measurement& bands, const std::vector<bool>& over, Report& out,
                          const Names& names, const std::vector<Convention>& alternatives, DType dtype,
                          const std::vector<Finding>& measured = {});

}  // namespace pe::check

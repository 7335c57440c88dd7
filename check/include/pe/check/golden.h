// Golden values from the exact reference, correctly rounded into the output type: what
// `pe-suite export --reference` writes and Python's reference_* functions return (the same bits). Each
// refuses, before allocating, an output larger than this machine's memory; a rounding the reference
// cannot decide is counted in ref::undecided_roundings_in_this_thread() (the caller refuses the values).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "pe/alibi.h"
#include "pe/attn_temperature.h"
#include "pe/batch.h"
#include "pe/harness/sinusoidal_rows.h"
#include "pe/plan.h"
#include "pe/types.h"

namespace pe::check {

// The table [positions, dim].
std::vector<double> golden_sinusoidal(const SinusoidalParams& params, std::span<const std::int64_t> positions,
                                      DType dtype);
// The table of real positions, a grid, zero rows (pe/harness/sinusoidal_rows.h): [rows, dim].
std::vector<double> golden_sinusoidal(const harness::SinusoidalRows& rows, DType dtype);
// [tokens, pairs, (cos, sin)] of each pair's angle, times the attention factor (HF's cos and sin carry
// it); positions [n_axes][tokens].
std::vector<double> golden_rope_table(const RopeParams& params, std::span<const std::int64_t> positions,
                                      DType dtype);
// x (values representable in dtype, laid out as `batch` says) rotated, pass-through channels copied; with
// a temperature t(p)·R(p)·x rounded once (pass-through t(p)·x).
std::vector<double> golden_rope(const RopeParams& params, const RopeBatch& batch, std::span<const double> x,
                                DType dtype, const AttnTemperature& temperature = {});
// The same into y (x's size: a caller's buffer, already touched, as a benchmark times it).
void golden_rope(const RopeParams& params, const RopeBatch& batch, std::span<const double> x, DType dtype,
                 std::span<double> y, const AttnTemperature& temperature = {});
// x rotated at real positions `reals` ([n_axes][tokens]: a video grid's fractional coordinates, each the
// exact binary value given), pass-through channels copied; `batch` says the layout (its integer positions
// unread).
std::vector<double> golden_rope_at(const RopeParams& params, const RopeBatch& batch,
                                   std::span<const double> reals, std::span<const double> x, DType dtype);
// The slopes [heads] (queries and keys empty) or the bias [heads, queries, keys].
std::vector<double> golden_alibi(const AlibiParams& params, std::span<const std::int64_t> queries,
                                 std::span<const std::int64_t> keys, bool slopes_only, DType dtype);

}  // namespace pe::check

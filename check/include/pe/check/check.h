// The check engine: a typed request about outside data (a dumped table, q before and after a kernel, an
// ALiBi bias) against the exact reference, and its Report (report.h). Front ends only translate: the
// command line's flags and files, Python's keywords and arrays, each with its Names (names.h) so that
// every error names the parameter in the caller's words. Nothing here prints, reads argv or knows which
// front end called it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pe/batch.h"
#include "pe/check/hf_config.h"
#include "pe/check/names.h"
#include "pe/check/report.h"
#include "pe/check/spec.h"
#include "pe/harness/measure.h"
#include "pe/types.h"

namespace pe::check {

// The caller's values in C order, their shape and element type, and the words that name them ("x.npy",
// "x"): as doubles (`values`: the front end's copy), or in place in their own type (`typed`: a file's
// mapping, a numpy array, a tensor; `values` then empty), read without a copy and converted to doubles
// only where a diagnosis or a second implementation needs them.
struct DataView {
  std::span<const double> values;
  std::vector<std::size_t> shape;
  DType dtype = DType::F32;
  std::string name;
  const void* typed = nullptr;  // shape's product elements of `dtype`, native byte order

  std::size_t count() const noexcept;
  harness::Values read() const;  // the typed elements where given, else `values`
};

// `v` with its values as doubles: itself, or (typed) converted into `storage`.
DataView as_doubles(const DataView& v, std::vector<double>& storage);

// The positions as given: one list for every axis (a range), or an array of [n_axes, T] (also
// [n_axes, 1, T], HF's position_ids for one sequence) or [T]. `source` names a file they came from ("" for
// an array in memory); `parameter` is the canonical name of what gave them ("positions").
// RoPE also takes real positions (`real`, `values` then empty): a video grid's fractional coordinates, each
// the exact binary value of its double. A front end gives integer-valued data in [0, 2^53] as `values`
// (today's integer path, bit for bit), anything else as `real` (negative values included).
struct Positions {
  std::vector<std::int64_t> values;
  std::vector<double> real;
  std::vector<std::size_t> shape;  // empty: 1-D
  bool every_axis = false;         // a range: each axis reads the same positions
  std::string source;
  std::string parameter = "positions";
};

// BadRequest naming the positions when there are none or one lies outside [0, 2^53]; real ones when one is
// not finite, beyond |t| <= 2^53, or nonzero below 2^-126 in magnitude (a float32 angle's fl(t) is relative
// only from there: docs/contracts.md §2a).
void validate_positions(const Positions& p, const Names& names);

// [n_axes][tokens] for a form with n_axes axes (`axes_parameter` is what set them, for messages).
std::vector<std::int64_t> axis_positions(const Positions& p, std::size_t n_axes,
                                         std::string_view axes_parameter, const Names& names);
// The same of real positions.
std::vector<double> axis_real_positions(const Positions& p, std::size_t n_axes,
                                        std::string_view axes_parameter, const Names& names);
// Each real position's band key, ceil(|t|): the integer a RopeBatch holds for it (the measurement's position
// bands, the reference's tier and the contracts' promise are read from the magnitude).
std::vector<std::int64_t> band_keys(std::span<const double> real);

// The batch view of RoPE data of this shape: [T, D], [T, heads, D], [1, T, heads, D]; heads_first
// [heads, T, D] or [1, heads, T, D] (Hugging Face's), read in place. BadRequest naming `name` (the data's
// words) for another rank or a token count other than the positions' (with the shape, how it was read, and
// the flag `heads_first_flag` when the other reading would match), and for heads_first on [T, D] data (no
// heads axis to move). Positions are [n_axes][tokens].
RopeBatch rope_batch_of(std::vector<std::size_t> shape, const std::vector<std::int64_t>& positions,
                        bool heads_first, const std::string& name, std::size_t n_axes = 1,
                        const std::string& heads_first_flag = "heads_first");

// What the data is held to: a registered variant's contract, a flat bound, or (neither) check's default
// class: the largest of the budgets of every formulation of the data's precision, so that a correct
// kernel written the way engines write it passes.
struct BudgetOptions {
  std::string contract;
  std::optional<double> max_abs;
};

// Called as rows are compared (done of total), for a front end's progress line.
using Progress = std::function<void(std::size_t done, std::size_t total)>;

struct SinusoidalRequest {
  DataView table;  // [positions, dim]: a row per position, or per grid cell (after spec.extra_tokens)
  std::optional<DataView> against;
  // Integer positions, or (real_positions, non-empty) real ones: diffusion timesteps, exact as given. A grid
  // (spec.grid) takes neither.
  Positions positions;
  std::vector<double> real_positions;
  std::int64_t dim = 0;  // 0: the table's width
  SinusoidalSpec spec;
  HfSource hf;  // a diffusers config.json: what the spec leaves unset (sinusoidal_spec_from)
  BudgetOptions budget;
  Progress progress;
  // Every band's p99 over all its elements; by default a band of 2^21 elements and more takes them over a
  // sample of 1 block of table rows in 8, about 4096 elements a block (harness::table_sample_block and
  // Measurement::sample_percentiles: about a fifth faster).
  bool exact_percentiles = false;
};

struct RopeRequest {
  DataView x, y;  // the input and the output of the rotation, of one shape
  std::optional<DataView> against;
  Positions positions;
  bool heads_first = false;
  RopeSpec spec;
  HfSource hf;
  BudgetOptions budget;
  Progress progress;
  // Threads for the pass over the data (0: one per 2^18 elements, at most every hardware thread): the report
  // is the same for any count but the bands' p99 columns (within the screen's bounds).
  std::size_t threads = 0;
  // Every band's p99 over all its elements; by default a band of 2^21 elements and more takes them over a
  // sample of 1 token in 8 (harness::Measurement::sample_percentiles: a sixth faster in float32, a third in
  // 16-bit types).
  bool exact_percentiles = false;
  // The verdict alone (passed, verdict, counts, parameters, hf_config's not_read keys): no text, bands, worst
  // elements, contracts or diagnosis. verify_rope's per-case check, whose reports are read only when a check
  // does not pass; it then checks again without it, so the report it shows is the whole one.
  bool quiet = false;
};

struct AlibiRequest {
  DataView table;  // [heads] slopes or [heads, queries, keys] bias (also [1, heads, queries, keys])
  AlibiSpec spec;
  BudgetOptions budget;
};

// The rows a spec and its positions describe (pe/harness/sinusoidal_rows.h): a grid's cells (no positions may
// be given), real positions, or integer ones (padding_idx's rows zero). `table_rows`: the rows a table has,
// compared with a grid's before its rows are built. BadRequest naming positions, the table, or the parameter
// the rows refuse. check_sinusoidal, export and Python's reference_sinusoidal build them alike.
harness::SinusoidalRows sinusoidal_rows(const SinusoidalSpec& spec, const SinusoidalParams& params,
                                        const Positions& positions, std::span<const double> real_positions,
                                        const Names& names,
                                        std::optional<std::size_t> table_rows = std::nullopt);
// Whether the screened pass reads the table: the paper's at integer positions (flip and shift included, but
// an interleaved flip), no scale, padding row or odd dim.
bool screened_table(const SinusoidalSpec& spec, const SinusoidalParams& params,
                    std::span<const double> real_positions);

Report check_sinusoidal(const SinusoidalRequest& request, const Names& names);
Report check_rope(const RopeRequest& request, const Names& names);
Report check_alibi(const AlibiRequest& request, const Names& names);

}  // namespace pe::check

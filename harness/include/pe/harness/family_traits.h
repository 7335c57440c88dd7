// What the harness, the benchmarks, the reports and the CLI's generic paths know of a family: one
// row per family (harness/src/families/<family>.cc). Adding a family is its row, its plan, its
// reference and its kernels; nothing that iterates families names one.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "pe/harness/bench_identity.h"
#include "pe/harness/census.h"
#include "pe/harness/exhaustive_table.h"
#include "pe/harness/instance.h"
#include "pe/harness/measure.h"
#include "pe/rope_scaling.h"
#include "pe/types.h"

namespace pe::harness {

enum class BenchGrid {
  Smoke,   // a few tiny shapes: ctest checks the JSON, not the timings
  Quick,   // the shapes a user looks at first; under 2 minutes
  Report,  // the full grid, 9 repetitions each for compare
};

// One benchmark shape in a family's terms (BenchIdentity's fields).
struct BenchShape {
  std::string op;  // "table", "add", "rope", "bias"
  DType dtype = DType::F32;
  std::int64_t length = 0, heads = 0, dim = 0;
  bool far = false;                // positions from 2^20 instead of 0
  std::string scaling = "none";    // a RoPE scaling the family's workload knows ("yarn")
  std::string form = "text";       // a RoPE form the workload knows: "mrope" (Qwen2.5-VL), "mla" (DeepSeek)
  bool first_layout_only = false;  // only in the variant's first layout
  int threads = 1;                 // a pe::ThreadPool of this many threads, made with the workload
  BenchShape with_threads(int n) const {
    BenchShape s = *this;
    s.threads = n;
    return s;
  }
  std::size_t elements() const {
    return static_cast<std::size_t>(length) * static_cast<std::size_t>(heads > 0 ? heads : 1) *
           static_cast<std::size_t>(dim);
  }
};

// One benchmark's buffers, plan and positions, built (pages touched) before any timing.
class Workload {
 public:
  virtual ~Workload() = default;
  // One kernel call: never allocates.
  virtual void run() = 0;
  // One call, then a sample of its output (first, middle and last row; up to 16 pairs) compared
  // with the reference under the instance's contract.
  virtual void check(const Sink& sink) = 0;
  virtual const void* data() const = 0;
  std::size_t elements = 0, bytes_written = 0, bytes_moved = 0;
};

// A column of the report's speed table: f32, unscaled, the family's headline shape at this length.
struct ReportColumn {
  std::string_view label;
  std::int64_t length;
  std::string_view positions;  // "start" or "far"
};

// The terms of one element's budget (element_budget): |φ|, its pair, and the scale (|x_a| + |x_b| of
// a RoPE input pair, 1 for tables).
struct BudgetTerms {
  double abs_phi = 0;
  std::size_t pair = 0;
  double scale = 1;
};

// The census's edge cells rotate or write 23 pairs: a tail of 7 for 16 lanes, 7 for 8, 3 for 4, 1 for 2.
inline constexpr std::int64_t kCensusEdgePairs = 23;

struct FamilyTraits {
  Family family;
  std::string_view name;
  // What the budget of `pe-suite list` is multiplied by ("" for tables).
  std::string_view budget_scale = "";

  // The census: whether it takes this family under `options` (by default unless census::rope_only),
  // the dims it sweeps (throws InvalidArgument naming an option no dim fits), and one cell:
  // `positions` × dim × base compared into `m`.
  bool (*census_applies)(const census::Options& options) = [](const census::Options& o) {
    return !census::rope_only(o);
  };
  std::vector<std::int64_t> (*census_dims)(const census::Options& options);
  void (*census_cell)(const Instance& in, const std::vector<std::int64_t>& positions, std::int64_t dim,
                      double base, std::uint64_t seed, const census::Options& options, Measurement& m);

  // The census's edge cell, one per band: a dim of kCensusEdgePairs pairs at `positions` (not
  // monotone) through the family's own edges (RoPE: pass-through channels and the inverse direction;
  // tables: the fused add with a padded row), compared into `m`.
  void (*census_edges)(const Instance& in, const std::vector<std::int64_t>& positions, std::uint64_t seed,
                       Measurement& m);

  // The family's forms besides its grid of positions × dims × bases, once per instance into the bands their
  // positions fall in (the sinusoidal family: diffusion timestep embeddings at real timesteps, an odd dim).
  // Null where the family has none. Positions stay within `limit`.
  void (*census_forms)(const Instance& in, std::int64_t limit, std::uint64_t seed,
                       const census::Options& options, Measurement& m) = nullptr;

  // The benchmarks: the grid's shapes and the workload of one.
  std::vector<BenchShape> (*bench_shapes)(BenchGrid grid);
  std::unique_ptr<Workload> (*workload)(const Instance& in, const BenchShape& shape);

  // The family's entry point, for properties that hold for every family: `positions.size()` rows
  // (RoPE: × `heads` heads) of `dim` channels (RoPE: head_dim = rotary_dim = dim) in `layout`,
  // through `v` (of any family: the API must reject another family's variant). Throws what the API throws.
  void (*call)(const Variant& v, Layout layout, std::int64_t dim, double base,
               std::span<const std::int64_t> positions, Buffer data, std::int64_t heads);
  std::string_view dim_argument = "dim";   // the name errors give the dim: "dim", "head_dim"
  std::string_view data_argument = "out";  // the name errors give the buffer: "out", "x"
  // The name errors give the positions: "positions", "queries".
  std::string_view positions_argument = "positions";
  bool even_dim = true;           // an odd dim is rejected (pairs of channels)
  bool reads_data = false;        // the call transforms the buffer (RoPE) instead of only writing it
  bool has_heads = false;         // a position's output is `heads` rows of dim (RoPE), not one row
  std::int64_t property_max_dim;  // the largest dim properties draw (MPFR time grows with it)
  // The budget terms of every element of such a call's output (row-major), from the plan's double
  // ω: |φ| within 2^-50 of the exact angle. `x` is the input (RoPE; ignored by tables).
  std::vector<BudgetTerms> (*budget_terms)(Layout layout, std::int64_t dim, double base,
                                           std::span<const std::int64_t> positions, std::int64_t heads,
                                           std::span<const double> x);
  // Such a call's output `y` (from input `x`; ignored by tables) against the exact values under the
  // instance's contract, element by element into `sink` (measure_sinusoidal, measure_rope).
  void (*measure)(const Instance& in, std::int64_t dim, double base, std::span<const std::int64_t> positions,
                  std::int64_t heads, std::span<const double> x, Values y, const Sink& sink,
                  const Sample& sample);

  // The reports: the headline shape (op, heads, dim; f32, unscaled) and the words around it.
  std::string_view headline_op;
  std::int64_t headline_heads = 0, headline_dim;
  std::string_view caption;          // "32 heads x head_dim 128"
  std::string_view length_label;     // the speed plot's x axis: "tokens"
  std::int64_t summary_length;       // the summary's speed: the headline shape at this length
  std::string_view summary_shape;    // "T2048·H32·D128"
  std::string_view summary_caption;  // "2048 tokens x 32 heads x 128"
  std::span<const ReportColumn> columns;

  // The exhaustive census (every position, every channel): whether it sweeps an instance of this family,
  // and its table at dim and base up to max_position. Null where the family has none (ALiBi).
  bool (*exhaustive_applies)(const Instance& in) = nullptr;
  std::unique_ptr<ExhaustiveTable> (*exhaustive_table)(const Instance& in, std::int64_t dim, double base,
                                                       std::int64_t max_position) = nullptr;

  // Whether a benchmark is the headline shape (any length, positions and scaling).
  bool headline(const BenchIdentity& b) const {
    return b.family == name && b.op == headline_op && b.heads == headline_heads && b.dim == headline_dim;
  }
};

// Every family's row, in enumeration order.
std::span<const FamilyTraits* const> family_traits();
const FamilyTraits& traits_of(Family f);
// nullptr for a name no family has.
const FamilyTraits* traits_named(std::string_view name);

// The rows (harness/src/families/).
const FamilyTraits& sinusoidal_traits();
const FamilyTraits& rope_traits();
const FamilyTraits& alibi_traits();

// The 3 rows (first, middle, last) and up to 16 pairs spread over the frequencies that a
// benchmark's pre-timing check compares.
Sample bench_sample(std::size_t rows, std::size_t pairs);
// The RoPE scaling a benchmark shape names: "none", or "yarn" (factor 4 over 32768 positions, of the
// Qwen2.5 long-context kind: the plan changes the frequencies, the kernels multiply cos and sin by the
// attention factor 1.1386). Throws std::invalid_argument for another name.
RopeScaling bench_rope_scaling(const std::string& name);
// Positions 0.. or 2^20.. (far): the angle range, not the count, is what changes.
std::vector<std::int64_t> bench_positions(std::size_t n, bool far);

}  // namespace pe::harness

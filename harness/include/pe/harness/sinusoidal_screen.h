// check's one pass over a sinusoidal table (the table counterpart of rope_screen.h): a row of the table read
// in its own type (float32, bfloat16, float16, or doubles), each element's error bounded above by the
// reference's double tier (pe/ref/fast_trig.h: sin and cos of p·ω_j within double_tier_radius) and either
// proved quiet (the exact path would only have counted it and put it in its band's 99th percentiles) or
// flagged loud for the exact path (double-double, then MPFR). The verdict, the maxima, the worst elements and
// the caller's tally are the exact path's; the percentiles are read from the estimates |y − e|, within the
// row's radius of the exact path's (absolute; its ulps within that divided by the element's ulp, or half or
// twice across a power of two): (2^-48 + |φ|·(2^-88 + 2^-96))·(1 + 2^-16) where a row's sin and cos are the
// tier's, plus kTableRotationRadius (2^-38) where they were rotated from the last row's (a bound, below; 256
// rotations measured 2^-44.8 at most). Compiled for every Highway target with a fused multiply-add; the best
// one the CPU has runs.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pe/harness/exhaustive_screen.h"
#include "pe/harness/measure.h"
#include "pe/harness/presume_tuning.h"
#include "pe/harness/rope_screen.h"
#include "pe/harness/sinusoidal_rows.h"
#include "pe/ref/double_double.h"

namespace pe::harness {

// A row's per-pair arrays, padded to a multiple of ScreenToken::kLanes (the padding never counted): the
// double tier's sin and cos at the row's position, or with `rotate` the previous position's, which the kernel
// rotates by (step_sin, step_cos) = the tier's (sin ω_j, cos ω_j) first and writes back (one pass over the
// pairs); per pair the line |y − e| must stay under, the band's bars, the budget's lower bound and the
// caller's tally less the pair's radius of |e − exact| (every margin included; NaN: the element is loud);
// and `radius`, at least every pair's radius that is finite (the ulp test's), and at least 2^-48 where any is
// (the ulp test's binade of |e| − 2r needs 2r far above the rounding of |e| − 2r, 2^-53·|e|, |e| <= 1; both
// callers' radii are the double tier's, 2^-48 and more).
struct TableScreenRow {
  double *sin, *cos;
  const double *step_sin, *step_cos;
  const double* line;
  double radius = 0;
  bool rotate = false;
  // The pre-test's bars (table_fast_bars; null: no pre-test): per pair (padded), and the binade's factor.
  const double* fast_line = nullptr;
  double fast_ulp = -INFINITY;
  // Up to `rows` rows of the table y_stride bytes apart (consecutive positions): the first's e as above, each
  // later one's the one before it rotated; the same lines and bars for all. Their flags padded(n) apart. The
  // kernel takes them in steps of two rows where two remain (the first alone where it is not rotated) and
  // stops after the first step that holds a loud element (TableScreenResult::rows): the step's other row
  // was judged under the same bars, which only rise as loud elements are measured (a quiet element under
  // them is quiet under the raised ones; a loud one is measured exactly).
  std::size_t rows = 1, y_stride = 0;
  // The rows from y on that the table holds (`rows` and more): the kernel prefetches the rows ahead of the
  // one it reads within them (0: none).
  std::size_t table_rows = 0;
  // The float32 pre-test's lines (null: none), per pair (padded), each table_fast_line32 of this call's
  // fast_line (table_fast_bars fills both; the pre-test's proof pairs them): float32 rows are first compared
  // as read, in float32 lanes, against e rounded to float32 (sinusoidal_screen.cc's Quiet32).
  const float* fast_line32 = nullptr;
};

// The table pass (measure_sinusoidal_screened) forms a row's e from the double tier's at most
// kTableMaxRotations rows after its last use of the tier, each rotated from the row before by the kernel
// (TableScreenRow::rotate): then e lies within the tier's radius at the tier's row plus kTableRotationRadius
// of the exact value (the derivation at the pass's sincos()). Rotations are a few operations a pair where
// the tier is a polynomial; 256 of them let a call take whole batches (fewer reseeds, no call split where
// they ran out).
inline constexpr std::size_t kTableMaxRotations = 256;
inline constexpr double kTableRotationRadius = 0x1p-38;
static_assert(exhaustive::rotation_radius(kTableMaxRotations) <= kTableRotationRadius,
              "the table's rotations stay within their radius (exhaustive_screen.h)");

// The row's scalars: the band's largest ulp error (a quiet element's ulp bound stays under it) and the tails'
// floors (estimates strictly above them are kept); the output type's precision p, its least normal 2^emin
// and 2^(1 − p) (a binade's ulp over the binade).
struct TableScreenBars {
  double max_ulp = 0;
  double abs_floor = 0, ulp_floor = 0;
  int precision = 24;
  double least_binade = 0x1p-126, ulp_scale = 0x1p-23;
};

// The bars of the kernel's pre-test (the judge's own tests with the floors' folded in: a whole vector of
// pairs passing it is quiet with no estimate kept, and left alone with flags 0; sinusoidal_screen.cc): per
// pair fast_line[j] = min(line[j], abs_floor) (a NaN line: -1; line and fast_line padded alike), and the
// returned factor U = min(ulp_floor·2^(1 − p), 2^100) of the binade 2^E of |e| − 2r (sinusoidal_screen.cc's
// LowerBinade). With fast_line32, also the float32 pre-test's lines (table_fast_line32), and whether any of
// them passes anything: the drivers hand the kernel none where not (a correctly rounded table's lines, under
// 2^-23, would send every vector through that pre-test first).
struct TableFastBars {
  double ulp = -INFINITY;
  bool line32_passes = false;
};
TableFastBars table_fast_bars(const TableScreenBars& bars, std::span<const double> line, double* fast_line,
                              float* fast_line32 = nullptr);
// The float32 pre-test's line of a pair from its fast_line L: a float32 at most (L − 2^-23 − 2^-124)·(1 −
// 2^-24) (the float32 rounding of e, |e| < 2, and of y − e, and flushed subnormals, taken off; see
// sinusoidal_screen.cc), or -1 where that is below 2^-100 (a NaN line included; where it is positive at all
// it is at least 2^-75): nothing passes under it.
float table_fast_line32(double fast_line);
// How many vectors of pairs (of one row or two) the float32 pre-test passed in this process, counted once a
// kernel call: the tests' evidence that it runs (its outcome is by design the other tests').
std::size_t table_screen_float32_passes() noexcept;

// Out: per row and pair, flags[k] = 1·(sin element loud) + 2·(cos element loud) (0 on entry: the kernel
// writes only the vectors that hold a loud element); the estimates and their ulps
// above the floors (each buffer with room for 2·padded(n)·rows + kLanes values); how many elements were loud.
struct TableScreenResult {
  double* flags;
  double *abs_tail, *ulp_tail;
  std::size_t loud = 0, abs_kept = 0, ulp_kept = 0;
  std::size_t rows = 0;  // the rows the call took: up to TableScreenRow::rows, to the first loud one's step
};

// One row of n pairs at y (the row's first channel): the sines at `channels.a0` and the cosines at
// `channels.b0` on (concatenated), or interleaved from a0 (sin at a0 + 2k, cos at a0 + 2k + 1). The kernel
// reads whole vectors: the caller pads the row's last one.
using TableScreenFn = void (*)(ScreenType type, const void* y, std::size_t n, const ScreenChannels& channels,
                               const TableScreenRow& row, const TableScreenBars& bars,
                               TableScreenResult& result);

struct TableScreenTarget {
  std::string name;
  TableScreenFn run;
};
// Every compiled target with a fused multiply-add that the CPU supports, best first (empty: no screen).
const std::vector<TableScreenTarget>& table_screen_targets();

// What the screened pass tells its caller besides `bands`: each row before its elements (progress); every
// element measured exactly (a row the screen cannot take, or a loud element of a screened one), after `bands`
// took it; and per row, the caller's own line per pair j (its tally: an element with an error at most
// line[j] at an angle of at least phi_lo[j] changes nothing of it), written into `line` (+inf: no reader);
// `omegas` and `max_position` are the table's, for the reader's budgets. `sole`: the caller's promise that
// `bands` holds no element but this pass's, before or after it (check's own Measurement): a band's 99th
// percentile is then the k-th largest of its values, k at most this pass's count in it over 100 plus 2, and
// the screen keeps in the tails only what can still be among them (the driver's TailFloor).
struct TableSinks {
  std::function<void(std::size_t row)> row;
  Sink exact;
  std::function<void(std::span<const ref::dd::DD> omegas, std::int64_t max_position,
                     std::span<const double> phi_lo, double* line)>
      line;
  bool sole = false;
  // Rows passes (measure_sinusoidal_rows_screened): the block whose exact elements or line come next, told
  // before them. A grid's blocks have their own ω and pair count: a caller's tally keeps its lower bounds
  // per block (one tally per block, merged after).
  std::function<void(std::size_t block)> block;
  // An element of the pass measured exactly ahead of it (presume()'s largest estimate of a band's sample,
  // PresumeTuning::presume_largest): a caller whose line reads a largest (the check's tally: each contract's
  // worst ratio) may take it now, so that the elements under it are quiet from the first row on. It comes
  // through `exact` again in its turn only where it is loud then (bars already past it leave it quiet), and
  // not in a pass run again: a caller that counts records must not count seeds.
  Sink seed;
};

// measure_sinusoidal into `bands` as one pass: y read in place in its type, most elements proved quiet by the
// screen, the others measured exactly; everything but the percentiles is measure_sinusoidal's (in its order).
// false, with nothing measured, where it does not apply: a float64 budget, y neither in place in the budget's
// type nor doubles, sampled rows or pairs, no vector target, or the switch below off.
bool measure_sinusoidal_screened(const SinusoidalParams& params, std::span<const std::int64_t> positions,
                                 Values y, const Budget& budget, Measurement& bands, const TableSinks& sinks,
                                 const Sample& sample = {});

// The percentiles' sample of a table's rows in blocks of about 4096 elements
// (Measurement::sample_percentiles; a power of two, 32 rows of 128, 4 of 1024, one row of 4096 and more). A
// kernel call takes consecutive rows all in the sample or all outside it (their floors differ), so the longer
// the blocks, the longer the calls: on a 131072 x 128 table, blocks of 32 rows measured 4-5% faster than
// blocks of 8. As long in elements whatever the row, a band that samples (2^21 elements,
// Measurement::kSampledFrom) holds at least 512 blocks (kSampledBlocksFrom) at every row length that is a
// power of two up to 4096 (longer rows are blocks of one: a band of fewer than 512 keeps every row's
// estimates): in rows, a fixed block of 32 would leave an 8192 x 1024 table's band 1000-8191 (7.4 M
// elements, 225 blocks) unsampled, every row kept.
inline constexpr std::size_t kTableSampleElements = 4096;
std::size_t table_sample_block(std::size_t dim);

// Below this many elements the exact path is quicker than the rows' pass's setup (per block its budgets' and
// the tally's lower bounds, the double tier's pieces: about 0.2 ms for a 256-channel timestep, which the
// exact path measures in 0.1 ms).
inline constexpr std::size_t kRowsScreenedFrom = 2048;

// measure_sinusoidal_rows (sinusoidal_rows.h) into `bands` as one pass, with measure_sinusoidal_screened's
// contract: every form of SinusoidalRows (real positions, a scale, the switches, an odd dim's pad channel,
// zero rows, a grid's blocks each at its own axis). Per (row, block) e is the double tier's at scale·t where
// that product is exact and an integer below 2^32 times a power of two (a float32 timestep or coordinate),
// else the fast path's double-double's high part; each block's e held per distinct position where they fit
// (a grid's coordinates). The percentiles' radius: 2^-48·(1 + 2^-16) + |φ|·(2^-88 + 2^-96)·(1 + 2^-16) over
// the rows up to the next bounds (measure_sinusoidal_rows_screened.cc). Zero rows, pad channels, loud
// elements and rows beyond the promise or without room are measured exactly; everything but the
// percentiles is measure_sinusoidal_rows_exact's, in its order. The own floors of TableSinks::sole, no
// presumed ones. false, with nothing measured, where it does not apply: fewer than `from` elements, a
// float64 budget, y neither in place in the budget's type nor doubles, a flipped interleaved block, no
// vector target, or the switch below off.
bool measure_sinusoidal_rows_screened(const SinusoidalRows& rows, Values y, const Budget& budget,
                                      Measurement& bands, const TableSinks& sinks,
                                      std::size_t from = kRowsScreenedFrom);
// The type the screens read y in (in place, with a budget of a narrower type than double), if any.
std::optional<ScreenType> table_screen_type_of(const Values& y, DType out);

// Process-wide (tests compare the two paths and the targets): false makes measure_sinusoidal_screened
// decline; `target` indexes table_screen_targets() (0, the best, by default). On by default.
void set_sinusoidal_screen(bool on, std::size_t target = 0);
bool sinusoidal_screen_enabled();
std::size_t sinusoidal_screen_target();

// The table's presumed floors (presume_tuning.h), from 2^20 elements on, from a sample of up to 128 of each
// band's rows, evenly spaced, every element of them. The tails then keep a little over 1% of the estimates
// from the first row on, where the floors that rise with what came before keep far more early in each band
// and compact. A pass run again hands no record twice to `exact` (a seed, TableSinks::seed, is not one).
void tune_sinusoidal_screen(const PresumeTuning& t) noexcept;
const PresumeTuning& sinusoidal_screen_tuning() noexcept;
// How many passes ran again, process-wide, because a presumed floor did not hold (tests, benchmarks).
std::size_t sinusoidal_screen_reruns() noexcept;

// Per contract of `contracts` and pair j, a lower bound of the element's budget plus `extra` at every |φ| in
// [phi, max_position·|ω_j|]: (b0 + b1·phi)·(1 − 2^-39), or 0 where the budget is not affine and increasing
// (exhaustive::budget_chord). The budget is table_element_budget's at `real_scale` (Budget::real_scale: 0 for
// the unscaled integer table), so that a scaled or real table's line is as high as its budgets allow.
class TableBudgetBounds {
 public:
  TableBudgetBounds(std::span<const Contract* const> contracts, std::span<const ref::dd::DD> omegas,
                    std::int64_t max_position, DType out, double extra, double real_scale = 0);
  std::size_t contracts() const noexcept { return b0_.size(); }
  // Contract m's lower bound at pair j for angles of at least phi.
  double lower(std::size_t m, std::size_t j, double phi) const {
    return (b0_[m][j] + b1_[m][j] * phi) * (1 - 0x1p-39);
  }

 private:
  std::vector<std::vector<double>> b0_, b1_;
};

}  // namespace pe::harness

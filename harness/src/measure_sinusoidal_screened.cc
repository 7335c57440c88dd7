// check's one pass over a sinusoidal table (sinusoidal_screen.h): per row, the double tier's sin and cos of
// every pair (exhaustive::double_tier_row) or the kernel's rotation of the last row's; each pair's line from
// the budget's lower bound over the row's angles, the band's bars and the caller's tally, less its radius
// (formed when those change, not per row); the screen in the data's own type, rows batched per room in the
// tails, consecutive rows of a batch in one kernel call; the loud elements alone through the exact path
// (measure_sinusoidal's element, below), in the row's channel order. A large table's tails presume their
// floors from a sample (presume()), and the pass runs again without where one did not hold.
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <stdexcept>
#include <utility>

#include "pe/harness/exhaustive_screen.h"
#include "pe/harness/sinusoidal_screen.h"
#include "pe/ref/fast_trig.h"
#include "pe/ref/reference.h"
#include "table_tail_floor.h"

namespace pe::harness {
namespace {

std::atomic<bool> table_screen_on{true};
std::atomic<std::size_t> table_screen_target{0};
PresumeTuning tuning{.presume_from = std::size_t{1} << 20};
std::atomic<std::size_t> reruns{0};

class TableScreened {
 public:
  // `plan` is params' (the caller's: building one here, its ω's powl took 0.3% of the benchmark's samples).
  TableScreened(const SinusoidalParams& params, const SinusoidalPlan& plan,
                std::span<const std::int64_t> positions, Values y, const Budget& budget, Measurement& bands,
                const TableSinks& sinks, TableScreenFn kernel, ScreenType type)
      : params_(params),
        plan_(plan),
        max_position_(*std::max_element(positions.begin(), positions.end())),
        reference_(params, max_position_),
        positions_(positions),
        y_(y),
        budget_(budget),
        bands_(bands),
        sinks_(sinks),
        run_(kernel),
        type_(type),
        n_(plan_.n_pairs()),
        // The kernel reads a pair's sin at a0, its cos at b0: flipped concatenated tables hold cos first.
        channels_{plan_.layout() == Layout::Interleaved || !params.flip_sin_to_cos ? 0 : n_,
                  plan_.layout() == Layout::Interleaved ? 1
                  : params.flip_sin_to_cos              ? 0
                                                        : n_,
                  plan_.layout() == Layout::Interleaved} {
    for (std::size_t j = 0; j < n_; ++j) {
      omegas_.push_back(reference_.omega(j));
      const double w = omegas_.back().hi;
      omega_lo_.push_back(w * (1 - 0x1p-45));
      omega_hi_.push_back(w * (1 + 0x1p-45));
      omega_in_range_.push_back(w <= 1 ? 1 : 0);  // the vector tier's pieces are exact up to 1
    }
    tier_.emplace(
        omegas_, [](double, std::size_t) { return 0.0; }, 1.0, budget.dtype);
    bounds_.emplace(budget.members(), omegas_, max_position_, budget.dtype, budget.extra);
    const std::size_t padded = ScreenToken::padded(n_);
    for (auto* v : {&sin_, &cos_, &line_}) v->assign(padded, 0.0);
    flags_.assign(kBatch * padded, 0.0);
    phi_lo_.resize(n_);
    fast_line_.assign(padded, -1.0);
    fast_line32_.assign(padded, -1.0f);
    tally_.assign(padded, INFINITY);
    budget_lo_.assign(padded, 0.0);
    step_sin_.assign(padded, 0.0);
    step_cos_.assign(padded, 0.0);
    exhaustive::double_tier_row(*tier_, 1, step_sin_.data(), step_cos_.data());
    radius_floor_.assign(padded, 0.0);
    radius_slope_.assign(padded, 0.0);
    for (std::size_t j = 0; j < n_; ++j) {
      const bool in_range = omega_in_range_[j] != 0;
      radius_floor_[j] = in_range ? 0x1.0001p-48 : INFINITY;
      radius_slope_[j] = in_range ? omega_hi_[j] * (0x1.0001p-88 + 0x1.0001p-96) : 0.0;
    }
    const ref::FormatBits f = ref::format_bits(budget.dtype);
    bars_.precision = f.precision;
    bars_.least_binade = std::ldexp(1.0, f.emin), bars_.ulp_scale = std::ldexp(1.0, 1 - f.precision);
    emin_ = f.emin;
    size_ = screen_size(type_);
    // The last vector of a row reads up to its padding: a row short of it is read from a padded copy.
    const std::size_t extent = channels_.interleaved ? 2 * padded : n_ + padded;
    copy_ = extent > plan_.dim();
    if (sinks_.sole) count_bands();
    if (copy_) copy_row_.assign(extent * size_, 0);
  }

  void run(std::size_t rows) {
    for (std::size_t r = 0; r < rows;) r += batch(r, std::min(kBatch, rows - r));
  }
  void presume(double share);

 private:
  // measure_sinusoidal's element (measure.cc's measure_table without a fused add), bit for bit.
  ElementRecord element(std::size_t r, std::size_t ch) const {
    const std::size_t i = r * plan_.dim() + ch;
    ElementRecord e{.row = static_cast<std::int64_t>(r),
                    .position = positions_[r],
                    .channel = static_cast<std::int64_t>(ch),
                    .dim = params_.dim,
                    .base = params_.base,
                    .y = y_[i]};
    if (const auto fast = reference_.fast_exact(positions_[r], ch)) {
      e.exact = fast->value.hi;
      e.abs_error = ref::abs_error(e.y, fast->value);
      e.ulp = e.abs_error / ref::ulp_of(fast->value, budget_.dtype);
    } else {
      const ref::Real exact = reference_.exact(positions_[r], ch).value;
      e.exact = exact.convert_to<double>();
      e.abs_error = ref::abs_error(e.y, exact);
      e.ulp = e.abs_error / ref::ulp_of(exact, budget_.dtype);
    }
    e.abs_phi = std::fabs(reference_.angle(positions_[r], ch));
    e.pair = reference_.pair_of(ch);
    e.scale = 1.0;
    e.budget = budget_(nullptr, e.abs_phi, e.pair, 1.0);
    e.reach = 1 + std::fabs(e.exact);
    return e;
  }

  void exact_row(std::size_t r) {
    for (std::size_t ch = 0; ch < plan_.dim(); ++ch) {
      const ElementRecord e = element(r, ch);
      bands_.add(e);
      if (sinks_.exact) sinks_.exact(e);
    }
    fed_ = true;
  }

  void loud(std::size_t r, std::size_t o, std::size_t j) {
    const ElementRecord e = element(r, o == 0 ? plan_.sin_index(j) : plan_.cos_index(j));
    bands_.add_screened(e, false);
    if (sinks_.exact) sinks_.exact(e);
    fed_ = true;
  }

  const void* row_data(std::size_t r) {
    const void* data = type_ == ScreenType::F64 ? static_cast<const void*>(y_.doubles()) : y_.typed_data();
    const auto* p = static_cast<const std::uint8_t*>(data) + r * plan_.dim() * size_;
    if (!copy_) return p;
    std::memcpy(copy_row_.data(), p, plan_.dim() * size_);
    return copy_row_.data();
  }

  static constexpr std::size_t kBatch = 64;  // rows a batch shares its room in the tails among
  void sample_row(std::size_t r, std::vector<double>& abs, std::vector<double>& ulp);
  void presume_largest(std::size_t r);
  bool screenable(std::int64_t p) const;
  std::size_t batch(std::size_t r, std::size_t most);
  std::pair<std::size_t, std::size_t> rows(std::size_t r, std::size_t most,
                                           const Measurement::ScreenRoom& room, TableScreenResult& tails);
  void loud_row(std::size_t r, const double* flags);

  // The band of a position (band_edges: [edge k, edge k + 1), the last edge's band open above, a negative
  // position in the first), as the index k and the range [lo, hi) of positions it holds.
  struct Band {
    std::size_t k = SIZE_MAX;
    std::int64_t lo = 0, hi = 0;
    bool holds(std::int64_t p) const { return k != SIZE_MAX && p >= lo && p < hi; }
  };
  static Band band_of(std::int64_t p) {
    const auto edges = band_edges();
    const auto above = std::upper_bound(edges.begin(), edges.end() - 1, p);
    return {static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, above - edges.begin() - 1)),
            above == edges.begin() ? INT64_MIN : above[-1], above == edges.end() - 1 ? INT64_MAX : *above};
  }
  // Rows [from, to) that a batch from any of them may take (run_from()), the band and sample they lie in.
  struct Run {
    std::size_t from = 0, to = 0;
    Band band;
    bool sampled = true;
    std::int64_t lo = 0, hi = 0;  // its least and largest positions
  };
  const Run& run_from(std::size_t r);
  std::size_t consecutive_from(std::size_t r);
  // How many of this pass's elements each band holds, and the runs of rows in one band and alike in
  // screenable() (row_runs_): a band search per run, the rows counted per run (a count stored per row waited
  // on the last row's store).
  void count_bands() {
    band_count_.assign(band_edges().size(), 0);
    row_runs_.clear();
    // The run goes on while p lies in [lo, hi): its band's part where screenable() is alike (screenable
    // positions are one range, [0, min(2^32, promised + 1))).
    const std::int64_t limit =
        bands_.promised() < (std::int64_t{1} << 32) ? bands_.promised() + 1 : std::int64_t{1} << 32;
    std::int64_t lo = 0, hi = 0;
    for (std::size_t r = 0; r < positions_.size(); ++r) {
      const std::int64_t p = positions_[r];
      if (p >= lo && p < hi) continue;
      const Band b = band_of(p);
      const bool take = screenable(p);
      lo = take ? std::max<std::int64_t>(b.lo, 0) : p < 0 ? b.lo : std::max(b.lo, limit);
      hi = take ? std::min(b.hi, limit) : p < 0 ? std::min<std::int64_t>(b.hi, 0) : b.hi;
      row_runs_.push_back({r, r, b.k, take});
    }
    for (std::size_t i = 0; i < row_runs_.size(); ++i) {
      RowRun& run = row_runs_[i];
      run.to = i + 1 < row_runs_.size() ? row_runs_[i + 1].from : positions_.size();
      band_count_[run.band] += (run.to - run.from) * plan_.dim();
    }
  }
  // The own floors of the band of p (TableSinks::sole), taken afresh where p's band is not the last one's;
  // none where the band's floors are presumed (presume(): those lie about as high from the first row on).
  void own_floors(std::int64_t p) {
    if (band_.holds(p)) return;
    band_ = band_of(p);
    // At least rank_from_top(n) = n − ⌈0.99·n⌉ + 1 <= n/100 + 1 (measure.cc's nearest rank).
    const std::size_t need = presumed_[band_.k] != 0 ? 0 : band_count_[band_.k] / 100 + 2;
    abs_own_.reset(need), ulp_own_.reset(need);
  }

  // sin_ and cos_ at position p, the first of `rows` consecutive rows: the double tier's
  // (exhaustive::double_tier_row), or at the row after the last one's, that one's rotated by ω_j, where all
  // `rows` of them stay within kTableMaxRotations rotations in a row (a table's rows are usually consecutive
  // positions, and the rotation costs a few operations a pair where the tier costs a polynomial). The tier's
  // row is taken at the start of a call, not where the rotations run out: a kernel call takes a whole batch
  // (kBatch rows), not two calls split there.
  // Returns whether to rotate: the kernel does, in the same pass as the row's elements (TableScreenRow).
  //
  // The rotation's error: exhaustive::rotation_radius (exhaustive_screen.h), at most kTableRotationRadius
  // after kTableMaxRotations steps (a static_assert there). The row's radius adds it to its floor, which
  // holds e0 (the tier's radius grows with p). Tested: SinusoidalScreen.RotatedRowsStayWithinTheirRadius.
  bool sincos(std::int64_t p, std::size_t rows) {
    const bool rotate = tier_run_.advance(p, rows, kTableMaxRotations);
    if (!rotate) exhaustive::double_tier_row(*tier_, p, sin_.data(), cos_.data());
    return rotate;
  }
  static_assert(kBatch <= kTableMaxRotations + 1, "a batch's rows fit one call after the tier's row");

  // Whether the lower bounds taken at position bounds_at_ must be taken again for position p: they hold for
  // every p >= bounds_at_ (budgets grow with the angle; the tally's worsts only rise), and are taken again
  // once p is far enough on (tighter) or after an element went to the tally (its worsts may have risen).
  bool stale(std::int64_t p) const {
    return fed_ || p < bounds_at_ || p - bounds_at_ > std::max<std::int64_t>(bounds_at_ >> 4, 64);
  }
  // Per pair, the budget's lower bound and the tally's line at angles of at least p·ω_j.
  void lower_bounds(std::int64_t p) {
    bounds_at_ = p;
    fed_ = false;
    lines_stale_ = true;
    const auto abs_p = static_cast<double>(p);
    for (std::size_t j = 0; j < n_; ++j) phi_lo_[j] = abs_p * omega_lo_[j];
    const std::size_t members = bounds_->contracts();
    std::fill_n(budget_lo_.begin(), n_, members == 0 ? budget_.max_abs * (1 - 0x1p-39) : 0.0);
    for (std::size_t m = 0; m < members; ++m)
      for (std::size_t j = 0; j < n_; ++j)
        budget_lo_[j] = std::max(budget_lo_[j], bounds_->lower(m, j, phi_lo_[j]));
    if (sinks_.line) sinks_.line(omegas_, max_position_, phi_lo_, tally_.data());
    for (std::size_t j = 0; j < n_; ++j) tally_[j] *= 1 - 0x1p-44;
  }

  // Per pair, the line |y − e| must stay under, min(ratio_bar·budget_lo, max_abs, tally) less the pair's
  // radius, and the largest finite radius: for every position up to the last that stale() lets through
  // without new lower bounds (the radius grows with p), and for a row rotated from the tier's
  // (kTableRotationRadius). Taken again with the bounds or the band's bars; a row only reads them. A NaN
  // product makes the line NaN and the element loud; a NaN tally is no line (std::min).
  void lines(double ratio_bar, double max_abs) {
    lines_stale_ = false, lines_ratio_bar_ = ratio_bar, lines_max_abs_ = max_abs;
    fast_stale_ = true;
    const auto top = static_cast<double>(bounds_at_ + std::max<std::int64_t>(bounds_at_ >> 4, 64));
    double largest = 0;  // a local: the member's stores would chain the loop's iterations
    for (std::size_t j = 0; j < n_; ++j) {
      const double radius = radius_floor_[j] + top * radius_slope_[j] + kTableRotationRadius;
      line_[j] = std::min(std::min(ratio_bar * budget_lo_[j], max_abs), tally_[j]) - radius;
      if (radius < INFINITY) largest = std::max(largest, radius);
    }
    radius_ = largest;
  }

  SinusoidalParams params_;
  SinusoidalPlan plan_;
  std::int64_t max_position_;
  ref::Sinusoidal reference_;
  std::span<const std::int64_t> positions_;
  Values y_;
  const Budget& budget_;
  Measurement& bands_;
  const TableSinks& sinks_;
  TableScreenFn run_;
  ScreenType type_;
  std::size_t n_;
  ScreenChannels channels_;
  std::vector<ref::dd::DD> omegas_;
  std::vector<double> omega_lo_, omega_hi_;
  std::vector<std::uint8_t> omega_in_range_;
  std::optional<exhaustive::ScreenPlan> tier_;  // its sincos: the double tier in vectors
  std::optional<TableBudgetBounds> bounds_;
  std::vector<double> sin_, cos_, flags_, phi_lo_, tally_, budget_lo_, line_;
  double radius_ = 0;  // lines(): the largest finite radius
  bool lines_stale_ = true;
  double lines_ratio_bar_ = 0, lines_max_abs_ = 0;  // lines()' bars
  // The kernel's pre-test bars (table_fast_bars), for line_ and the bars they were taken at.
  std::vector<double> fast_line_;
  std::vector<float> fast_line32_;
  bool fast32_ = false;  // whether a float32 line passes anything (TableFastBars)
  double fast_ulp_ = -INFINITY;
  bool fast_stale_ = true;
  std::array<std::uint64_t, 3> fast_at_{};  // max_ulp, abs_floor and ulp_floor's bits
  // Per pair, the radius of |e − exact| at position p: radius_floor_ + p·radius_slope_ (the double tier's
  // 2^-48 + |φ|·2^-88 and the exact path's double-double's 2^-96·|φ|, at ω·(1 + 2^-45), rounded up).
  std::vector<double> radius_floor_, radius_slope_;
  std::int64_t bounds_at_ = -1;              // lower_bounds()'s position (-1: none yet)
  std::vector<double> step_sin_, step_cos_;  // the tier's sin ω_j and cos ω_j (sincos())
  exhaustive::TierRun tier_run_;             // what sin_ and cos_ hold (sincos())
  bool fed_ = false;                         // an element went to the caller since

  TableScreenBars bars_;
  std::vector<std::size_t> band_count_;  // sole or presume(): this pass's elements per band
  struct RowRun {
    std::size_t from = 0, to = 0, band = 0;
    bool screenable = false;
  };
  std::vector<RowRun> row_runs_;  // count_bands(): the rows [from, to) in one band, alike in screenable()
  // presume(): per band, whether its floors are presumed, and whether its tails were given their room
  // (kReserve of its elements at once instead of doubling up to it: one buffer, nothing copied).
  std::vector<std::uint8_t> presumed_ = std::vector<std::uint8_t>(band_edges().size(), 0), reserved_;
  static constexpr double kReserve = 0.02;
  Band band_;                            // the band abs_own_ and ulp_own_ hold
  detail::TailFloor abs_own_, ulp_own_;  // sole: the tails' own floors in it
  int emin_ = -126;                      // the budget type's least normal binade
  std::vector<double> open_line_;        // sample_row(): +∞ per pair
  std::size_t size_ = 4;
  bool copy_ = false;
  bool sampled_ = true;  // the batch's rows feed the percentiles (Measurement::in_sample)
  Run batch_run_;
  std::pair<std::size_t, std::size_t> consecutive_{0, 0};  // rows whose positions run on by one
  std::vector<std::uint8_t> copy_row_;
};

// Beyond the contracts' promise an element may be undecidable (budget >= reach), which the screen does not
// bound: those rows, and positions outside the double tier's range, go element by element.
bool TableScreened::screenable(std::int64_t p) const {
  return p >= 0 && p < (std::int64_t{1} << 32) && p <= bands_.promised();
}

// Per band, a guess of the level `share` of its estimates exceed (presumed_level), from up to kRows of its
// screenable rows evenly spaced, every element of them: e the double tier's at the row's position (within
// the rows' radius of the kernel's e, rotated or not), the estimates the kernel's (sample_row). Only a
// guess: presumptions_held() confirms it. With PresumeTuning::presume_largest, each band's largest error too,
// from the sample's largest estimate (presume_largest()): a bound, not a guess.
void TableScreened::presume(double share) {
  constexpr std::size_t kRows = 128;
  const auto edges = band_edges();
  // The rows whose estimates the percentiles take (Measurement::in_sample): the population the floors' proof
  // counts, so the guess is drawn from them alone. As ranges of rows in one band: the runs of count_bands(),
  // whole where their band takes every row, else their blocks in the sample (the hash asked once a block;
  // asked row by row, these loops cost a 131072-row table's check 6%).
  if (band_count_.empty()) count_bands();
  const std::size_t block = bands_.sample_block();
  std::vector<RowRun> taken;
  const auto take = [&](std::size_t from, std::size_t to, std::size_t k) {
    if (!taken.empty() && taken.back().to == from && taken.back().band == k) {
      taken.back().to = to;
    } else {
      taken.push_back({from, to, k, true});
    }
  };
  std::vector<std::size_t> rows_in(edges.size(), 0), next(edges.size(), 0);
  for (const RowRun& run : row_runs_) {
    if (!run.screenable) continue;
    if (!bands_.samples_band(positions_[run.from])) {
      take(run.from, run.to, run.band);
      continue;
    }
    for (std::size_t b = run.from & ~(block - 1); b < run.to; b += block)
      if (bands_.sampled_row(static_cast<std::int64_t>(b)))
        take(std::max(b, run.from), std::min(b + block, run.to), run.band);
  }
  for (const RowRun& t : taken) rows_in[t.band] += t.to - t.from;
  // Every ⌈rows_in/kRows⌉-th of a band's rows, its first the first; read in turn, each while the next
  // streams in (they lie far apart: each a miss in every cache; eight ahead measured the same).
  std::vector<std::pair<std::size_t, std::size_t>> sampled;
  for (const RowRun& t : taken) {
    const std::size_t every = (rows_in[t.band] + kRows - 1) / kRows;
    std::size_t r = t.from + next[t.band];
    for (; r < t.to; r += every) sampled.emplace_back(r, t.band);
    next[t.band] = r - t.to;
  }
  // Each band's room for its rows' estimates at once (grown row by row, the copies and zeroing cost a
  // sampled row half as much as the kernel's pass over it).
  std::vector<std::size_t> sampled_in(edges.size(), 0);
  for (const auto& [r, k] : sampled) ++sampled_in[k];
  std::vector<std::vector<double>> abs(edges.size()), ulp(edges.size());
  const std::size_t per_row = 2 * ScreenToken::padded(n_) + ScreenToken::kLanes;
  for (std::size_t k = 0; k < edges.size(); ++k)
    abs[k].reserve(sampled_in[k] * per_row), ulp[k].reserve(sampled_in[k] * per_row);
  std::vector<std::pair<double, std::size_t>> largest(edges.size(), {-1.0, 0});  // per band: estimate, row
  for (std::size_t i = 0; i < sampled.size(); ++i) {
    if (i + 1 < sampled.size()) y_.prefetch(sampled[i + 1].first * plan_.dim(), plan_.dim());
    const auto [r, k] = sampled[i];
    const std::size_t at = abs[k].size();
    sample_row(r, abs[k], ulp[k]);
    for (std::size_t q = at; q < abs[k].size(); ++q)
      if (abs[k][q] < INFINITY && abs[k][q] > largest[k].first) largest[k] = {abs[k][q], r};
  }
  if (tuning.presume_largest)
    for (std::size_t k = 0; k < largest.size(); ++k)
      if (largest[k].first >= 0) presume_largest(largest[k].second);
  reserved_.assign(presumed_.size(), 1);
  for (std::size_t k = 0; k < abs.size(); ++k) {
    const auto f = presumed_floors_of(edges[k], abs[k], ulp[k], share);
    if (!f) continue;
    presumed_[k] = 1, reserved_[k] = 0;
    bands_.presume_floors(f->position, f->abs, f->ulp);  // its room its own (reserved_)
  }
}

// The band of row r presumes its largest error, ulp error and ratio (Measurement::presume_largest) from the
// row's largest estimate's element, measured exactly, and the caller takes that element ahead
// (TableSinks::seed). As a float32 angle's error grows with the position, a band's largest error rose every
// few hundred rows, each rise a loud element that ended its batch and raised the bars again (about 400 of a
// 131072 x 128 table's 700); from the sample's largest on (the sample spans the band), few are left.
void TableScreened::presume_largest(std::size_t r) {
  exhaustive::double_tier_row(*tier_, positions_[r], sin_.data(), cos_.data());
  double top = -1;
  std::size_t channel = 0;
  for (std::size_t j = 0; j < n_; ++j) {
    const PairChannels pair = table_pair_channels(params_, j);
    for (const auto& [ch, e] : {std::pair{pair.sin, sin_[j]}, std::pair{pair.cos, cos_[j]}}) {
      const double err = std::fabs(y_[r * plan_.dim() + ch] - e);
      if (err < INFINITY && err > top) top = err, channel = ch;
    }
  }
  const ElementRecord e = element(r, channel);
  bands_.presume_largest(e);
  if (sinks_.seed) sinks_.seed(e);
}

// Row r's estimates, appended: the kernel's over the row alone with nothing left out (no floors: every
// estimate kept; lines +∞ and the band's largest ulp +∞: none loud but a NaN), e the double tier's (sin_ and
// cos_ as scratch: run() starts from the tier, tier_run_ empty). The estimates are those the screened pass
// keeps: |y − e| (NaN as +∞) and that over e's ulp in the budget's type (sinusoidal_screen.cc's TableJudge).
void TableScreened::sample_row(std::size_t r, std::vector<double>& abs, std::vector<double>& ulp) {
  exhaustive::double_tier_row(*tier_, positions_[r], sin_.data(), cos_.data());
  const std::size_t padded = ScreenToken::padded(n_), at = abs.size();
  if (open_line_.empty()) open_line_.assign(padded, INFINITY);
  abs.resize(at + 2 * padded + ScreenToken::kLanes), ulp.resize(at + 2 * padded + ScreenToken::kLanes);
  TableScreenBars bars = bars_;
  bars.max_ulp = INFINITY, bars.abs_floor = -INFINITY, bars.ulp_floor = -INFINITY;
  // The radius the tier's values lie within (no line to take it off: it moves only the ulp bar's binade).
  const TableScreenRow row{sin_.data(),
                           cos_.data(),
                           step_sin_.data(),
                           step_cos_.data(),
                           open_line_.data(),
                           0x1.0001p-48,
                           false,
                           nullptr,
                           -INFINITY,
                           1,
                           plan_.dim() * size_,
                           0};
  TableScreenResult res{flags_.data(), abs.data() + at, ulp.data() + at};
  run_(type_, row_data(r), n_, channels_, row, bars, res);
  abs.resize(at + res.abs_kept), ulp.resize(at + res.ulp_kept);
  if (res.loud != 0) std::fill_n(flags_.begin(), padded, 0.0);
}

// Rows [r, r + count) through the screen with one room in the band's tails (one screen_room and one
// screen_quiet instead of one a row): up to `most` screenable rows whose positions lie in one band, else the
// first alone, else element by element; the batch ends early after its first loud element (rows()). The bars
// are the batch's first row's: they only rise as loud elements come (the band's largest error, ulp and
// ratio, the worst list's last), so later rows' elements quiet under them would be quiet under their own;
// until one comes, they are every row's own (and that of the row after it in the kernel's step of two). The
// quiet elements are counted after the batch's loud ones: add_one reads of the band's count only whether an
// element is its first, and the room was given to a band with one already. Returns how many rows it took.
std::size_t TableScreened::batch(std::size_t r, std::size_t most) {
  const std::size_t room_per_row = 2 * ScreenToken::padded(n_);
  const Run& run = run_from(r);
  const Band first = run.band;
  sampled_ = run.sampled;
  std::size_t count = std::min(most, run.to - r);
  // The run's least and largest positions (in one band, as the batch's are: screen_room asks both).
  const std::int64_t lo = run.lo, hi = run.hi;
  Measurement::ScreenRoom room;
  const std::size_t want = count * room_per_row + ScreenToken::kLanes;
  // A presumed band's whole room at its first usable batch (else as usual).
  if (count > 0 && !reserved_.empty() && reserved_[first.k] == 0) {
    const auto reserve = static_cast<std::size_t>(kReserve * static_cast<double>(band_count_[first.k]));
    room = bands_.screen_room(lo, hi, std::max(want, reserve));
    reserved_[first.k] = room.usable ? 1 : 0;
  }
  if (count > 0 && !room.usable) room = bands_.screen_room(lo, hi, want);
  if (count > 1 && !room.usable)
    count = 1, room = bands_.screen_room(positions_[r], positions_[r], room_per_row + ScreenToken::kLanes);
  if (count == 0 || !room.usable) {
    if (sinks_.row) sinks_.row(r);
    exact_row(r);
    return 1;
  }
  if (sinks_.sole) own_floors(positions_[r]);
  TableScreenResult tails{flags_.data(), room.abs_tail, room.ulp_tail};
  std::size_t quiet = 0;
  // The batch ends after a call that met a loud element: its exact measure may have raised the band's bars
  // (its largest error, ulp and ratio), which the next batch takes.
  std::size_t taken = 0;
  for (bool loud = false; taken < count && !loud;) {
    const auto [rows_in, quiet_in] = rows(r + taken, count - taken, room, tails);
    loud = quiet_in < 2 * n_ * rows_in;
    taken += rows_in, quiet += quiet_in;
  }
  const auto abs_kept = static_cast<std::size_t>(tails.abs_tail - room.abs_tail);
  const auto ulp_kept = static_cast<std::size_t>(tails.ulp_tail - room.ulp_tail);
  // Counted once a batch, when most of its values' stores are done (reading each right after the kernel
  // stored it waits on the store).
  if (sinks_.sole) abs_own_.add(room.abs_tail, abs_kept), ulp_own_.add(room.ulp_tail, ulp_kept);
  bands_.screen_quiet(positions_[r], quiet, quiet, sampled_ ? quiet : 0, abs_kept, ulp_kept);
  return taken;
}

// The run of rows from r that a batch may take: one band (screen_room takes no other: a batch across an edge
// would go a row at a time up to it), screenable, and all in the percentiles' sample or all outside it (a
// kernel call's floors are one; rows of one block are alike: asked once a block). Found once and kept while
// the batches walk through it (a batch ends early at a loud element: each one scanned its 64 rows again).
const TableScreened::Run& TableScreened::run_from(std::size_t r) {
  if (r >= batch_run_.from && r < batch_run_.to) return batch_run_;
  batch_run_ = {r, r, band_of(positions_[r]), bands_.in_sample(positions_[r], static_cast<std::int64_t>(r)),
                0, 0};
  const std::size_t block = bands_.sample_block();
  const auto alike = [&](std::size_t i) {
    return (i & (block - 1)) != 0 ||
           bands_.in_sample(positions_[i], static_cast<std::int64_t>(i)) == batch_run_.sampled;
  };
  Run& run = batch_run_;
  run.lo = run.hi = positions_[r];
  for (; run.to < positions_.size(); ++run.to) {
    const std::int64_t p = positions_[run.to];
    if (!run.band.holds(p) || !screenable(p) || !alike(run.to)) break;
    run.lo = std::min(run.lo, p), run.hi = std::max(run.hi, p);
  }
  return run;
}

// The end of the run of rows from r whose positions run on by one, found once for the calls that walk it.
std::size_t TableScreened::consecutive_from(std::size_t r) {
  if (r >= consecutive_.first && r < consecutive_.second) return consecutive_.second;
  std::size_t to = r + 1;
  while (to < positions_.size() && positions_[to - 1] < INT64_MAX && positions_[to] == positions_[to - 1] + 1)
    ++to;
  consecutive_ = {r, to};
  return to;
}

// Rows [r, r + m) of a batch, m <= most, in one kernel call: the first row's e the tier's or rotated
// (sincos), each later one's rotated from the one before, while their positions run on by one, the rotations
// stay within kTableMaxRotations, the lower bounds hold (stale) and no row needs its padded copy; the call
// stops after its first step (of two rows) that holds a loud element (TableScreenResult::rows), so m is the
// rows it took. The lines are the first row's for them all: a tally's line only rises as elements come to it,
// and the bars are the batch's already. The kernel's estimates written at `tails`' (moved past them); then
// per row its progress and its loud elements measured exactly in the exact path's order (by channel). Returns
// m and how many elements were quiet.
std::pair<std::size_t, std::size_t> TableScreened::rows(std::size_t r, std::size_t most,
                                                        const Measurement::ScreenRoom& room,
                                                        TableScreenResult& tails) {
  const std::int64_t p = positions_[r];
  if (stale(p)) lower_bounds(p);
  // Rows on while their positions run on by one, up to the last position stale() lets through (fed_ is false
  // here: lower_bounds() just ran, or no element went out since) and the rotations' limit.
  std::size_t m = 1;
  if (!copy_) {
    const auto fresh = static_cast<std::size_t>(bounds_at_ + std::max<std::int64_t>(bounds_at_ >> 4, 64) - p);
    m = std::min({most, fresh + 1, consecutive_from(r) - r});
  }
  const bool rotate = sincos(p, m);
  // The bound (|y − e| + r)·(1 + 2^-50) must stay under the band's bar·budget·(1 − 2^-49) (then the exact
  // path's ratio is not even divided out), under its largest error, and under the tally's line: each
  // shrunk by 2^-44.
  const double ratio_bar = room.ratio_bar * (1 - 0x1p-44), max_abs = room.max_abs * (1 - 0x1p-44);
  if (lines_stale_ || !(ratio_bar == lines_ratio_bar_ && max_abs == lines_max_abs_))
    lines(ratio_bar, max_abs);
  bars_.max_ulp = room.max_ulp;
  // The own floors, where the caller is the bands' sole writer (else -inf).
  bars_.abs_floor = sampled_ ? std::max(room.abs_floor, abs_own_.floor()) : INFINITY;  // outside: none kept
  bars_.ulp_floor = sampled_ ? std::max(room.ulp_floor, ulp_own_.floor()) : INFINITY;
  const std::array<std::uint64_t, 3> at{std::bit_cast<std::uint64_t>(bars_.max_ulp),
                                        std::bit_cast<std::uint64_t>(bars_.abs_floor),
                                        std::bit_cast<std::uint64_t>(bars_.ulp_floor)};
  if (fast_stale_ || at != fast_at_) {
    const TableFastBars f = table_fast_bars(bars_, line_, fast_line_.data(), fast_line32_.data());
    fast_ulp_ = f.ulp, fast32_ = f.line32_passes;
    fast_stale_ = false, fast_at_ = at;
  }
  const TableScreenRow token{sin_.data(),
                             cos_.data(),
                             step_sin_.data(),
                             step_cos_.data(),
                             line_.data(),
                             radius_,
                             rotate,
                             fast_line_.data(),
                             fast_ulp_,
                             m,
                             plan_.dim() * size_,
                             copy_ ? 0 : positions_.size() - r,
                             fast32_ ? fast_line32_.data() : nullptr};
  run_(type_, row_data(r), n_, channels_, token, bars_, tails);
  tails.abs_tail += tails.abs_kept, tails.ulp_tail += tails.ulp_kept;
  m = tails.rows;  // the rows the kernel took, rotated from the first: tier_run_ at their last
  tier_run_.steps += m - 1, tier_run_.at = p + static_cast<std::int64_t>(m) - 1;
  // sincos()'s promise, on which every row's radius rests (kTableRotationRadius): checked, as it costs a
  // compare a call.
  if (tier_run_.steps > kTableMaxRotations)
    throw std::logic_error("table pass: rotations past kTableMaxRotations");
  if (sinks_.row)
    for (std::size_t i = 0; i < m; ++i) sinks_.row(r + i);
  if (tails.loud == 0) return {m, 2 * n_ * m};
  for (std::size_t i = 0; i < m; ++i) {
    double* flags = flags_.data() + i * ScreenToken::padded(n_);
    // A row with no loud element is all zero flags: told by one OR over its bits (it vectorizes), not
    // pair by pair.
    std::uint64_t any = 0;
    for (std::size_t j = 0; j < n_; ++j) any |= std::bit_cast<std::uint64_t>(flags[j]);
    if (any == 0) continue;
    loud_row(r + i, flags);
    std::fill_n(flags, ScreenToken::padded(n_), 0.0);  // the kernel writes a loud element's vector only
  }
  return {m, 2 * n_ * m - tails.loud};
}

void TableScreened::loud_row(std::size_t r, const double* flags) {
  if (channels_.interleaved) {
    for (std::size_t j = 0; j < n_; ++j) {
      const auto flag = static_cast<int>(flags[j]);
      for (std::size_t o = 0; o < 2; ++o)
        if ((flag & (1 << o)) != 0) loud(r, o, j);
    }
    return;
  }
  for (std::size_t o = 0; o < 2; ++o)
    for (std::size_t j = 0; j < n_; ++j)
      if ((static_cast<int>(flags[j]) & (1 << o)) != 0) loud(r, o, j);
}

}  // namespace

void set_sinusoidal_screen(bool on, std::size_t target) {
  table_screen_on = on;
  table_screen_target = target;
}
bool sinusoidal_screen_enabled() { return table_screen_on; }
std::size_t sinusoidal_screen_target() { return table_screen_target; }

std::optional<ScreenType> table_screen_type_of(const Values& y, DType out) {
  if (out == DType::F64) return std::nullopt;
  if (y.doubles() != nullptr) return ScreenType::F64;
  if (y.typed_data() == nullptr || y.typed_type() != out) return std::nullopt;
  return screen_type_of(out);
}
void tune_sinusoidal_screen(const PresumeTuning& t) noexcept { tuning = t; }
const PresumeTuning& sinusoidal_screen_tuning() noexcept { return tuning; }
std::size_t sinusoidal_screen_reruns() noexcept { return reruns.load(std::memory_order_relaxed); }

TableBudgetBounds::TableBudgetBounds(std::span<const Contract* const> contracts,
                                     std::span<const ref::dd::DD> omegas, std::int64_t max_position,
                                     DType out, double extra, double real_scale) {
  // Every pair's chord up to max_position·|ω_j|: a scaled table's ω (above 1 at a scale of 1000, negative at
  // a negative scale) has a budget to bound as any other, though the double tier does not reach it.
  const auto budget = [&](const Contract* c) {
    return [c, out, extra, real_scale](double abs_phi, std::size_t j) {
      return table_element_budget(*c, out, abs_phi, j, real_scale) + extra;
    };
  };
  for (const Contract* c : contracts) {
    std::vector<double> b0(omegas.size()), b1(omegas.size());
    for (std::size_t j = 0; j < omegas.size(); ++j) {
      const double top = std::max(1.0, static_cast<double>(max_position) * std::fabs(omegas[j].hi));
      const exhaustive::BudgetChord chord = exhaustive::budget_chord(budget(c), j, top);
      b0[j] = chord.b0, b1[j] = chord.b1;
    }
    b0_.push_back(std::move(b0));
    b1_.push_back(std::move(b1));
  }
}

bool measure_sinusoidal_screened(const SinusoidalParams& params, std::span<const std::int64_t> positions,
                                 Values y, const Budget& budget, Measurement& bands, const TableSinks& sinks,
                                 const Sample& sample) {
  const auto& targets = table_screen_targets();
  const std::size_t target = table_screen_target;
  const auto type = table_screen_type_of(y, budget.dtype);
  if (!table_screen_on || target >= targets.size() || !type || !sample.rows.empty() ||
      !sample.pairs.empty() || positions.empty())
    return false;
  const SinusoidalPlan plan(params);
  // An interleaved pair's lanes are read (sin, cos): a flipped one is left to the exact path.
  if (plan.n_pairs() == 0 || plan.dim() != 2 * plan.n_pairs() || y.size() != positions.size() * plan.dim() ||
      (params.flip_sin_to_cos && plan.layout() == Layout::Interleaved))
    return false;
  const TableScreenFn kernel = targets[target].run;
  if (y.size() < tuning.presume_from || bands.count() != 0) {
    TableScreened(params, plan, positions, y, budget, bands, sinks, kernel, *type).run(positions.size());
    return true;
  }
  const Measurement before = bands;
  TableScreened pass(params, plan, positions, y, budget, bands, sinks, kernel, *type);
  pass.presume(tuning.presumed_share);
  pass.run(positions.size());
  if (bands.presumptions_held()) return true;
  // The sinks met every record already: again with the tally's line alone (it only rose) and no presumption,
  // from `before`. A screened pass's maxima, worst elements and verdicts are the exact path's whichever
  // elements it finds loud, and its 99th percentiles are within the rows' radius of the exact ones, as every
  // screened pass's are (SinusoidalScreen.PresumedFloorsThatHoldOrFailChangeNothing finds them the same bits
  // as a pass that presumed nothing).
  reruns.fetch_add(1, std::memory_order_relaxed);
  bands = before;
  const TableSinks line_only{nullptr, nullptr, sinks.line, sinks.sole, nullptr, nullptr};
  TableScreened(params, plan, positions, y, budget, bands, line_only, kernel, *type).run(positions.size());
  return true;
}

}  // namespace pe::harness

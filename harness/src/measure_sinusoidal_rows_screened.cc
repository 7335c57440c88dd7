// measure_sinusoidal_rows_screened (sinusoidal_screen.h): the rows' one pass through the table kernel
// (sinusoidal_screen.cc). Per (row, block) the estimate e is the double tier's (exhaustive::double_tier_row,
// below: scale·t as an integer times a power of two) where it applies, else the fast path's double-double's
// high part; a block's e held per distinct position where they fit in memory (a grid's coordinates), else
// computed per row (timesteps). The kernel judges each element against the budget's lower bound, the band's
// bars and the caller's tally at the row's angles; the loud ones, zero rows, pad channels and rows the screen
// cannot take are measured exactly (the records of measure_sinusoidal_rows_exact, in its order).
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "pe/harness/exhaustive_screen.h"
#include "pe/harness/sinusoidal_rows.h"
#include "pe/harness/sinusoidal_screen.h"
#include "pe/ref/fast_trig.h"
#include "pe/ref/reference.h"
#include "table_tail_floor.h"

namespace pe::harness {
namespace {

// The fast path's high part: |e − exact| <= |lo| + its radius <= 2^-53·|e| + 2^-100 (|e| <= 1), within 2^-50
// (a block's radius, from the double tier's, is never below it).
constexpr double kRsRadius = 0x1p-50;
// The held estimates, per block, at most this many doubles (a grid's W + H coordinates fit; a table of
// distinct timesteps is computed row by row).
constexpr std::size_t kRsHeld = std::size_t{1} << 22;

// s = m·2^e with m an integer, 0 <= m < 2^32 and -600 <= e <= 0 (s >= 0 finite), where there is one.
// The double tier (ref::double_tier_sincos, exhaustive::double_tier_row) computes sin and cos of m·ω' within
// double_tier_radius(|φ|) for integers 0 <= m < 2^32 and ω' <= 1 split in 21-bit pieces: its analysis asks
// only that m·w1 and m·w2 are exact (32 + 21 bits) and the reduction's k below 2^32. With ω' = ω·2^e, the
// pieces are ω's times 2^e exactly (a power of two moves no bit; down to 2^-600 a piece below 2^-420 could
// lose bits to the subnormals, at most m·2^-1075 of φ, far below the radius), and m·ω' = s·ω: the tier's
// bound holds for the real position s.
std::optional<std::pair<std::int64_t, int>> rs_integer_times_pow2(double s) {
  if (s == 0) return std::pair<std::int64_t, int>{0, 0};
  if (!(s > 0 && s < 0x1p32)) return std::nullopt;
  int e = 0;
  const double f = std::frexp(s, &e);  // s = f·2^e, f in [0.5, 1)
  auto m = static_cast<std::uint64_t>(std::ldexp(f, 53));
  e -= 53;
  const int tz = std::countr_zero(m);
  m >>= tz, e += tz;
  if (e > 0) m <<= e, e = 0;  // an integer below 2^32 (s < 2^32)
  if (m >= (std::uint64_t{1} << 32) || e < -600) return std::nullopt;
  return std::pair<std::int64_t, int>{static_cast<std::int64_t>(m), e};
}

// The index of a position's band (band_edges: [edge k, edge k + 1), the last open above, a negative position
// in the first).
std::size_t rs_band_index(std::int64_t p) {
  const auto edges = band_edges();
  const auto above = std::upper_bound(edges.begin(), edges.end() - 1, p);
  return static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, above - edges.begin() - 1));
}

// One block's constants and per-row state.
struct RsBlock {
  const SinusoidalBlock* block = nullptr;
  ref::Sinusoidal reference;
  std::size_t n = 0, padded = 0;
  ScreenChannels channels;
  std::size_t extent = 0;  // channels the kernel reads from the block's first
  bool pad = false;
  std::vector<ref::dd::DD> omegas;  // scale·ω_j (the reference's)
  std::vector<double> omega_lo;
  std::int64_t max_t = 1;  // ceil of the largest |t| it reads: every angle <= max_t·ω_j
  std::optional<TableBudgetBounds> bounds;
  std::vector<double> sin, cos, line, fast_line, tally, budget_lo, phi_lo, flags;
  std::vector<float> fast_line32;  // the float32 pre-test's (table_fast_bars)
  bool fast32 = false;             // a float32 line passes anything (TableFastBars)
  double fast_ulp = -INFINITY;
  std::array<std::uint64_t, 3> fast_at{};
  double bounds_at = -1;  // the |t| lower_bounds() took (-1: none)
  bool fed = true, lines_stale = true, fast_stale = true;
  double lines_ratio_bar = 0, lines_max_abs = 0;
  // The double tier's pieces of the unscaled ω (none where one exceeds 1), per exponent e those times 2^e;
  // the block's scale, and ω_j·scale's largest (the tier's radius grows with the angle).
  std::optional<exhaustive::ScreenPlan> tier;
  std::map<int, exhaustive::ScreenPlan> tier_at;
  double scale = 1, omega_max = 0, radius = kRsRadius;
  // Held estimates (sin then cos, padded each) by the position's bits; empty where they would not fit.
  bool hold = false;
  std::unordered_map<std::uint64_t, std::vector<double>> held;

  RsBlock(const SinusoidalRows& rows, const SinusoidalBlock& b, const Budget& budget)
      : block(&b), reference(b.params, ref::RealPosition{axis_reach(rows, b)}), n(reference.n_pairs()) {
    padded = ScreenToken::padded(n);
    const PairChannels c0 = table_pair_channels(b.params, 0);
    channels = {c0.sin, c0.cos, b.params.layout == Layout::Interleaved};
    extent = channels.interleaved ? 2 * padded : std::max(c0.sin, c0.cos) + padded;
    pad = reference.is_pad(static_cast<std::size_t>(b.params.dim) - 1);
    for (std::size_t j = 0; j < n; ++j) {
      omegas.push_back(reference.omega(j));
      omega_lo.push_back(omegas.back().hi * (1 - 0x1p-45));
    }
    max_t = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(axis_reach(rows, b))));
    scale = b.params.scale;
    for (const ref::dd::DD& w : omegas) omega_max = std::max(omega_max, w.hi * (1 + 0x1p-45));
    SinusoidalParams unit = b.params;
    unit.scale = 1;
    const ref::Sinusoidal unscaled(unit, ref::RealPosition{1});
    std::vector<ref::dd::DD> unit_omegas;
    for (std::size_t j = 0; j < n; ++j) unit_omegas.push_back(unscaled.omega(j));
    if (std::all_of(unit_omegas.begin(), unit_omegas.end(), [](const ref::dd::DD& w) { return w.hi <= 1; }))
      tier.emplace(
          unit_omegas, [](double, std::size_t) { return 0.0; }, 1.0, budget.dtype);
    bounds.emplace(budget.members(), omegas, max_t, budget.dtype, budget.extra, budget.real_scale);
    for (auto* v : {&sin, &cos, &line, &fast_line, &tally, &budget_lo, &flags}) v->assign(padded, 0.0);
    fast_line32.assign(padded, -1.0f);
    phi_lo.resize(n);
    // Held where a position is read twice on average and the block's all fit.
    std::unordered_map<std::uint64_t, char> seen;
    std::size_t read = 0;
    for (std::size_t r = 0; r < rows.rows(); ++r) {
      if (rows.zero_row(r)) continue;
      ++read;
      seen.emplace(std::bit_cast<std::uint64_t>(rows.positions[b.axis][r]), 0);
    }
    const std::size_t distinct = seen.size();
    hold = distinct * 2 * padded <= kRsHeld && 2 * distinct <= read;
  }
};

class RowsScreened {
 public:
  RowsScreened(const SinusoidalRows& rows, Values y, const Budget& budget, Measurement& bands,
               const TableSinks& sinks, TableScreenFn kernel, ScreenType type)
      : rows_(rows), y_(y), budget_(budget), bands_(bands), sinks_(sinks), run_(kernel), type_(type) {
    for (const SinusoidalBlock& b : rows.blocks) blocks_.emplace_back(rows, b, budget);
    const ref::FormatBits f = ref::format_bits(budget.dtype);
    bars_.precision = f.precision;
    bars_.least_binade = std::ldexp(1.0, f.emin), bars_.ulp_scale = std::ldexp(1.0, 1 - f.precision);
    size_ = screen_size(type_);
    for (const RsBlock& b : blocks_) {
      room_ += 2 * b.padded + (b.pad ? 1 : 0);
      copy_ = copy_ || b.block->offset + b.extent > rows.dim;
    }
    room_ += ScreenToken::kLanes;
    if (sinks_.sole) {
      band_count_.assign(band_edges().size(), 0);
      for (std::size_t r = 0; r < rows.rows(); ++r) band_count_[rs_band_index(row_band(rows, r))] += rows.dim;
    }
    if (copy_) copy_row_.assign((rows.dim + 2 * ScreenToken::kLanes + 2 * room_) * size_, 0);
  }

  void run() {
    for (std::size_t r = 0; r < rows_.rows(); ++r) row(r);
  }

 private:
  void row(std::size_t r);
  void exact_row(std::size_t r);
  std::pair<double*, double*> estimates(RsBlock& b, double t);
  void fresh_estimates(RsBlock& b, double t);
  // The own floors of the band of p, taken afresh where it is not the last one's: at least rank_from_top(n)
  // <= n/100 + 1 kept values must lie above them (measure.cc's nearest rank).
  void own_floors(std::int64_t p) {
    const std::size_t k = rs_band_index(p);
    if (k == band_) return;
    band_ = k;
    abs_own_.reset(band_count_[k] / 100 + 2), ulp_own_.reset(band_count_[k] / 100 + 2);
  }
  void fast_estimates(RsBlock& b, double t);
  std::size_t at_origin(RsBlock& b, std::size_t r, TableScreenResult& tails);
  void lower_bounds(std::size_t k, double abs_t);
  void lines(RsBlock& b, double ratio_bar, double max_abs);
  ElementRecord element(std::size_t r, const RsBlock& b, std::size_t c) const;
  void to_sinks(std::size_t k, const ElementRecord& e) {
    if (sinks_.block) sinks_.block(k);
    if (sinks_.exact) sinks_.exact(e);
    // Only block k's line may rise (check keeps a tally per block; with one tally for all, another block's
    // older line is lower, which is never wrong).
    blocks_[k].fed = true;
  }
  const std::uint8_t* row_data(std::size_t r) {
    const void* data = type_ == ScreenType::F64 ? static_cast<const void*>(y_.doubles()) : y_.typed_data();
    const auto* p = static_cast<const std::uint8_t*>(data) + r * rows_.dim * size_;
    if (!copy_) return p;
    std::memcpy(copy_row_.data(), p, rows_.dim * size_);
    return copy_row_.data();
  }

  const SinusoidalRows& rows_;
  Values y_;
  const Budget& budget_;
  Measurement& bands_;
  const TableSinks& sinks_;
  TableScreenFn run_;
  ScreenType type_;
  std::vector<RsBlock> blocks_;
  // TableSinks::sole: per band its elements, the band the own floors hold (SIZE_MAX: none) and the floors.
  std::vector<std::size_t> band_count_;
  std::size_t band_ = SIZE_MAX;
  detail::TailFloor abs_own_, ulp_own_;
  TableScreenBars bars_;
  std::size_t size_ = 4, room_ = 0;
  bool copy_ = false;
  std::vector<std::uint8_t> copy_row_;
};

// measure_sinusoidal_rows_exact's record of channel c (of block b) at row r.
ElementRecord RowsScreened::element(std::size_t r, const RsBlock& b, std::size_t c) const {
  const SinusoidalBlock& blk = *b.block;
  ElementRecord e{.row = static_cast<std::int64_t>(r),
                  .position = row_band(rows_, r),
                  .channel = static_cast<std::int64_t>(blk.offset + c),
                  .dim = static_cast<std::int64_t>(rows_.dim),
                  .base = blk.params.base,
                  .y = y_[r * rows_.dim + blk.offset + c]};
  e.scale = 1.0;
  const bool zero = rows_.zero_row(r) || b.reference.is_pad(c);
  if (zero) {
    e.exact = 0;
    e.abs_error = ref::abs_error(e.y, ref::dd::DD{});
    e.ulp = e.abs_error / ref::ulp_of(ref::dd::DD{}, budget_.dtype);
    e.pair = b.reference.is_pad(c) ? 0 : b.reference.pair_of(c);
    e.unchanged = true;
    e.abs_phi = 0, e.budget = 0, e.reach = INFINITY;
    return e;
  }
  const ref::RealPosition t{rows_.positions[blk.axis][r]};
  const std::size_t i = b.reference.pair_of(c);
  const PairChannels ch = table_pair_channels(blk.params, i);
  if (const auto sc = b.reference.fast_pair(t, i)) {
    const ref::dd::DD& v = c == ch.sin ? sc->sin : sc->cos;
    e.exact = v.hi;
    e.abs_error = ref::abs_error(e.y, v);
    e.ulp = e.abs_error / ref::ulp_of(v, budget_.dtype);
  } else {
    const ref::Real exact = b.reference.exact(t, c).value;
    e.exact = exact.convert_to<double>();
    e.abs_error = ref::abs_error(e.y, exact);
    e.ulp = e.abs_error / ref::ulp_of(exact, budget_.dtype);
  }
  e.abs_phi = std::fabs(b.reference.angle(t, ch.sin));
  e.pair = i;
  e.budget = budget_(nullptr, e.abs_phi, i, 1.0);
  e.reach = 1 + std::fabs(e.exact);
  return e;
}

// Every element of row r, as the exact path's (each pair's sin then cos, a pad channel last).
void RowsScreened::exact_row(std::size_t r) {
  for (std::size_t k = 0; k < blocks_.size(); ++k) {
    const RsBlock& b = blocks_[k];
    for (std::size_t i = 0; i < b.n; ++i) {
      const PairChannels ch = table_pair_channels(b.block->params, i);
      for (const std::size_t c : {ch.sin, ch.cos}) {
        const ElementRecord e = element(r, b, c);
        bands_.add(e);
        to_sinks(k, e);
      }
    }
    if (b.pad) {
      const ElementRecord e = element(r, b, static_cast<std::size_t>(b.block->params.dim) - 1);
      bands_.add(e);
      to_sinks(k, e);
    }
  }
}

// A cos of 1 exactly (at an angle below 2^-27; a sin of ±1 is rare): 1 − 2^-53 instead, within the radius of
// the exact value (which is at most 1 in magnitude) and inside the binade below, where the exact value lies
// unless it is 1: the kernel's ulp estimate, from e's binade, is then the exact value's, not half of it.
void rs_off_one(double* v, std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) v[j] = v[j] == 1 ? 1 - 0x1p-53 : v[j];
}

// Block b's e at position t, sin then cos (padded): held per position where the block's fit (computed on
// first use), else afresh: the double tier's at scale·t where that product is exact and
// m·2^e (rs_integer_times_pow2), else the fast path's (NaN where it does not reach: the element is loud).
std::pair<double*, double*> RowsScreened::estimates(RsBlock& b, double t) {
  if (!b.hold) {
    fresh_estimates(b, t);
    return {b.sin.data(), b.cos.data()};
  }
  const auto [it, added] = b.held.try_emplace(std::bit_cast<std::uint64_t>(t));
  std::vector<double>& held = it->second;
  if (added) {
    fresh_estimates(b, t);
    held.assign(b.sin.begin(), b.sin.end());
    held.insert(held.end(), b.cos.begin(), b.cos.end());
  }
  return {held.data(), held.data() + b.padded};
}

void RowsScreened::fresh_estimates(RsBlock& b, double t) {
  const double s = b.scale * t;
  const auto mt =
      b.tier && std::fma(b.scale, t, -s) == 0 ? rs_integer_times_pow2(std::fabs(s)) : std::nullopt;
  if (!mt) return fast_estimates(b, t);
  const auto [at, added] = b.tier_at.try_emplace(mt->second, *b.tier);
  if (added)
    for (auto* w : {&at->second.w1, &at->second.w2, &at->second.w3})
      for (double& v : *w) v = std::ldexp(v, mt->second);
  exhaustive::double_tier_row(at->second, mt->first, b.sin.data(), b.cos.data());
  if (s < 0)
    for (std::size_t j = 0; j < b.n; ++j) b.sin[j] = -b.sin[j];
  rs_off_one(b.cos.data(), b.n);
}

// A block at position 0: every sin exactly 0 and cos exactly 1, judged here (a sin of 0 lies within 2r of 0,
// where the kernel's ulp bar is the type's least binade's, below the radius for float32 and bfloat16). An
// element equal to its exact value has error 0, ulp error 0 and ratio 0: below every bar of a band that holds
// an element, it changes the band's counts and tails alone; any other is flagged loud. Returns how many were.
std::size_t RowsScreened::at_origin(RsBlock& b, std::size_t r, TableScreenResult& tails) {
  std::size_t loud = 0;
  const std::size_t base = r * rows_.dim + b.block->offset;
  for (std::size_t j = 0; j < b.n; ++j) {
    const PairChannels ch = table_pair_channels(b.block->params, j);
    const bool s_loud = y_[base + ch.sin] != 0, c_loud = y_[base + ch.cos] != 1;
    b.flags[j] = (s_loud ? 1 : 0) + (c_loud ? 2 : 0);
    loud += (s_loud ? 1 : 0) + (c_loud ? 1 : 0);
    // The tails take every element's values, a loud one's too (as the kernel keeps its estimates): here the
    // exact ones, e being exact.
    for (const auto& [y, e] : {std::pair{y_[base + ch.sin], 0.0}, std::pair{y_[base + ch.cos], 1.0}}) {
      const double abs = ref::abs_error(y, ref::dd::DD{e, 0});
      const double ulp = abs / ref::ulp_of(ref::dd::DD{e, 0}, budget_.dtype);
      const double a = std::isnan(abs) ? INFINITY : abs, u = std::isnan(ulp) ? INFINITY : ulp;
      if (a > bars_.abs_floor) *tails.abs_tail++ = a;
      if (u > bars_.ulp_floor) *tails.ulp_tail++ = u;
    }
  }
  return loud;
}

void RowsScreened::fast_estimates(RsBlock& b, double t) {
  for (std::size_t j = 0; j < b.n; ++j) {
    const auto sc = b.reference.fast_pair(ref::RealPosition{t}, j);
    b.sin[j] = sc ? sc->sin.hi : NAN;
    b.cos[j] = sc ? sc->cos.hi : NAN;
  }
  rs_off_one(b.cos.data(), b.n);
}

// Block k's budget lower bound and the caller's tally line per pair for every |t| >= abs_t (budgets grow
// with the angle; the tally's worsts only rise, so an older line is lower: more elements loud, none wrongly
// quiet), taken again when |t| falls below or runs far above, or after an element went to the caller (a
// higher line: fewer loud; taking it only every 16 rows made the benchmarks' checks slower, 4.0 -> 4.6
// ns/element).
void RowsScreened::lower_bounds(std::size_t k, double abs_t) {
  RsBlock& b = blocks_[k];
  if (!(b.fed || abs_t < b.bounds_at || abs_t - b.bounds_at > std::max(b.bounds_at / 16, 64.0))) return;
  b.bounds_at = abs_t, b.fed = false, b.lines_stale = true;
  // Every |t| up to the next bounds: the double tier's radius (with the exact path's double-double's
  // 2^-96·|φ|, as measure_sinusoidal_screened's), which also holds the fast path's high part's 2^-50.
  const double top = abs_t + std::max(abs_t / 16, 64.0);
  b.radius = 0x1.0001p-48 + top * b.omega_max * (0x1.0001p-88 + 0x1.0001p-96);
  for (std::size_t j = 0; j < b.n; ++j) b.phi_lo[j] = abs_t * b.omega_lo[j];
  const std::size_t members = b.bounds->contracts();
  std::fill_n(b.budget_lo.begin(), b.n, members == 0 ? budget_.max_abs * (1 - 0x1p-39) : 0.0);
  for (std::size_t m = 0; m < members; ++m)
    for (std::size_t j = 0; j < b.n; ++j)
      b.budget_lo[j] = std::max(b.budget_lo[j], b.bounds->lower(m, j, b.phi_lo[j]));
  std::fill_n(b.tally.begin(), b.n, INFINITY);
  if (sinks_.line) {
    if (sinks_.block) sinks_.block(k);
    sinks_.line(b.omegas, b.max_t, b.phi_lo, b.tally.data());
  }
  for (std::size_t j = 0; j < b.n; ++j) b.tally[j] *= 1 - 0x1p-44;
}

// The line of measure_sinusoidal_screened's lines(), less the block's radius.
void RowsScreened::lines(RsBlock& b, double ratio_bar, double max_abs) {
  b.lines_stale = false, b.lines_ratio_bar = ratio_bar, b.lines_max_abs = max_abs, b.fast_stale = true;
  for (std::size_t j = 0; j < b.n; ++j)
    b.line[j] = std::min(std::min(ratio_bar * b.budget_lo[j], max_abs), b.tally[j]) - b.radius;
}

// Row r: element by element where it is a zero row, its band beyond the promise (an element may be
// undecidable there) or the band gives no room; else each block through the kernel, then the loud elements
// and pad channels in the exact path's order, then the quiet ones counted.
void RowsScreened::row(std::size_t r) {
  if (sinks_.row) sinks_.row(r);
  const std::int64_t band = row_band(rows_, r);
  Measurement::ScreenRoom room;
  if (!rows_.zero_row(r) && band <= bands_.promised()) room = bands_.screen_room(band, band, room_);
  if (!room.usable) return exact_row(r);
  const double ratio_bar = room.ratio_bar * (1 - 0x1p-44), max_abs = room.max_abs * (1 - 0x1p-44);
  if (sinks_.sole) own_floors(band);
  // The own floors where the caller is the bands' sole writer (else -inf), as measure_sinusoidal_screened's.
  bars_.max_ulp = room.max_ulp, bars_.abs_floor = std::max(room.abs_floor, abs_own_.floor());
  bars_.ulp_floor = std::max(room.ulp_floor, ulp_own_.floor());
  const std::array<std::uint64_t, 3> at{std::bit_cast<std::uint64_t>(bars_.max_ulp),
                                        std::bit_cast<std::uint64_t>(bars_.abs_floor),
                                        std::bit_cast<std::uint64_t>(bars_.ulp_floor)};
  const std::uint8_t* data = row_data(r);
  TableScreenResult tails{nullptr, room.abs_tail, room.ulp_tail};
  std::size_t loud = 0;
  for (std::size_t k = 0; k < blocks_.size(); ++k) {
    RsBlock& b = blocks_[k];
    const double t = rows_.positions[b.block->axis][r];
    if (t == 0) {
      loud += at_origin(b, r, tails);
      continue;
    }
    const auto [es, ec] = estimates(b, t);
    lower_bounds(k, std::fabs(t));
    if (b.lines_stale || !(ratio_bar == b.lines_ratio_bar && max_abs == b.lines_max_abs))
      lines(b, ratio_bar, max_abs);
    if (b.fast_stale || at != b.fast_at) {
      const TableFastBars f = table_fast_bars(bars_, b.line, b.fast_line.data(), b.fast_line32.data());
      b.fast_ulp = f.ulp, b.fast32 = f.line32_passes;
      b.fast_stale = false, b.fast_at = at;
    }
    const TableScreenRow token{es,
                               ec,
                               es,
                               ec,
                               b.line.data(),
                               b.radius,
                               false,
                               b.fast_line.data(),
                               b.fast_ulp,
                               1,
                               0,
                               0,
                               b.fast32 ? b.fast_line32.data() : nullptr};
    tails.flags = b.flags.data();
    run_(type_, data + b.block->offset * size_, b.n, b.channels, token, bars_, tails);
    tails.abs_tail += tails.abs_kept, tails.ulp_tail += tails.ulp_kept;
    loud += tails.loud;
  }
  std::size_t quiet = 0;
  for (std::size_t k = 0; k < blocks_.size(); ++k) {
    RsBlock& b = blocks_[k];
    quiet += 2 * b.n;
    for (std::size_t j = 0; loud != 0 && j < b.n; ++j) {
      const auto flag = static_cast<int>(b.flags[j]);
      if (flag == 0) continue;
      const PairChannels ch = table_pair_channels(b.block->params, j);
      for (std::size_t o = 0; o < 2; ++o) {
        if ((flag & (1 << o)) == 0) continue;
        const ElementRecord e = element(r, b, o == 0 ? ch.sin : ch.cos);
        bands_.add_screened(e, false);
        to_sinks(k, e);
        --quiet;
      }
      b.flags[j] = 0;
    }
    if (!b.pad) continue;
    // The pad channel: exact, its values kept in the room above the floors as the kernel keeps its own.
    const ElementRecord e = element(r, b, static_cast<std::size_t>(b.block->params.dim) - 1);
    bands_.add_screened(e, false);
    to_sinks(k, e);
    const double abs_v = std::isnan(e.abs_error) ? INFINITY : e.abs_error;
    const double ulp_v = std::isnan(e.ulp) ? INFINITY : e.ulp;
    if (abs_v > bars_.abs_floor) *tails.abs_tail++ = abs_v;
    if (ulp_v > bars_.ulp_floor) *tails.ulp_tail++ = ulp_v;
  }
  const auto abs_kept = static_cast<std::size_t>(tails.abs_tail - room.abs_tail);
  const auto ulp_kept = static_cast<std::size_t>(tails.ulp_tail - room.ulp_tail);
  if (sinks_.sole) abs_own_.add(room.abs_tail, abs_kept), ulp_own_.add(room.ulp_tail, ulp_kept);
  // Every quiet element is in the percentiles (no sample here: measure_sinusoidal_rows_screened refuses one).
  bands_.screen_quiet(band, quiet, quiet, quiet, abs_kept, ulp_kept);
}

}  // namespace

bool measure_sinusoidal_rows_screened(const SinusoidalRows& rows, Values y, const Budget& budget,
                                      Measurement& bands, const TableSinks& sinks, std::size_t from) {
  const auto& targets = table_screen_targets();
  const std::size_t target = sinusoidal_screen_target();
  const auto type = table_screen_type_of(y, budget.dtype);
  if (bands.samples_percentiles())
    throw std::logic_error("measure_sinusoidal_rows_screened: a measurement sampling its percentiles");
  if (!sinusoidal_screen_enabled() || target >= targets.size() || !type || rows.rows() == 0 ||
      y.size() < from || y.size() != rows.rows() * rows.dim)
    return false;
  // The kernel reads a pair's sin at a0 + k (+ 2k interleaved), its cos at b0 + k (a0 + 2k + 1).
  for (const SinusoidalBlock& b : rows.blocks)
    if (b.params.dim < 2 || (b.params.flip_sin_to_cos && b.params.layout == Layout::Interleaved))
      return false;
  RowsScreened(rows, y, budget, bands, sinks, targets[target].run, *type).run();
  return true;
}

}  // namespace pe::harness

// check's one pass over a RoPE batch (measure.h's measure_rope_screened): per token, the double tier's sine
// and cosine of each pair (or the last token's rotated, at the next position) and bounds on every budget over
// the token's angles; per row, the screen (rope_screen.h) in the data's own type; the loud elements alone
// through the exact path (rope_row_fill.h).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <span>
#include <stdexcept>

#include "pe/harness/exhaustive_screen.h"
#include "pe/harness/measure.h"
#include "pe/harness/rope_screen.h"
#include "pe/ref/fast_trig.h"
#include "pe/ref/fma_clones.h"
#include "pe/ref/reference.h"
#include "rope_row_fill.h"

namespace pe::harness {
namespace {

// out[k] = max(out[k], α + β[k]·φ[k]) over a token's pairs (Screened::bounds): built with AVX as well as
// without (PE_FMA_CLONES): the baseline build's loop ran two doubles a step (perf, the 4096-token float32
// check's process: 2.0% of its samples, 1.1% with AVX). -ffp-contract=off: the same bits from both.
PE_FMA_CLONES void raise_to_line(double* out, double alpha, const double* beta, const double* phi,
                                 std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) out[k] = std::max(out[k], alpha + beta[k] * phi[k]);
}

// Where a plan's pairs lie in a row, if in one of the screen's two patterns.
template <class Channels>
std::optional<ScreenChannels> pattern_of(std::size_t n, const Channels& channels) {
  const auto [a0, b0] = channels(0);
  bool contiguous = true, interleaved = b0 == a0 + 1;
  for (std::size_t j = 0; j < n; ++j) {
    const auto [a, b] = channels(j);
    contiguous = contiguous && a == a0 + j && b == b0 + j;
    interleaved = interleaved && a == a0 + 2 * j && b == a + 1;
  }
  if (contiguous) return ScreenChannels{a0, b0, false};
  if (interleaved) return ScreenChannels{a0, a0 + 1, true};
  return std::nullopt;
}

// The type x and y are both stored in, in place, with a budget of a narrower type than double.
std::optional<ScreenType> screen_type(const Values& x, const Values& y, DType out) {
  if (out == DType::F64) return std::nullopt;
  if (x.doubles() != nullptr && y.doubles() != nullptr) return ScreenType::F64;
  if (x.typed_data() == nullptr || y.typed_data() == nullptr || x.typed_type() != y.typed_type() ||
      y.typed_type() != out)
    return std::nullopt;
  return screen_type_of(out);
}

// Elements the screen reads of a row: past the last pair, up to the padding of its last vector.
std::size_t extent(const ScreenChannels& c, std::size_t n) {
  const std::size_t padded = ScreenToken::padded(n);
  return c.interleaved ? c.a0 + 2 * padded : std::max(c.a0, c.b0) + padded;
}

class Screened {
 public:
  Screened(const RopeParams& params, const RopeBatch& batch, Values x, Values y, const Budget& budget,
           Measurement& bands, const ScreenedSinks& sinks, ScreenRowFn kernel, ScreenType type,
           ScreenChannels in, ScreenChannels out, std::span<const double> real)
      : plan_(params),
        reference_(params, *std::max_element(batch.positions.begin(), batch.positions.end())),
        batch_(batch),
        x_(x),
        y_(y),
        budget_(budget),
        bands_(bands),
        sinks_(sinks),
        run_(kernel),
        type_(type),
        in_(in),
        out_(out),
        real_(real),
        n_(plan_.n_pairs()),
        slopes_(budget.members(), plan_, budget.dtype, n_) {
    const std::size_t padded = ScreenToken::padded(n_);
    for (auto* v :
         {&sin_, &cos_, &radius_, &budget_slope_, &tally_slope_, &tally_floor_, &reach_slope_, &flags_})
      v->assign(padded, 0.0);
    pairs_.resize(n_);
    positions_.resize(n_);
    reals_.resize(real_.empty() ? 0 : n_);
    abs_phi_.resize(n_);
    phi_lo_.resize(n_);
    phi_hi_.resize(n_);
    abs_position_.resize(n_);
    tier_ok_.resize(n_);
    sincos_.resize(n_);
    ready_.resize(n_);
    std::vector<ref::dd::DD> omegas;
    for (std::size_t j = 0; j < n_; ++j) {
      pairs_[j] = j;
      const double w = reference_.omega(j).hi;
      omega_lo_.push_back(w * (1 - 0x1p-45));
      omega_hi_.push_back(w * (1 + 0x1p-45));
      omega_radius_.push_back(w * (1 + 0x1p-45) * 0x1p-88);
      omega_in_range_.push_back(w <= 1 ? 1 : 0);  // the vector tier's pieces are exact up to 1
      split_.push_back(ref::split_omega(reference_.omega(j)));
      omegas.push_back(reference_.omega(j));
    }
    vector_tier_.emplace(
        omegas, [](double, std::size_t) { return 0.0; }, 1.0, budget.dtype);
    step_sin_.assign(padded, 0.0), step_cos_.assign(padded, 1.0);
    exhaustive::double_tier_row(*vector_tier_, 1, step_sin_.data(), step_cos_.data());
    for (std::size_t m = 0; m < slopes_.contracts(); ++m) {
      alpha_.push_back(slopes_.terms(m).slope_at_zero());
      beta_.emplace_back(n_);
      for (std::size_t j = 0; j < n_; ++j) beta_.back()[j] = slopes_.terms(m).slope_per_radian(j);
    }
    for (std::size_t ch = 0; ch < plan_.head_dim(); ++ch)
      if (plan_.passes_through(ch)) through_.push_back(ch);
    // The budget's least floor, and its largest for the reach: a flat bound's is the bound itself.
    const auto members = budget.members();
    floor_lo_ = members.empty() ? budget.max_abs : INFINITY;
    floor_hi_ = members.empty() ? budget.max_abs : 0;
    for (std::size_t m = 0; m < slopes_.contracts(); ++m) {
      floor_lo_ = std::min(floor_lo_, slopes_.terms(m).floor());
      floor_hi_ = std::max(floor_hi_, slopes_.terms(m).floor());
    }
    if (!members.empty()) floor_lo_ += budget.extra, floor_hi_ += budget.extra;
    attention_ = reference_.fast_attention() != nullptr ? reference_.fast_attention()->hi : 1.0;
    radius_scale_ = attention_ * (1 + 0x1p-40);
    const ref::FormatBits f = ref::format_bits(budget.dtype);
    precision_ = f.precision, emin_ = f.emin;
    const std::size_t row_extent = std::max(extent(in_, n_), extent(out_, n_));
    copy_ = row_extent > plan_.head_dim();
    if (copy_) {
      x_copy_.assign(row_extent * 8, 0);
      y_copy_.assign(row_extent * 8, 0);
    }
    exact_.dim = whole_.dim = params.head_dim;
    exact_.base = whole_.base = params.base;
    if (vector_rows_enabled() && !rotation_targets().empty() && rotation_lanes_cover(budget.dtype))
      vector_.emplace(plan_, pairs_, false);
  }

  // A band's sampled estimates: [0, size) of each buffer (large_vector.h's pool: a check run again reuses
  // the pages).
  struct BandSample {
    LargeVector abs, ulp;
    std::size_t size = 0;
    BandSample() = default;
    BandSample(const BandSample&) = delete;
    BandSample& operator=(const BandSample&) = delete;
    ~BandSample() { recycle_large(std::move(abs)), recycle_large(std::move(ulp)); }
  };
  // The screen's own estimates (floors at -inf) on up to `want` of the (token, head) rows of `rows`, spread
  // evenly, each of a token's heads in turn; per band of band_edges(), a pass-through channel's 0 included.
  void sample(const std::vector<std::size_t>& rows, std::size_t want, std::vector<BandSample>& bands);

  void run(const std::vector<std::size_t>& rows) {
    for (std::size_t t : rows) {
      if (sinks_.token) sinks_.token(t);
      token(t);
      for (std::size_t h = 0; h < batch_.heads && !stopped_;) h += screen_rows(t, h);
      if (stopped_) return;
    }
  }

 private:
  // The token's sines, cosines and bounds per pair (ScreenToken), its band range, and the exact path's
  // values forgotten. Loops over pairs inside, so that they run in vectors.
  void token(std::size_t t) {
    angles(t);
    bounds(budget_slope_, phi_lo_, 1 - 0x1p-47);
    if (hi_ > bands_.promised()) {
      for (std::size_t k = 0; k < n_; ++k) phi_hi_[k] = abs_position_[k] * omega_hi_[k];
      bounds(reach_slope_, phi_hi_, 1 + 0x1p-47);
    }
    std::fill(ready_.begin(), ready_.end(), 0);
    vector_token_ = -1;
    room_rows_ = 0;
    if (sinks_.line) {
      sinks_.line(phi_lo_, tally_slope_.data(), tally_floor_.data());
    } else {
      std::fill(tally_slope_.begin(), tally_slope_.end(), 0.0);  // 0·s + ∞: no line (∞·0 would be NaN)
      std::fill(tally_floor_.begin(), tally_floor_.end(), INFINITY);
    }
  }

  // The token's positions, band range, sines and cosines, least angles and radii: what an estimate needs.
  void angles(std::size_t t) {
    first_axis_ = batch_.position(t);
    lo_ = hi_ = first_axis_;
    if (through_.empty()) lo_ = hi_ = batch_.position(t, plan_.axis_of_pair(0));
    bool one_position = true;
    // The batch's positions indexed here: batch_.position() divides for the token count, at every pair (the
    // stores below could alias the batch's size, so it is not hoisted).
    const std::size_t tokens = batch_.tokens();
    const std::int64_t* const positions = batch_.positions.data();
    for (std::size_t k = 0; k < n_; ++k) {
      const std::int64_t p = positions_[k] = positions[plan_.axis_of_pair(k) * tokens + t];
      lo_ = std::min(lo_, p), hi_ = std::max(hi_, p);
      // At a real position its own |t| (the key ceil(|t|) would overstate the budgets' lower bounds).
      abs_position_[k] = real_.empty() ? std::fabs(static_cast<double>(p))
                                       : std::fabs(reals_[k] = real_[plan_.axis_of_pair(k) * tokens + t]);
      one_position = one_position && p == positions_[0];
    }
    if (!real_.empty()) {
      real_sincos();
    } else {
      sincos_tier(one_position);
    }
    // A row rotated from the tier's lies within kRotationRadius more (sincos_tier).
    const double rotation = tier_run_.steps != 0 ? kRotationRadius : 0.0;
    for (std::size_t k = 0; k < n_; ++k) {
      phi_lo_[k] = abs_position_[k] * omega_lo_[k];
      // The double tier's radius 2^-48 + |φ|·2^-88 (at the tier's row: it grows with |p|), plus 2^-50 for the
      // screen's own rotation of x (rope_screen.cc), plus the rotation from the tier's row where there was
      // one.
      radius_[k] = tier_ok_[k] != 0
                       ? radius_scale_ * (0x1.4p-48 + abs_position_[k] * omega_radius_[k] + rotation)
                       : INFINITY;
    }
  }

  // sin_ and cos_ from the double tier, in vectors where every pair has the one position in its range; at the
  // position after the last token's, that token's rotated by ω_j (exhaustive::rotate_row), up to
  // kMaxRotations times in a row: a token's row from the tier was 5.9% of a 4096-token check, a rotation
  // costs a few operations a pair. Their error beyond the tier's is exhaustive::rotation_radius's (ω_j <= 1
  // where the radius is finite, positions under 2^32): 16 steps keep it within 2^-42 (256 would allow 2^-38:
  // the screen's estimates, the percentiles', move by as much), and a tier row every 16 tokens is 0.4% of a
  // check.
  static constexpr std::size_t kMaxRotations = 16;
  static constexpr double kRotationRadius = 0x1p-42;
  static_assert(exhaustive::rotation_radius(kMaxRotations) <= kRotationRadius);
  void sincos_tier(bool one_position) {
    const std::int64_t p = positions_[0];
    if (one_position && vector_tier_ && p >= 0 && p < (std::int64_t{1} << 32)) {
      if (tier_run_.advance(p, 1, kMaxRotations)) {
        exhaustive::rotate_row(sin_.data(), cos_.data(), step_sin_.data(), step_cos_.data(), n_);
      } else {
        exhaustive::double_tier_row(*vector_tier_, p, sin_.data(), cos_.data());
      }
      std::copy(omega_in_range_.begin(), omega_in_range_.end(), tier_ok_.begin());
      return;
    }
    tier_run_.reset();
    for (std::size_t k = 0; k < n_; ++k) {
      double s = 0, c = 0;
      tier_ok_[k] = ref::double_tier_sincos(positions_[k], split_[k], s, c) ? 1 : 0;
      sin_[k] = s, cos_[k] = c;
    }
  }

  // At real positions: the fast path's double-double, its high parts within 2^-53 + its radius (<< 2^-48) of
  // sin and cos of t·θ_j, inside the double tier's radius; none beyond it (|t·θ_j| >= 2^52): loud.
  void real_sincos() {
    tier_run_.reset();  // nothing to rotate from
    for (std::size_t k = 0; k < n_; ++k) {
      const auto sc = reference_.fast_sincos(ref::RealPosition{reals_[k]}, k);
      tier_ok_[k] = sc && sc->radius < 0x1p-60 ? 1 : 0;
      sin_[k] = sc ? sc->sin.hi : 0, cos_[k] = sc ? sc->cos.hi : 0;
    }
  }

  // out[k] = max over the budget's contracts of A·(α + β_k·φ[k]), times `margin` (0 for a flat bound).
  void bounds(std::vector<double>& out, const std::vector<double>& phi, double margin) {
    const double start = slopes_.contracts() == 0 ? 0 : -INFINITY;
    std::fill_n(out.begin(), n_, start);
    for (std::size_t m = 0; m < slopes_.contracts(); ++m) {
      const double alpha = alpha_[m];
      const double* beta = beta_[m].data();
      raise_to_line(out.data(), alpha, beta, phi.data(), n_);
    }
    for (std::size_t k = 0; k < n_; ++k) out[k] *= margin;
  }

  // The exact path's values of pair k at this token.
  void ready(std::size_t k) {
    if (ready_[k] != 0) return;
    if (real_.empty()) {
      abs_phi_[k] = std::fabs(reference_.angle(positions_[k], k));
      sincos_[k] = reference_.fast_sincos(positions_[k], k);
    } else {
      abs_phi_[k] = std::fabs(reference_.angle(ref::RealPosition{reals_[k]}, k));
      sincos_[k] = reference_.fast_sincos(ref::RealPosition{reals_[k]}, k);
    }
    slopes_.at(k, k, abs_phi_[k]);
    ready_[k] = 1;
  }

  detail::Token exact_token(std::span<const std::size_t> through) const {
    return {pairs_, positions_, abs_phi_, sincos_, through, first_axis_, false, std::nullopt, 1, reals_};
  }

  ScreenToken screen_token() const {
    return {sin_.data(),         cos_.data(),         radius_.data(),     budget_slope_.data(),
            tally_slope_.data(), tally_floor_.data(), reach_slope_.data()};
  }

  const void* row_data(const Values& v, std::size_t base, std::vector<std::uint8_t>& copy) const {
    const std::size_t size = screen_size(type_);
    const void* data = type_ == ScreenType::F64 ? static_cast<const void*>(v.doubles()) : v.typed_data();
    const auto* p = static_cast<const std::uint8_t*>(data) + base * size;
    if (!copy_) return p;
    std::memcpy(copy.data(), p, plan_.head_dim() * size);
    return copy.data();
  }

  // Whether the pass stops at row (t, h): a non-finite input value there, and the caller's say-so.
  bool stop_at(std::size_t t, std::size_t h) {
    if (!sinks_.nonfinite_input) return false;
    const std::size_t base = batch_.row(t, h);
    for (std::size_t ch = 0; ch < plan_.head_dim(); ++ch)
      if (!std::isfinite(x_[base + ch])) return stopped_ = sinks_.nonfinite_input();
    return false;
  }

  std::size_t screen_rows(std::size_t t, std::size_t h);
  void exact_row(std::size_t t, std::size_t h);
  void prefetch_row(std::size_t t, std::size_t h) const;
  ScreenBars room_bars() const;
  void ahead(std::size_t t, std::size_t h, ScreenRows& span) const;
  void last_row(std::size_t t, std::size_t h, const ScreenResult& result);
  void loud(std::size_t t, std::size_t h, const ScreenResult& result, std::span<const std::size_t> moved);

  RopePlan plan_;
  ref::Rope reference_;
  const RopeBatch& batch_;
  Values x_, y_;
  const Budget& budget_;
  Measurement& bands_;
  const ScreenedSinks& sinks_;
  ScreenRowFn run_;
  ScreenType type_;
  ScreenChannels in_, out_;
  std::span<const double> real_;  // real positions [n_axes][tokens] (empty: the batch's integers)
  std::size_t n_;
  RopeSlopes slopes_;
  std::vector<std::size_t> pairs_, through_, moved_;
  std::vector<double> omega_lo_, omega_hi_, omega_radius_;  // ω·(1 ∓ 2^-45), ω·(1 + 2^-45)·2^-88
  std::vector<std::uint8_t> omega_in_range_, tier_ok_;
  std::vector<ref::OmegaSplit> split_;
  std::optional<exhaustive::ScreenPlan> vector_tier_;  // its sincos: the double tier in vectors
  std::vector<double> step_sin_, step_cos_;            // the tier's sin ω_j and cos ω_j (sincos_tier)
  exhaustive::TierRun tier_run_;                       // what sin_ and cos_ hold (sincos_tier)
  std::vector<double> alpha_;                          // per contract of the budget: A·α
  std::vector<std::vector<double>> beta_;              // and A·β per pair
  // The token's (ScreenToken's arrays, padded), and the exact path's per pair, made when a pair is loud.
  std::vector<double> sin_, cos_, radius_, budget_slope_, tally_slope_, tally_floor_, reach_slope_, flags_;
  std::vector<double> phi_lo_, phi_hi_, abs_position_, abs_phi_;
  std::vector<std::int64_t> positions_;
  std::vector<double> reals_;  // the token's real position per pair
  std::vector<std::optional<ref::FastSinCos>> sincos_;
  std::vector<std::uint8_t> ready_;
  std::int64_t first_axis_ = 0, lo_ = 0, hi_ = 0;
  double floor_lo_ = 0, floor_hi_ = 0, attention_ = 1, radius_scale_ = 1;
  int precision_ = 24, emin_ = -126;
  bool copy_ = false;             // a row is read from a padded copy (its last vector would pass its end)
  bool stopped_ = false;          // at a non-finite input (ScreenedSinks::nonfinite_input)
  bool sampled_ = true;           // the token's rows feed the percentiles (Measurement::in_sample)
  Measurement::ScreenRoom room_;  // the token's room (screen_rows()), for room_rows_ more rows
  std::size_t room_rows_ = 0;
  std::vector<std::uint8_t> x_copy_, y_copy_;
  RopeRow exact_;  // a loud pair's two elements, or a channel
  RopeRow whole_;  // a row measured exactly
  // The exact rows in vectors (measure_rope_rows's VectorRows), where the CPU and the type allow, and the
  // token whose sines and cosines it holds.
  std::optional<detail::VectorRows> vector_;
  std::int64_t vector_token_ = -1;
  bool vector_ok_ = false;
};

// Rows (t, h) on of the token under one room, as one run of the kernel where a row is read in place and has
// no pass-through channel (else one row): how many were measured.
std::size_t Screened::screen_rows(std::size_t t, std::size_t h) {
  const bool in_place = through_.empty() && !copy_;
  // Room in the tails for the token's rows left, taken once: until something is added (a loud element, a row
  // measured exactly), the bars and floors stay as they are and the tails grow only by what rows keep.
  // Where that much room would pass expect(), the row's own, as before.
  const std::size_t per_row = 2 * ScreenToken::padded(n_) + through_.size() + 8;
  if (room_rows_ == 0) {
    room_rows_ = batch_.heads - h;
    room_ = bands_.screen_room(lo_, hi_, room_rows_ * per_row);
    if (!room_.usable && room_rows_ > 1) room_rows_ = 1, room_ = bands_.screen_room(lo_, hi_, per_row);
  }
  // A row alone or measured exactly asks for the row kAhead on (prefetch_row); a run, for its own (ahead()).
  if (!in_place || !room_.usable) prefetch_row(t, h);
  if (!room_.usable) {
    exact_row(t, h);
    return 1;
  }
  sampled_ = bands_.in_sample(lo_, static_cast<std::int64_t>(t));
  const ScreenBars bars = room_bars();
  ScreenResult result{flags_.data(), room_.abs_tail, room_.ulp_tail};
  const std::size_t base = batch_.row(t, h);
  ScreenRows span;  // one row, or where rows are read in place the token's rows the room was taken for
  if (in_place) {
    span.rows = room_rows_, span.stride = batch_.head_stride;
    ahead(t, h, span);
  }
  run_(type_, row_data(x_, base, x_copy_), row_data(y_, base, y_copy_), n_, in_, out_, screen_token(), bars,
       span, result);
  // The run's rows before its last, all quiet.
  const ScreenResult::Before& before = result.before;
  if (before.rows != 0) {
    const std::size_t quiet = before.rows * 2 * n_;
    bands_.screen_quiet(lo_, quiet, before.quiet_encoding, sampled_ ? quiet : 0, before.abs_kept,
                        before.ulp_kept);
    room_.abs_tail += before.abs_kept, room_.ulp_tail += before.ulp_kept, room_rows_ -= before.rows;
  }
  last_row(t, h + before.rows, result);
  return before.rows + 1;
}

// A row screened alone or measured exactly: the row kAhead rows on, on its way from memory while this one is
// measured (the hardware's prefetcher stops at page boundaries, which a row of a large batch crosses every
// few rows). 24 rows (about 5 µs ahead at 1.6 ns an element): 2-5% less time than 8 on the 4096-token float32
// check, in five alternated runs of each, on an AVX2 machine, when every row was screened alone.
void Screened::prefetch_row(std::size_t t, std::size_t h) const {
  constexpr std::size_t kAhead = 24;
  if (const std::size_t next = t * batch_.heads + h + kAhead; next < batch_.tokens() * batch_.heads) {
    const std::size_t target = batch_.row(next / batch_.heads, next % batch_.heads);
    x_.prefetch(target, plan_.head_dim());
    y_.prefetch(target, plan_.head_dim());
  }
}

// The bars of the room as it stands, shrunk by the screen's margins (rope_screen.h).
ScreenBars Screened::room_bars() const {
  ScreenBars bars;
  bars.budget_floor = floor_lo_;
  bars.ratio_bar = room_.ratio_bar * (1 - 0x1p-44);  // under the exact path's bar·budget·(1 - 2^-49)
  bars.max_abs = room_.max_abs;
  bars.max_ulp = room_.max_ulp;
  bars.check_reach = hi_ > bands_.promised();
  bars.reach_floor = floor_hi_ * (1 + 0x1p-40);
  bars.reach_factor = 0.7 * attention_;  // the exact pair's norm is at least s/√2 times A
  bars.attention = attention_;
  bars.abs_floor = sampled_ ? room_.abs_floor : INFINITY;  // outside the sample: no estimate kept
  bars.ulp_floor = sampled_ ? room_.ulp_floor : INFINITY;
  bars.precision = precision_, bars.emin = emin_;
  return bars;
}

// The rows a run asks for from memory ahead of their turn: about 2 KiB of each tensor on (4 float32 rows of
// 128). On the AVX-512 machine (2026-12-07, least of 5 alternated 3 times): 4 rows on 1.14-1.27 ns an
// element, 8 rows 1.16-1.21, 16 rows 1.23-1.24, the next token's same head (32 rows) 1.22-1.23, none 1.44:
// farther than a few rows, the lines asked for fill the 32 KiB L1 and leave it before their turn. Only the
// targets (base + (r + k)·stride, head_dim elements each) that end within x and y are asked for, whatever the
// layout: past the token's last head, a [T, H, D] batch's are the next token's first rows.
void Screened::ahead(std::size_t t, std::size_t h, ScreenRows& span) const {
  constexpr std::size_t kAheadBytes = 2048;
  const std::size_t row_bytes = plan_.head_dim() * screen_size(type_), stride = batch_.head_stride;
  const std::size_t k = std::max<std::size_t>(1, kAheadBytes / row_bytes);
  span.ahead = k * stride, span.ahead_bytes = row_bytes;
  const std::size_t size = std::min(x_.size(), y_.size()), first = batch_.row(t, h) + span.ahead;
  const std::size_t fit =
      stride == 0 || first + plan_.head_dim() > size ? 0 : (size - first - plan_.head_dim()) / stride + 1;
  span.ahead_rows = std::min(span.rows, fit);
}

// The last row of a run (or a row alone) as the screen left it: its pass-through channels, its counts, and
// its loud elements measured exactly.
void Screened::last_row(std::size_t t, std::size_t h, const ScreenResult& result) {
  const Measurement::ScreenRoom room = room_;
  const std::size_t base = batch_.row(t, h);
  // Pass-through channels: quiet where y equals x (then |y - x| = 0 and its ulps are 0 in the tails).
  moved_.clear();
  for (std::size_t ch : through_) {
    const double xv = x_[base + ch];
    if (!(xv == y_[base + ch]) || !std::isfinite(xv)) moved_.push_back(ch);
  }
  const std::size_t still = through_.size() - moved_.size();
  std::size_t abs_kept = result.abs_kept, ulp_kept = result.ulp_kept;
  if (sampled_ && 0 > room.abs_floor) std::fill_n(room.abs_tail + abs_kept, still, 0.0), abs_kept += still;
  if (sampled_ && 0 > room.ulp_floor) std::fill_n(room.ulp_tail + ulp_kept, still, 0.0), ulp_kept += still;
  // Loud in more than an eighth of its elements (a failing kernel's row): the whole row exactly in vectors
  // beats its elements one by one; the screen's estimates written past the tails' end are then left there,
  // uncounted.
  if (4 * result.loud > n_) return exact_row(t, h);
  if ((result.loud != 0 || !moved_.empty()) && stop_at(t, h)) return;
  const std::size_t quiet = 2 * n_ - result.loud + still;
  bands_.screen_quiet(lo_, quiet, result.quiet_encoding, sampled_ ? quiet : 0, abs_kept, ulp_kept);
  room_.abs_tail += abs_kept, room_.ulp_tail += ulp_kept, --room_rows_;
  if (result.loud != 0 || !moved_.empty()) loud(t, h, result, moved_);
}

void Screened::sample(const std::vector<std::size_t>& rows, std::size_t want,
                      std::vector<BandSample>& bands) {
  const std::size_t heads = batch_.heads, count = std::min(want, rows.size() * heads);
  const std::size_t room = 2 * ScreenToken::padded(n_) + ScreenToken::kLanes;  // ScreenResult's
  const auto edges = band_edges();
  const auto band = [&](std::int64_t p) {
    return static_cast<std::size_t>(std::upper_bound(edges.begin() + 1, edges.end() - 1, p) - edges.begin() -
                                    1);
  };
  ScreenBars bars;  // the flags are not read: only the estimates, all of them (floors at -inf)
  bars.attention = attention_;
  bars.abs_floor = bars.ulp_floor = -INFINITY;
  bars.precision = precision_, bars.emin = emin_;
  std::size_t last = rows.size();
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t at = i * rows.size() / count, h = i % heads;
    if (at != last) angles(rows[at]), last = at;
    const std::size_t b = band(lo_);
    if (b != band(hi_)) continue;  // a row over two bands (M-RoPE): left out of the guess
    BandSample& into = bands[b];
    if (into.abs.empty()) {  // room for every sampled row (only what is written is touched)
      into.abs = take_large(count * (room + through_.size()));
      into.ulp = take_large(count * (room + through_.size()));
    }
    ScreenResult result{flags_.data(), into.abs.data() + into.size, into.ulp.data() + into.size};
    const std::size_t base = batch_.row(rows[at], h);
    run_(type_, row_data(x_, base, x_copy_), row_data(y_, base, y_copy_), n_, in_, out_, screen_token(), bars,
         ScreenRows{}, result);
    // Floors at -inf keep every estimate of a pair the double tier bounds, both kinds alike (neither is ever
    // NaN): the counts agree.
    const std::size_t kept = std::min(result.abs_kept, result.ulp_kept);
    std::fill_n(into.abs.data() + into.size + kept, through_.size(), 0.0);
    std::fill_n(into.ulp.data() + into.size + kept, through_.size(), 0.0);
    into.size += kept + through_.size();
  }
}

// The loud elements of a screened row, exactly, in the row's order.
void Screened::loud(std::size_t t, std::size_t h, const ScreenResult& result,
                    std::span<const std::size_t> moved) {
  room_rows_ = 0;  // the tails and bars change
  exact_.row = static_cast<std::int64_t>(t);
  exact_.head = static_cast<std::int64_t>(h);
  exact_.resize(2);
  const std::size_t base = batch_.row(t, h);
  for (std::size_t k = 0; k < n_ && result.loud != 0; ++k) {
    const auto flag = static_cast<int>(result.flags[k]);
    if (flag == 0) continue;
    ready(k);
    detail::fill_pair(plan_, reference_, exact_token({}), k, budget_, slopes_, {}, budget_.dtype,
                      RopeDirection::Forward, base, x_, y_, 0, exact_);
    for (std::size_t o = 0; o < 2; ++o) {
      if ((flag & (1 << o)) == 0) continue;
      const ElementRecord e = exact_.record(o);
      // The screen kept no estimate of a pair it could not bound: the exact values go to the tails.
      bands_.add_screened(e, !(e.scale * radius_[k] < INFINITY));
      if (sinks_.loud) sinks_.loud(e);
    }
  }
  for (const std::size_t& ch : moved) {
    detail::fill_through(exact_token({&ch, 1}), {}, budget_.dtype, base, x_, y_, 0, exact_);
    const ElementRecord e = exact_.record(0);
    bands_.add_screened(e, true);
    if (sinks_.loud) sinks_.loud(e);
  }
}

// A row the screen cannot take (ScreenRoom::usable) or found mostly loud (a failing kernel's): every element
// through the exact path, in vectors where measure_rope_rows would (VectorRows: the same bits).
void Screened::exact_row(std::size_t t, std::size_t h) {
  room_rows_ = 0;  // the tails and bars change
  if (stop_at(t, h)) return;
  whole_.row = static_cast<std::int64_t>(t);
  whole_.head = static_cast<std::int64_t>(h);
  whole_.resize(2 * n_ + through_.size());
  const detail::Token tk = exact_token(through_);
  if (vector_token_ != static_cast<std::int64_t>(t)) {  // the token's exact values, once for all its heads
    for (std::size_t k = 0; k < n_; ++k) ready(k);
    vector_ok_ = vector_ && vector_->load_token(sincos_);
    if (vector_ok_) vector_->token_fields(tk, whole_);
    vector_token_ = static_cast<std::int64_t>(t);
  }
  const std::size_t base = batch_.row(t, h);
  if (vector_ok_ &&
      vector_->fill(x_, y_, base, budget_, slopes_, reference_.fast_attention(), budget_.dtype, whole_)) {
    detail::fill_through(tk, {}, budget_.dtype, base, x_, y_, 2 * n_, whole_);
  } else {
    detail::fill_row(plan_, reference_, tk, budget_, slopes_, {}, budget_.dtype, RopeDirection::Forward, base,
                     x_, y_, whole_);
  }
  bands_.add_row(whole_);
  if (sinks_.row) sinks_.row(whole_);
}

// What a screened pass needs beyond its arguments, where it applies (measure_rope_screened's conditions but
// the scaling's switch per token).
struct Setup {
  ScreenRowFn run;
  ScreenType type;
  ScreenChannels in, out;
};
// The conditions that do not depend on the scaling: the screen is on and has a target, x and y are in place
// in one type, every pair is measured.
bool screenable(const RopeBatch& batch, const Values& x, const Values& y, const Budget& budget,
                const Sample& sample) {
  return rope_screen_enabled() && !screen_row_targets().empty() && screen_type(x, y, budget.dtype) &&
         sample.pairs.empty() && !batch.positions.empty();
}
std::optional<Setup> setup(const RopeParams& params, const RopeBatch& batch, const Values& x, const Values& y,
                           const Budget& budget, const Sample& sample) {
  if (!screenable(batch, x, y, budget, sample)) return std::nullopt;
  const auto type = screen_type(x, y, budget.dtype);
  const RopePlan plan(params);
  const auto in = pattern_of(plan.n_pairs(), [&](std::size_t j) { return plan.input_channels(j); });
  const auto out = pattern_of(plan.n_pairs(), [&](std::size_t j) { return plan.output_channels(j); });
  if (!in || !out || plan.n_pairs() == 0) return std::nullopt;
  // Each contract's budget must grow with the angle for the token's bounds to hold (contract.h).
  for (const Contract* c : budget.members()) {
    const RopeBudgetTerms terms(*c, plan, budget.dtype);
    if (!(terms.slope_at_zero() >= 0)) return std::nullopt;
    for (std::size_t j = 0; j < plan.n_pairs(); ++j)
      if (!(terms.slope_per_radian(j) >= 0)) return std::nullopt;
  }
  return Setup{screen_row_targets().front().run, *type, *in, *out};
}

}  // namespace

std::vector<PresumedFloors> presumed_rope_floors(const RopeParams& params, const RopeBatch& batch, Values x,
                                                 Values y, const Budget& budget, double share,
                                                 const Sample& sample, std::span<const double> real) {
  if (switches_per_token(params.scaling)) return {};
  const auto s = setup(params, batch, x, y, budget, sample);
  if (!s) return {};
  // 512 rows of 128 elements: 65536 values, where presumed_share's margin is down to 1.125% for share 0.02,
  // at about 1% of a 4096-token, 32-head pass's time.
  constexpr std::size_t kRows = 512;
  const std::size_t n = band_edges().size();
  Measurement unused;
  const ScreenedSinks none;
  Screened screened(params, batch, x, y, budget, unused, none, s->run, s->type, s->in, s->out, real);
  std::vector<Screened::BandSample> bands(n);
  screened.sample(chosen_or_all(sample.rows, batch.tokens()), kRows, bands);
  std::vector<PresumedFloors> out;
  for (std::size_t b = 0; b < n; ++b) {
    const std::size_t size = bands[b].size;
    if (const auto f = presumed_floors_of(band_edges()[b], {bands[b].abs.data(), size},
                                          {bands[b].ulp.data(), size}, share))
      out.push_back(*f);
  }
  return out;
}

bool measure_rope_screened(const RopeParams& params, const RopeBatch& batch, Values x, Values y,
                           const Budget& budget, Measurement& bands, const ScreenedSinks& sinks,
                           const Sample& sample, std::span<const double> real) {
  if (!screenable(batch, x, y, budget, sample)) return false;
  if (!real.empty() && (switches_per_token(params.scaling) || real.size() != batch.positions.size()))
    throw std::invalid_argument(
        "measure_rope_screened: real positions without a per-token scaling, one per key");
  if (switches_per_token(params.scaling)) {  // each token's list by its position: two plans, rows split
    const PerTokenRows split = per_token_rows(params.scaling, batch, sample.rows);
    const PerTokenSides sides = per_token_sides(params.scaling);
    for (const auto& [rows, scaling] :
         {std::pair{&split.below, &sides.below}, std::pair{&split.from, &sides.from}}) {
      RopeParams one = params;
      one.scaling = *scaling;
      if (!rows->empty() && !measure_rope_screened(one, batch, x, y, budget, bands, sinks, Sample{*rows, {}}))
        return false;  // cannot happen once one side took it: the conditions do not depend on the scaling
    }
    return true;
  }
  const auto s = setup(params, batch, x, y, budget, sample);
  if (!s) return false;
  Screened screened(params, batch, x, y, budget, bands, sinks, s->run, s->type, s->in, s->out, real);
  screened.run(chosen_or_all(sample.rows, batch.tokens()));
  return true;
}

}  // namespace pe::harness

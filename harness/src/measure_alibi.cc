#include "pe/harness/measure_alibi.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <stdexcept>
#include <utility>
#include <vector>

#include "pe/harness/alibi_rows_vector.h"
#include "pe/ref/alibi.h"

namespace pe::harness {
namespace {

// The element's comparison (e's row, position and channel given): the MPFR path every other one equals.
void compare(const ref::Alibi& reference, std::size_t h, const ref::Enclosure& exact, double y,
             const Budget& budget, ElementRecord& e) {
  e.head = static_cast<std::int64_t>(h);
  e.dim = static_cast<std::int64_t>(reference.plan().n_heads());
  e.base = reference.plan().max_bias();
  e.y = y;
  e.exact = exact.value.convert_to<double>();
  const double magnitude = std::fabs(e.exact);
  // The budget is relative to the bias: |φ| = 1, scale = |m·s| (pe/contract.h).
  e.abs_phi = 1.0;
  e.pair = static_cast<std::size_t>(reference.plan().power(h));
  // A bias of exactly 0 (s = 0: the diagonal) has no relative budget: it is held to its head's smallest
  // nonzero bias's, at s = 1 (|m_h|), where a relative floor of the denormals alone (4e-45 in float32)
  // would turn any error into a ratio of 1e40.
  e.scale = magnitude > 0 ? magnitude : std::fabs(reference.slope_enclosure(h).value.convert_to<double>());
  e.budget = budget(nullptr, 1.0, e.pair, e.scale);
  // A bias of that magnitude and the wrong sign is 2·|bias| off; a bias of exactly 0 (the diagonal) shows
  // no slope and is never counted as undecidable.
  e.reach = magnitude > 0 ? 2 * magnitude : INFINITY;
  // A bias at the edge of the type's range (float16 from 65520 on) rounds to infinity: right is
  // the rounding of any value within the budget (the largest finite value or the infinity).
  if (std::isinf(y) || std::isinf(ref::round_to(exact.value, budget.dtype))) {
    const double r = e.budget / std::max(magnitude, 1e-300);
    const bool within = y == ref::round_to(ref::Real(exact.value * (1 - r)), budget.dtype) ||
                        y == ref::round_to(ref::Real(exact.value * (1 + r)), budget.dtype);
    e.abs_error = e.ulp = within ? 0.0 : INFINITY;
  } else {
    e.abs_error = ref::abs_error(y, exact.value);
    e.ulp = e.abs_error / ref::ulp_of(exact.value, budget.dtype);
  }
}

void record(const ref::Alibi& reference, std::size_t h, const ref::Enclosure& exact, double y,
            const Budget& budget, ElementRecord& e, const Sink& sink) {
  compare(reference, h, exact, y, budget, e);
  sink(e);
}

}  // namespace

void measure_alibi(const AlibiParams& params, std::span<const std::int64_t> queries,
                   std::span<const std::int64_t> keys, Values y, const Budget& budget, const Sink& sink,
                   const Sample& sample) {
  const ref::Alibi reference(params);
  const std::size_t Q = queries.size(), K = keys.size();
  const std::vector<std::size_t> rows = chosen_or_all(sample.rows, Q),
                                 columns = chosen_or_all(sample.pairs, K);
  for (std::size_t h = 0; h < reference.plan().n_heads(); ++h) {
    for (std::size_t q : rows) {
      for (std::size_t k : columns) {
        ElementRecord e{.row = static_cast<std::int64_t>(q),
                        .position = std::llabs(reference.plan().multiplier(queries[q], keys[k])),
                        .channel = static_cast<std::int64_t>(k)};
        record(reference, h, reference.bias(h, queries[q], keys[k]), y[(h * Q + q) * K + k], budget, e, sink);
      }
    }
  }
}

namespace {

// A head's constants for the vectors (AlibiLanes): its slope as two doubles and its budget's terms, or
// nothing (`vectors` false) where the vectors cannot equal the MPFR path: not float32, no target, or a
// member's budget that is not RN(RN(relative·scale) + floor) with the terms read back here.
struct HeadLanes {
  AlibiLanes lanes;
  std::vector<double> relative, floor;
  bool vectors = false;

  HeadLanes(const ref::Alibi& reference, std::size_t h, const Budget& budget) {
    const ref::Real& m = reference.slope(h);
    lanes.slope_hi = m.convert_to<double>();
    lanes.slope_lo = ref::Real(m - lanes.slope_hi).convert_to<double>();
    // A power of two: hi·s is exact, and so is the reference's product.
    int e = 0;
    lanes.exact_slope = lanes.slope_lo == 0 && std::frexp(lanes.slope_hi, &e) == 0.5;
    const auto pair = static_cast<std::size_t>(reference.plan().power(h));
    bool fits = budget.dtype == DType::F32 && !alibi_targets().empty();
    for (const Contract* c : budget.members()) {
      // element_budget is relative·scale + floor: at scale 2^600 the floor is far below the last bit.
      relative.push_back(element_budget(*c, budget.dtype, 1.0, pair, 0x1p600) * 0x1p-600);
      floor.push_back(element_budget(*c, budget.dtype, 1.0, pair, 0.0));
      for (const double scale : {1.0, 3.7, 1e6, lanes.slope_hi})
        fits = fits &&
               element_budget(*c, budget.dtype, 1.0, pair, scale) == relative.back() * scale + floor.back();
    }
    lanes.relative = relative.data();
    lanes.floor = floor.data();
    lanes.members = relative.size();
    lanes.extra = budget.extra;
    lanes.max_abs = budget.max_abs;
    vectors = fits;
  }
};

// A run's row, whose columns constant over a head (pair, |φ|, gain, extra, unchanged) stay written across
// runs: `constant` leading elements hold them (a shrinking resize drops the rest, a growing one writes
// zeros).
struct RunRow {
  RopeRow row;
  std::size_t constant = 0;

  void start(std::size_t h) {
    row.head = static_cast<std::int64_t>(h);
    constant = 0;
  }
  void resize(std::size_t n, std::size_t pair) {
    if (n < row.size()) constant = std::min(constant, n);
    row.resize(n);
    for (std::size_t i = constant; i < n; ++i) {
      row.pair[i] = pair;
      row.abs_phi[i] = row.gain[i] = 1;
      row.gain_extra[i] = 0;
      row.unchanged[i] = 0;
    }
    constant = std::max(constant, n);
  }
};

// The (h, q) row's keys [k0, k1) into `out`, its values from the vectors and MPFR where they are undecided
// (`s`, `position`: the row's multipliers).
void fill_run(const ref::Alibi& reference, HeadLanes& head, std::int64_t query,
              std::span<const std::int64_t> keys, const float* y, const std::vector<double>& s,
              const std::vector<std::int64_t>& position, std::size_t k0, std::size_t k1, bool vectors,
              const Budget& budget, RunRow& out) {
  const std::size_t n = k1 - k0;
  RopeRow& row = out.row;
  const auto h = static_cast<std::size_t>(row.head);
  out.resize(n, static_cast<std::size_t>(reference.plan().power(h)));
  std::copy(position.begin() + static_cast<std::ptrdiff_t>(k0),
            position.begin() + static_cast<std::ptrdiff_t>(k1), row.position.begin());
  for (std::size_t i = 0; i < n; ++i) row.channel[i] = static_cast<std::int64_t>(k0 + i);
  std::size_t undecided = n;
  if (vectors) {
    AlibiLanes& l = head.lanes;
    l.y = y + k0;
    l.s = s.data() + k0;
    l.y_out = row.y.data(), l.exact = row.exact.data(), l.abs_error = row.abs_error.data();
    l.ulp = row.ulp.data(), l.budget = row.budget.data(), l.scale = row.scale.data(),
    l.reach = row.reach.data();
    undecided = alibi_lanes(l, n);
  }
  for (std::size_t i = 0; i < n && undecided > 0; ++i) {
    if (vectors && !(row.abs_error[i] < 0)) continue;
    --undecided;
    ElementRecord e{.row = row.row, .position = row.position[i], .channel = row.channel[i]};
    compare(reference, h, reference.bias(h, query, keys[k0 + i]), y[k0 + i], budget, e);
    row.y[i] = e.y, row.exact[i] = e.exact, row.abs_error[i] = e.abs_error, row.ulp[i] = e.ulp;
    row.budget[i] = e.budget, row.scale[i] = e.scale, row.reach[i] = e.reach;
  }
}

// The row's multipliers s as doubles and |s|, one loop per form; false where one is beyond 2^53.
bool multipliers(const AlibiPlan& plan, std::int64_t query, std::span<const std::int64_t> keys,
                 std::vector<double>& s, std::vector<std::int64_t>& position) {
  std::int64_t largest = 0;
  const auto each = [&](auto multiplier) {
    for (std::size_t k = 0; k < keys.size(); ++k) {
      const std::int64_t m = multiplier(keys[k]);
      const std::int64_t a = m < 0 ? -m : m;
      s[k] = static_cast<double>(m);
      position[k] = a;
      largest = a > largest ? a : largest;
    }
  };
  switch (plan.form()) {
    case AlibiForm::Causal:
      each([&](std::int64_t j) { return j - query; });
      break;
    case AlibiForm::Symmetric:
      each([&](std::int64_t j) { return query > j ? j - query : query - j; });
      break;
    case AlibiForm::Bloom:
      each([&](std::int64_t j) { return j; });
      break;
  }
  return largest <= (std::int64_t{1} << 53);
}

// The band (band_edges()) position p lies in, as [lo, hi].
std::pair<std::int64_t, std::int64_t> band_around(std::int64_t p) {
  const auto edges = band_edges();
  std::size_t b = 0;
  while (b + 2 < edges.size() && p >= edges[b + 1]) ++b;
  return {edges[b], b + 2 < edges.size() ? edges[b + 1] - 1 : std::numeric_limits<std::int64_t>::max()};
}

}  // namespace

void measure_alibi_rows(const AlibiParams& params, std::span<const std::int64_t> queries,
                        std::span<const std::int64_t> keys, std::span<const float> y, const Budget& budget,
                        const RowSink& sink, bool unmasked_only) {
  const ref::Alibi reference(params);
  const AlibiPlan& plan = reference.plan();
  const std::size_t Q = queries.size(), K = keys.size();
  RunRow run;
  RopeRow& row = run.row;
  row.dim = static_cast<std::int64_t>(plan.n_heads());
  row.base = plan.max_bias();
  std::vector<double> s(K);
  std::vector<std::int64_t> position(K);
  for (std::size_t h = 0; h < plan.n_heads(); ++h) {
    HeadLanes head(reference, h, budget);
    run.start(h);
    for (std::size_t q = 0; q < Q; ++q) {
      const bool exact_s = multipliers(plan, queries[q], keys, s, position);
      row.row = static_cast<std::int64_t>(q);
      const float* yq = y.data() + (h * Q + q) * K;
      const auto masked = [&](std::size_t k) { return unmasked_only && keys[k] > queries[q]; };
      // Runs of unmasked keys within one band: Measurement::add_row takes each whole.
      for (std::size_t k = 0; k < K;) {
        if (masked(k)) {
          ++k;
          continue;
        }
        const auto [lo, hi] = band_around(position[k]);
        std::size_t end = k + 1;
        while (end < K && !masked(end) && position[end] >= lo && position[end] <= hi) ++end;
        fill_run(reference, head, queries[q], keys, yq, s, position, k, end, head.vectors && exact_s, budget,
                 run);
        sink(row);
        k = end;
      }
    }
  }
}

namespace {

AlibiScreenTuning tuning;
std::atomic<std::size_t> reruns{0}, folded{0};

// check's one pass (measure_alibi_screened): per (head, query) row, its keys split where |s| turns (the
// query, or 0 for BLOOM's s = key) and at the band edges, so that each run's positions are monotone within
// one band (but for a symmetric row's keys within the first band about the query: one run, |s| falling to
// 0 and rising again); each run screened, its loud keys alone measured exactly.
class ScreenedAlibi {
 public:
  ScreenedAlibi(const AlibiParams& params, std::span<const std::int64_t> queries,
                std::span<const std::int64_t> keys, std::span<const float> y, const Budget& budget,
                Measurement& bands, const AlibiScreenedSinks& sinks, bool unmasked_only)
      : reference_(params),
        plan_(reference_.plan()),
        queries_(queries),
        keys_(keys),
        y_(y),
        budget_(budget),
        bands_(bands),
        sinks_(sinks),
        unmasked_only_(unmasked_only),
        keys_d_(keys.begin(), keys.end()),
        s_(keys.size()),
        position_(keys.size()),
        loud_(keys.size()) {
    // The multipliers' range: s = key − query, −|key − query| or key.
    if (!keys.empty() && !queries.empty()) {
      const auto [q_lo, q_hi] = std::minmax_element(queries.begin(), queries.end());
      const std::int64_t span = std::max(std::llabs(keys.back() - *q_lo), std::llabs(keys.front() - *q_hi));
      s_lo_ = plan_.form() == AlibiForm::Bloom ? keys.front() : -span;
      const std::int64_t s_hi = plan_.form() == AlibiForm::Bloom ? keys.back() : span;
      if (s_hi - s_lo_ < (std::int64_t{1} << 22)) known_.resize(static_cast<std::size_t>(s_hi - s_lo_ + 1));
    }
    table_range();
    run_.row.dim = static_cast<std::int64_t>(plan_.n_heads());
    run_.row.base = plan_.max_bias();
    switch (plan_.form()) {
      case AlibiForm::Causal:
        multiplier_ = AlibiScreen::Multiplier::KeyMinusQuery;
        break;
      case AlibiForm::Symmetric:
        multiplier_ = AlibiScreen::Multiplier::MinusDistance;
        break;
      case AlibiForm::Bloom:
        multiplier_ = AlibiScreen::Multiplier::Key;
        break;
    }
  }

  const ref::Alibi& reference() const { return reference_; }
  // The multipliers the table covers (none unless keys are consecutive integers): every s of a key and a
  // query (at most 0 in the symmetric form and where only unmasked keys count), at most 2^20 of them.
  void table_range() {
    if (keys_.empty() || queries_.empty()) return;
    for (std::size_t k = 1; k < keys_.size(); ++k)
      if (keys_[k] != keys_[k - 1] + 1) return;
    const auto [q_lo, q_hi] = std::minmax_element(queries_.begin(), queries_.end());
    std::int64_t least = INT64_MAX, largest = INT64_MIN;
    for (const std::int64_t q : {*q_lo, *q_hi}) {
      for (const std::int64_t k : {keys_.front(), keys_.back()}) {
        const std::int64_t s = plan_.multiplier(q, k);
        least = std::min(least, s), largest = std::max(largest, s);
      }
    }
    if (plan_.form() == AlibiForm::Symmetric) largest = 0;  // −|k − q| peaks inside the corners
    if (plan_.form() == AlibiForm::Causal && unmasked_only_) largest = std::min<std::int64_t>(largest, 0);
    consecutive_ = true;
    if (largest - least >= (std::int64_t{1} << 20)) return;
    table_.least = least, table_.largest = largest;
  }
  void run() {
    const std::size_t K = keys_.size();
    for (std::size_t h = 0; h < plan_.n_heads(); ++h) {
      head_.emplace(reference_, h, budget_);
      budget_terms(head_->lanes);
      run_.start(h);
      tally_line_.reset();
      // Before the table: its build folds the ties known_ holds, and the last head's are not this head's
      // (another slope, other exact values).
      std::fill(known_.begin(), known_.end(), Known{});
      start_table();
      for (std::size_t q = 0; q < queries_.size(); ++q) {
        q_ = q;
        run_.row.row = static_cast<std::int64_t>(q);
        yq_ = y_.data() + (h * queries_.size() + q) * K;
        // Masked keys (after the query) are a suffix, the keys being in order; |s| falls before the turn
        // and rises from it.
        const std::int64_t query = queries_[q];
        const std::int64_t turn = plan_.form() == AlibiForm::Bloom ? 0 : query;
        const std::size_t end = unmasked_only_ ? first_above(query) : K;
        const std::size_t split = std::min(end, first_above(turn - 1));
        if (plan_.form() == AlibiForm::Symmetric && end == K) {
          // The keys within the first band about the query as one run, |s| falling to 0 and rising again
          // (the kernel takes s per key, the table reads on past s = 0): half the runs, each a cost.
          const std::int64_t reach = band_around(0).second;
          const std::size_t a = first_above(query - reach - 1), b = first_above(query + reach);
          if (a < split && split < b) {
            segment(0, a), screened_run(a, b, true), segment(b, K);
            continue;
          }
        }
        segment(0, split);
        segment(split, end);
      }
    }
  }

 private:
  // The first key above v: an index from v itself where keys are consecutive integers (no search).
  std::size_t first_above(std::int64_t v) const {
    if (consecutive_) {
      const std::int64_t i = v < keys_.front() ? 0 : v - keys_.front() + 1;
      return static_cast<std::size_t>(std::min<std::int64_t>(i, static_cast<std::int64_t>(keys_.size())));
    }
    return static_cast<std::size_t>(std::upper_bound(keys_.begin(), keys_.end(), v) - keys_.begin());
  }
  std::int64_t multiplier(std::int64_t key) const {
    const std::int64_t query = queries_[q_];
    switch (plan_.form()) {
      case AlibiForm::Causal:
        return key - query;
      case AlibiForm::Symmetric:
        return query > key ? key - query : query - key;
      case AlibiForm::Bloom:
        break;
    }
    return key;
  }
  std::int64_t position(std::size_t k) const { return std::llabs(multiplier(keys_[k])); }

  // Keys [a, b), their positions monotone: runs within one band each.
  void segment(std::size_t a, std::size_t b) {
    for (std::size_t k = a; k < b;) {
      const auto [lo, hi] = band_around(position(k));
      if (consecutive_ && b - k > 1) {  // |s| moves by 1 a key, one way: the band's edge is so many keys off
        const std::int64_t p = position(k), left = position(k + 1) > p ? hi - p : p - lo;
        const std::size_t end =
            k + static_cast<std::size_t>(std::min<std::int64_t>(left + 1, static_cast<std::int64_t>(b - k)));
        screened_run(k, end);
        k = end;
        continue;
      }
      std::size_t step = 1,
                  end = k + 1;  // a galloping search for the run's end (its positions leave [lo, hi])
      const auto inside = [&](std::size_t i) {
        const std::int64_t p = position(i);
        return p >= lo && p <= hi;
      };
      while (end + step <= b && inside(end + step - 1)) end += step, step *= 2;
      while (step > 1) {
        step /= 2;
        if (end + step <= b && inside(end + step - 1)) end += step;
      }
      while (end < b && inside(end)) ++end;
      screened_run(k, end);
      k = end;
    }
  }

  // A loud key whose multiplier s and output y equal those of a key measured exactly before in this head
  // (a Toeplitz bias repeats each distance's value in every row) has that key's exact error, ULPs and
  // ratio: where those count as judged (no violation, not NaN, decidable) and its ratio is at most the worst
  // list's last, the key changes nothing but the counts and the tails (the exact values), as a quiet one. Per
  // head, indexed by s − s_lo_ (none where the range of s is too large).
  struct Known {
    std::uint32_t y_bits = 0;
    bool known = false, encoding = false;
    double abs_error = 0, ulp = 0, ratio = 0;
  };
  struct Ties {
    std::size_t quiet = 0, encoding = 0, abs_kept = 0, ulp_kept = 0;
  };
  // Moves the run's ties out of loud_ (the loud keys left first, in order) and their values into the tails.
  Ties ties(std::size_t k0, const AlibiScreen& r, const Measurement::ScreenRoom& room);
  void remember(const ElementRecord& e, std::int64_t s);
  // The head's budget as AlibiScreen takes it.
  void budget_terms(const AlibiLanes& l) {
    budget_slope_ = 0, floor_lo_ = floor_hi_ = l.max_abs;
    if (l.members == 0) return;
    floor_lo_ = INFINITY, floor_hi_ = 0;
    for (std::size_t m = 0; m < l.members; ++m) {
      budget_slope_ = std::max(budget_slope_, l.relative[m]);
      floor_lo_ = std::min(floor_lo_, l.floor[m]), floor_hi_ = std::max(floor_hi_, l.floor[m]);
    }
    floor_lo_ += l.extra, floor_hi_ += l.extra;
  }
  std::size_t power() const {
    return static_cast<std::size_t>(plan_.power(static_cast<std::size_t>(run_.row.head)));
  }
  AlibiScreen bars(const Measurement::ScreenRoom& room, bool check_reach) const;
  // The sinks' line for the head's power, asked again only once they met a record (its only cause to rise).
  double tally_line() const {
    if (!tally_line_) tally_line_ = sinks_.line ? sinks_.line(power()) : INFINITY;
    return *tally_line_;
  }
  template <class F>
  void each_band(const F& f) const;
  // The bars a table was built against; a run may use it where its band's bars are at least those (they
  // only rise, but a NaN error makes a band's maxima NaN, and every compare with them false).
  struct TableBars {
    struct Band {
      std::int64_t lo;  // band_around's
      Measurement::ScreenRoom room;
    };
    std::vector<Band> bands;
    double tally = 0;
    // The bars of position's band (null: none).
    const Measurement::ScreenRoom* room(std::int64_t position) const {
      const auto lo = band_around(position).first;
      const auto b = std::find_if(bands.begin(), bands.end(), [&](const Band& x) { return x.lo == lo; });
      return b == bands.end() ? nullptr : &b->room;
    }
    bool holds(std::int64_t position, const Measurement::ScreenRoom& now, double tally_now) const {
      const Measurement::ScreenRoom* b = room(position);
      if (b == nullptr || !b->usable || !(tally_now >= tally)) return false;
      const Measurement::ScreenRoom& then = *b;
      return now.max_abs >= then.max_abs && now.max_ulp >= then.max_ulp && now.ratio_bar >= then.ratio_bar &&
             now.abs_floor >= then.abs_floor && now.ulp_floor >= then.ulp_floor;
    }
    bool same(const TableBars& o) const {
      const auto eq = [](const Measurement::ScreenRoom& a, const Measurement::ScreenRoom& b) {
        return a.usable == b.usable && a.max_abs == b.max_abs && a.max_ulp == b.max_ulp &&
               a.ratio_bar == b.ratio_bar && a.abs_floor == b.abs_floor && a.ulp_floor == b.ulp_floor;
      };
      if (bands.size() != o.bands.size() || !(tally == o.tally)) return false;
      for (std::size_t i = 0; i < bands.size(); ++i)
        if (bands[i].lo != o.bands[i].lo || !eq(bands[i].room, o.bands[i].room)) return false;
      return true;
    }
  };
  TableBars table_bars() const;
  void build_table();
  void start_table();
  void note_bounded(std::size_t slow);
  void fold_tie(std::int64_t s);
  // `turns`: s rises to the query's 0 and falls again (a symmetric row's keys about it).
  void screened_run(std::size_t k0, std::size_t k1, bool turns = false);
  void exact_run(std::size_t k0, std::size_t k1);
  void loud(std::size_t k0, std::size_t count);

  ref::Alibi reference_;
  const AlibiPlan& plan_;
  std::span<const std::int64_t> queries_, keys_;
  std::span<const float> y_;
  const Budget& budget_;
  Measurement& bands_;
  const AlibiScreenedSinks& sinks_;
  bool unmasked_only_;
  AlibiScreen::Multiplier multiplier_ = AlibiScreen::Multiplier::Key;
  bool consecutive_ = false;  // keys are consecutive integers
  std::vector<double> keys_d_, s_;
  std::vector<std::int64_t> position_;
  std::vector<std::uint32_t> loud_;
  std::optional<HeadLanes> head_;
  RunRow run_;
  std::size_t q_ = 0;
  const float* yq_ = nullptr;
  mutable std::optional<double> tally_line_;  // tally_line()'s, per head
  // The loud keys gathered: outputs, keys, multipliers and positions.
  double budget_slope_ = 0, floor_lo_ = 0, floor_hi_ = 0;
  std::vector<Known> known_;
  std::int64_t s_lo_ = 0;
  // The head's quiet bounds (AlibiScreen::quiet_lo/hi) per multiplier s in [least, largest], where keys are
  // consecutive integers and the head has 8 elements or more per entry, in one array each: from the least s
  // up to the largest, then down again from the one below it (a symmetric row's keys after the query, whose
  // s falls), so that a run whose s rises to the largest (0, the query) and falls again reads them in order.
  struct QuietTable {
    std::int64_t least = 0, largest = -1;
    std::size_t size = 0;                     // largest − least + 1 where built
    std::vector<float> lo, hi;                // 2·size − 1 each
    std::vector<float> screen_lo, screen_hi;  // the first `size` as alibi_quiet_bounds gave them (fold_tie)
    std::vector<double> s;
    TableBars bars;  // those the bounds were built against
    std::size_t slow = 0;
    bool built() const { return !lo.empty(); }
    bool holds(std::int64_t position, const Measurement::ScreenRoom& now, double tally_now) const {
      return bars.holds(position, now, tally_now);
    }
    std::size_t index(std::int64_t v) const { return static_cast<std::size_t>(v - least); }
    // s0's entry in the order of a run from it, rising (on past the largest, falling) or falling.
    std::size_t at(std::int64_t s0, bool falling) const {
      return falling ? size - 1 + static_cast<std::size_t>(largest - s0) : index(s0);
    }
    void set(std::int64_t v, float l, float h) {
      lo[at(v, false)] = lo[at(v, true)] = l;
      hi[at(v, false)] = hi[at(v, true)] = h;
    }
  } table_;
  std::vector<float> loud_y_;
  std::vector<std::int64_t> loud_keys_, loud_position_;
  std::vector<double> loud_s_;
};

// The screen's slope, budget, bars (shrunk) and floors for a run of the head against `room`'s band.
AlibiScreen ScreenedAlibi::bars(const Measurement::ScreenRoom& room, bool check_reach) const {
  // Under the exact path's bars (bar·budget·(1 − 2^-49), the maxima, the tally's line) by a margin that
  // covers the screen's budget against the exact one (2^-46 apart at most).
  constexpr double kShrink = 1 - 0x1p-44;
  const AlibiLanes& l = head_->lanes;
  return {.slope_hi = l.slope_hi,
          .slope_lo = l.slope_lo,
          .exact_slope = l.exact_slope,
          .budget_slope = budget_slope_,
          .floor_lo = floor_lo_,
          .floor_hi = floor_hi_,
          .ratio_bar = room.ratio_bar * kShrink,
          .tally = tally_line() * kShrink,
          .max_abs = room.max_abs * kShrink,
          .max_ulp = room.max_ulp * kShrink,
          .abs_floor = room.abs_floor,
          .ulp_floor = room.ulp_floor,
          .check_reach = check_reach};
}

// Calls f(s, last, room) for each run [s, last] of the table's multipliers within one band of |s|.
template <class F>
void ScreenedAlibi::each_band(const F& f) const {
  for (std::int64_t s = table_.least; s <= table_.largest;) {
    const auto [lo, hi] = band_around(std::llabs(s));
    const std::int64_t last = s < 0 ? std::min(table_.largest, -lo) : std::min(table_.largest, hi);
    f(s, last, bands_.screen_bars(std::llabs(s)));
    s = last + 1;
  }
}

// What the bounds depend on besides the head: each band's bars and floors, and the tally's line (shrunk).
ScreenedAlibi::TableBars ScreenedAlibi::table_bars() const {
  TableBars out;
  each_band([&](std::int64_t s, std::int64_t, const Measurement::ScreenRoom& room) {
    out.bands.push_back({band_around(std::llabs(s)).first, room});
  });
  out.tally = bars({}, false).tally;
  return out;
}

// The head's quiet bounds against the bars as they stand.
void ScreenedAlibi::build_table() {
  each_band([&](std::int64_t s, std::int64_t last, const Measurement::ScreenRoom& room) {
    const std::size_t from = table_.index(s), n = static_cast<std::size_t>(last - s + 1);
    float *lo = table_.lo.data() + from, *hi = table_.hi.data() + from;
    if (!room.usable) {
      std::fill_n(lo, n, NAN), std::fill_n(hi, n, NAN);
      return;
    }
    std::vector<double>& sv = table_.s;
    sv.resize(n);
    for (std::size_t i = 0; i < n; ++i) sv[i] = static_cast<double>(s + static_cast<std::int64_t>(i));
    const AlibiScreen b = bars(room, std::max(std::llabs(s), std::llabs(last)) > bands_.promised());
    alibi_quiet_bounds(b, sv.data(), n, lo, hi);
  });
  table_.bars = table_bars();
  const std::size_t size = table_.size;
  for (std::vector<float>* v : {&table_.lo, &table_.hi})
    std::reverse_copy(v->begin(), v->begin() + static_cast<std::ptrdiff_t>(size - 1),
                      v->begin() + static_cast<std::ptrdiff_t>(size));
  table_.slow = 0;
  table_.screen_lo.assign(table_.lo.begin(), table_.lo.begin() + static_cast<std::ptrdiff_t>(size));
  table_.screen_hi.assign(table_.hi.begin(), table_.hi.begin() + static_cast<std::ptrdiff_t>(size));
  if (!known_.empty())
    for (std::int64_t s = table_.least; s <= table_.largest; ++s)
      if (known_[static_cast<std::size_t>(s - s_lo_)].known) fold_tie(s);
}

// A tie (Known: a key measured exactly before, its s and output repeated) whose exact values the tails do
// not keep (at or below both floors) is a key ties() only counts, as the kernel counts a key within its
// quiet bounds: where its output is the float next outside s's bounds (or s has none), they grow to take it,
// so that such keys stay in the kernel's fast loop (the float32 kernel's worst ULPs repeat at s, 2s, 4s and
// in every fourth head, and each row meets them). Tested against the bars the table was built with: the
// kernel uses it only where a run's bars are at least those (TableBars::holds), so there ties() would find
// it a tie with nothing kept too (and its encoding counted: |e| > 0). Called wherever known_[s] changes: the
// bounds take the tie ties() would take now, and no other (a tie forgotten is measured again).
void ScreenedAlibi::fold_tie(std::int64_t s) {
  if (!table_.built() || s < table_.least || s > table_.largest) return;
  const Known& c = known_[static_cast<std::size_t>(s - s_lo_)];
  const auto y = std::bit_cast<float>(c.y_bits);
  const Measurement::ScreenRoom* room = table_.bars.room(std::llabs(s));
  // A zero equals its opposite, whose bits ties() would not take.
  const bool folds = c.known && c.encoding && std::isfinite(y) && y != 0 && room != nullptr && room->usable &&
                     c.ratio <= room->ratio_bar && c.abs_error <= room->abs_floor && c.ulp <= room->ulp_floor;
  float lo = table_.screen_lo[table_.index(s)], hi = table_.screen_hi[table_.index(s)];
  // Only a float next to an end: no other joins the bounds.
  const bool none = std::isnan(lo) || std::isnan(hi);
  if (folds && (none || y == std::nextafter(hi, INFINITY) || y == std::nextafter(lo, -INFINITY))) {
    lo = none ? y : std::min(lo, y), hi = none ? y : std::max(hi, y);
    folded.fetch_add(1, std::memory_order_relaxed);
  }
  table_.set(s, lo, hi);
}

// Keys the bounds did not take: once they reach 8 times the table's size, the table is built again where the
// bars or floors rose since (a build costs a few slow keys per entry).
void ScreenedAlibi::note_bounded(std::size_t slow) {
  table_.slow += slow;
  if (table_.slow < 8 * table_.size) return;
  table_.slow = 0;
  if (!table_.bars.same(table_bars())) build_table();
}

// Per head: the table sized and built where it applies (keys consecutive, 8 elements or more per entry).
void ScreenedAlibi::start_table() {
  const std::size_t size = table_.largest >= table_.least ? table_.index(table_.largest) + 1 : 0;
  const bool applies =
      tuning.quiet_bounds && head_->vectors && size != 0 && queries_.size() * keys_.size() >= 8 * size;
  table_.size = applies ? size : 0;
  for (std::vector<float>* v : {&table_.lo, &table_.hi}) v->resize(applies ? 2 * size - 1 : 0);
  if (applies) build_table();
}

void ScreenedAlibi::screened_run(std::size_t k0, std::size_t k1, bool turns) {
  const std::size_t n = k1 - k0;
  if (n == 0) return;
  const std::int64_t p0 = position(k0), p1 = position(k1 - 1);
  const std::int64_t lo = std::min(p0, p1), hi = std::max(p0, p1);
  const Measurement::ScreenRoom room =
      head_->vectors ? bands_.screen_room(lo, hi, n + AlibiLanes::kLanes) : Measurement::ScreenRoom{};
  if (!room.usable) return exact_run(k0, k1);
  AlibiScreen r = bars(room, hi > bands_.promised());
  r.y = yq_ + k0;
  r.keys = keys_d_.data() + k0;
  r.query = static_cast<double>(queries_[q_]);
  r.multiplier = multiplier_;
  r.loud = loud_.data();
  r.abs_tail = room.abs_tail;
  r.ulp_tail = room.ulp_tail;
  const std::int64_t s0 = multiplier(keys_[k0]), s1 = multiplier(keys_[k1 - 1]);
  if (table_.built() && std::min(s0, s1) >= table_.least && std::max(s0, s1) <= table_.largest &&
      table_.holds(lo, room, r.tally)) {
    // A run that turns reads on from s0 past the largest (0: the query is one of the consecutive keys).
    const std::size_t at = table_.at(s0, !turns && s1 < s0);
    r.quiet_lo = table_.lo.data() + at, r.quiet_hi = table_.hi.data() + at;
  }
  alibi_screen(r, n);
  if (table_.built()) note_bounded(n - r.bounded);
  const Ties t = r.loud_count != 0 ? ties(k0, r, room) : Ties{};
  // Every quiet element is in the percentiles (no sample here: measure_alibi_screened refuses one).
  const std::size_t quiet = n - r.loud_count + t.quiet;
  bands_.screen_quiet(lo, quiet, r.quiet_encoding + t.encoding, quiet, r.abs_kept + t.abs_kept,
                      r.ulp_kept + t.ulp_kept);
  if (r.loud_count > t.quiet) loud(k0, r.loud_count - t.quiet);
}

// The loud keys of a screened run (loud_[0, count), from k0), as measure_alibi_rows measures them, in order.
void ScreenedAlibi::loud(std::size_t k0, std::size_t count) {
  loud_y_.resize(count), loud_keys_.resize(count), loud_position_.resize(count), loud_s_.resize(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t k = k0 + loud_[i];
    loud_y_[i] = yq_[k];
    loud_keys_[i] = keys_[k];
    const std::int64_t m = multiplier(keys_[k]);
    loud_s_[i] = static_cast<double>(m);
    loud_position_[i] = std::llabs(m);
  }
  fill_run(reference_, *head_, queries_[q_], loud_keys_, loud_y_.data(), loud_s_, loud_position_, 0, count,
           true, budget_, run_);
  RopeRow& row = run_.row;
  for (std::size_t i = 0; i < count; ++i) {
    row.channel[i] = static_cast<std::int64_t>(k0 + loud_[i]);
    const ElementRecord e = row.record(i);
    bands_.add_screened(e, true);
    if (sinks_.loud) sinks_.loud(e), tally_line_.reset();
    remember(e, multiplier(keys_[k0 + loud_[i]]));
  }
}

ScreenedAlibi::Ties ScreenedAlibi::ties(std::size_t k0, const AlibiScreen& r,
                                        const Measurement::ScreenRoom& room) {
  Ties t;
  if (known_.empty()) return t;
  std::size_t left = 0;
  for (std::size_t i = 0; i < r.loud_count; ++i) {
    const std::size_t k = k0 + loud_[i];
    const Known& c = known_[static_cast<std::size_t>(multiplier(keys_[k]) - s_lo_)];
    // Its ratio must not enter the worst list either (at most its last ratio, as the bar is).
    if (!(c.known && c.y_bits == std::bit_cast<std::uint32_t>(yq_[k]) && c.ratio <= room.ratio_bar)) {
      loud_[left++] = loud_[i];
      continue;
    }
    ++t.quiet;
    t.encoding += c.encoding ? 1 : 0;
    // The tails keep what push() keeps: values above the floor (room for n + kLanes each).
    if (c.abs_error > room.abs_floor)
      room.abs_tail[r.abs_kept + t.abs_kept++] = c.abs_error == 0 ? 0.0 : c.abs_error;
    if (c.ulp > room.ulp_floor) room.ulp_tail[r.ulp_kept + t.ulp_kept++] = c.ulp == 0 ? 0.0 : c.ulp;
  }
  return t;
}

void ScreenedAlibi::remember(const ElementRecord& e, std::int64_t s) {
  if (known_.empty()) return;
  const bool judged = !(e.position > bands_.promised() && e.undecidable());
  if (!(e.ratio() <= 1) || std::isnan(e.abs_error) || std::isnan(e.ulp) || !judged) return;
  known_[static_cast<std::size_t>(s - s_lo_)] = {std::bit_cast<std::uint32_t>(static_cast<float>(e.y)),
                                                 true,
                                                 std::isfinite(e.reach),
                                                 e.abs_error,
                                                 e.ulp,
                                                 e.ratio()};
  fold_tie(s);
}

// A run the screen cannot take: measure_alibi_rows's, into `bands` whole.
void ScreenedAlibi::exact_run(std::size_t k0, std::size_t k1) {
  for (std::size_t k = k0; k < k1; ++k) {
    const std::int64_t m = multiplier(keys_[k]);
    s_[k] = static_cast<double>(m);
    position_[k] = std::llabs(m);
  }
  fill_run(reference_, *head_, queries_[q_], keys_, yq_, s_, position_, k0, k1, head_->vectors, budget_,
           run_);
  bands_.add_row(run_.row);
  if (sinks_.row) sinks_.row(run_.row), tally_line_.reset();
}

}  // namespace

namespace {

// 1 / ulp(x) in float32 (InverseUlpF32's: 2^(23 − max(binade, −126))), for a sample's estimates.
double inverse_ulp_f32(double x) {
  const auto biased = static_cast<std::int64_t>((std::bit_cast<std::uint64_t>(x) >> 52) & 0x7ff);
  return std::bit_cast<double>(
      static_cast<std::uint64_t>(1023 + 23 - std::max<std::int64_t>(biased - 1023, -126)) << 52);
}

// The sample behind presumed floors: 128 (head, query) rows evenly spaced, about 512 unmasked keys in each,
// each element's |y − m·s| and its float32 ULPs (m the slope's leading double: close enough for a guess),
// per band.
struct EstimateSample {
  std::vector<std::vector<double>> abs, ulp;
};
EstimateSample sample(const ref::Alibi& reference, std::span<const std::int64_t> queries,
                      std::span<const std::int64_t> keys, std::span<const float> y, bool unmasked_only) {
  const AlibiPlan& plan = reference.plan();
  const std::size_t Q = queries.size(), K = keys.size(), rows = plan.n_heads() * Q;
  const std::size_t stride = std::max<std::size_t>(1, rows / 128), step = std::max<std::size_t>(1, K / 512);
  const auto edges = band_edges();
  EstimateSample out{std::vector<std::vector<double>>(edges.size()),
                     std::vector<std::vector<double>>(edges.size())};
  std::size_t h_of = SIZE_MAX;
  double m = 0;
  for (std::size_t r = 0; r < rows; r += stride) {
    const std::size_t h = r / Q, q = r % Q;
    if (h != h_of) h_of = h, m = reference.slope(h).convert_to<double>();
    for (std::size_t k = 0; k < K && !(unmasked_only && keys[k] > queries[q]); k += step) {
      const std::int64_t s = plan.multiplier(queries[q], keys[k]);
      const auto b = static_cast<std::size_t>(
          std::upper_bound(edges.begin() + 1, edges.end() - 1, std::llabs(s)) - edges.begin() - 1);
      const double e = m * static_cast<double>(s), err = std::fabs(y[r * K + k] - e);
      const double a = std::isnan(err) ? INFINITY : err;
      out.abs[b].push_back(a);
      out.ulp[b].push_back(a * inverse_ulp_f32(e));
    }
  }
  return out;
}

// Per band, the sample's level that its presumed_share exceeds (measure.h; none below 1024 values). The
// nearer the 99th percentile, the fewer estimates kept; the margin keeps reruns rare. With the share, the
// tails take their room for about that many estimates at once (without it they grew by doubling from 1024
// values, copying each time: 4% of a 32 x 1024 x 1024 check).
void presume(EstimateSample sample, double share, Measurement& bands) {
  const auto edges = band_edges();
  for (std::size_t b = 0; b < sample.abs.size(); ++b)
    if (const auto f = presumed_floors_of(edges[b], sample.abs[b], sample.ulp[b], share))
      bands.presume_floors(f->position, f->abs, f->ulp, f->share);
}

}  // namespace

void tune_alibi_screen(const AlibiScreenTuning& t) noexcept { tuning = t; }
const AlibiScreenTuning& alibi_screen_tuning() noexcept { return tuning; }
std::size_t alibi_screen_reruns() noexcept { return reruns.load(std::memory_order_relaxed); }
std::size_t alibi_screen_folded_ties() noexcept { return folded.load(std::memory_order_relaxed); }

bool measure_alibi_screened(const AlibiParams& params, std::span<const std::int64_t> queries,
                            std::span<const std::int64_t> keys, std::span<const float> y,
                            const Budget& budget, Measurement& bands, const AlibiScreenedSinks& sinks,
                            bool unmasked_only) {
  constexpr std::int64_t kLimit = std::int64_t{1} << 52;  // |key − query| < 2^53: exact as a double
  const auto small = [&](std::int64_t v) { return v > -kLimit && v < kLimit; };
  if (bands.samples_percentiles())
    throw std::logic_error("measure_alibi_screened: a measurement sampling its percentiles");
  if (budget.dtype != DType::F32 || alibi_targets().empty() || !std::is_sorted(keys.begin(), keys.end()) ||
      !std::all_of(keys.begin(), keys.end(), small) || !std::all_of(queries.begin(), queries.end(), small))
    return false;
  // A correct float32 kernel's ULP errors grow from head to head (the slope's rounding), so the tails' own
  // floors, which rise only with what came before, keep about a third of the estimates: presumed floors,
  // confirmed at the end, keep a few percent.
  if (y.size() < tuning.presume_from || bands.count() != 0) {
    ScreenedAlibi(params, queries, keys, y, budget, bands, sinks, unmasked_only).run();
    return true;
  }
  const Measurement before = bands;
  ScreenedAlibi pass(params, queries, keys, y, budget, bands, sinks, unmasked_only);
  presume(sample(pass.reference(), queries, keys, y, unmasked_only), tuning.presumed_share, bands);
  pass.run();
  if (bands.presumptions_held()) return true;
  // The sinks met every record already (and the tally's line only rose: the percentiles stay within the
  // screen's radius).
  reruns.fetch_add(1, std::memory_order_relaxed);
  bands = before;
  const AlibiScreenedSinks line_only{nullptr, nullptr, sinks.line};
  ScreenedAlibi(params, queries, keys, y, budget, bands, line_only, unmasked_only).run();
  return true;
}

void measure_alibi_slopes(const AlibiParams& params, Values y, const Budget& budget, const Sink& sink) {
  const ref::Alibi reference(params);
  for (std::size_t h = 0; h < reference.plan().n_heads(); ++h) {
    ElementRecord e{.position = 1, .channel = static_cast<std::int64_t>(h)};
    record(reference, h, reference.slope_enclosure(h), y[h], budget, e, sink);
  }
}

}  // namespace pe::harness

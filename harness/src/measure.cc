#include "pe/harness/measure.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cfloat>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "histogram_select.h"
#include "pe/harness/kth_largest.h"
#include "pe/harness/large_vector.h"
#include "pe/ref/fast_trig.h"
#include "pe/ref/fma_clones.h"
#include "pe/ref/reference.h"
#include "pe/ref/temperature.h"

namespace pe::harness {
namespace {

constexpr std::int64_t kEdges[] = {
    0, 1'000, 10'000, 100'000, 1'000'000, 10'000'000, 100'000'000, 1'000'000'000, std::int64_t{1} << 31};

// The nearest-rank 99th percentile of n values: the k-th largest.
std::size_t rank_from_top(std::size_t n) {
  return n - static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n)) - 1);
}

}  // namespace

std::vector<std::size_t> chosen_or_all(const std::vector<std::size_t>& chosen, std::size_t n) {
  if (!chosen.empty()) return chosen;
  std::vector<std::size_t> all(n);
  for (std::size_t i = 0; i < n; ++i) all[i] = i;
  return all;
}

double Values::typed_at(std::size_t i) const {
  switch (type_) {
    case DType::F32:
      return static_cast<const float*>(typed_)[i];
    case DType::F64:
      return static_cast<const double*>(typed_)[i];
    case DType::BF16:
      return to_float(static_cast<const BFloat16*>(typed_)[i]);
    case DType::F16:
      return to_float(static_cast<const Float16*>(typed_)[i]);
  }
  return 0;
}

namespace {
double as_double(double v) { return v; }
double as_double(float v) { return v; }
double as_double(BFloat16 v) { return to_float(v); }
double as_double(Float16 v) { return to_float(v); }
}  // namespace

void Values::gather(std::size_t first, std::span<const std::size_t> index, double* out) const {
  const auto each = [&](const auto* p) {
    for (std::size_t k = 0; k < index.size(); ++k) out[k] = as_double(p[first + index[k]]);
  };
  if (buffer_ != nullptr) return buffer_->gather(first, index, out);
  if (typed_ == nullptr) return each(span_.data());
  switch (type_) {
    case DType::F32:
      return each(static_cast<const float*>(typed_));
    case DType::F64:
      return each(static_cast<const double*>(typed_));
    case DType::BF16:
      return each(static_cast<const BFloat16*>(typed_));
    case DType::F16:
      return each(static_cast<const Float16*>(typed_));
  }
}

double Budget::operator()(const RopePlan* plan, double abs_phi, std::size_t pair, double scale) const {
  const auto contracts = members();
  return combine([&](std::size_t m) {
    const Contract& c = *contracts[m];
    if (plan != nullptr) return rope_element_budget(c, *plan, dtype, abs_phi, pair, scale);
    return real_scale != 0 ? table_element_budget(c, dtype, abs_phi, pair, real_scale) * scale
                           : element_budget(c, dtype, abs_phi, pair, scale);
  });
}

RopeSlopes::RopeSlopes(std::span<const Contract* const> contracts, const RopePlan& plan, DType out,
                       std::size_t slots) {
  for (const Contract* c : contracts) terms_.emplace_back(*c, plan, out);
  slopes_.resize(slots * terms_.size());
}

double Budget::add_term(double abs_embedding) const {
  if (contract != nullptr) return add_budget(*contract, dtype, abs_embedding);
  double b = 0;
  for (const Contract* c : any_of) b = std::max(b, add_budget(*c, dtype, abs_embedding));
  return b;
}

std::span<const std::int64_t> band_edges() { return kEdges; }

Measurement::Measurement(std::int64_t limit, std::size_t keep_worst) : keep_(keep_worst) {
  for (std::size_t k = 0; k + 1 < std::size(kEdges) && kEdges[k] <= limit; ++k) {
    Acc a;
    a.stats.lo = kEdges[k];
    a.stats.hi = std::min(kEdges[k + 1] - 1, limit);
    bands_.push_back(a);
  }
  // The last band takes 2^31 itself and, without a smaller limit, every larger position.
  if (!bands_.empty() && bands_.back().stats.lo == kEdges[std::size(kEdges) - 2])
    bands_.back().stats.hi = limit;
}

void Measurement::expect(std::size_t n) {
  if (count_ != 0) throw std::logic_error("Measurement::expect after the first add");
  expected_ = n;
  // A band of m <= n elements needs its rank_from_top(m) <= rank_from_top(n) largest.
  cap_ = n == 0 ? 0 : rank_from_top(n);
}

void Measurement::expect_band(std::int64_t position, std::size_t n, std::size_t rows) {
  if (count_ != 0) throw std::logic_error("Measurement::expect_band after the first add");
  if (bands_.empty() || n == 0) return;
  Acc& a = band_of(position);
  a.expected += n;
  a.expected_rows += rows;
  a.cap = rank_from_top(a.expected);
}

void Measurement::sample_percentiles(std::size_t block, std::size_t from, std::size_t blocks_from) {
  if (count_ != 0) throw std::logic_error("Measurement::sample_percentiles after the first add");
  if (!std::has_single_bit(block))
    throw std::invalid_argument("Measurement::sample_percentiles: block " + std::to_string(block) +
                                ", not a power of two");
  sample_shift_ = std::countr_zero(block);
  for (Acc& a : bands_)  // 0 and 0: every band, expected or not
    a.sampled = a.expected >= from && a.expected_rows >= blocks_from * block;
}

bool Measurement::samples_percentiles() const {
  return std::any_of(bands_.begin(), bands_.end(), [](const Acc& a) { return a.sampled; });
}

// Room for n more values past `used` (the buffer from large_vector.h's pool: its contents unspecified).
void Measurement::Tail::room(std::size_t n, std::size_t cap) {
  if (used + n <= values.size()) return;
  // Doubling up to what a compaction leaves room for: a part of a batch (Measurement::merge) set up with
  // the whole's cap holds no more than it keeps.
  const std::size_t grown = std::max({2 * values.size(), std::size_t{1024}, hint});
  const std::size_t want = std::max(used + n, cap != 0 ? std::min(grown, 4 * cap + 1024) : grown);
  LargeVector larger = take_large(want);
  std::copy_n(values.begin(), used, larger.begin());
  recycle_large(std::move(values));
  values = std::move(larger);
}

Measurement::Tail::Tail(const Tail& other)
    : values(other.values.begin(), other.values.begin() + static_cast<std::ptrdiff_t>(other.used)),
      used(other.used),
      floor(other.floor),
      presumed(other.presumed),
      hint(other.hint) {}

Measurement::Tail& Measurement::Tail::operator=(const Tail& other) {
  if (this != &other) {
    Tail copy(other);
    recycle_large(std::move(values));
    *this = std::move(copy);
  }
  return *this;
}

Measurement::Tail::~Tail() { recycle_large(std::move(values)); }

void Measurement::Tail::append(double v, std::size_t cap) {
  room(1, cap);
  values[used++] = v == 0 ? 0.0 : v;  // no -0 (select_largest)
  if (cap != 0 && used >= 4 * cap + 1024) compact(cap);
}

void Measurement::Tail::compact(std::size_t cap) {
  if (used <= cap) return;
  // First a pivot from an evenly spaced sample, at the rank that leaves about 1.1·cap values above it: where
  // at least cap do lie above it, keeping exactly those is enough (the cap largest are among them). One
  // branch-free pass into a second buffer; the first kept as it was where too few lie above the pivot
  // (then the exact selection below).
  constexpr std::size_t kSample = 1024;
  if (used >= 8 * kSample) {
    std::array<double, kSample> sample;
    for (std::size_t i = 0; i < kSample; ++i) sample[i] = values[i * (used / kSample)];
    const double above = 1.1 * static_cast<double>(cap) / static_cast<double>(used);
    const auto at = static_cast<std::size_t>((1 - above) * kSample);
    if (at > 0 && at < kSample) {
      std::nth_element(sample.begin(), sample.begin() + static_cast<std::ptrdiff_t>(at), sample.end());
      const double pivot = sample[at];
      LargeVector into = take_large(values.size());
      const double* v = values.data();
      double* w = into.data();
      std::size_t k = 0;
      for (std::size_t i = 0; i < used; ++i) {
        w[k] = v[i];
        k += v[i] > pivot ? 1 : 0;
      }
      // Too many above it (a sample that missed the tail's shape): the exact selection, not a compaction
      // that keeps nearly everything and runs again at once.
      if (k >= cap && k <= 2 * cap) {
        std::swap(values, into);
        used = k;
        floor = std::max(floor, pivot);
      }
      recycle_large(std::move(into));
      if (k >= cap && k <= 2 * cap) return;
    }
  }
  // A few thousand values: nth_element in place beats the histogram's 2^16 counters, zeroed and scanned (a
  // small check's compactions: most of its fixed cost). The same `cap` largest kept, the same floor.
  if (used <= 8 * kSample) {
    const auto end = values.begin() + static_cast<std::ptrdiff_t>(used);
    const auto at = end - static_cast<std::ptrdiff_t>(cap);
    std::nth_element(values.begin(), at, end);
    floor = std::max(floor, *at);
    std::copy(at, end, values.begin());
    used = cap;
    return;
  }
  // Keep the `cap` largest: those above the bucket, then the bucket's largest.
  const detail::Selection s = detail::select_largest(kept(), cap);
  std::size_t k = 0;
  for (std::size_t i = 0; i < used; ++i)
    if (detail::bucket_of(values[i]) > s.bucket) values[k++] = values[i];
  std::copy(s.in_bucket.end() - static_cast<std::ptrdiff_t>(cap - s.above), s.in_bucket.end(),
            values.begin() + static_cast<std::ptrdiff_t>(k));
  used = cap;
  floor = std::max(floor, s.kth);  // s.kth is at least the last floor, but not always a presumed one
}

// push() for each of n values, in one branch-free pass: the same values kept (the tail is a multiset, and
// a compaction keeps the `cap` largest whenever it runs).
void Measurement::Tail::push_all(const double* v, std::size_t n, std::size_t cap) {
  if (cap != 0 && used + n > 4 * cap + 1024 && used > cap) compact(cap);
  room(n, cap);
  double* out = values.data();
  std::size_t k = used;
  for (std::size_t i = 0; i < n; ++i) {
    const double x = std::isnan(v[i]) ? INFINITY : v[i] == 0 ? 0.0 : v[i];
    out[k] = x;
    k += cap == 0 || x > floor ? 1 : 0;
  }
  used = k;
}

double Measurement::Tail::p99(std::size_t samples) const {
  if (samples == 0) return 0;
  const std::size_t k = rank_from_top(samples);
  if (k > used) return NAN;  // a presumed floor that did not hold (presumptions_held)
  return kth_largest(kept(), k);
}

// Every kept value lies above `presumed`: with k of them kept, the k-th largest does, and every value
// dropped for lying at or below it would have been below the k-th largest anyway.
bool Measurement::Tail::presumption_held(std::size_t samples) const {
  return presumed == -INFINITY || samples == 0 || used >= rank_from_top(samples);
}

void Measurement::presume_largest(const ElementRecord& e) {
  if (count_ != 0) throw std::logic_error("Measurement::presume_largest after the first add");
  if (bands_.empty()) return;
  Acc& a = band_of(e.position);
  for (auto [bound, v] : {std::pair{&a.presumed_max_abs, e.abs_error}, std::pair{&a.presumed_max_ulp, e.ulp},
                          std::pair{&a.presumed_max_ratio, e.ratio()}})
    if (v < INFINITY) *bound = std::max(*bound, v);
}

void Measurement::presume_floors(std::int64_t position, double abs_floor, double ulp_floor, double share) {
  if (count_ != 0) throw std::logic_error("Measurement::presume_floors after the first add");
  if (bands_.empty()) return;
  Acc& a = band_of(position);
  const std::size_t cap = cap_of(a);
  if (cap == 0) return;  // the tails keep every value
  // cap is the band's 1% (rank_from_top): a share of s keeps about s/1% of it. Room for twice that at once
  // (pages never written are never touched, large_vector.h), up to what a compaction leaves: the sample
  // misjudges a held floor by a few standard errors of a binomial 1% at 1024 values and up, and by more
  // where the values are lumpy and its level falls to the next value down (the 128 MiB ALiBi check's ulp
  // tail, 193 distinct values in 552 thousand, kept 1.17 times a guess with a quarter's margin, and copied
  // 471 thousand values a check growing to it). Beyond it the tail grows as before.
  const double guess =
      std::min(2 * share / 0.01 * static_cast<double>(cap), 4 * static_cast<double>(cap) + 1024);
  for (auto [t, v] : {std::pair{&a.abs, abs_floor}, std::pair{&a.ulp, ulp_floor}}) {
    if (!(v > t->presumed)) continue;
    t->presumed = v;
    t->floor = std::max(t->floor, v);
    if (guess > 0) t->hint = static_cast<std::size_t>(guess);
  }
}

double presumed_share(double share, std::size_t size) {
  if (!(share > 0.01)) return share;
  return 0.01 + (share - 0.01) * std::sqrt(1024.0 / static_cast<double>(std::max<std::size_t>(size, 1)));
}

double presumed_level(std::span<double> v, double share) {
  const auto above = static_cast<std::size_t>(std::ceil(share * static_cast<double>(v.size())));
  if (above >= v.size()) return -INFINITY;
  // The (above + 1)-th largest, by kth_largest (a sample of 65536 values: nth_element over all of them
  // would cost more than the rest of the guess). Its values must be non-negative without -0, as a tail's.
  for (double& u : v) u = std::isnan(u) ? INFINITY : u == 0 ? 0.0 : u;
  const double x = kth_largest(v, above + 1);
  if (static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [&](double u) { return u > x; })) >= above)
    return x;
  double below = -INFINITY;  // the next value down: all of x's ties (and more than `above`) lie above it
  for (const double u : v)
    if (u < x) below = std::max(below, u);
  return below;
}

std::optional<PresumedFloors> presumed_floors_of(std::int64_t position, std::span<double> abs,
                                                 std::span<double> ulp, double share) {
  if (abs.size() < kLeastPresumingSample) return std::nullopt;
  const double at = presumed_share(share, abs.size());
  return PresumedFloors{position, presumed_level(abs, at), presumed_level(ulp, at), at};
}

void presume(Measurement& bands, std::span<const PresumedFloors> floors) {
  for (const PresumedFloors& f : floors) bands.presume_floors(f.position, f.abs, f.ulp, f.share);
}

bool Measurement::presumptions_held() const {
  if (verdict_only_) return true;  // no percentile is read
  return std::all_of(bands_.begin(), bands_.end(), [](const Acc& a) {
    return a.abs.presumption_held(a.stats.percentile_samples) &&
           a.ulp.presumption_held(a.stats.percentile_samples);
  });
}

Measurement::Acc& Measurement::find_band(std::int64_t position) {
  auto it = std::find_if(bands_.begin(), bands_.end(), [&](const Acc& a) { return position <= a.stats.hi; });
  last_band_ = it != bands_.end() ? static_cast<std::size_t>(it - bands_.begin()) : bands_.size() - 1;
  return bands_[last_band_];
}

// `record()` builds the element's ElementRecord, asked for only when it is kept.
template <class Record>
void Measurement::add_one(std::int64_t position, double abs_error, double ulp, double budget, double reach,
                          const Record& record, bool sampled, bool tails, bool decidability) {
  if (expected_ != 0 && count_ == expected_)
    throw std::logic_error("Measurement: more elements than expect() declared");
  ++count_;
  Acc& a = band_of(position);
  BandStats& s = a.stats;
  ++s.samples;
  // Below every bar a ratio must clear (1, the band's largest, the worst list's last), err <= bar·budget
  // with a margin for the product's rounding proves the rounded ratio is too: it is not divided out.
  const bool list_full = keep_ == 0 || worst_.size() == keep_;
  double bar = std::min(1.0, s.max_ratio.value);
  if (keep_ != 0 && list_full) bar = std::min(bar, worst_last_ratio_);
  const bool below = s.samples > 1 && list_full && abs_error <= bar * budget * (1 - 0x1p-49);
  const double r = below ? 0.0 : ElementRecord::ratio_of(abs_error, budget);
  s.percentile_samples += sampled ? 1 : 0;
  if (tails && sampled) {
    a.abs.push(std::isnan(abs_error) ? INFINITY : abs_error, cap_of(a));
    a.ulp.push(std::isnan(ulp) ? INFINITY : ulp, cap_of(a));
  }
  // A NaN is worse than any number; among numbers the first of equals is kept. A band of exact results
  // still names an element and its budget.
  const bool first = s.samples == 1;
  const bool abs_up = first || abs_error > s.max_abs.value || std::isnan(abs_error);
  const bool ulp_up = first || ulp > s.max_ulp.value || std::isnan(ulp);
  const bool ratio_up = first || r > s.max_ratio.value || std::isnan(r);
  const bool worst_up = keep_ != 0 && (worst_.size() < keep_ || r > worst_last_ratio_);
  if (r > 1) {
    ++violations_;
    ++s.violations;
  }
  bool vacuity_up = false;
  if (decidability && std::isfinite(reach)) {
    ++s.encoding;
    if (position > promised_ && ElementRecord::undecidable_at(budget, reach)) {
      ++s.undecidable;
      vacuity_up = ElementRecord::vacuity_of(budget, reach) > s.max_vacuity.value;
    }
  }
  if (!(abs_up || ulp_up || ratio_up || worst_up || vacuity_up)) return;
  const ElementRecord e = record();
  if (vacuity_up) s.max_vacuity = {e.vacuity(), e};
  if (abs_up) {
    s.budget_at_max_abs = budget;
    s.max_abs = {abs_error, e};
  }
  if (ulp_up) s.max_ulp = {ulp, e};
  if (ratio_up) s.max_ratio = {r, e};
  if (worst_up) {
    const auto at = std::upper_bound(worst_.begin(), worst_.end(), r,
                                     [](double v, const ElementRecord& w) { return v > w.ratio(); });
    worst_.insert(at, e);
    if (worst_.size() > keep_) worst_.pop_back();
    worst_last_ratio_ = worst_.back().ratio();
  }
}

void Measurement::add(const ElementRecord& e) {
  if (bands_.empty()) return;
  if (stats_) stats_.reset();
  add_one(
      e.position, e.abs_error, e.ulp, e.budget, e.reach, [&] { return e; },
      in_sample(band_of(e.position), e.row));
}

namespace {
// The row's smallest and largest position (branch-free, so that it runs in vectors).
PE_FMA_CLONES std::pair<std::int64_t, std::int64_t> position_range(const std::vector<std::int64_t>& p) {
  std::int64_t lo = p[0], hi = p[0];
  for (const std::int64_t v : p) {
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
  }
  return {lo, hi};
}

// How many elements are loud, each flagged: above one of the bars (or NaN). Branch-free, as above.
PE_FMA_CLONES std::size_t flag_loud(const RopeRow& row, double abs_bar, double ulp_bar, double ratio_bar,
                                    std::vector<std::uint8_t>& loud) {
  const std::size_t n = row.size();
  loud.resize(n);
  const double *err = row.abs_error.data(), *ulp = row.ulp.data(), *budget = row.budget.data();
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool quiet =
        (err[i] <= abs_bar) & (ulp[i] <= ulp_bar) & (err[i] <= ratio_bar * budget[i] * (1 - 0x1p-49));
    loud[i] = quiet ? 0 : 1;
    count += quiet ? 0 : 1;
  }
  return count;
}
// A row's elements that carry the encoding and how many of them cannot be judged (branch-free), and only
// where some cannot, the largest budget / reach with its element (what the undecidable band's words quote).
struct Decidability {
  std::size_t encoding = 0, undecidable = 0, at = 0;
  double max_vacuity = -1;
};
PE_FMA_CLONES Decidability count_decidability(const RopeRow& row, std::int64_t promised) {
  Decidability d;
  const double *budget = row.budget.data(), *reach = row.reach.data();
  const std::int64_t* position = row.position.data();
  const std::size_t n = row.size();
  for (std::size_t i = 0; i < n; ++i) {
    d.encoding += reach[i] < INFINITY ? 1 : 0;
    d.undecidable +=
        reach[i] < INFINITY && position[i] > promised && ElementRecord::undecidable_at(budget[i], reach[i])
            ? 1
            : 0;
  }
  if (d.undecidable == 0) return d;
  for (std::size_t i = 0; i < n; ++i) {
    const double v = ElementRecord::vacuity_of(budget[i], reach[i]);
    if (reach[i] < INFINITY && position[i] > promised && v > d.max_vacuity) d.max_vacuity = v, d.at = i;
  }
  return d;
}
}  // namespace

void Measurement::add_row(const RopeRow& row) {
  if (bands_.empty() || row.size() == 0) return;
  if (stats_) stats_.reset();
  const std::size_t n = row.size();
  const auto [lo, hi] = position_range(row.position);
  Acc& a = band_of(lo);
  const BandStats& s = a.stats;
  // The tails take every element of the row at once (push_all). Beyond them a quiet element only counts:
  // at or below the band's largest error and ULP and the ratio's bar (add_one's `below`), each of which
  // only rises as elements come. Judged against the row's first values they stay quiet in add_one's order,
  // so the others alone go through add_one. A NaN is never quiet. One band for the whole row, whose first
  // element is not its band's first.
  const bool list_full = keep_ == 0 || worst_.size() == keep_;
  if (!(&band_of(hi) == &a && s.samples >= 1 && list_full && (expected_ == 0 || count_ + n <= expected_))) {
    for (std::size_t i = 0; i < n; ++i)
      add_one(
          row.position[i], row.abs_error[i], row.ulp[i], row.budget[i], row.reach[i],
          [&] { return row.record(i); }, in_sample(band_of(row.position[i]), row.row));
    return;
  }
  const Decidability d = count_decidability(row, promised_);
  a.stats.encoding += d.encoding;
  a.stats.undecidable += d.undecidable;
  if (d.undecidable > 0 && d.max_vacuity > a.stats.max_vacuity.value)
    a.stats.max_vacuity = {d.max_vacuity, row.record(d.at)};
  double bar = std::min(1.0, s.max_ratio.value);
  if (keep_ != 0) bar = std::min(bar, worst_last_ratio_);
  const bool sampled = in_sample(a, row.row);
  if (sampled) {
    a.abs.push_all(row.abs_error.data(), n, cap_of(a));
    a.ulp.push_all(row.ulp.data(), n, cap_of(a));
  }
  const std::size_t loud = flag_loud(row, s.max_abs.value, s.max_ulp.value, bar, loud_);
  count_ += n - loud;
  a.stats.samples += n - loud;
  a.stats.percentile_samples += sampled ? n - loud : 0;
  if (loud == 0) return;
  for (std::size_t i = 0; i < n; ++i) {
    if (loud_[i] != 0)
      add_one(
          row.position[i], row.abs_error[i], row.ulp[i], row.budget[i], row.reach[i],
          [&] { return row.record(i); }, sampled, false, false);
  }
}

Measurement::ScreenRoom Measurement::bars_of(const Acc& a) const {
  ScreenRoom room;
  // Quiet: within budget; no estimate kept (a NaN or ∞ estimate is not above ∞). The maxima's bars are the
  // largest double, not ∞, so that an infinite error (an infinite x) is loud whatever the other lines hold.
  if (verdict_only_) {
    room.usable = true;
    room.max_abs = room.max_ulp = DBL_MAX;
    room.ratio_bar = 1;
    room.abs_floor = room.ulp_floor = INFINITY;
    return room;
  }
  const BandStats& s = a.stats;
  if (!(s.samples >= 1 && (keep_ == 0 || worst_.size() == keep_))) return room;
  room.usable = true;
  // The largest so far, or one to come (presume_largest).
  room.max_abs = std::max(s.max_abs.value, a.presumed_max_abs);
  room.max_ulp = std::max(s.max_ulp.value, a.presumed_max_ulp);
  room.ratio_bar = std::min(1.0, std::max(s.max_ratio.value, a.presumed_max_ratio));
  if (keep_ != 0) room.ratio_bar = std::min(room.ratio_bar, worst_last_ratio_);
  const std::size_t cap = cap_of(a);
  room.abs_floor = cap == 0 ? -INFINITY : a.abs.floor;
  room.ulp_floor = cap == 0 ? -INFINITY : a.ulp.floor;
  return room;
}

Measurement::ScreenRoom Measurement::screen_bars(std::int64_t position) const {
  if (bands_.empty()) return {};
  const auto it =
      std::find_if(bands_.begin(), bands_.end(), [&](const Acc& a) { return position <= a.stats.hi; });
  return bars_of(it != bands_.end() ? *it : bands_.back());
}

Measurement::ScreenRoom Measurement::screen_room(std::int64_t lo, std::int64_t hi, std::size_t n) {
  ScreenRoom room;
  if (bands_.empty()) return room;
  Acc& a = band_of(lo);
  // n is the room's values (a row's padding included), more than its elements: by it a batch's last row would
  // exceed expect() (and is measured exactly, in the whole check). The verdict alone keeps nothing in the
  // tails (their room is written only where an estimate clears a floor of ∞: never), so it needs no such
  // guard.
  if (!(&band_of(hi) == &a && (verdict_only_ || expected_ == 0 || count_ + n <= expected_))) return room;
  room = bars_of(a);
  if (!room.usable) return room;
  // The tails keep what push() keeps: every value before the first compaction, then those above the floor.
  const std::size_t cap = cap_of(a);
  for (Tail* t : {&a.abs, &a.ulp}) {
    if (cap != 0 && t->used + n > 4 * cap + 1024 && t->used > cap) t->compact(cap);
    t->room(n, cap);
  }
  if (!verdict_only_) {
    room.abs_floor = cap == 0 ? -INFINITY : a.abs.floor;
    room.ulp_floor = cap == 0 ? -INFINITY : a.ulp.floor;
  }
  room.abs_tail = a.abs.values.data() + a.abs.used;
  room.ulp_tail = a.ulp.values.data() + a.ulp.used;
  return room;
}

void Measurement::screen_quiet(std::int64_t position, std::size_t n, std::size_t encoding,
                               std::size_t sampled, std::size_t abs_kept, std::size_t ulp_kept) {
  if (stats_) stats_.reset();
  Acc& a = band_of(position);
  count_ += n;
  a.stats.samples += n;
  a.stats.percentile_samples += sampled;
  a.stats.encoding += encoding;
  a.abs.used += abs_kept;
  a.ulp.used += ulp_kept;
}

void Measurement::add_screened(const ElementRecord& e, bool tails) {
  if (stats_) stats_.reset();
  add_one(
      e.position, e.abs_error, e.ulp, e.budget, e.reach, [&] { return e; },
      in_sample(band_of(e.position), e.row), tails, true);
}

const std::vector<BandStats>& Measurement::bands() const {
  if (stats_) return *stats_;
  std::vector<BandStats> out;
  for (const Acc& a : bands_) {
    BandStats s = a.stats;
    // A band whose sample met none of its rows has no percentile (NaN), not one of 0.
    const bool none = s.samples != 0 && s.percentile_samples == 0;
    s.p99_abs = none ? NAN : a.abs.p99(s.percentile_samples);
    s.p99_ulp = none ? NAN : a.ulp.p99(s.percentile_samples);
    out.push_back(s);
  }
  return stats_.emplace(std::move(out));
}

std::size_t Measurement::undecidable() const {
  std::size_t n = 0;
  for (const Acc& a : bands_) n += a.stats.undecidable;
  return n;
}

std::size_t Measurement::undecidable_bands() const {
  std::size_t n = 0;
  for (const Acc& a : bands_) n += a.stats.undecidable_band() ? 1 : 0;
  return n;
}

double Measurement::max_abs() const {
  double m = 0;
  for (const Acc& a : bands_)
    m = std::max(m, std::isnan(a.stats.max_abs.value) ? INFINITY : a.stats.max_abs.value);
  return m;
}

namespace {

struct FusedAdd {
  Values embeddings;
  std::span<const std::uint8_t> padding;
};

// A table, or with `add` the fused add onto its embeddings (a padded row must keep them: budget 0).
void measure_table(const SinusoidalParams& params, std::span<const std::int64_t> positions, Values y,
                   const Budget& budget, const Sink& sink, const Sample& sample, const FusedAdd* add) {
  if (positions.empty()) return;
  const SinusoidalPlan plan(params);
  const ref::Sinusoidal reference(params, *std::max_element(positions.begin(), positions.end()));
  const std::vector<std::size_t> rows = chosen_or_all(sample.rows, positions.size());
  std::vector<std::size_t> channels;
  if (sample.pairs.empty()) {
    channels = chosen_or_all({}, plan.dim());
  } else {
    for (std::size_t j : sample.pairs) {
      channels.push_back(plan.sin_index(j));
      channels.push_back(plan.cos_index(j));
    }
  }
  for (std::size_t r : rows) {
    const bool padded = add != nullptr && !add->padding.empty() && add->padding[r] != 0;
    for (std::size_t ch : channels) {
      const std::size_t i = r * plan.dim() + ch;
      ElementRecord e{.row = static_cast<std::int64_t>(r),
                      .position = positions[r],
                      .channel = static_cast<std::int64_t>(ch),
                      .dim = params.dim,
                      .base = params.base,
                      .y = y[i]};
      // The fast path's double-double where it reaches (its radius, ~2^-98·|φ|, is far below any
      // budget), MPFR beyond.
      const auto fast =
          padded ? std::optional<ref::FastValue>(ref::FastValue{}) : reference.fast_exact(positions[r], ch);
      if (fast) {
        const ref::dd::DD exact =
            add != nullptr ? ref::dd::add(fast->value, {add->embeddings[i], 0}) : fast->value;
        e.exact = exact.hi;
        e.abs_error = ref::abs_error(e.y, exact);
        e.ulp = e.abs_error / ref::ulp_of(exact, budget.dtype);
      } else {
        ref::Real exact = padded ? ref::Real(0) : reference.exact(positions[r], ch).value;
        if (add != nullptr) exact += ref::Real(add->embeddings[i]);
        e.exact = exact.convert_to<double>();
        e.abs_error = ref::abs_error(e.y, exact);
        e.ulp = e.abs_error / ref::ulp_of(exact, budget.dtype);  // SLEEF's ULP, without a second subtraction
      }
      e.abs_phi = std::fabs(reference.angle(positions[r], ch));
      e.pair = reference.pair_of(ch);
      e.scale = 1.0;
      e.unchanged = padded;
      e.budget = padded ? 0.0 : budget(nullptr, e.abs_phi, e.pair, 1.0);
      // Any sinusoid lies in [-1, 1]: no output can be more than 1 + |sin or cos| off.
      const double sinusoid = add != nullptr ? e.exact - add->embeddings[i] : e.exact;
      e.reach = padded ? INFINITY : 1 + std::fabs(sinusoid);
      if (add != nullptr && !padded) {
        e.gain_extra = budget.add_term(std::fabs(add->embeddings[i]));
        e.budget += e.gain_extra;
      }
      sink(e);
    }
  }
}

}  // namespace

void measure_sinusoidal(const SinusoidalParams& params, std::span<const std::int64_t> positions, Values y,
                        const Budget& budget, const Sink& sink, const Sample& sample) {
  measure_table(params, positions, y, budget, sink, sample, nullptr);
}

void measure_sinusoidal_add(const SinusoidalParams& params, std::span<const std::int64_t> positions,
                            Values embeddings, std::span<const std::uint8_t> padding, Values y,
                            const Budget& budget, const Sink& sink) {
  const FusedAdd add{embeddings, padding};
  measure_table(params, positions, y, budget, sink, {}, &add);
}

}  // namespace pe::harness

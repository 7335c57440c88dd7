// Measurement::merge: two measurements of consecutive parts of one batch (threads over its tokens) made one,
// equal to the measurement of the whole taken in order. Each part's bars and tails' floors are its own, so
// more of its elements went exactly than in one pass; that changes no count, maximum or worst element.
#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "pe/harness/measure.h"

namespace pe::harness {
namespace {

// add_one()'s rule for a maximum: the later value replaces it where strictly larger, or NaN.
void merge_extreme(Extreme& into, const Extreme& later) {
  if (later.value > into.value || std::isnan(later.value)) into = later;
}

}  // namespace

// Both hold every value of their part above their floor, and (when compacted) at least `cap` at or above
// it, cap being the whole batch's: together they hold every value above the larger floor and at least cap
// at or above it, which is what a tail of the whole must.
void Measurement::Tail::merge(const Tail& later, std::size_t cap) {
  room(later.used, cap);
  std::copy_n(later.values.begin(), later.used, values.begin() + static_cast<std::ptrdiff_t>(used));
  used += later.used;
  floor = std::max(floor, later.floor);
  if (cap != 0 && used >= 4 * cap + 1024) compact(cap);
}

void Measurement::merge(const Measurement& later) {
  const bool same_caps =
      std::equal(bands_.begin(), bands_.end(), later.bands_.begin(), later.bands_.end(),
                 [](const Acc& a, const Acc& b) { return a.cap == b.cap && a.sampled == b.sampled; });
  if (!same_caps || later.keep_ != keep_ || later.promised_ != promised_ || later.expected_ != expected_ ||
      later.verdict_only_ != verdict_only_ || later.sample_shift_ != sample_shift_)
    throw std::logic_error("Measurement::merge: measurements set up differently");
  // A presumed floor's proof counts the values kept above it (presumptions_held): parts presuming one floor
  // together hold every value above it (or, where one compacted, at least cap at or above its own floor, as
  // Tail::merge's), so the count of the whole is theirs added; parts presuming other floors have no such
  // count together.
  const bool same_presumptions = std::equal(
      bands_.begin(), bands_.end(), later.bands_.begin(), later.bands_.end(), [](const Acc& a, const Acc& b) {
        return a.abs.presumed == b.abs.presumed && a.ulp.presumed == b.ulp.presumed;
      });
  if (!same_presumptions) throw std::logic_error("Measurement::merge: measurements presuming other floors");
  if (expected_ != 0 && count_ + later.count_ > expected_)
    throw std::logic_error("Measurement::merge: more elements than expect() declared");
  stats_.reset();
  for (std::size_t b = 0; b < bands_.size(); ++b) {
    Acc& a = bands_[b];
    const Acc& l = later.bands_[b];
    if (l.stats.samples == 0) continue;
    a.abs.merge(l.abs, cap_of(a));
    a.ulp.merge(l.ulp, cap_of(a));
    BandStats& s = a.stats;
    if (s.samples == 0) {  // the band's first element is the later part's: its maxima whatever they are
      s = l.stats;
      continue;
    }
    s.samples += l.stats.samples;
    s.percentile_samples += l.stats.percentile_samples;
    s.violations += l.stats.violations;
    s.encoding += l.stats.encoding;
    s.undecidable += l.stats.undecidable;
    if (l.stats.max_abs.value > s.max_abs.value || std::isnan(l.stats.max_abs.value)) {
      s.max_abs = l.stats.max_abs;
      s.budget_at_max_abs = l.stats.budget_at_max_abs;
    }
    merge_extreme(s.max_ulp, l.stats.max_ulp);
    merge_extreme(s.max_ratio, l.stats.max_ratio);
    if (l.stats.max_vacuity.value > s.max_vacuity.value) s.max_vacuity = l.stats.max_vacuity;
  }
  // The worst list keeps the largest ratios, the earlier of equals first (add_one's insertion): the later
  // part's list, in its order, offered as add_one would offer each of its elements.
  for (const ElementRecord& e : later.worst_) {
    const double r = e.ratio();
    if (!(worst_.size() < keep_ || r > worst_last_ratio_)) continue;
    const auto at = std::upper_bound(worst_.begin(), worst_.end(), r,
                                     [](double v, const ElementRecord& w) { return v > w.ratio(); });
    worst_.insert(at, e);
    if (worst_.size() > keep_) worst_.pop_back();
    worst_last_ratio_ = worst_.back().ratio();
  }
  count_ += later.count_;
  violations_ += later.violations_;
}

}  // namespace pe::harness

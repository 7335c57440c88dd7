// A presumed floor from a sample (Measurement::presume_floors): the level a share of a band's sampled
// estimates exceed, for measure_sinusoidal_screened.cc. measure_alibi.cc has its own level (the same result
// by nth_element over the whole sample) and band_share (the same): it could take these.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pe::harness::presumed {

// The largest of the values that at least `share` of them exceed (ties counted: a table's errors repeat);
// -inf where there is none. The values are non-negative (NaN given as +inf): their bit patterns order as
// they do, so one pass counts them in buckets of their top bits (4 a binade) and only the buckets that hold
// the (above + 1)-th largest and those above it are selected from (a sample's values, ~1 ns each).
inline double level(const std::vector<double>& v, double share) {
  const auto above = static_cast<std::size_t>(std::ceil(share * static_cast<double>(v.size())));
  if (above >= v.size()) return -INFINITY;
  constexpr int kShift = 50;
  const auto bucket = [](double u) {
    return static_cast<std::size_t>(std::bit_cast<std::uint64_t>(u) >> kShift);
  };
  // kCopies counts a bucket, a value's by its index: consecutive values of one bucket (most of them) count
  // in different places instead of each waiting on the last one's store.
  constexpr std::size_t kCopies = 4;
  std::vector<std::uint32_t> counts(kCopies << (63 - kShift), 0);
  for (std::size_t i = 0; i < v.size(); ++i) ++counts[bucket(v[i]) * kCopies + i % kCopies];
  std::size_t b = counts.size() / kCopies, at_or_above = 0;
  while (at_or_above < above + 1) {
    --b;
    for (std::size_t k = 0; k < kCopies; ++k) at_or_above += counts[b * kCopies + k];
  }
  std::vector<double> top(at_or_above);  // every value in bucket b or above: the above + 1 largest among them
  double below = -INFINITY;              // the largest value under bucket b
  std::size_t t = 0;
  for (const double u : v) {
    if (bucket(u) >= b) {
      top[t++] = u;
    } else {
      below = std::max(below, u);
    }
  }
  const auto at = top.end() - static_cast<std::ptrdiff_t>(above + 1);
  std::nth_element(top.begin(), at, top.end());
  const double x = *at;
  if (static_cast<std::size_t>(std::count_if(top.begin(), top.end(), [&](double u) { return u > x; })) >=
      above)
    return x;
  // The next value down: all of x's ties (and more than `above`) lie above it.
  for (const double u : top)
    if (u < x) below = std::max(below, u);
  return below;
}

// The share of a band's sample its presumed floor is taken at: the 1% its 99th percentile needs plus a
// margin, `share`'s at the least sample (1024 values) and shrinking as a share's standard error does,
// 1/sqrt(size): about 3.2 standard errors of a binomial 1% at every size with share 0.02. A share at or
// below 1% (tests forcing a failure) is taken as it is.
inline double band_share(double share, std::size_t size) {
  if (!(share > 0.01)) return share;
  return 0.01 + (share - 0.01) * std::sqrt(1024.0 / static_cast<double>(size));
}

constexpr std::size_t kLeastSample = 1024;  // a band's sample below this presumes nothing

}  // namespace pe::harness::presumed

// histogram_select.h: the selection by a histogram of the values' bit patterns.
#include "histogram_select.h"

#include <algorithm>
#include <bit>
#include <cstdint>

#include "pe/harness/kth_largest.h"

namespace pe::harness {
namespace detail {
namespace {

// 2^16 counters, zero between uses, kept per thread: a new 256 KiB array is a fresh mapping whose 64 pages
// each fault in (microseconds apiece on a virtual machine), several times per check. A user counts values
// into it and hands back the range of counters it touched, zeroed again.
struct Histogram {
  std::uint32_t* count;
  std::size_t lo = SIZE_MAX, hi = 0;  // the counters touched: [lo, hi]
  Histogram() {
    thread_local std::vector<std::uint32_t> counters(std::size_t{1} << 16);
    count = counters.data();
  }
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;
  void add(std::size_t b) {
    ++count[b];
    lo = std::min(lo, b), hi = std::max(hi, b);
  }
  ~Histogram() {
    if (lo <= hi) std::fill(count + lo, count + hi + 1, 0U);
  }
};

// std::nth_element(v, at), a large bucket first split by its values' next 16 bits (a percentile's bucket
// holds a good share of a tail whose values lie within a few binades, and nth_element costs ~12 ns a value):
// the values below the sub-bucket holding `at` go first, those above last, and only that sub-bucket is
// selected in. The same multiset on each side of `at`.
void select_in_bucket(std::vector<double>& v, std::vector<double>::iterator at) {
  if (v.size() > 65536) {
    const auto sub = [](double x) {
      return static_cast<std::size_t>(std::bit_cast<std::uint64_t>(x) >> 32) & 0xffff;
    };
    Histogram h;
    for (const double x : v) h.add(sub(x));
    std::size_t target = h.lo, below = 0;
    const auto rank = static_cast<std::size_t>(at - v.begin());
    while (below + h.count[target] <= rank) below += h.count[target++];
    const auto first = std::partition(v.begin(), v.end(), [&](double x) { return sub(x) < target; });
    const auto last = std::partition(first, v.end(), [&](double x) { return sub(x) == target; });
    std::nth_element(first, at, last);
    return;
  }
  std::nth_element(v.begin(), at, v.end());
}

}  // namespace

Selection select_largest(std::span<const double> values, std::size_t k) {
  Selection s;
  {
    Histogram h;
    for (double v : values) h.add(bucket_of(v));
    s.bucket = h.hi;
    while (s.above + h.count[s.bucket] < k) s.above += h.count[s.bucket--];
    s.in_bucket.reserve(h.count[s.bucket]);
  }  // zeroed again before select_in_bucket takes it
  for (double v : values)
    if (bucket_of(v) == s.bucket) s.in_bucket.push_back(v);
  const auto at = s.in_bucket.end() - static_cast<std::ptrdiff_t>(k - s.above);
  select_in_bucket(s.in_bucket, at);
  s.kth = *at;
  return s;
}

}  // namespace detail

double kth_largest_by_histogram(std::span<const double> values, std::size_t k) {
  return detail::select_largest(values, k).kth;
}

}  // namespace pe::harness

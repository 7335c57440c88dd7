// The k-th largest of a percentile tail's values (Measurement::Tail::p99, presumed_level): from a sample, two
// of its values that bracket the k-th with near certainty; one pass counting the values above, at and below
// them; the answer where it is one of the two, else the values strictly between them gathered and the same
// again on those. A bracket that misses goes to the 2^16-bucket histogram selection (histogram_select.cc),
// which also takes what is left after a few levels. Every path returns the exact k-th largest: only the time
// differs. On the 128 MiB ALiBi check's tails (552 779 ulp values with 193 distinct, 344 874 abs), the
// histogram selection made three to five passes over a lumpy bucket; this one makes one and a short one.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

namespace pe::harness {

// The k-th largest (1 <= k <= values.size()) of values that are non-negative, without -0 and NaN (+inf
// allowed): a tail's. Throws std::invalid_argument naming k where it is out of range. Above 4096 values a
// NaN among them goes to the histogram selection, which ranks it above +inf, as Tail::p99 always did; at or
// below, std::nth_element's order with a NaN is unspecified (as it was there).
double kth_largest(std::span<const double> values, std::size_t k);

// The histogram selection it falls back on, on its own.
double kth_largest_by_histogram(std::span<const double> values, std::size_t k);

namespace detail {

// A pass's counts for the bracket [lo, hi]: values above hi, at least lo, equal to hi, equal to lo, below lo.
struct BracketCounts {
  std::size_t above = 0, at_least = 0, at_hi = 0, at_lo = 0, below = 0;
};

// One Highway target's two passes.
struct KthTarget {
  std::string name;
  BracketCounts (*count)(const double* v, std::size_t n, double lo, double hi);
  // The values strictly between lo and hi, in order, written from out on; how many. out needs room for
  // kGatherSlack values past them (a whole vector is stored).
  std::size_t (*gather)(const double* v, std::size_t n, double lo, double hi, double* out);
};
inline constexpr std::size_t kGatherSlack = 256;  // doubles: a vector of the widest target, 2 KiB
// The targets this CPU supports, best first (kth_largest takes the first).
const std::vector<KthTarget>& kth_targets();

// Which way a selection went, counted (tests): nth_element on a small set, the bracket's upper or lower end,
// its inside gathered (once a level), or the histogram selection (a missed bracket, a NaN, or levels past
// the last).
struct KthPaths {
  std::size_t small = 0, upper = 0, lower = 0, inside = 0, histogram = 0;
};

struct KthBracket {
  double lo = 0, hi = 0;
};
// kth_largest on one target; `brackets` (tests) replace the sample's bracket at the first levels, one each.
double kth_largest_on(const KthTarget& target, std::span<const double> values, std::size_t k,
                      KthPaths* paths = nullptr, std::span<const KthBracket> brackets = {});

}  // namespace detail
}  // namespace pe::harness

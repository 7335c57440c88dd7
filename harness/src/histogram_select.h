// The k-th largest of a tail's values by a histogram of their bit patterns (histogram_select.cc): what
// Measurement::Tail::compact keeps, and kth_largest's fallback (pe/harness/kth_largest.h).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace pe::harness::detail {

// The k-th largest (k >= 1) of non-negative values without -0 (their patterns are then ordered as they
// are): a histogram of the patterns' top 16 bits finds the bucket that holds it, and only that bucket is
// selected in (std::nth_element over all of them costs ~12 ns a value).
struct Selection {
  std::size_t bucket = 0, above = 0;  // above: how many values lie in higher buckets
  std::vector<double> in_bucket;      // its (k - above) largest last, from `kth` on
  double kth = 0;
};
inline std::size_t bucket_of(double v) {
  return static_cast<std::size_t>(std::bit_cast<std::uint64_t>(v) >> 48);
}
Selection select_largest(std::span<const double> values, std::size_t k);

}  // namespace pe::harness::detail

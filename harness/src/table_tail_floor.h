// The sinusoidal screens' own floors under a band's tails (TableSinks::sole): measure_sinusoidal_screened's
// and measure_sinusoidal_rows_screened's.
#pragma once

#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace pe::harness::detail {

// A floor under one band's tail of estimates (TableSinks::sole): values at or below it cannot be among the
// `need` largest of the band, since at least `need` values this pass kept lie above it. A histogram of the
// kept values' top bit patterns (a non-negative double's pattern orders as its value; 4 buckets a binade):
// bucket_ is the highest bucket with at least `need` kept values in the buckets above it, and the floor the
// largest double in it. Only the screen's kept values count (the exact rows' add theirs unseen): fewer
// counted, a lower floor.
class TailFloor {
 public:
  void reset(std::size_t need) {
    need_ = need, above_ = 0, floor_ = -INFINITY;
    bucket_ = -1;
    counts_.assign(kCopies * kBuckets, 0);
  }
  // n values, each above floor().
  void add(const double* v, std::size_t n) {
    if (need_ == 0) return;
    // kCopies histograms, a value's by its index: consecutive values of one bucket (most of them) then count
    // in different places instead of each waiting on the last one's store. Every value lies above the
    // floor (the kernel kept it above it), so in a bucket above bucket_.
    for (std::size_t i = 0; i < n; ++i)
      ++counts_[(std::bit_cast<std::uint64_t>(v[i]) >> kShift) * kCopies + i % kCopies];
    above_ += n;
    bool rose = false;
    for (std::size_t next = count(bucket_ + 1); bucket_ + 1 < kBuckets && above_ - next >= need_;) {
      above_ -= next;
      next = count(++bucket_ + 1);
      rose = true;
    }
    if (rose) floor_ = std::bit_cast<double>((static_cast<std::uint64_t>(bucket_ + 1) << kShift) - 1);
  }
  double floor() const { return floor_; }

 private:
  static constexpr int kShift = 50;
  static constexpr std::int64_t kBuckets = std::int64_t{1} << (63 - kShift);  // patterns below the sign
  static constexpr std::size_t kCopies = 4;
  std::size_t count(std::int64_t bucket) const {
    if (bucket >= kBuckets) return 0;
    std::size_t c = 0;
    for (std::size_t k = 0; k < kCopies; ++k) c += counts_[static_cast<std::size_t>(bucket) * kCopies + k];
    return c;
  }
  std::vector<std::uint32_t> counts_;
  std::size_t need_ = 0, above_ = 0;  // above_: kept values in buckets above bucket_
  std::int64_t bucket_ = -1;          // -1: no floor yet
  double floor_ = -INFINITY;
};

}  // namespace pe::harness::detail

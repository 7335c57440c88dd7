// pe/harness/kth_largest.h: the bracket's two passes in vectors per Highway target, and the selection.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "kth_largest.cc"
#include "pe/harness/kth_largest.h"

#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "target_list.h"

HWY_BEFORE_NAMESPACE();
namespace pe::harness::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;
using detail::BracketCounts;
using detail::KthTarget;

// Each mask's lanes counted in 64-bit lanes (a true lane is -1), summed once at the end.
BracketCounts CountBracket(const double* HWY_RESTRICT v, std::size_t n, double lo, double hi) {
  const hn::ScalableTag<double> d;
  const hn::RebindToSigned<decltype(d)> di;
  const auto vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  auto above = hn::Zero(di), at_least = hn::Zero(di), at_hi = hn::Zero(di), at_lo = hn::Zero(di);
  auto below = hn::Zero(di);
  const auto add = [&](auto& acc, auto mask) {
    acc = hn::Sub(acc, hn::BitCast(di, hn::VecFromMask(d, mask)));
  };
  const std::size_t N = hn::Lanes(d);
  std::size_t i = 0;
  for (; i + N <= n; i += N) {
    const auto x = hn::LoadU(d, v + i);
    add(above, hn::Gt(x, vhi)), add(at_least, hn::Ge(x, vlo));
    add(at_hi, hn::Eq(x, vhi)), add(at_lo, hn::Eq(x, vlo)), add(below, hn::Lt(x, vlo));
  }
  const auto sum = [&](auto acc) { return static_cast<std::size_t>(hn::GetLane(hn::SumOfLanes(di, acc))); };
  BracketCounts c{sum(above), sum(at_least), sum(at_hi), sum(at_lo), sum(below)};
  for (; i < n; ++i) {
    c.above += v[i] > hi ? 1 : 0, c.at_least += v[i] >= lo ? 1 : 0;
    c.at_hi += v[i] == hi ? 1 : 0, c.at_lo += v[i] == lo ? 1 : 0, c.below += v[i] < lo ? 1 : 0;
  }
  return c;
}

using D = hn::ScalableTag<double>;
using V = hn::Vec<D>;
using M = hn::Mask<D>;
#include "keep_lanes-inl.h"  // IWYU pragma: keep

// Each vector's lanes strictly between lo and hi kept by keep_lanes-inl.h's Keep, which stores a whole
// vector on AVX-512 (out needs detail::kGatherSlack values past the count). Highway 1.0.3's
// CompressBlendedStore took the ALiBi check's 552 779-value tail 1.4 ms there (a compressing store to memory,
// microcoded on Zen 4), its Compress 1.8 ms (a 2 KiB table copied each call).
std::size_t GatherBetween(const double* HWY_RESTRICT v, std::size_t n, double lo, double hi,
                          double* HWY_RESTRICT out) {
  static_assert(hn::MaxLanes(D()) <= detail::kGatherSlack, "Keep stores a whole vector past the count");
  const D d;
  const V vlo = hn::Set(d, lo), vhi = hn::Set(d, hi);
  const std::size_t N = hn::Lanes(d);
  std::size_t i = 0, m = 0;
  for (; i + N <= n; i += N) {
    const V x = hn::LoadU(d, v + i);
    m += Keep(x, hn::And(hn::Gt(x, vlo), hn::Lt(x, vhi)), out + m);
  }
  for (; i < n; ++i)
    if (lo < v[i] && v[i] < hi) out[m++] = v[i];
  return m;
}

namespace {
[[maybe_unused]] const bool registered = detail::target_list<KthTarget>().add(
    HWY_TARGET, {hwy::TargetName(HWY_TARGET), &CountBracket, &GatherBetween});
}  // namespace

}  // namespace pe::harness::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "pe/harness/large_vector.h"

namespace pe::harness {

namespace detail {

const std::vector<KthTarget>& kth_targets() { return target_list<KthTarget>().best_first(); }

namespace {

constexpr std::size_t kSmall = 4096;  // nth_element, as Tail::p99 did at or below it
constexpr std::size_t kSample = 1024;
static_assert(kSmall >= kSample, "a sample's stride is at least 1");
constexpr std::size_t kLevels = 3;  // gathers before the histogram selection takes the rest

// The sample's values at ranks r ∓ δ from the top, r = k/n of the sample and δ = 3 standard deviations of a
// binomial's count plus 2: the k-th largest lies outside with odds near 3 in 1000 (then the histogram). The
// sample: one value from each of kSample equal strides at a pseudo-random place within it (fixed: the same
// bracket for the same values), so that a tail's periodic layout (rows of one pattern) is not read in step.
KthBracket bracket_of(std::span<const double> v, std::size_t k) {
  const std::size_t n = v.size(), stride = n / kSample;
  std::array<double, kSample> s;  // on the stack: no allocation a level
  std::uint64_t state = 0x9E3779B97F4A7C15ULL;
  for (std::size_t i = 0; i < kSample; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    s[i] = v[i * stride + (state >> 33) % stride];
  }
  const double f = static_cast<double>(k) / static_cast<double>(n), m = kSample;
  const double r = f * m, delta = 3 * std::sqrt(m * f * (1 - f)) + 2;
  const double upper = std::floor(r - delta), lower = std::ceil(r + delta);  // ranks from the top, from 1
  KthBracket b{0.0, INFINITY};  // the least value a tail holds, and at least every value (+inf at hi)
  const auto rank = [&](double from_top) {
    const auto at = s.end() - static_cast<std::ptrdiff_t>(from_top);
    std::nth_element(s.begin(), at, s.end());
    return *at;
  };
  if (upper >= 1) b.hi = rank(upper);
  if (lower <= m) b.lo = rank(lower);
  return b;
}

// In place: v is a level's own scratch.
double nth_in_place(std::span<double> v, std::size_t k) {
  const auto at = v.end() - static_cast<std::ptrdiff_t>(k);
  std::nth_element(v.begin(), at, v.end());
  return *at;
}

}  // namespace

double kth_largest_on(const KthTarget& target, std::span<const double> values, std::size_t k, KthPaths* paths,
                      std::span<const KthBracket> brackets) {
  if (k == 0 || k > values.size())
    throw std::invalid_argument("kth_largest: k " + std::to_string(k) + " outside [1, " +
                                std::to_string(values.size()) + "]");
  KthPaths ignored;
  KthPaths& took = paths != nullptr ? *paths : ignored;
  // The levels' between sets, in turn: kept per thread and grown as needed, as a fresh buffer's pages cost
  // about as much to fault in as the pass that fills them (the ALiBi ulp tail's 35 430 values: 70 pages at
  // about 1.5 µs each, against the gather's 0.11 ms).
  thread_local std::array<LargeVector, 2> scratch;
  std::span<double> own;  // the last level's between set (scratch), which v then spans
  std::span<const double> v = values;
  double answer = 0;
  for (std::size_t level = 0;; ++level) {
    if (v.size() <= kSmall) {
      ++took.small;
      if (own.empty()) {
        std::vector<double> copy(v.begin(), v.end());
        answer = nth_in_place(copy, k);
      } else {
        answer = nth_in_place(own, k);
      }
      break;
    }
    if (level == kLevels) {
      ++took.histogram, answer = kth_largest_by_histogram(v, k);
      break;
    }
    const KthBracket b = level < brackets.size() ? brackets[level] : bracket_of(v, k);
    const BracketCounts c = target.count(v.data(), v.size(), b.lo, b.hi);
    // A NaN (against the precondition) lies neither at least lo nor below it: the histogram ranks it.
    if (c.at_least + c.below != v.size() || !(c.above < k && k <= c.at_least)) {
      ++took.histogram, answer = kth_largest_by_histogram(v, k);
      break;
    }
    if (k <= c.above + c.at_hi) {
      ++took.upper, answer = b.hi;
      break;
    }
    if (k > c.at_least - c.at_lo) {
      ++took.lower, answer = b.lo;
      break;
    }
    ++took.inside;
    const std::size_t between = c.at_least - c.at_lo - c.above - c.at_hi;
    LargeVector& next = scratch[level % 2];
    if (next.size() < between + kGatherSlack) next.clear(), next.resize(between + kGatherSlack);
    if (target.gather(v.data(), v.size(), b.lo, b.hi, next.data()) != between)
      throw std::logic_error("kth_largest: the gather and the count disagree");
    k -= c.above + c.at_hi;
    own = std::span<double>(next.data(), between);
    v = own;
  }
  return answer;
}

}  // namespace detail

double kth_largest(std::span<const double> values, std::size_t k) {
  return detail::kth_largest_on(detail::kth_targets().front(), values, k);
}

}  // namespace pe::harness
#endif  // HWY_ONCE

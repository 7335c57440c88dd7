#include "pe/ref/t5.h"

#include <algorithm>
#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>

namespace pe::ref {
namespace {

constexpr double kT5Epsilon = 8 * 0x1p-24;

// v^n by squaring (Boost's pow trips GCC 12's -Wmaybe-uninitialized).
boost::multiprecision::cpp_int power(std::int64_t v, std::int64_t n) {
  boost::multiprecision::cpp_int r = 1, base = v;
  for (; n > 0; n >>= 1) {
    if ((n & 1) != 0) r *= base;
    base *= base;
  }
  return r;
}

// Whether floor(t) >= k, t = b·ln(d/e)/ln(D/e): (d/e)^b >= (D/e)^k, i.e. d^b·e^k >= D^k·e^b, in integers.
bool floor_at_least(std::int64_t d, std::int64_t e, std::int64_t b, std::int64_t max_distance,
                    std::int64_t k) {
  return power(d, b) * power(e, k) >= power(max_distance, k) * power(e, b);
}

}  // namespace

T5Exact t5_bucket(const T5Buckets& t, std::int64_t relative) {
  const auto [buckets, base, d] = t5_side(t, relative);
  const std::int64_t e = buckets / 2, b = buckets - e;
  if (d < e) return {base + d, -1};
  // t in long double (relative error ~1e-18·b): floor(t) is t's unless t lies within 1e-9 of an integer,
  // where the integers decide.
  const long double tl = static_cast<long double>(b) * std::log(static_cast<long double>(d) / e) /
                         std::log(static_cast<long double>(t.max_distance) / e);
  auto k = static_cast<std::int64_t>(std::floor(tl));
  const long double nearest = std::round(tl);
  if (std::fabs(tl - nearest) < 1e-9L) {
    const auto n = static_cast<std::int64_t>(nearest);
    k = n <= b && floor_at_least(d, e, b, t.max_distance, n) ? n : n - 1;
  }
  const std::int64_t cap = buckets - 1, bucket = std::min(e + std::min(k, b), cap);
  // float32's error in t: relative to t (log within 2 ulp, the constant's rounding, the quotient and the
  // product), and the log argument's rounding (float(d), the division by E, or CUDA's multiply by 1/E: 3
  // roundings) moved through ln: b·3u/ln(D/E), which does not shrink with t and dominates where D lies near
  // E.
  const double reach = kT5Epsilon * (static_cast<double>(tl) + 1) +
                       4 * 0x1p-24 * static_cast<double>(b) /
                           static_cast<double>(std::log(static_cast<long double>(t.max_distance) / e));
  std::int64_t other = -1;
  if (k < b && static_cast<double>((k + 1) - tl) <= reach)
    other = std::min(e + k + 1, cap);
  else if (k > 0 && static_cast<double>(tl - k) <= reach)
    other = std::min(e + k - 1, cap);
  return {base + bucket, other < 0 || other == bucket ? -1 : base + other};
}

}  // namespace pe::ref

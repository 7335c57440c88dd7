#include "pe/t5.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "detail/check.h"

namespace pe {

std::int64_t t5_max_exact(const T5Buckets& t) noexcept {
  return (t.bidirectional ? t.num_buckets / 2 : t.num_buckets) / 2;
}

void validate(const T5Buckets& t) {
  if (t.num_buckets < 2 || t.num_buckets > 4096)
    detail::fail("num_buckets", "num_buckets must be in [2, 4096], got " + std::to_string(t.num_buckets));
  const std::int64_t e = t5_max_exact(t);
  if (e == 0)
    detail::fail("num_buckets",
                 "num_buckets " + std::to_string(t.num_buckets) + " leaves no exact bucket (max_exact 0)");
  if (t.max_distance <= e || t.max_distance > (std::int64_t{1} << 40))
    detail::fail("max_distance", "max_distance must exceed max_exact " + std::to_string(e) +
                                     " (a quarter of num_buckets " + std::to_string(t.num_buckets) +
                                     " bidirectional, half of it causal) and be at most 2^40, got " +
                                     std::to_string(t.max_distance));
}

T5Side t5_side(const T5Buckets& t, std::int64_t relative) noexcept {
  if (!t.bidirectional) return {t.num_buckets, 0, relative < 0 ? -relative : 0};
  const std::int64_t half = t.num_buckets / 2;
  return {half, relative > 0 ? half : 0, relative < 0 ? -relative : relative};
}

std::int64_t t5_bucket_float32(const T5Buckets& t, std::int64_t relative) noexcept {
  const auto [buckets, base, d] = t5_side(t, relative);
  const std::int64_t e = buckets / 2;
  if (d < e) return base + d;
  const float ratio = static_cast<float>(d) / static_cast<float>(e);
  const auto denominator =
      static_cast<float>(std::log(static_cast<double>(t.max_distance) / static_cast<double>(e)));
  const float scaled = std::log(ratio) / denominator * static_cast<float>(buckets - e);
  const auto large = e + static_cast<std::int64_t>(scaled);  // .to(torch.long) truncates a non-negative value
  return base + std::min(large, buckets - 1);
}

}  // namespace pe

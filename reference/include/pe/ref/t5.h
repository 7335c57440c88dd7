// The exact T5 bucket (pe/t5.h): E + floor(t) decided in integers where t lies near an integer (floor(t) >= k
// exactly when d^(B−E)·E^k >= D^k·E^(B−E), D = max_distance), and the bucket a float32 evaluation may give
// instead: where t lies within reach = 2^-24·(8·(t + 1) + 4·b/ln(D/E)) of a bucket boundary, b = B − E (the
// relative errors of log within 2 ulp, the constant's rounding, the quotient and the product; and the log
// argument's rounding — float(d), the division by E or CUDA's multiply by 1/E — moved through ln, which does
// not shrink with t), k − 1 or k + 1 there.
#pragma once

#include <cstdint>

#include "pe/t5.h"

namespace pe::ref {

struct T5Exact {
  std::int64_t bucket = 0;
  std::int64_t alternative = -1;  // the other bucket float32 may give, or -1 where it cannot differ
};

// The bucket of relative = key − query under validated parameters (pe::validate(T5Buckets) throws first).
T5Exact t5_bucket(const T5Buckets& t, std::int64_t relative);

}  // namespace pe::ref

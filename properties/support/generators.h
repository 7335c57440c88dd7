// Our own number generators (RapidCheck's float generator gives no subnormals and mostly huge
// integers; gen::inRange is integer-only). Each stays inside a contract instead of discarding.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <vector>

#include "pe/types.h"

namespace pe::testing {

// 0, 1, powers of two, 2^24 ± 1, small values, and uniform values up to max_position.
rc::Gen<std::int64_t> gen_position(std::int64_t max_position);
// n in [1, max_count] positions, each from gen_position.
rc::Gen<std::vector<std::int64_t>> gen_positions(std::int64_t max_position, std::size_t max_count);
// Powers of two 2..max_dim, the non-powers 48, 72, 80, 96, 120 models use, and any even value.
rc::Gen<std::int64_t> gen_dim(std::int64_t max_dim);
rc::Gen<std::int64_t> gen_odd_dim();
// 1e4 (the paper), 5e5 and 1e6 (Llama 3, long-context models), and log-uniform in [1.5, 1e7].
rc::Gen<double> gen_base();
// A finite value of `type` with |v| <= max_abs, from sign, exponent and significand bits: zeros,
// subnormals and the extremes included, with ordinary magnitudes (|v| in [2^-8, 2^8)) half the time.
rc::Gen<double> gen_value(DType type, double max_abs);
rc::Gen<std::vector<double>> gen_values(DType type, double max_abs, std::size_t count);

}  // namespace pe::testing

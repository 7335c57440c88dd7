// The reference checks itself: an independent computation with Boost's cpp_bin_float (no MPFR
// involved) on a seeded sample, and identities that hold exactly.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pe::ref {

struct SelfCheckReport {
  std::size_t samples = 0;
  // Largest |MPFR - cpp_bin_float| over the sample, relative to (|φ| + 1).
  double max_disagreement = 0;
  // Largest |sin² + cos² - 1| at the reference's precision.
  double max_pythagoras_residual = 0;
  std::vector<std::string> failures;  // empty when every check passed
};

// Samples positions in [0, max_position], dims and bases from the seed. cpp_bin_float runs at 256
// bits: Boost 1.74's cpp_bin_float trig loses accuracy near multiples of π below ~128 bits.
SelfCheckReport self_check(std::uint64_t seed, std::size_t samples, std::int64_t max_position);

}  // namespace pe::ref

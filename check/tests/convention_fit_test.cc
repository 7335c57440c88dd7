// The convention diagnosis on tables built from the published formulas (the paper's, tensor2tensor's):
// the mistake that made them is the best fit.
#include "explain/convention_fit.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace pe::check {
namespace {

TEST(Diagnose, NamesTheLayoutOfAConcatenatedTable) {
  const std::size_t dim = 16;
  std::vector<std::int64_t> positions;
  for (std::int64_t p = 0; p < 40; ++p) positions.push_back(p);
  std::vector<double> table(positions.size() * dim);
  for (std::size_t r = 0; r < positions.size(); ++r) {
    for (std::size_t i = 0; i < dim / 2; ++i) {
      const double phi =
          static_cast<double>(positions[r]) * std::pow(10000.0, -2.0 * static_cast<double>(i) / dim);
      table[r * dim + i] = std::sin(phi);  // concatenated: sines first, then cosines
      table[r * dim + dim / 2 + i] = std::cos(phi);
    }
  }
  const Convention given{Layout::Interleaved, 10000.0};
  const auto fits = diagnose_sinusoidal(table, dim, positions, given);
  EXPECT_EQ(fits.front().convention.layout, Layout::Concatenated);
  EXPECT_LT(fits.front().residual, 1e-12);
  EXPECT_EQ(describe(fits.front().convention, given), "layout concatenated (given: interleaved)");
}

TEST(Diagnose, NamesAShiftAndTheT2tExponent) {
  const std::size_t dim = 8;
  std::vector<std::int64_t> positions = {0, 1, 2, 3, 4, 5, 6, 7, 100, 1000};
  std::vector<double> table(positions.size() * dim);
  for (std::size_t r = 0; r < positions.size(); ++r) {
    for (std::size_t i = 0; i < dim / 2; ++i) {
      // tensor2tensor: exponent i/(d/2 - 1), and an off-by-one position.
      const double phi =
          static_cast<double>(positions[r] + 1) * std::pow(10000.0, -static_cast<double>(i) / 3);
      table[r * dim + 2 * i] = std::sin(phi);
      table[r * dim + 2 * i + 1] = std::cos(phi);
    }
  }
  const auto fits = diagnose_sinusoidal(table, dim, positions, {Layout::Interleaved, 10000.0});
  EXPECT_TRUE(fits.front().convention.t2t_exponent);
  EXPECT_EQ(fits.front().convention.shift, 1);
}

}  // namespace
}  // namespace pe::check

// check_sinusoidal with the screened pass (harness/sinusoidal_screen.h) and without: the same verdict, text
// apart from the percentiles, and the same document apart from its p99 fields (bands, maxima and their
// elements, the worst list, the contracts' tally), on passing and failing tables in each 16/32-bit type.
#include "pe/harness/sinusoidal_screen.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "held_values.h"
#include "pe/check/check.h"
#include "pe/check/golden.h"
#include "pe/half.h"

namespace pe::check {
namespace {

TEST(SinusoidalScreenCheck, ScreenedAndExactChecksGiveTheSameReport) {
  const std::size_t rows = 1200, dim = 64;
  std::vector<std::int64_t> positions(rows);
  for (std::size_t p = 0; p < rows; ++p) positions[p] = static_cast<std::int64_t>(p);
  for (const DType type : {DType::F32, DType::BF16, DType::F16})
    for (const int c : {0, 1, 2, 3}) {
      const Layout made = c == 2 ? Layout::Concatenated : Layout::Interleaved;
      std::vector<double> table = golden_sinusoidal({64, c == 1 ? 900.0 : 10000.0, made}, positions, type);
      if (c == 3) {
        table[100 * dim + 7] = std::numeric_limits<double>::quiet_NaN();
        table[700 * dim + 8] = INFINITY;
        table[900 * dim + 9] *= 1.01;
      }
      for (std::size_t i = 5; i < table.size(); i += 131)
        table[i] *= 1 + 0x1p-24;  // an ulp or so off in float32
      const std::vector<unsigned char> bytes = stored(table, type);
      SinusoidalRequest r;
      r.positions.values = positions;
      r.spec.layout = Layout::Interleaved;
      r.table = {{}, {rows, dim}, type, "table", bytes.data()};
      const std::string what = std::string(to_string(type)) + " case " + std::to_string(c);
      harness::set_sinusoidal_screen(false);
      const Report exact = check_sinusoidal(r, Names());
      harness::set_sinusoidal_screen(true);
      const Report screened = check_sinusoidal(r, Names());
      EXPECT_EQ(exact.passed, screened.passed) << what;
      EXPECT_EQ(exact.passed, c == 0) << what;
      EXPECT_EQ(without_p99(exact.json()).dump(), without_p99(screened.json()).dump()) << what;
    }
}

}  // namespace
}  // namespace pe::check

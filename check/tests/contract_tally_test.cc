// ContractTally::add_row (a row at a time, the tally check uses) gives add()'s worst ratios, bit for bit,
// under plain, scaled (attention factor, per-pair gains) and temperature-gained RoPE, over rows that hold
// correct, noisy, NaN and moved pass-through elements.
#include <gtest/gtest.h>

#include <random>

#include "engine/contract_class.h"
#include "pe/ref/reference.h"

namespace pe::check {
namespace {

TEST(ContractTally, RowsGiveTheWorstRatiosOfElements) {
  RopeScaling yarn;
  yarn.type = RopeScalingType::Yarn;
  yarn.factor = 4;
  yarn.original_max_position = 512;
  AttnTemperature temperature;
  temperature.type = AttnTemperatureType::Llama4;
  // Without a NaN or a moved pass-through channel the worst ratios stay finite: each element counts;
  // with a moved one alone, the element that moved must be seen.
  for (int c = 0; c < 3; ++c)
    for (const int faults : {0, 1, 2}) {  // none; a moved pass-through channel; that and a NaN
      RopeParams params{64, 48, 10000.0, Layout::HalfSplit, c == 1 ? yarn : RopeScaling{}};
      const RopePlan plan(params);
      std::vector<std::int64_t> positions;
      for (int t = 0; t < 24; ++t) positions.push_back(t * 173);
      std::mt19937_64 g(20261202 + c);
      std::uniform_real_distribution<double> unit(-1.0, 1.0);
      std::vector<double> x(positions.size() * 2 * 64), y(x.size());
      for (std::size_t i = 0; i < x.size(); ++i) {
        x[i] = static_cast<float>(unit(g));
        const bool through = i % 64 >= 48;
        y[i] = through ? x[i] : static_cast<float>(x[i] + unit(g) * (i % 7 == 0 ? 1e-3 : 1e-7));
      }
      if (faults >= 1) y[64 * 5 + 50] += 1e-3;  // a pass-through channel moved
      if (faults == 2) y[100] = NAN;
      const RopeBatch batch = RopeBatch::tokens_first(positions, 2, 64);
      harness::OutputGain gain;
      if (c == 2) gain = {temperature, 0x1p-24, 0x1p-149};
      ContractTally rows(Family::Rope, DType::F32, &plan), elements(Family::Rope, DType::F32, &plan);
      const harness::Budget budget{nullptr, DType::F32, 1e-6};
      harness::measure_rope_rows(
          params, batch, x, y, budget,
          [&](const harness::RopeRow& row) {
            rows.add_row(row);
            for (std::size_t i = 0; i < row.size(); ++i) elements.add(row.record(i));
          },
          {}, RopeDirection::Forward, gain);
      EXPECT_EQ(rows.to_json().dump(), elements.to_json().dump()) << "case " << c << ", faults " << faults;
      if (faults == 0) {
        EXPECT_EQ(rows.to_json().dump().find("inf"), std::string::npos) << rows.to_json().dump();
      }
    }
}

}  // namespace
}  // namespace pe::check

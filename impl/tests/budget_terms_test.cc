// RopeBudgetTerms (the budget with the plan's constants folded in, as check's contract tally uses it) gives
// rope_element_budget's bits for every registered RoPE contract, output type, scaling and pair, at angles and
// magnitudes from 0 to the largest a check meets.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "pe/contract.h"
#include "pe/plan.h"
#include "pe/variant.h"

namespace pe {
namespace {

std::uint64_t bits(double v) {
  std::uint64_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

TEST(BudgetTerms, SameBitsAsRopeElementBudget) {
  RopeScaling yarn;
  yarn.type = RopeScalingType::Yarn;
  yarn.factor = 4;
  yarn.original_max_position = 4096;
  RopeScaling llama3;
  llama3.type = RopeScalingType::Llama3;
  llama3.factor = 8;
  llama3.original_max_position = 8192;
  std::mt19937_64 g(20261202);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::size_t compared = 0;
  for (const RopeScaling& scaling : {RopeScaling{}, yarn, llama3}) {
    const RopePlan plan(RopeParams{128, 0, 500000.0, Layout::HalfSplit, scaling});
    for (const Variant* v : registry()) {
      if (v->family() != Family::Rope) continue;
      for (DType out : v->contract().outputs) {
        const RopeBudgetTerms terms(v->contract(), plan, out);
        for (int k = 0; k < 200; ++k) {
          const double abs_phi = k == 0 ? 0.0 : std::ldexp(unit(g), static_cast<int>(g() % 40));
          const double abs_pair = k == 1 ? 0.0 : std::ldexp(unit(g), static_cast<int>(g() % 20) - 10);
          const std::size_t pair = g() % plan.n_pairs();
          ASSERT_EQ(bits(terms(abs_phi, pair, abs_pair)),
                    bits(rope_element_budget(v->contract(), plan, out, abs_phi, pair, abs_pair)))
              << v->name() << " " << to_string(out) << " pair " << pair << " |phi| " << abs_phi;
          ++compared;
        }
      }
    }
  }
  EXPECT_GT(compared, 1000u);
}

}  // namespace
}  // namespace pe

// The census catches the mutants of the axes it covers beyond its grid (census.h): a tail for every
// vector width, pass-through channels, the inverse direction at positions out of order, the fused add
// with padding, runs of consecutive positions computed whole and in pieces, and diffusion timestep
// embeddings (a scale dropped); and within the grid, the
// 16-bit bugs under the largest bfloat16 class (frequencies or positions in bfloat16). Linked only into
// pe_props_mutants, whose registry holds them.
#include <gtest/gtest.h>

#include <cstdio>

#include "pe/harness/census.h"

namespace pe::testing {
namespace {

class MutantCensus : public ::testing::TestWithParam<const char*> {};

TEST_P(MutantCensus, FindsTheInstanceOutsideItsContract) {
  census::Options options;
  options.glob = GetParam();
  const std::vector<census::InstanceResult> results = census::run(options);
  ASSERT_EQ(results.size(), 1u) << options.glob;
  EXPECT_FALSE(results[0].within_contract()) << options.glob << " passed the census";
  std::size_t over = 0;
  for (const harness::BandStats& b : results[0].bands) over += b.max_ratio.value > 1 ? 1 : 0;
  std::printf("%s: %zu of %zu bands over budget, %zu elements of %zu run rows differ in pieces\n", GetParam(),
              over, results[0].bands.size(), results[0].runs.differing, results[0].runs.rows);
}

INSTANTIATE_TEST_SUITE_P(Axes, MutantCensus,
                         ::testing::Values("rope.interleaved.mutant_skips_tail_pair/f64",
                                           "rope.halfsplit.mutant_touches_pass_through/f64",
                                           "rope.halfsplit.mutant_direction_unless_sorted/f64",
                                           "sinusoidal.interleaved.mutant_ignores_padding/f64",
                                           "sinusoidal.concatenated.mutant_drifting_recurrence/bf16",
                                           "sinusoidal.interleaved.mutant_drops_timestep_scale/f64",
                                           "alibi.hqk.mutant_skips_tail_keys/f64",
                                           "rope.halfsplit.mutant_bf16_inv_freq/bf16",
                                           "rope.interleaved.mutant_bf16_positions/bf16"));

}  // namespace
}  // namespace pe::testing

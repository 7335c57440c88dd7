// A bug only an exhaustive sweep finds: sinusoidal.mutant_skips_one_row_in_2pow20 writes row p - 1 at
// p = k·2^20 - 1 (a refresh that skips a row), two rows of the first 2^21 positions. The sampled census
// at its default effort misses it; the exhaustive census over [0, 2^21) names the first failing
// position, 1048575.
#include <gtest/gtest.h>

#include <cstdio>

#include "pe/harness/census.h"
#include "pe/harness/exhaustive.h"

namespace pe::testing {
namespace {

constexpr const char* kMutant = "sinusoidal.interleaved.mutant_skips_one_row_in_2pow20/f64";

TEST(MutantExhaustive, SampledCensusMissesTheSkippedRow) {
  census::Options options;
  options.glob = kMutant;
  const auto results = census::run(options);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_TRUE(results[0].within_contract()) << "the sampled census drew p = k·2^20 - 1 after all";
}

TEST(MutantExhaustive, ExhaustiveCensusFindsItAtItsFirstPosition) {
  exhaustive::Options o;
  o.glob = kMutant;
  o.begin = 0;
  o.end = std::int64_t{1} << 21;
  o.dim = 16;
  const exhaustive::Result r = exhaustive::run(o);
  ASSERT_EQ(r.instances.size(), 1u);
  const exhaustive::InstanceResult& in = r.instances[0];
  EXPECT_FALSE(in.within_contract());
  std::uint64_t over = 0;
  std::int64_t first = -1;
  for (const exhaustive::Band& b : in.bands) {
    over += b.violations;
    if (b.violations > 0 && first < 0) first = b.max_ratio.position;
  }
  // Two rows (1048575 and 2097151); a pair whose angle moved by ω·1 ≈ its budget or less may pass.
  EXPECT_GT(over, 0u);
  EXPECT_LE(over, 2u * 16);
  EXPECT_EQ(first, (std::int64_t{1} << 20) - 1);
  std::printf("%s: %llu elements over budget in [0, 2^21), first at p = %lld (%.1f s)\n", kMutant,
              static_cast<unsigned long long>(over), static_cast<long long>(first), r.seconds);
}

}  // namespace
}  // namespace pe::testing

// The allocation counter against code that allocates a known amount.
#include "alloc_counter.h"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "pe/harness/instance.h"
#include "pe/harness/typed_buffer.h"
#include "pe/pe.h"

namespace pe::bench {
namespace {

TEST(AllocCounter, CountsAllocationsAndPeakLiveBytes) {
  start_counting();
  {
    auto a = std::make_unique<std::vector<char>>(1 << 20);  // the vector object, then 1 MiB
    auto b = std::make_unique<char[]>(4096);
    a.reset();
    auto c = std::make_unique<char[]>(1000);
  }
  const AllocStats r = stop_counting();
  EXPECT_EQ(r.allocations, 4);
  // Peak: the vector object, its 1 MiB and the 4 KiB block live together; malloc rounds each block
  // up (the 1 MiB one is mmap'd, to whole pages), by less than two pages in all.
  EXPECT_GE(r.peak_bytes, (1 << 20) + 4096);
  EXPECT_LT(r.peak_bytes, (1 << 20) + 4096 + 8192);
}

TEST(AllocCounter, IgnoresUncountedSetupAndStoppedPeriods) {
  start_counting();
  {
    Uncounted setup;
    std::vector<int> v(1000);
  }
  const AllocStats during = stop_counting();
  std::vector<int> after(1000);
  EXPECT_EQ(during.allocations, 0);
  EXPECT_EQ(during.peak_bytes, 0);
}

// The validated entry points and every kernel allocate nothing per call (DESIGN: no alloc), for
// every registered instance, shapes with long names and tails included.
TEST(AllocCounter, NoSinusoidalCallAllocates) {
  for (const harness::Instance& in : harness::instances(Family::Sinusoidal)) {
    for (std::int64_t dim : {2, 130, 256}) {
      const std::vector<std::int64_t> positions = {0, 7, 1 << 20};
      const SinusoidalPlan plan({dim, 10000.0, in.layout});
      harness::TypedBuffer table(in.dtype, positions.size() * static_cast<std::size_t>(dim));
      const std::vector<std::uint8_t> padding = {0, 1, 0};
      const AllocStats heap = measure_call([&] {
        sinusoidal_table(*in.variant, plan, positions, table.view());
        sinusoidal_add(*in.variant, plan, positions, table.view(), padding);
      });
      EXPECT_EQ(heap.allocations, 0) << in.name() << " dim " << dim;
    }
  }
}

TEST(AllocCounter, NoRopeCallAllocates) {
  for (const harness::Instance& in : harness::instances(Family::Rope)) {
    for (std::int64_t dim : {2, 130, 256}) {
      const std::vector<std::int64_t> positions = {0, 7, 1 << 20};
      harness::TypedBuffer buf(in.dtype, positions.size() * static_cast<std::size_t>(dim) * 2);
      const RopePlan plan({dim, dim / 2 + (dim / 2) % 2, 10000.0, in.layout});
      const AllocStats heap = measure_call(
          [&] { rope_apply(*in.variant, plan, positions, 2, buf.view(), RopeDirection::Inverse); });
      EXPECT_EQ(heap.allocations, 0) << in.name() << " dim " << dim;
    }
  }
}

TEST(AllocCounter, NoAlibiCallAllocates) {
  for (const harness::Instance& in : harness::instances(Family::Alibi)) {
    for (std::size_t keys : {1, 23, 130}) {
      const std::vector<std::int64_t> queries = {0, 7, 1 << 20};
      std::vector<std::int64_t> k(keys);
      for (std::size_t i = 0; i < keys; ++i) k[i] = static_cast<std::int64_t>(3 * i);
      const AlibiPlan plan({.n_heads = 12, .form = AlibiForm::Symmetric});
      harness::TypedBuffer bias(in.dtype, 12 * queries.size() * keys), slopes(in.dtype, 12);
      const AllocStats heap = measure_call([&] {
        alibi_bias(*in.variant, plan, queries, k, bias.view());
        alibi_slopes(*in.variant, plan, slopes.view());
      });
      EXPECT_EQ(heap.allocations, 0) << in.name() << " keys " << keys;
    }
  }
}

}  // namespace
}  // namespace pe::bench

// The entry points that take a ThreadPool (pe/api.h): every instance gives the single-thread call's
// bits for 2 and 3 threads (tables and fused adds cut at the contract's direct rows, RoPE by heads),
// including runs that cross a stateful variant's refreshes; and the pool itself runs every task once.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <random>

#include "pe/errors.h"
#include "pe/harness/pieces.h"
#include "pe/harness/typed_buffer.h"
#include "pe/pe.h"
#include "pe/thread_pool.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

TEST(ThreadPool, RunsEveryTaskOnceForAnyThreadCount) {
  for (std::size_t threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (std::size_t tasks : {0, 1, 2, 7, 100}) {
      for (int repeat = 0; repeat < 50; ++repeat) {
        std::vector<std::atomic<int>> seen(tasks);
        pool.run(
            tasks, [](void* c, std::size_t i) { (*static_cast<std::vector<std::atomic<int>>*>(c))[i]++; },
            &seen);
        for (std::size_t i = 0; i < tasks; ++i)
          ASSERT_EQ(seen[i].load(), 1) << threads << " threads, task " << i;
      }
    }
  }
  EXPECT_THROW(ThreadPool(0), InvalidArgument);
}

// Positions: a consecutive run long enough to cross refreshes, then a jump, then a shorter run.
std::vector<std::int64_t> positions_for(std::size_t rows, std::mt19937_64& g) {
  std::vector<std::int64_t> p(rows);
  const std::int64_t start = static_cast<std::int64_t>(g() % (std::uint64_t{1} << 30));
  for (std::size_t r = 0; r < rows; ++r)
    p[r] = start + static_cast<std::int64_t>(r) + (r > 2 * rows / 3 ? 977 : 0);
  return p;
}

class Threads : public ::testing::TestWithParam<Instance> {};

TEST_P(Threads, AnyThreadCountGivesTheSameBits) {
  const Instance& in = GetParam();
  const Variant& v = *in.variant;
  std::mt19937_64 g(2026);
  ThreadPool two(2), three(3);
  if (v.family() == Family::Sinusoidal) {
    const std::int64_t dim = 128;
    const SinusoidalPlan plan({dim, 1e4, in.layout});
    const std::vector<std::int64_t> positions = positions_for(1500, g);  // 192 000 elements
    const std::size_t n = positions.size() * dim;
    std::vector<std::uint8_t> padding(positions.size());
    for (auto& f : padding) f = g() % 5 == 0;
    harness::TypedBuffer base_table(in.dtype, n), base_add(in.dtype, n);
    for (std::size_t i = 0; i < n; ++i) base_add.set(i, static_cast<double>(i % 97) / 7);
    harness::TypedBuffer seed = base_add;
    sinusoidal_table(v, plan, positions, base_table.view());
    sinusoidal_add(v, plan, positions, base_add.view(), padding);
    for (ThreadPool* pool : {&two, &three}) {
      harness::TypedBuffer table(in.dtype, n), add = seed;
      sinusoidal_table(v, plan, positions, table.view(), *pool);
      sinusoidal_add(v, plan, positions, add.view(), padding, *pool);
      EXPECT_TRUE(harness::differing_elements(base_table, table).empty()) << pool->threads() << " threads";
      EXPECT_TRUE(harness::differing_elements(base_add, add).empty()) << pool->threads() << " threads, add";
    }
  } else if (v.family() == Family::Rope) {
    const std::int64_t head_dim = 128, heads = 12;
    RopeParams params{head_dim, 0, 5e5, in.layout};
    const RopePlan plan(params);
    const std::vector<std::int64_t> positions = positions_for(150, g);  // 230 400 elements
    const std::size_t n = positions.size() * heads * head_dim;
    harness::TypedBuffer seed(in.dtype, n);
    for (std::size_t i = 0; i < n; ++i) seed.set(i, std::sin(static_cast<double>(i)));
    harness::TypedBuffer base = seed;
    rope_apply(v, plan, positions, heads, base.view());
    for (ThreadPool* pool : {&two, &three}) {
      harness::TypedBuffer x = seed;
      rope_apply(v, plan, positions, heads, x.view(), *pool);
      EXPECT_TRUE(harness::differing_elements(base, x).empty()) << pool->threads() << " threads";
    }
  }
}

GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(Threads);
INSTANTIATE_TEST_SUITE_P(Registry, Threads, ::testing::ValuesIn(selected()), instance_test_name);

}  // namespace
}  // namespace pe::testing

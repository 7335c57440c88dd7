// The entry points that take a ThreadPool (pe/api.h) and streaming stores (pe/streaming.h): every
// instance gives the single-thread, normal-store call's bits for 2 and 3 threads (tables, fused adds and
// text RoPE cut at the contract's direct rows, decode RoPE by heads) with and without streaming, on a
// misaligned buffer, including runs that cross a stateful variant's refreshes; and the pool itself
// runs every task once.

#include <atomic>
#include <cstring>
#include <random>

#include "pe/errors.h"
#include "pe/harness/pieces.h"
#include "pe/streaming.h"
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

// One suite per family that has pool overloads: each runs over its family's instances only.
class SinusoidalThreads : public ::testing::TestWithParam<Instance> {};
class RopeThreads : public ::testing::TestWithParam<Instance> {};

// Streaming stores (pe/streaming.h) on or off for one scope.
struct Streaming {
  std::size_t was = streaming_threshold();
  explicit Streaming(bool on) { set_streaming_threshold(on ? 0 : SIZE_MAX); }
  ~Streaming() { set_streaming_threshold(was); }
  Streaming(const Streaming&) = delete;
  Streaming& operator=(const Streaming&) = delete;
};

#ifdef __SANITIZE_ADDRESS__
// Under ASan+UBSan (3-10x the cost) the same paths with one pool: that leg looks for memory errors, the
// bits are Release's to check.
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

// The single-thread call without streaming stores, against 2 and 3 threads, and streaming stores on an
// aligned buffer and on one misaligned by one element (aligned rows stream from registers, others are
// staged; without streaming alignment chooses nothing); `call(out, pool...)` runs the entry point with a
// pool or without one.
template <class Call>
void expect_same_bits(const Instance& in, const harness::TypedBuffer& seed, Call&& call, const char* what) {
  harness::TypedBuffer base = seed;
  {
    const Streaming off(false);
    call(base);
  }
  ThreadPool two(2), three(3);
  const std::vector<unsigned char> bytes = seed.bytes();
  for (ThreadPool* pool : {static_cast<ThreadPool*>(nullptr), &two, &three}) {
    if (kSanitized && pool == &three) continue;
    for (const auto& [stream, misaligned] : {std::pair<bool, std::size_t>{false, 0}, {true, 0}, {true, 1}}) {
      const Streaming mode(stream);
      harness::TypedBuffer out(in.dtype, seed.size(), misaligned);
      std::memcpy(out.view().data, bytes.data(), bytes.size());
      pool == nullptr ? call(out) : call(out, *pool);
      EXPECT_TRUE(harness::differing_elements(base, out).empty())
          << what << ": " << (pool == nullptr ? 1 : pool->threads()) << " threads, streaming " << stream
          << ", misaligned by " << misaligned;
    }
  }
}

TEST_P(SinusoidalThreads, AnyThreadCountAndStreamingGiveTheSameBits) {
  const Instance& in = GetParam();
  const Variant& v = *in.variant;
  std::mt19937_64 g(2026);
  // At d = 24 too: rows of 96 bytes are never streamed from registers, so streaming on and off take
  // different loops there, which must agree bit for bit.
  for (const std::int64_t dim : {128, 24}) {
    const SinusoidalPlan plan({dim, 1e4, in.layout});
    const std::vector<std::int64_t> positions = positions_for(800, g);  // d = 128: 3 pieces
    const std::size_t n = positions.size() * dim;
    std::vector<std::uint8_t> padding(positions.size());
    for (auto& f : padding) f = g() % 5 == 0;
    harness::TypedBuffer zeros(in.dtype, n), embeddings(in.dtype, n);
    for (std::size_t i = 0; i < n; ++i) embeddings.set(i, static_cast<double>(i % 97) / 7);
    expect_same_bits(
        in, zeros,
        [&](harness::TypedBuffer& out, auto&... pool) {
          sinusoidal_table(v, plan, positions, out.view(), pool...);
        },
        "table");
    if (dim != 128) continue;  // the fused add has one loop whatever the dim
    expect_same_bits(
        in, embeddings,
        [&](harness::TypedBuffer& out, auto&... pool) {
          sinusoidal_add(v, plan, positions, out.view(), padding, pool...);
        },
        "add");
  }
}

TEST_P(RopeThreads, AnyThreadCountAndStreamingGiveTheSameBits) {
  const Instance& in = GetParam();
  const Variant& v = *in.variant;
  std::mt19937_64 g(2026);
  // Split by tokens (300 tokens cross rope.exact's refresh at 257 and a jump) and by heads (decode).
  for (const auto& [tokens, heads] : {std::pair<std::size_t, std::int64_t>{300, 4}, {2, 512}}) {
    const std::int64_t head_dim = 128;
    const RopePlan plan(RopeParams{head_dim, 0, 5e5, in.layout});
    const std::vector<std::int64_t> positions = positions_for(tokens, g);
    const std::size_t n = positions.size() * static_cast<std::size_t>(heads * head_dim);
    harness::TypedBuffer seed(in.dtype, n);
    for (std::size_t i = 0; i < n; ++i) seed.set(i, std::sin(static_cast<double>(i)));
    expect_same_bits(
        in, seed,
        [&](harness::TypedBuffer& x, auto&... pool) {
          rope_apply(v, plan, positions, heads, x.view(), pool...);
        },
        tokens > 2 ? "rope by tokens" : "rope by heads");
  }
}

PE_INSTANTIATE(SinusoidalThreads, selected(Family::Sinusoidal));
PE_INSTANTIATE(RopeThreads, selected(Family::Rope));

}  // namespace
}  // namespace pe::testing

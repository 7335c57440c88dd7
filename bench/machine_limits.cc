#include "machine_limits.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "alloc_counter.h"
#include "fixture_cache.h"
#include "pe/thread_pool.h"
#include "stream_stores.h"

namespace pe::bench {
namespace {

// Seconds per operation: the median of 11 samples, each repeating the operation for >= 2 ms.
template <class Op>
double median_seconds(Op&& op) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> samples;
  for (int s = 0; s < 11; ++s) {
    int reps = 0;
    const auto t0 = Clock::now();
    auto t1 = t0;
    do {
      op();
      ++reps;
      t1 = Clock::now();
    } while (t1 - t0 < std::chrono::milliseconds(2));
    samples.push_back(std::chrono::duration<double>(t1 - t0).count() / reps);
  }
  std::nth_element(samples.begin(), samples.begin() + 5, samples.end());
  return samples[5];
}

// The operations, each on its slice [i·bytes/n, (i+1)·bytes/n) of the buffers.
using Op = void (*)(unsigned char* dst, const unsigned char* src, std::size_t bytes);
void fill_op(unsigned char* dst, const unsigned char*, std::size_t n) { std::memset(dst, 3, n); }
void fill_stream_op(unsigned char* dst, const unsigned char*, std::size_t n) { stream_fill(dst, n, 3); }
void copy_op(unsigned char* dst, const unsigned char* src, std::size_t n) { std::memcpy(dst, src, n); }
void copy_stream_op(unsigned char* dst, const unsigned char* src, std::size_t n) { stream_copy(dst, src, n); }
// Every 8 bytes of src loaded once (four independent sums, so that the adds keep up with the loads); the
// total is stored, so that the loads cannot be dropped.
void read_op(unsigned char* dst, const unsigned char* src, std::size_t n) {
  std::uint64_t sum[4] = {0, 0, 0, 0};
  std::size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    for (std::size_t k = 0; k < 4; ++k) {
      std::uint64_t w;
      std::memcpy(&w, src + i + 8 * k, 8);
      sum[k] += w;
    }
  }
  for (; i < n; ++i) sum[0] += src[i];
  const std::uint64_t total = sum[0] + sum[1] + sum[2] + sum[3];
  std::memcpy(dst, &total, std::min<std::size_t>(n, 8));
}

struct LimitBuffers {
  std::vector<unsigned char> dst, src;
  std::unique_ptr<ThreadPool> pool;  // null for one thread
};

LimitBuffers make_buffers(std::size_t bytes, int threads) {
  return {std::vector<unsigned char>(bytes, 1), std::vector<unsigned char>(bytes, 2),
          threads > 1 ? std::make_unique<ThreadPool>(static_cast<std::size_t>(threads)) : nullptr};
}

void run_op(LimitBuffers& b, Op op) {
  if (b.pool == nullptr) return op(b.dst.data(), b.src.data(), b.dst.size());
  struct Split {
    LimitBuffers* b;
    Op op;
    std::size_t parts;
  } split{&b, op, b.pool->threads()};
  b.pool->run(
      split.parts,
      [](void* c, std::size_t i) {
        const auto& s = *static_cast<Split*>(c);
        const std::size_t n = s.b->dst.size(), lo = i * n / s.parts, hi = (i + 1) * n / s.parts;
        s.op(s.b->dst.data() + lo, s.b->src.data() + lo, hi - lo);
      },
      &split);
}

}  // namespace

Limits limits_for(std::size_t bytes, int threads) {
  static std::map<std::pair<std::size_t, int>, Limits> cache;
  if (auto it = cache.find({bytes, threads}); it != cache.end()) return it->second;
  Uncounted setup;
  LimitBuffers b = make_buffers(bytes, threads);
  const auto rate = [&](Op op) {
    return static_cast<double>(bytes) / median_seconds([&] {
             run_op(b, op);
             benchmark::ClobberMemory();
           });
  };
  Limits l;
  l.memset_bytes_per_second = rate(fill_op);
  l.stream_fill_bytes_per_second = rate(fill_stream_op);
  l.memcpy_bytes_per_second = rate(copy_op);
  l.stream_copy_bytes_per_second = rate(copy_stream_op);
  l.fill_streams = l.stream_fill_bytes_per_second > l.memset_bytes_per_second;
  l.copy_streams = l.stream_copy_bytes_per_second > l.memcpy_bytes_per_second;
  l.fill_bytes_per_second = std::max(l.memset_bytes_per_second, l.stream_fill_bytes_per_second);
  l.copy_bytes_per_second = std::max(l.memcpy_bytes_per_second, l.stream_copy_bytes_per_second);
  return cache[{bytes, threads}] = l;
}

double read_seconds(std::span<const std::span<const std::byte>> buffers, std::size_t passes) {
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t p = 0; p < passes; ++p) {
    for (const auto& b : buffers) {
      unsigned char total[8];
      read_op(total, reinterpret_cast<const unsigned char*>(b.data()), b.size());
      benchmark::DoNotOptimize(total);  // each buffer's sum kept: none of its loads can go
    }
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

void register_limit_benchmarks(std::size_t bytes, int threads) {
  const std::string suffix =
      std::to_string(bytes) + (threads > 1 ? "/threads:" + std::to_string(threads) : "");
  for (const auto& [name, op] : {std::pair<const char*, Op>{"fill", fill_op},
                                 {"fill_stream", fill_stream_op},
                                 {"copy", copy_op},
                                 {"copy_stream", copy_stream_op},
                                 {"read", read_op}}) {
    auto* registered = benchmark::RegisterBenchmark(
        (std::string("limits/") + name + "/" + suffix).c_str(),
        [bytes, threads, op = op, key = next_fixture_key()](benchmark::State& state) {
          LimitBuffers& b = cached_fixture<LimitBuffers>(key, [&] { return make_buffers(bytes, threads); });
          for (auto _ : state) {
            run_op(b, op);
            benchmark::ClobberMemory();
          }
          state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
        });
    if (threads > 1) registered->UseRealTime();
  }
}

}  // namespace pe::bench

#include "machine_limits.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "fixture_cache.h"
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

}  // namespace

Limits limits_for(std::size_t bytes) {
  static std::map<std::size_t, Limits> cache;
  if (auto it = cache.find(bytes); it != cache.end()) return it->second;
  Uncounted setup;
  std::vector<unsigned char> dst(bytes, 1), src(bytes, 2);
  const auto rate = [&](auto&& op) {
    return static_cast<double>(bytes) / median_seconds([&] {
             op();
             benchmark::ClobberMemory();
           });
  };
  Limits l;
  l.memset_bytes_per_second = rate([&] { std::memset(dst.data(), 3, bytes); });
  l.stream_fill_bytes_per_second = rate([&] { stream_fill(dst.data(), bytes, 3); });
  l.memcpy_bytes_per_second = rate([&] { std::memcpy(dst.data(), src.data(), bytes); });
  l.stream_copy_bytes_per_second = rate([&] { stream_copy(dst.data(), src.data(), bytes); });
  l.fill_streams = l.stream_fill_bytes_per_second > l.memset_bytes_per_second;
  l.copy_streams = l.stream_copy_bytes_per_second > l.memcpy_bytes_per_second;
  l.fill_bytes_per_second = std::max(l.memset_bytes_per_second, l.stream_fill_bytes_per_second);
  l.copy_bytes_per_second = std::max(l.memcpy_bytes_per_second, l.stream_copy_bytes_per_second);
  return cache[bytes] = l;
}

struct LimitBuffers {
  std::vector<unsigned char> dst, src;
};

void register_limit_benchmarks(std::size_t bytes) {
  const std::string size = std::to_string(bytes);
  auto buffers = [bytes] {
    return LimitBuffers{std::vector<unsigned char>(bytes, 1), std::vector<unsigned char>(bytes, 2)};
  };
  const auto add = [&](const std::string& name, void (*op)(LimitBuffers&, std::size_t)) {
    benchmark::RegisterBenchmark(("limits/" + name + "/" + size).c_str(),
                                 [bytes, buffers, op, key = next_fixture_key()](benchmark::State& state) {
                                   LimitBuffers& b = cached_fixture<LimitBuffers>(key, buffers);
                                   for (auto _ : state) {
                                     op(b, bytes);
                                     benchmark::ClobberMemory();
                                   }
                                   state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
                                 });
  };
  add("fill", [](LimitBuffers& b, std::size_t n) { std::memset(b.dst.data(), 3, n); });
  add("fill_stream", [](LimitBuffers& b, std::size_t n) { stream_fill(b.dst.data(), n, 3); });
  add("copy", [](LimitBuffers& b, std::size_t n) { std::memcpy(b.dst.data(), b.src.data(), n); });
  add("copy_stream", [](LimitBuffers& b, std::size_t n) { stream_copy(b.dst.data(), b.src.data(), n); });
}

}  // namespace pe::bench

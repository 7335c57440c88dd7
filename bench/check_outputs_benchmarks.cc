#include "check_outputs_benchmarks.h"

#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "alloc_counter.h"
#include "check_benchmarks.h"
#include "pe/check/fp8.h"
#include "pe/check/golden.h"
#include "pe/check/scores.h"
#include "read_counters.h"

namespace pe::bench {
namespace {

// The heap one call holds at its peak, per byte of the data it reads (a tensor-sized temporary of doubles is
// 8/4 = 2 per float32 element; a pass over rows, nearly 0).
template <class F>
void heap_counters(benchmark::State& state, std::size_t bytes, F&& call) {
  const AllocStats heap = measure_call(call);
  state.counters["peak_heap_bytes_per_call"] = static_cast<double>(heap.peak_bytes);
  state.counters["peak_heap_per_byte_read"] =
      static_cast<double>(heap.peak_bytes) / static_cast<double>(bytes);
}

// [T, 32, 128] float32 x at positions 0..T-1 and the codes a correct fused kernel writes: the exact
// rotation over 0.5, rounded to e4m3fn (the rounding the check accepts without a neighbour).
void check_fp8_benchmark(benchmark::State& state, std::size_t tokens) {
  constexpr std::size_t heads = 32, dim = 128;
  std::vector<std::int64_t> positions(tokens);
  for (std::size_t t = 0; t < tokens; ++t) positions[t] = static_cast<std::int64_t>(t);
  std::vector<float> x(tokens * heads * dim);
  std::vector<double> xd(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    xd[i] = x[i] = static_cast<float>(3 * std::sin(0.37 * static_cast<double>(i)));
  const RopeParams params{static_cast<std::int64_t>(dim), 0, 10000.0, Layout::HalfSplit};
  const std::vector<double> exact =
      check::golden_rope(params, RopeBatch::tokens_first(positions, heads, dim), xd, DType::F64);
  std::vector<std::uint8_t> codes(x.size());
  for (std::size_t i = 0; i < x.size(); ++i)
    codes[i] = check::fp8_code(check::Fp8Format::E4m3fn, exact[i] / 0.5);
  check::Fp8RopeRequest r;
  r.rope.x = {{}, {tokens, heads, dim}, DType::F32, "x", x.data()};
  r.rope.positions.values = positions;
  r.codes = codes;
  r.codes_shape = {tokens, heads, dim};
  r.codes_name = std::string{"y"};
  r.scale = {0.5};
  r.rope.threads = 1;  // issue 53's measure: one thread
  const ReadWindow window = check_loop(
      state, x.size(),
      {std::as_bytes(std::span<const float>(x)), std::as_bytes(std::span<const std::uint8_t>(codes))},
      [&r] { return check::check_rope_fp8(r, check::Names()); }, must_pass);
  heap_counters(state, window.bytes(),
                [&r] { benchmark::DoNotOptimize(check::check_rope_fp8(r, check::Names())); });
}

// Scores [8, Q, K] of q [Q, 8, 64] and k [K, 8, 64] in float32 as an engine computes them (the dot product
// accumulated in float32 after the encoding), bottom-right queries: ALiBi's causal bias added, or RoPE
// (base 10000, half-split) applied to q and k in float32 first.
void check_scores_benchmark(benchmark::State& state, check::ScoreEncoding encoding, std::size_t nq,
                            std::size_t nk) {
  constexpr std::size_t heads = 8, d = 64;
  std::vector<float> q(nq * heads * d), k(nk * heads * d), scores(heads * nq * nk);
  for (std::size_t i = 0; i < q.size(); ++i)
    q[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
  for (std::size_t i = 0; i < k.size(); ++i)
    k[i] = static_cast<float>(std::cos(0.29 * static_cast<double>(i)));
  const auto rotate = [](std::vector<float>& v, std::size_t n, std::size_t first) {
    for (std::size_t t = 0; t < n; ++t)
      for (std::size_t h = 0; h < heads; ++h)
        for (std::size_t c = 0; c < d / 2; ++c) {
          const float w = std::pow(10000.0f, -static_cast<float>(2 * c) / static_cast<float>(d));
          const float angle = static_cast<float>(first + t) * w;
          float& a = v[(t * heads + h) * d + c];
          float& b = v[(t * heads + h) * d + c + d / 2];
          const float ra = a * std::cos(angle) - b * std::sin(angle),
                      rb = b * std::cos(angle) + a * std::sin(angle);
          a = ra, b = rb;
        }
  };
  std::vector<float> qr = q, kr = k;
  if (encoding == check::ScoreEncoding::Rope) rotate(qr, nq, nk - nq), rotate(kr, nk, 0);
  const float scale = 1.0f / std::sqrt(static_cast<float>(d));
  for (std::size_t h = 0; h < heads; ++h) {
    const float slope = std::pow(2.0f, -8.0f * static_cast<float>(h + 1) / static_cast<float>(heads));
    for (std::size_t i = 0; i < nq; ++i)
      for (std::size_t j = 0; j < nk; ++j) {
        float dot = 0;
        for (std::size_t c = 0; c < d; ++c) dot += qr[(i * heads + h) * d + c] * kr[(j * heads + h) * d + c];
        const auto distance =
            static_cast<float>(static_cast<std::int64_t>(j) - static_cast<std::int64_t>(nk - nq + i));
        // A key after the query masked as flash-attention masks it; ALiBi's causal bias slope·(j − i).
        scores[(h * nq + i) * nk + j] =
            distance > 0 ? -INFINITY
                         : scale * dot + (encoding == check::ScoreEncoding::Alibi ? slope * distance : 0.0f);
      }
  }
  check::ScoresRequest r;
  r.scores = {{}, {heads, nq, nk}, DType::F32, "scores", scores.data()};
  r.q = {{}, {nq, heads, d}, DType::F32, "q", q.data()};
  r.k = {{}, {nk, heads, d}, DType::F32, "k", k.data()};
  r.encoding = encoding;
  r.alibi.form = AlibiForm::Causal;
  const ReadWindow window = check_loop(
      state, scores.size(),
      {std::as_bytes(std::span<const float>(scores)), std::as_bytes(std::span<const float>(q)),
       std::as_bytes(std::span<const float>(k))},
      [&r] { return check::check_scores(r, check::Names()); },
      [](const check::Report& report) {
        return report.passed ? std::string() : "the check failed a correct kernel: " + report.text;
      });
  heap_counters(state, window.bytes(),
                [&r] { benchmark::DoNotOptimize(check::check_scores(r, check::Names())); });
}

}  // namespace

int register_check_outputs_benchmarks(const Options& options) {
  CheckRegistrar r(options);
  r.add("check/fp8/e4m3fn/T1024/H32/D128", check_fp8_benchmark, std::size_t{1024});
  r.add("check/scores/alibi/f32/H8/Q256/K1024/D64", check_scores_benchmark, check::ScoreEncoding::Alibi,
        std::size_t{256}, std::size_t{1024});
  r.add("check/scores/rope/f32/H8/Q256/K1024/D64", check_scores_benchmark, check::ScoreEncoding::Rope,
        std::size_t{256}, std::size_t{1024});
  return r.count();
}

}  // namespace pe::bench

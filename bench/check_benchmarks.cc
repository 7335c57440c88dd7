#include "check_benchmarks.h"

#include <benchmark/benchmark.h>

#include <cmath>
#include <memory>
#include <vector>

#include "pace.h"
#include "pe/check/check.h"
#include "pe/check/golden.h"
#include "pe/check/npy.h"
#include "pe/harness/typed_buffer.h"
#include "pe/pe.h"

namespace pe::bench {
namespace {

// A [T, 32, 128] float32 batch at positions 0..T-1: x, and y rotated by rope.scalar_f32 (a correct
// float32 kernel, so the check passes as a user's gate would; or the same kernel given other parameters
// than the check's, so that the check fails and diagnoses). x as doubles in huge pages for the goldens;
// x and y as float32 in ordinary pages for check, read in place as the front ends hand them over (a mapped
// .npy file, a numpy array).
struct Batch {
  std::vector<std::int64_t> positions;
  std::vector<double> x;
  std::vector<double> x32_store, y32_store;
  float *x32 = nullptr, *y32 = nullptr;
  RopeParams params{128, 0, 10000.0, Layout::HalfSplit};
  explicit Batch(std::size_t tokens, bool rotate,
                 const RopeParams& kernel = {128, 0, 10000.0, Layout::HalfSplit})
      : positions(tokens) {
    check::resize_large(x, tokens * 32 * 128);
    for (std::size_t t = 0; t < tokens; ++t) positions[t] = static_cast<std::int64_t>(t);
    for (std::size_t i = 0; i < x.size(); ++i)
      x[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)));
    if (!rotate) return;
    harness::TypedBuffer buf(DType::F32, x.size());
    for (std::size_t i = 0; i < x.size(); ++i) buf.set(i, x[i]);
    rope_apply(*find_variant("rope.scalar_f32"), RopePlan(kernel), positions, 32, buf.view());
    check::resize_large(x32_store, x.size() / 2 + 1);
    check::resize_large(y32_store, x.size() / 2 + 1);
    x32 = reinterpret_cast<float*>(x32_store.data());
    y32 = reinterpret_cast<float*>(y32_store.data());
    for (std::size_t i = 0; i < x.size(); ++i)
      x32[i] = static_cast<float>(x[i]), y32[i] = static_cast<float>(buf.get(i));
  }
  // check's request for x and y, half-split.
  check::RopeRequest request() const {
    check::RopeRequest r;
    r.x = {{}, {positions.size(), 32, 128}, DType::F32, "x", x32};
    r.y = {{}, {positions.size(), 32, 128}, DType::F32, "y", y32};
    r.positions.values = positions;
    r.spec.layout = Layout::HalfSplit;
    return r;
  }
};

void check_rope_benchmark(benchmark::State& state, std::size_t tokens) {
  const Batch b(tokens, true);
  check::RopeRequest r = b.request();
  const double pace_before = pace_ns();
  for (auto _ : state) {
    const check::Report report = check::check_rope(r, check::Names());
    if (!report.passed) state.SkipWithError("the check failed a correct kernel");
    benchmark::DoNotOptimize(report.text.data());
  }
  record_pace(state, pace_before);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * b.x.size()));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * b.x.size() * 2 * sizeof(float)));
}

// Llama-3 (factor 8, low 1, high 4) with original_max_position 2048 where the check is given 8192 (issue
// 32's first class): the check, then its whole diagnosis (known conventions, positions and frequencies read
// back, the fit). Its time less check/rope/f32/T4096's is the diagnosis's.
void diagnose_rope_benchmark(benchmark::State& state) {
  constexpr std::size_t tokens = 4096;
  RopeScaling llama3;
  llama3.type = RopeScalingType::Llama3;
  llama3.factor = 8;
  llama3.original_max_position = 2048;
  const Batch b(tokens, true, RopeParams{128, 0, 500000.0, Layout::HalfSplit, llama3});
  check::RopeRequest r = b.request();
  r.spec.base = 500000;
  r.spec.scaling.method = RopeScalingType::Llama3;
  r.spec.scaling.factor = 8;
  r.spec.scaling.original_max_position = 8192;
  const double pace_before = pace_ns();
  for (auto _ : state) {
    const check::Report report = check::check_rope(r, check::Names());
    if (report.passed || report.text.find("original_max_position 2048 (given 8192)") == std::string::npos)
      state.SkipWithError("the diagnosis did not name the kernel's original_max_position");
    benchmark::DoNotOptimize(report.text.data());
  }
  record_pace(state, pace_before);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * b.x.size()));
}

void reference_rope_benchmark(benchmark::State& state, std::size_t tokens) {
  const Batch b(tokens, false);
  const RopeBatch batch = check::rope_batch_of({tokens, 32, 128}, b.positions, false, "x");
  std::vector<double> y(b.x.size(), 1.0);  // allocated and touched outside the timed loop
  const double pace_before = pace_ns();
  for (auto _ : state) {
    check::golden_rope(b.params, batch, b.x, DType::F32, y);
    benchmark::DoNotOptimize(y.data());
  }
  record_pace(state, pace_before);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * b.x.size()));
}

}  // namespace

int register_check_benchmarks(const Options& options) {
  const auto wanted = [&](const std::string& name) {
    return harness::glob_match(options.glob, name) && (options.mode == Mode::Report || options.glob != "*");
  };
  if (options.mode == Mode::Smoke) return 0;
  int count = 0;
  const auto add = [&](const char* name, auto fn, auto... args) {
    if (!wanted(name)) return;
    benchmark::RegisterBenchmark(name, fn, args...)->Unit(benchmark::kMillisecond);
    ++count;
  };
  add("check/rope/f32/T4096/H32/D128", check_rope_benchmark, std::size_t{4096});
  add("check/rope/f32/T256/H32/D128", check_rope_benchmark, std::size_t{256});
  add("diagnose/rope/f32/T4096/H32/D128", diagnose_rope_benchmark);
  add("reference/rope/f32/T2048/H32/D128", reference_rope_benchmark, std::size_t{2048});
  return count;
}

}  // namespace pe::bench

// Benchmarks registered at run time from the registry: every instance × a few shapes, named
// <family>/<instance>/<shape>. Buffers are allocated and touched before timing (first touch of a
// fresh page costs ~1.5 µs here). Issue 4 grows this into the full grid with memory counters and
// the machine's limits.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <numeric>
#include <vector>

#include "pe/pe.h"

namespace {

using pe::DType;

std::vector<std::int64_t> iota_positions(std::size_t n) {
  std::vector<std::int64_t> p(n);
  std::iota(p.begin(), p.end(), 0);
  return p;
}

void register_sinusoidal(const pe::Variant& v, pe::Layout layout, std::size_t length, std::size_t dim) {
  const std::string name = fmt::format("sinusoidal/{}/f32/L{}xd{}", v.instance_name(layout), length, dim);
  benchmark::RegisterBenchmark(name.c_str(), [&v, layout, length, dim](benchmark::State& state) {
    const pe::SinusoidalPlan plan({static_cast<std::int64_t>(dim), 10000.0, layout});
    const auto positions = iota_positions(length);
    std::vector<float> out(length * dim, 1.0f);
    for (auto _ : state) {
      pe::sinusoidal_table(v, plan, positions, pe::buffer(std::span<float>(out)));
      benchmark::DoNotOptimize(out.data());
      benchmark::ClobberMemory();
    }
    const auto elements = static_cast<std::int64_t>(out.size());
    state.SetItemsProcessed(state.iterations() * elements);
    state.SetBytesProcessed(state.iterations() * elements * static_cast<std::int64_t>(sizeof(float)));
  });
}

void register_rope(const pe::Variant& v, pe::Layout layout, std::size_t tokens, std::size_t heads,
                   std::size_t head_dim) {
  const std::string name =
      fmt::format("rope/{}/f32/T{}xH{}xD{}", v.instance_name(layout), tokens, heads, head_dim);
  benchmark::RegisterBenchmark(name.c_str(), [&v, layout, tokens, heads, head_dim](benchmark::State& state) {
    const pe::RopePlan plan({static_cast<std::int64_t>(head_dim), 0, 10000.0, layout});
    const auto positions = iota_positions(tokens);
    std::vector<float> x(tokens * heads * head_dim, 0.5f);
    for (auto _ : state) {
      pe::rope_apply(v, plan, positions, static_cast<std::int64_t>(heads), pe::buffer(std::span<float>(x)));
      benchmark::DoNotOptimize(x.data());
      benchmark::ClobberMemory();
    }
    const auto elements = static_cast<std::int64_t>(x.size());
    state.SetItemsProcessed(state.iterations() * elements);
    // Read and written once each.
    state.SetBytesProcessed(state.iterations() * elements * 2 * static_cast<std::int64_t>(sizeof(float)));
  });
}

}  // namespace

int main(int argc, char** argv) {
  for (const pe::Variant* v : pe::registry()) {
    if (!v->supports(DType::F32)) continue;
    for (pe::Layout layout : v->contract().layouts) {
      if (v->family() == pe::Family::Sinusoidal) {
        for (std::size_t length : {128, 8192}) register_sinusoidal(*v, layout, length, 128);
      } else {
        for (std::size_t tokens : {1, 2048}) register_rope(*v, layout, tokens, 32, 128);
      }
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

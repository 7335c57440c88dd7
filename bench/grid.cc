#include "grid.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <numeric>
#include <optional>
#include <set>
#include <vector>

#include "alloc_counter.h"
#include "fixture_cache.h"
#include "machine_limits.h"
#include "pe/harness/bench_identity.h"
#include "pe/harness/instance.h"
#include "pe/harness/measure.h"
#include "pe/harness/typed_buffer.h"
#include "pe/pe.h"

namespace pe::bench {
namespace {

using harness::Instance;
using harness::TypedBuffer;

// Far positions start at 2^20: the angle range, not the count, is what changes.
constexpr std::int64_t kFar = std::int64_t{1} << 20;
// Largest table the report grid times at every (layout, op, positions): 2^25 elements (128 MiB of
// float32). One shape goes beyond, L = 2^20 × d = 128 (512 MiB), as a table at the start positions
// in each variant's first layout. The issue allows 4 GiB; at 9 repetitions a scalar pass over
// gigabytes would push the full grid far past 30 minutes on 2 cores.
constexpr std::size_t kMaxElements = std::size_t{1} << 25;

struct SinShape {
  std::size_t length, dim;
  bool far, add;
};
struct RopeShape {
  std::size_t tokens, heads, head_dim;
  bool far;
  bool yarn = false;  // under yarn_scaling(): the same kernel plus the attention factor
};

// A YaRN configuration of the Qwen2.5 long-context kind (factor 4 over 32768 positions): the plan
// changes the frequencies, the kernels multiply cos and sin by the attention factor 1.1386.
RopeScaling yarn_scaling() {
  RopeScaling s;
  s.type = RopeScalingType::Yarn;
  s.factor = 4;
  s.original_max_position = 32768;
  return s;
}

std::vector<std::int64_t> positions_for(std::size_t n, bool far) {
  std::vector<std::int64_t> p(n);
  std::iota(p.begin(), p.end(), far ? kFar : 0);
  return p;
}

// The worst |y - exact| / budget over a sample of the output (3 rows, <= 32 channels each), and the
// worst |y - exact| there: a kernel outside its contract is reported, not timed.
struct Check {
  bool done = false;
  double worst_ratio = 0, worst_error = 0;
  AllocStats heap{-1, -1};  // of one call alone, measured once per benchmark
};

// The check of each benchmark, kept for the whole run: with random interleaving a benchmark's
// buffers are rebuilt whenever another one ran in between, its verdict need not be.
Check& check_for(std::size_t key) {
  static std::map<std::size_t, Check> checks;
  return checks[key];
}

// 3 rows (first, middle, last) by up to 16 pairs spread over the frequencies.
harness::Sample sample_of(std::size_t rows, std::size_t pairs) {
  const std::set<std::size_t> r = {0, rows / 2, rows - 1};
  std::set<std::size_t> p;
  for (std::size_t k = 0; k < 16; ++k) p.insert(k * (pairs - 1) / 15);
  return {{r.begin(), r.end()}, {p.begin(), p.end()}};
}

harness::Sink check_sink(Check& c) {
  return [&c](const harness::ElementRecord& e) {
    c.worst_error = std::max(c.worst_error, std::isnan(e.abs_error) ? INFINITY : e.abs_error);
    c.worst_ratio = std::max(c.worst_ratio, e.ratio());
  };
}

template <class Call>
void add_counters(benchmark::State& state, std::size_t elements, std::size_t bytes_written,
                  std::size_t bytes_moved, Check& check, Call&& call) {
  // One more call with the heap counted, outside Google Benchmark's own memory run.
  if (check.heap.allocations < 0 && !counting()) check.heap = measure_call(call);
  const AllocStats heap = check.heap;
  Uncounted reporting;  // the counters map allocates; it is not the measured call
  const auto iters = static_cast<double>(state.iterations());
  const Limits lim = limits_for(bytes_written);
  using benchmark::Counter;
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(elements));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes_moved));
  state.counters["ns_per_element"] =
      Counter(iters * static_cast<double>(elements) * 1e-9, Counter::kIsRate | Counter::kInvert);
  state.counters["fill_fraction"] =
      Counter(iters * static_cast<double>(bytes_written) / lim.fill_bytes_per_second, Counter::kIsRate);
  state.counters["copy_fraction"] =
      Counter(iters * static_cast<double>(bytes_written) / lim.copy_bytes_per_second, Counter::kIsRate);
  state.counters["max_abs_error"] = check.worst_error;
  state.counters["error_over_budget"] = check.worst_ratio;
  if (heap.allocations >= 0) {
    state.counters["allocs_per_call"] = static_cast<double>(heap.allocations);
    state.counters["peak_heap_bytes_per_call"] = static_cast<double>(heap.peak_bytes);
  }
}

void skip_if_outside_contract(benchmark::State& state, const Check& check) {
  state.SkipWithError(fmt::format("outside its contract: error {:.3g} is {:.3g}x the budget",
                                  check.worst_error, check.worst_ratio)
                          .c_str());
}

// Output buffer (zeroed, so its pages are touched), plan and positions of one benchmark (see
// fixture_cache.h), and its contract check, computed from a first call when first built.
struct SinFixture {
  std::unique_ptr<TypedBuffer> buf;
  std::unique_ptr<SinusoidalPlan> plan;
  std::vector<std::int64_t> positions;
  Check* check = nullptr;
};

void run_sinusoidal(const Instance& in, const SinShape& s, const SinFixture& f) {
  if (s.add) {
    sinusoidal_add(*in.variant, *f.plan, f.positions, f.buf->view());
  } else {
    sinusoidal_table(*in.variant, *f.plan, f.positions, f.buf->view());
  }
}

SinFixture make_sinusoidal_fixture(const Instance& in, const SinShape& s, std::size_t key) {
  SinFixture f;
  const SinusoidalParams params{static_cast<std::int64_t>(s.dim), 10000.0, in.layout};
  f.plan = std::make_unique<SinusoidalPlan>(params);
  f.positions = positions_for(s.length, s.far);
  f.buf = std::make_unique<TypedBuffer>(in.dtype, s.length * s.dim);
  f.check = &check_for(key);
  if (f.check->done) return f;
  f.check->done = true;
  run_sinusoidal(in, s, f);  // an add onto zeros is the table itself
  harness::Budget budget{&in.contract(), in.dtype};
  if (s.add) budget.extra = add_budget(in.contract(), in.dtype, 0.0);
  harness::measure_sinusoidal(params, f.positions, *f.buf, budget, check_sink(*f.check),
                              sample_of(s.length, f.plan->n_pairs()));
  return f;
}

void sinusoidal_benchmark(benchmark::State& state, Instance in, SinShape s, std::size_t key, int calls,
                          const std::string& label) {
  state.SetLabel(label);
  SinFixture& f = cached_fixture<SinFixture>(key, [&] { return make_sinusoidal_fixture(in, s, key); });
  if (f.check->worst_ratio > 1) return skip_if_outside_contract(state, *f.check);
  const Buffer view = f.buf->view();
  for (auto _ : state) {
    for (int c = 0; c < calls; ++c) run_sinusoidal(in, s, f);
    benchmark::DoNotOptimize(view.data);
    benchmark::ClobberMemory();
  }
  const std::size_t elements = s.length * s.dim, bytes = elements * size_of(in.dtype);
  add_counters(state, elements, bytes, s.add ? 2 * bytes : bytes, *f.check,
               [&] { run_sinusoidal(in, s, f); });
}

struct RopeFixture {
  std::unique_ptr<TypedBuffer> buf;
  std::unique_ptr<RopePlan> plan;
  std::vector<std::int64_t> positions;
  Check* check = nullptr;
};

void run_rope(const Instance& in, const RopeShape& s, const RopeFixture& f) {
  rope_apply(*in.variant, *f.plan, f.positions, static_cast<std::int64_t>(s.heads), f.buf->view());
}

RopeFixture make_rope_fixture(const Instance& in, const RopeShape& s, std::size_t key) {
  RopeFixture f;
  const std::size_t n = s.tokens * s.heads * s.head_dim;
  RopeParams params{static_cast<std::int64_t>(s.head_dim), 0, 10000.0, in.layout};
  if (s.yarn) params.scaling = yarn_scaling();
  f.plan = std::make_unique<RopePlan>(params);
  f.positions = positions_for(s.tokens, s.far);
  f.buf = std::make_unique<TypedBuffer>(in.dtype, n);
  for (std::size_t i = 0; i < n; ++i) f.buf->set(i, std::ldexp(static_cast<double>(i % 61) - 30, -5));
  f.check = &check_for(key);
  if (f.check->done) return f;
  f.check->done = true;
  const TypedBuffer x = *f.buf;
  run_rope(in, s, f);
  harness::measure_rope(params, f.positions, s.heads, x, *f.buf, {&in.contract(), in.dtype},
                        check_sink(*f.check), sample_of(s.tokens, f.plan->n_pairs()));
  return f;
}

// Rotating the same buffer over and over keeps its norm (up to rounding): the timed calls see the
// same kind of data as the checked one.
void rope_benchmark(benchmark::State& state, Instance in, RopeShape s, std::size_t key, int calls,
                    const std::string& label) {
  state.SetLabel(label);
  RopeFixture& f = cached_fixture<RopeFixture>(key, [&] { return make_rope_fixture(in, s, key); });
  if (f.check->worst_ratio > 1) return skip_if_outside_contract(state, *f.check);
  const Buffer view = f.buf->view();
  for (auto _ : state) {
    for (int c = 0; c < calls; ++c) run_rope(in, s, f);
    benchmark::DoNotOptimize(view.data);
    benchmark::ClobberMemory();
  }
  const std::size_t n = s.tokens * s.heads * s.head_dim, bytes = n * size_of(in.dtype);
  add_counters(state, n, bytes, 2 * bytes, *f.check, [&] { run_rope(in, s, f); });
}

harness::BenchIdentity identity(const Instance& in, const SinShape& s, DType dtype) {
  return {.family = std::string(to_string(in.variant->family())),
          .instance = in.variant->instance_name(in.layout),
          .variant = in.variant->name(),
          .op = s.add ? "add" : "table",
          .dtype = std::string(to_string(dtype)),
          .length = static_cast<std::int64_t>(s.length),
          .dim = static_cast<std::int64_t>(s.dim),
          .positions = s.far ? "far" : "start"};
}
harness::BenchIdentity identity(const Instance& in, const RopeShape& s, DType dtype) {
  return {.family = std::string(to_string(in.variant->family())),
          .instance = in.variant->instance_name(in.layout),
          .variant = in.variant->name(),
          .op = "rope",
          .dtype = std::string(to_string(dtype)),
          .length = static_cast<std::int64_t>(s.tokens),
          .heads = static_cast<std::int64_t>(s.heads),
          .dim = static_cast<std::int64_t>(s.head_dim),
          .positions = s.far ? "far" : "start",
          .scaling = s.yarn ? std::string(to_string(yarn_scaling().type)) : "none"};
}

// Registers one kernel benchmark under its identity: the name for people, the label for readers.
template <class Shape, class Fn>
void register_kernel(const harness::BenchIdentity& id, Fn fn, const Instance& in, const Shape& s, int calls) {
  const std::string label = nlohmann::json(id).dump();
  benchmark::RegisterBenchmark(harness::benchmark_name(id).c_str(), fn, in, s, next_fixture_key(), calls,
                               label);
}

struct Grid {
  std::vector<std::pair<SinShape, DType>> sinusoidal;
  std::vector<std::pair<RopeShape, DType>> rope;
  bool every_layout = false;        // else each variant's first layout only for sinusoidal
  std::optional<SinShape> largest;  // f32 table, first layout only
};

Grid grid_for(Mode mode) {
  Grid g;
  const auto F32 = DType::F32;
  if (mode == Mode::Smoke) {
    g.sinusoidal = {{{16, 64, false, false}, F32}, {{16, 64, true, true}, F32}};
    g.rope = {{{2, 2, 64, false}, F32}, {{1, 2, 64, true}, F32}, {{2, 2, 64, false, true}, F32}};
    return g;
  }
  if (mode == Mode::Quick) {
    for (std::size_t L : {128, 8192}) {
      g.sinusoidal.push_back({{L, 128, false, false}, F32});
      g.sinusoidal.push_back({{L, 128, false, true}, F32});
    }
    g.sinusoidal.push_back({{128, 128, true, false}, F32});
    g.rope = {{{1, 32, 128, true}, F32}, {{2048, 32, 128, false}, F32}, {{2048, 32, 128, false, true}, F32}};
    g.every_layout = true;
    return g;
  }
  const std::size_t lengths[] = {1, 16, 128, 1024, 8192, 65536, std::size_t{1} << 20};
  for (std::size_t L : lengths) {
    for (std::size_t d : {64, 512, 128, 4096}) {
      if (L * d > kMaxElements) continue;
      g.sinusoidal.push_back({{L, d, false, false}, F32});
    }
    if (L * 128 > kMaxElements) continue;
    g.sinusoidal.push_back({{L, 128, true, false}, F32});
    g.sinusoidal.push_back({{L, 128, false, true}, F32});
  }
  g.largest = {std::size_t{1} << 20, 128, false, false};
  for (std::size_t L : {128, 8192, 65536}) {
    g.sinusoidal.push_back({{L, 128, false, false}, DType::BF16});
    g.sinusoidal.push_back({{L, 128, false, false}, DType::F64});
  }
  for (std::size_t T : {1, 16, 128, 2048, 16384}) g.rope.push_back({{T, 32, 128, false}, F32});
  for (std::size_t T : {1, 2048}) g.rope.push_back({{T, 32, 128, true}, F32});
  for (std::size_t D : {64, 256}) g.rope.push_back({{2048, 32, D, false}, F32});
  for (std::size_t T : {1, 2048}) g.rope.push_back({{T, 32, 128, false, true}, F32});
  g.rope.push_back({{2048, 32, 128, false}, DType::BF16});
  g.every_layout = true;
  return g;
}

}  // namespace

int repetitions_for(Mode mode) { return mode == Mode::Report ? 9 : mode == Mode::Quick ? 3 : 1; }

int register_grid(const Options& options) {
  const Grid g = grid_for(options.mode);
  std::set<std::size_t> limit_sizes;
  int count = 0;
  for (const Instance& in : harness::instances_matching(options.glob)) {
    const bool first_layout = in.layout == in.contract().layouts.front();
    const bool slowed =
        !options.slowdown_glob.empty() && (harness::glob_match(options.slowdown_glob, in.name()) ||
                                           harness::glob_match(options.slowdown_glob, in.variant->name()));
    const int calls = slowed ? 2 : 1;
    if (in.variant->family() == Family::Sinusoidal) {
      for (const auto& [s, dtype] : g.sinusoidal) {
        if (dtype != in.dtype || (!first_layout && !g.every_layout) || (!first_layout && s.dim != 128))
          continue;
        register_kernel(identity(in, s, dtype), sinusoidal_benchmark, in, s, calls);
        limit_sizes.insert(s.length * s.dim * size_of(dtype));
        ++count;
      }
      if (g.largest && first_layout && in.dtype == DType::F32) {
        const SinShape& s = *g.largest;
        register_kernel(identity(in, s, DType::F32), sinusoidal_benchmark, in, s, calls);
        limit_sizes.insert(s.length * s.dim * sizeof(float));
        ++count;
      }
    } else {
      for (const auto& [s, dtype] : g.rope) {
        if (dtype != in.dtype) continue;
        register_kernel(identity(in, s, dtype), rope_benchmark, in, s, calls);
        limit_sizes.insert(s.tokens * s.heads * s.head_dim * size_of(dtype));
        ++count;
      }
    }
  }
  for (std::size_t bytes : limit_sizes) register_limit_benchmarks(bytes);
  // Plan creation (frequencies, turn steps): setup, paid once per configuration, timed apart.
  if (options.mode != Mode::Smoke && harness::glob_match(options.glob, "plan")) {
    for (std::int64_t d : {64, 128, 4096}) {
      benchmark::RegisterBenchmark(fmt::format("plan/sinusoidal/d{}", d).c_str(),
                                   [d](benchmark::State& state) {
                                     for (auto _ : state) {
                                       SinusoidalPlan plan({d, 10000.0, Layout::Interleaved});
                                       benchmark::DoNotOptimize(plan.turn_steps().step.data());
                                     }
                                   });
    }
    // Scaled plans: the gain, the attention factor and the frequency error bound on top.
    for (const RopeScalingType type : {RopeScalingType::None, RopeScalingType::Yarn, RopeScalingType::Llama3,
                                       RopeScalingType::Dynamic, RopeScalingType::LongRope}) {
      RopeParams params{128, 0, 10000.0, Layout::HalfSplit};
      params.scaling = yarn_scaling();
      params.scaling.type = type;
      params.scaling.seq_len = 65536;
      params.scaling.short_factor.assign(64, 1.0);
      params.scaling.long_factor.assign(64, 4.0);
      const std::string name = type == RopeScalingType::None
                                   ? "plan/rope/D128"
                                   : fmt::format("plan/rope/D128/{}", to_string(type));
      benchmark::RegisterBenchmark(name.c_str(), [params](benchmark::State& state) {
        for (auto _ : state) {
          RopePlan plan(params);
          benchmark::DoNotOptimize(plan.turn_steps().step.data());
        }
      });
    }
  }
  return count;
}

}  // namespace pe::bench

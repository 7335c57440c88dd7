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
#include "check_alibi_benchmarks.h"
#include "check_benchmarks.h"
#include "check_outputs_benchmarks.h"
#include "check_table_benchmarks.h"
#include "exact_floors.h"
#include "fixture_cache.h"
#include "machine_limits.h"
#include "pace.h"
#include "pe/harness/bench_identity.h"
#include "pe/harness/family_traits.h"
#include "pe/harness/instance.h"
#include "pe/harness/measure.h"
#include "pe/harness/typed_buffer.h"
#include "pe/pe.h"

namespace pe::bench {
namespace {

using harness::Instance;
using harness::TypedBuffer;

// The worst |y - exact| / budget over a sample of the output (3 rows, <= 32 channels each), and the
// worst |y - exact| there: a kernel outside its contract is reported, not timed.
struct Check {
  bool done = false;
  double worst_ratio = 0, worst_error = 0;
  std::string fault;        // the checked call wrote outside its rows (pe/kernel_guard.h)
  AllocStats heap{-1, -1};  // of one call alone, measured once per benchmark
};

// The check of each benchmark, kept for the whole run: with random interleaving a benchmark's
// buffers are rebuilt whenever another one ran in between, its verdict need not be.
Check& check_for(std::size_t key) {
  static std::map<std::size_t, Check> checks;
  return checks[key];
}

harness::Sink check_sink(Check& c) {
  return [&c](const harness::ElementRecord& e) {
    c.worst_error = std::max(c.worst_error, std::isnan(e.abs_error) ? INFINITY : e.abs_error);
    c.worst_ratio = std::max(c.worst_ratio, e.ratio());
  };
}

template <class Call>
void add_counters(benchmark::State& state, std::size_t elements, std::size_t bytes_written,
                  std::size_t bytes_moved, int threads, Check& check, Call&& call) {
  // One more call with the heap counted, once per benchmark.
  if (check.heap.allocations < 0) check.heap = measure_call(call);
  const AllocStats heap = check.heap;
  Uncounted reporting;  // the counters map allocates; it is not the measured call
  const auto iters = static_cast<double>(state.iterations());
  const Limits lim = limits_for(bytes_written, threads);
  using benchmark::Counter;
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(elements));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes_moved));
  state.counters["ns_per_element"] =
      Counter(iters * static_cast<double>(elements) * 1e-9, Counter::kIsRate | Counter::kInvert);
  state.counters["fill_fraction"] =
      Counter(iters * static_cast<double>(bytes_written) / lim.fill_bytes_per_second, Counter::kIsRate);
  state.counters["copy_fraction"] =
      Counter(iters * static_cast<double>(bytes_written) / lim.copy_bytes_per_second, Counter::kIsRate);
  // Which limit the fractions divide by: 1 when streaming stores beat the C library's memset/memcpy.
  state.counters["fill_limit_streams"] = lim.fill_streams ? 1 : 0;
  state.counters["copy_limit_streams"] = lim.copy_streams ? 1 : 0;
  state.counters["max_abs_error"] = check.worst_error;
  state.counters["error_over_budget"] = check.worst_ratio;
  if (heap.allocations >= 0) {
    state.counters["allocs_per_call"] = static_cast<double>(heap.allocations);
    state.counters["peak_heap_bytes_per_call"] = static_cast<double>(heap.peak_bytes);
  }
}

// The mean of the machine's pace before and after the timed loop (pace.h), for `compare`.

void skip_if_outside_contract(benchmark::State& state, const Check& check) {
  if (!check.fault.empty()) return state.SkipWithError(check.fault.c_str());
  state.SkipWithError(fmt::format("outside its contract: error {:.3g} is {:.3g}x the budget",
                                  check.worst_error, check.worst_ratio)
                          .c_str());
}

// The workload of one benchmark (see fixture_cache.h) and its contract check, computed from a
// first call when first built.
struct Fixture {
  std::unique_ptr<harness::Workload> work;
  Check* check = nullptr;
};

void kernel_benchmark(benchmark::State& state, Instance in, harness::BenchShape s, std::size_t key, int calls,
                      const std::string& label) {
  state.SetLabel(label);
  Fixture& f = cached_fixture<Fixture>(key, [&] {
    Fixture made{harness::traits_of(in.variant->family()).workload(in, s), &check_for(key)};
    if (!made.check->done) {
      made.check->done = true;
      // The check's call is guarded (an outside kernel's, by default) in the very layout the timed calls
      // below use, bare.
      const ScopedKernelGuard timed_layout(kernel_guard(), GuardLayout::Callers);
      try {
        made.work->check(check_sink(*made.check));
      } catch (const KernelFault& e) {
        made.check->fault = e.what();
        made.check->worst_ratio = INFINITY;
      }
    }
    return made;
  });
  if (f.check->worst_ratio > 1) return skip_if_outside_contract(state, *f.check);
  harness::Workload& w = *f.work;
  const ScopedKernelGuard bare(KernelGuard::Off);
  const double pace_before = pace_ns();
  for (auto _ : state) {
    for (int c = 0; c < calls; ++c) w.run();
    benchmark::DoNotOptimize(w.data());
    benchmark::ClobberMemory();
  }
  record_pace(state, pace_before);
  add_counters(state, w.elements, w.bytes_written, w.bytes_moved, s.threads, *f.check, [&] { w.run(); });
}

harness::BenchIdentity identity(const Instance& in, const harness::BenchShape& s) {
  return {.family = std::string(to_string(in.variant->family())),
          .instance = in.variant->instance_name(in.layout),
          .variant = in.variant->name(),
          .op = s.op,
          .dtype = std::string(to_string(s.dtype)),
          .length = s.length,
          .heads = s.heads,
          .dim = s.dim,
          .positions = s.far ? "far" : "start",
          .scaling = s.scaling,
          .threads = s.threads,
          .form = s.form};
}

// Registers one kernel benchmark under its identity: the name for people, the label for readers.
void register_kernel(const Instance& in, const harness::BenchShape& s, int calls) {
  const harness::BenchIdentity id = identity(in, s);
  auto* registered = benchmark::RegisterBenchmark(harness::benchmark_name(id).c_str(), kernel_benchmark, in,
                                                  s, next_fixture_key(), calls, nlohmann::json(id).dump());
  // Rates from wall time: a pool's calling thread sleeps while its workers finish.
  if (s.threads > 1) registered->UseRealTime();
}

}  // namespace

void record_pace(benchmark::State& state, double pace_before) {
  const double pace_after = pace_ns();
  Uncounted reporting;
  state.counters["pace_ns"] = 0.5 * (pace_before + pace_after);
}

int repetitions_for(Mode mode) { return mode == Mode::Report ? 9 : mode == Mode::Quick ? 3 : 1; }

int register_grid(const Options& options) {
  std::set<std::pair<std::size_t, int>> limit_sizes;
  int count = 0;
  bool with_exact = false;
  for (const Instance& in : harness::instances_matching(options.glob)) {
    const std::string& variant = in.variant->name();
    with_exact = with_exact || variant.starts_with("sinusoidal.exact") || variant.starts_with("rope.exact");
    const bool first_layout = in.layout == in.contract().layouts.front();
    const bool slowed =
        !options.slowdown_glob.empty() && (harness::glob_match(options.slowdown_glob, in.name()) ||
                                           harness::glob_match(options.slowdown_glob, in.variant->name()));
    for (const harness::BenchShape& s : harness::traits_of(in.variant->family()).bench_shapes(options.mode)) {
      if (s.dtype != in.dtype || (s.first_layout_only && !first_layout)) continue;
      // A C plugin's table (ABI v2) takes integer positions only: the API refuses it timesteps.
      if (s.op == "timesteps" && !in.contract().table_switches) continue;
      // Quick: a 16-bit shape only for a variant that writes no float32 (every variant gets a row).
      if (options.mode == Mode::Quick && s.dtype != DType::F32 && in.variant->supports(DType::F32)) continue;
      register_kernel(in, s, slowed ? 2 : 1);
      limit_sizes.insert({s.elements() * size_of(s.dtype), s.threads});
      ++count;
    }
  }
  for (const auto& [bytes, threads] : limit_sizes) register_limit_benchmarks(bytes, threads);
  // Beside the exact variants (any of their targets), their methods' floors on this machine (exact_floors.h).
  if (options.mode != Mode::Smoke && with_exact) register_exact_floors();
  count += register_check_benchmarks(options);
  count += register_check_alibi_benchmarks(options);
  count += register_check_outputs_benchmarks(options);
  count += register_check_table_benchmarks(options);
  // Plan creation (frequencies, turn steps): setup, paid once per configuration, timed apart.
  if (options.mode != Mode::Smoke && harness::glob_match(options.glob, "plan")) {
    for (std::int64_t d : {64, 128, 4096}) {
      benchmark::RegisterBenchmark(fmt::format("plan/sinusoidal/d{}", d).c_str(),
                                   [d](benchmark::State& state) {
                                     const double pace_before = pace_ns();
                                     for (auto _ : state) {
                                       SinusoidalPlan plan({d, 10000.0, Layout::Interleaved});
                                       benchmark::DoNotOptimize(plan.turn_steps().step.data());
                                     }
                                     record_pace(state, pace_before);
                                   });
    }
    // Scaled plans: the gain, the attention factor and the frequency error bound on top.
    for (const RopeScalingType type : {RopeScalingType::None, RopeScalingType::Yarn, RopeScalingType::Llama3,
                                       RopeScalingType::Dynamic, RopeScalingType::LongRope}) {
      RopeParams params{128, 0, 10000.0, Layout::HalfSplit};
      params.scaling = harness::bench_rope_scaling("yarn");
      params.scaling.type = type;
      params.scaling.seq_len = 65536;
      params.scaling.short_factor.assign(64, 1.0);
      params.scaling.long_factor.assign(64, 4.0);
      const std::string name = type == RopeScalingType::None
                                   ? "plan/rope/D128"
                                   : fmt::format("plan/rope/D128/{}", to_string(type));
      benchmark::RegisterBenchmark(name.c_str(), [params](benchmark::State& state) {
        const double pace_before = pace_ns();
        for (auto _ : state) {
          RopePlan plan(params);
          benchmark::DoNotOptimize(plan.turn_steps().step.data());
        }
        record_pace(state, pace_before);
      });
    }
  }
  return count;
}

}  // namespace pe::bench

// The check engine's own speed (issue 31's targets): check_rope over a dumped-size batch and the exact
// reference's rotated output, each on buffers made before the timed loop.
#pragma once

#include <benchmark/benchmark.h>

#include <string>

#include "grid.h"
#include "pe/harness/instance.h"

namespace pe::bench {

// Registers the check engine's benchmarks, in milliseconds, where `options` ask for them: not in Smoke mode,
// and in the quick grid only when the --variant glob is not "*" (each iteration takes seconds).
class CheckRegistrar {
 public:
  explicit CheckRegistrar(const Options& options) : options_(options) {}
  // The benchmark registered, or null where the options leave it out.
  template <class Fn, class... Args>
  benchmark::internal::Benchmark* add(const char* name, Fn fn, Args... args) {
    if (options_.mode == Mode::Smoke || !harness::glob_match(options_.glob, name) ||
        (options_.mode != Mode::Report && options_.glob == "*"))
      return nullptr;
    ++count_;
    return benchmark::RegisterBenchmark(name, fn, args...)->Unit(benchmark::kMillisecond);
  }
  int count() const { return count_; }

 private:
  const Options& options_;
  int count_ = 0;
};

// check/rope/{f32,bf16,f16}/T4096/H32/D128, check/sinusoidal/f32/L131072/d128 (each with its fraction of the
// machine's read limit at the bytes it reads), diagnose/rope/f32/T4096/H32/D128 and
// reference/rope/f32/T2048/H32/D128 when `glob` matches them, in Report
// mode or when the glob is not "*" (each iteration takes seconds: not in the quick grid).
// Returns how many it registered.
int register_check_benchmarks(const Options& options);

}  // namespace pe::bench

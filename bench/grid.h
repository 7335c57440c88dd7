// The benchmark grid, registered at run time from the registry: every instance that supports a
// shape gets a benchmark named <family>/<instance>/<op>/<dtype>/<shape>/<positions>.
#pragma once

#include <benchmark/benchmark.h>

#include <string>

#include "pe/harness/family_traits.h"

namespace pe::bench {

// Smoke (tiny shapes: ctest checks the JSON), Quick (under 2 minutes), Report (the full grid, 9
// repetitions each for compare); each family's shapes per mode are its FamilyTraits row's.
using Mode = harness::BenchGrid;

struct Options {
  Mode mode = Mode::Quick;
  std::string glob = "*";
  // Instances matching this glob call their kernel twice per iteration: a deliberately slowed
  // variant, for testing that `pe-suite compare` catches a regression. Empty: none.
  std::string slowdown_glob;
};

// Registers kernel benchmarks and the matching limits/ benchmarks; returns how many kernels.
int register_grid(const Options& options);
// Repetitions the mode asks for (Google Benchmark's --benchmark_repetitions default).
int repetitions_for(Mode mode);
// The counter pace_ns: the machine's pace before the timed loop and after (pace.h), averaged.
void record_pace(benchmark::State& state, double pace_before);
// Compiler, flags, Highway target, Eigen instruction sets, CPU and library versions.
void stamp_context();

}  // namespace pe::bench

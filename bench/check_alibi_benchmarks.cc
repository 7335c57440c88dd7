#include "check_alibi_benchmarks.h"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <span>
#include <vector>

#include "check_benchmarks.h"
#include "pe/check/check.h"
#include "pe/harness/instance.h"
#include "pe/harness/measure_alibi.h"
#include "pe/pe.h"
#include "read_counters.h"

namespace pe::bench {
namespace {

// A [32, Q, K] float32 bias of alibi.scalar_f32 (a correct kernel: powf slopes, as ggml and HF) in the
// symmetric form -m·|i - j| at queries = keys = 0..K-1, checked as a user's gate would (it must pass).
void check_alibi_benchmark(benchmark::State& state, std::size_t queries, std::size_t keys) {
  constexpr std::int64_t heads = 32;
  AlibiParams params{heads};
  params.form = AlibiForm::Symmetric;
  std::vector<std::int64_t> q(queries), k(keys);
  for (std::size_t i = 0; i < queries; ++i) q[i] = static_cast<std::int64_t>(keys - queries + i);
  for (std::size_t j = 0; j < keys; ++j) k[j] = static_cast<std::int64_t>(j);
  std::vector<float> bias(static_cast<std::size_t>(heads) * queries * keys);
  alibi_bias(*find_variant("alibi.scalar_f32"), AlibiPlan(params), q, k, std::span<float>(bias));
  check::AlibiRequest r;
  r.table = {{}, {static_cast<std::size_t>(heads), queries, keys}, DType::F32, "bias", bias.data()};
  r.spec.form = AlibiForm::Symmetric;
  const std::size_t reruns = harness::alibi_screen_reruns();
  check_loop(
      state, bias.size(), {std::as_bytes(std::span<const float>(bias))},
      [&r] { return check::check_alibi(r, check::Names()); }, must_pass);
  // Passes measured twice because a presumed floor of the percentiles' tails did not hold (0 expected).
  state.counters["reruns"] = static_cast<double>(harness::alibi_screen_reruns() - reruns);
}

}  // namespace

int register_check_alibi_benchmarks(const Options& options) {
  CheckRegistrar r(options);
  r.add("check/alibi/f32/H32/Q1024/K1024/symmetric", check_alibi_benchmark, std::size_t{1024},
        std::size_t{1024});
  return r.count();
}

}  // namespace pe::bench

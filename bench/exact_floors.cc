// The exact variants' arithmetic floors on this machine: each one's innermost loop alone, on the best
// Highway target the CPU has, without what the variant needs around it (plan, direct rows, tails, argument
// checks, sin/cos), so that a report can say how far the variant is from what its method can reach here,
// beside the machine's fill and copy limits (which a double-precision method may not reach at all).
//   floor/sinusoidal.exact/step/f32    an interleaved table's rows advanced in registers, (s, c) in
//   floor/sinusoidal.exact/step/bf16   adjacent double lanes: v' = v·(cw, cw) + swap(v)·(sw, -sw),
//                                      rounded, stored (bfloat16 four vectors at a time, as the variant);
//                                      as many vectors a row as the registers hold (/d<values> in the
//                                      name), 8192 rows into one buffer. A concatenated table's halves
//                                      take as many operations a pair (two multiplies and two fused
//                                      multiply-adds per two vectors, no swap).
//   floor/rope.exact/rotate/f32        one token of 32 heads × 128, half-split: floats promoted, rotated
//                                      in double by given (cos, sin), demoted, in place
// The steps report the fraction of the machine's fill limit at their size that they reach (the most the
// exact table can reach here).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "exact_floors.cc"
#include "exact_floors.h"

#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstdint>

#include "detail/bfloat16_bits-inl.h"

HWY_BEFORE_NAMESPACE();
namespace pe::bench::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <std::size_t G, bool kBFloat16>
HWY_INLINE void StepRowsG(const double* HWY_RESTRICT cw, const double* HWY_RESTRICT sw, const double* state,
                          void* out, std::size_t rows) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const std::size_t lanes = hn::Lanes(dd), row_values = G * lanes;
  hn::Vec<decltype(dd)> v[G];
  for (std::size_t g = 0; g < G; ++g) v[g] = hn::Load(dd, state + g * lanes);
  const auto step = [&](std::size_t g) {
    v[g] = hn::MulAdd(v[g], hn::Load(dd, cw + g * lanes),
                      hn::Mul(hn::Reverse2(dd, v[g]), hn::Load(dd, sw + g * lanes)));
  };
  for (std::size_t r = 0; r < rows; ++r) {
    if constexpr (!kBFloat16) {
      for (std::size_t g = 0; g < G; ++g) {
        step(g);
        hn::StoreU(hn::DemoteTo(df, v[g]), df, static_cast<float*>(out) + r * row_values + g * lanes);
      }
    } else {
      for (std::size_t g = 0; g < G; g += 4) {
        for (std::size_t q = g; q < g + 4; ++q) step(q);
        pe::detail::HWY_NAMESPACE::StoreBFloat16x4(
            dd, v[g], v[g + 1], v[g + 2], v[g + 3],
            static_cast<std::uint16_t*>(out) + r * row_values + g * lanes);
      }
    }
  }
}

// The row's values for this target: as many vectors as the variant holds in registers (AVX-512 16,
// AVX2 8, otherwise 4).
std::size_t StepRowValues() {
  const hn::ScalableTag<double> dd;
  return (HWY_MAX_BYTES >= 64 ? 16 : HWY_MAX_BYTES >= 32 ? 8 : 4) * hn::Lanes(dd);
}

void StepRows(const double* cw, const double* sw, const double* state, void* out, std::size_t rows,
              bool bfloat16) {
#if HWY_TARGET == HWY_SCALAR
  (void)cw, (void)sw, (void)state, (void)out, (void)rows, (void)bfloat16;  // no pairs in one lane
#else
  constexpr std::size_t G = HWY_MAX_BYTES >= 64 ? 16 : HWY_MAX_BYTES >= 32 ? 8 : 4;
  if (bfloat16) {
    StepRowsG<G, true>(cw, sw, state, out, rows);
  } else {
    StepRowsG<G, false>(cw, sw, state, out, rows);
  }
#endif
}

void RotateHalves(float* x, const double* c, const double* s, std::size_t heads, std::size_t half) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const std::size_t lanes = hn::Lanes(dd);
  for (std::size_t h = 0; h < heads; ++h) {
    float* HWY_RESTRICT row = x + h * 2 * half;
    for (std::size_t k = 0; k + lanes <= half; k += lanes) {
      const auto a = hn::PromoteTo(dd, hn::LoadU(df, row + k)),
                 b = hn::PromoteTo(dd, hn::LoadU(df, row + half + k));
      const auto vc = hn::LoadU(dd, c + k), vs = hn::LoadU(dd, s + k);
      hn::StoreU(hn::DemoteTo(df, hn::MulSub(a, vc, hn::Mul(b, vs))), df, row + k);
      hn::StoreU(hn::DemoteTo(df, hn::MulAdd(a, vs, hn::Mul(b, vc))), df, row + half + k);
    }
  }
}

}  // namespace pe::bench::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <benchmark/benchmark.h>

#include <cmath>
#include <string>
#include <vector>

#include "machine_limits.h"
#include "pace.h"

namespace pe::bench {
namespace {

HWY_EXPORT(StepRowValues);
HWY_EXPORT(StepRows);
HWY_EXPORT(RotateHalves);

constexpr std::size_t kRows = 8192;

void step_floor(benchmark::State& state, bool bfloat16) {
  const std::size_t values = HWY_DYNAMIC_DISPATCH(StepRowValues)();
  if (values < 2) return state.SkipWithError("no vector of pairs on this target");
  // Angles as a table's, 10000^(-j/(values/2)) per pair; the state at an arbitrary row.
  std::vector<double> cw(values), sw(values), start(values);
  for (std::size_t k = 0; k < values / 2; ++k) {
    const double w = std::pow(1e4, -static_cast<double>(k) / static_cast<double>(values / 2));
    cw[2 * k] = cw[2 * k + 1] = std::cos(w);
    sw[2 * k] = std::sin(w);
    sw[2 * k + 1] = -std::sin(w);
    start[2 * k] = std::sin(1000 * w);
    start[2 * k + 1] = std::cos(1000 * w);
  }
  // Zeroed (touched) before the timed loop: first touch of fresh pages is not the kernel's cost.
  std::vector<std::uint32_t> out(kRows * values);
  const double pace_before = pace_ns();
  for (auto _ : state) {
    HWY_DYNAMIC_DISPATCH(StepRows)(cw.data(), sw.data(), start.data(), out.data(), kRows, bfloat16);
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["pace_ns"] = 0.5 * (pace_before + pace_ns());
  state.counters["ns_per_element"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(kRows * values) * 1e-9,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  // The most of the machine's fill limit the method can reach at this size.
  const double bytes = static_cast<double>(kRows * values * (bfloat16 ? 2 : 4));
  state.counters["fill_fraction"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * bytes /
                             limits_for(kRows * values * (bfloat16 ? 2 : 4)).fill_bytes_per_second,
                         benchmark::Counter::kIsRate);
  state.SetLabel(std::to_string(values) + " values a row");
}

void rotate_floor(benchmark::State& state) {
  constexpr std::size_t kHeads = 32, kHalf = 64;
  std::vector<double> c(kHalf), s(kHalf);
  for (std::size_t k = 0; k < kHalf; ++k)
    c[k] = std::cos(0.1 * static_cast<double>(k)), s[k] = std::sin(0.1 * static_cast<double>(k));
  std::vector<float> x(kHeads * 2 * kHalf);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(static_cast<double>(i)));
  const double pace_before = pace_ns();
  for (auto _ : state) {
    HWY_DYNAMIC_DISPATCH(RotateHalves)(x.data(), c.data(), s.data(), kHeads, kHalf);
    benchmark::DoNotOptimize(x.data());
    benchmark::ClobberMemory();
  }
  state.counters["pace_ns"] = 0.5 * (pace_before + pace_ns());
  state.counters["ns_per_element"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * static_cast<double>(x.size()) * 1e-9,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

}  // namespace

void register_exact_floors() {
  // The row's width is the target's (d = 128 on AVX-512; AVX2's registers hold 32 values a row, where its
  // table of d = 128 goes row by row from L1), so it is in the name.
  const std::size_t d = HWY_DYNAMIC_DISPATCH(StepRowValues)();
  for (const bool bfloat16 : {false, true}) {
    const std::string name = "floor/sinusoidal.exact/step/" + std::string(bfloat16 ? "bf16" : "f32") +
                             "/L8192/d" + std::to_string(d);
    benchmark::RegisterBenchmark(name.c_str(), step_floor, bfloat16);
  }
  benchmark::RegisterBenchmark("floor/rope.exact/rotate/f32/T1/H32/D128", rotate_floor);
}

}  // namespace pe::bench
#endif  // HWY_ONCE

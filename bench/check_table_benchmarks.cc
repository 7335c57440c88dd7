#include "check_table_benchmarks.h"

#include <benchmark/benchmark.h>

#include <cmath>
#include <span>
#include <string>
#include <vector>

#include "check_benchmarks.h"
#include "pe/check/check.h"
#include "pe/harness/sinusoidal_rows.h"
#include "pe/pe.h"
#include "read_counters.h"

namespace pe::bench {
namespace {

// The table as diffusers' get_timestep_embedding builds it in float32 (models/embeddings.py: exponent
// fl(fl(-ln P)·i), divided by fl(half - shift), expf, fl(t·ω), `emb = scale * emb` in float32, sinf/cosf) at
// `timesteps`, [cos | sin].
std::vector<float> diffusers_timestep_table(const SinusoidalParams& params,
                                            std::span<const float> timesteps) {
  const SinusoidalPlan plan(params);
  const std::size_t d = plan.dim();
  const auto scale = static_cast<float>(params.scale);
  const auto neg_log = static_cast<float>(-std::log(params.base));
  const auto denominator =
      static_cast<float>(static_cast<double>(plan.n_pairs()) - params.downscale_freq_shift);
  std::vector<float> table(timesteps.size() * d);
  for (std::size_t r = 0; r < timesteps.size(); ++r) {
    for (std::size_t i = 0; i < plan.n_pairs(); ++i) {
      const float angle = scale * (timesteps[r] * std::exp(neg_log * static_cast<float>(i) / denominator));
      table[r * d + plan.sin_index(i)] = std::sin(angle);
      table[r * d + plan.cos_index(i)] = std::cos(angle);
    }
  }
  return table;
}

// One check of `r` per iteration (a correct table: it must pass), with its time per element and fraction of
// the read limit of the table itself.
void run_table_check(benchmark::State& state, const check::SinusoidalRequest& r,
                     std::span<const float> table) {
  check_loop(
      state, table.size(), {std::as_bytes(table)},
      [&r] { return check::check_sinusoidal(r, check::Names()); }, must_pass);
}

// `rows` fractional timesteps spread over [0, 1000) (a sampler's, DPM-Solver's), as float32 tensors hold
// them, x `dim` (Stable Diffusion's time embedding at 1280: downscale_freq_shift 1, flip_sin_to_cos); with a
// `scale` of 1000, t in [0, 1) (SD3's and Flux's: the same angles, scaled inside the embedding).
void check_timestep_benchmark(benchmark::State& state, std::size_t rows, std::size_t dim, double scale) {
  SinusoidalParams params{static_cast<std::int64_t>(dim), 10000.0, Layout::Concatenated};
  params.flip_sin_to_cos = true;
  params.downscale_freq_shift = 1;
  params.scale = scale;
  std::vector<float> timesteps(rows);
  for (std::size_t k = 0; k < rows; ++k)
    timesteps[k] =
        static_cast<float>(999.0 / scale * (static_cast<double>(k) + 0.37) / static_cast<double>(rows));
  std::vector<float> table = diffusers_timestep_table(params, timesteps);
  check::SinusoidalRequest r;
  r.table = {{}, {rows, dim}, DType::F32, "table", table.data()};
  r.real_positions.assign(timesteps.begin(), timesteps.end());
  r.spec.layout = Layout::Concatenated;
  r.spec.flip_sin_to_cos = true;
  r.spec.downscale_freq_shift = 1;
  r.spec.scale = scale;
  run_table_check(state, r, table);
}

// get_2d_sincos_pos_embed's table (MAE's numpy float64, rounded to float32 once) on an h x w grid x 1024:
// each block's pair at the row's coordinate, the blocks and coordinates as the harness lays them out.
void check_grid_benchmark(benchmark::State& state, std::int64_t h, std::int64_t w) {
  constexpr std::size_t dim = 1024;
  const SinusoidalParams params{dim, 10000.0, Layout::Concatenated};
  harness::GridSpec grid;
  grid.sizes = {h, w};
  const harness::SinusoidalRows rows = harness::grid_rows(params, grid);
  std::vector<float> table(rows.rows() * dim, 0.0f);
  for (const harness::SinusoidalBlock& b : rows.blocks) {
    const SinusoidalPlan plan(b.params);
    for (std::size_t r = 0; r < rows.rows(); ++r) {
      const double p = rows.positions[b.axis][r];
      for (std::size_t i = 0; i < plan.n_pairs(); ++i) {
        const double angle =
            p * (1.0 / std::pow(b.params.base, static_cast<double>(i) / static_cast<double>(plan.n_pairs())));
        table[r * dim + b.offset + plan.sin_index(i)] = static_cast<float>(std::sin(angle));
        table[r * dim + b.offset + plan.cos_index(i)] = static_cast<float>(std::cos(angle));
      }
    }
  }
  check::SinusoidalRequest r;
  r.table = {{}, {rows.rows(), dim}, DType::F32, "table", table.data()};
  r.spec.layout = Layout::Concatenated;
  r.spec.grid = std::vector<std::int64_t>{h, w};
  run_table_check(state, r, table);
}

}  // namespace

int register_check_table_benchmarks(const Options& options) {
  CheckRegistrar r(options);
  // Issue 49's census corners: one timestep (the fixed cost of a check), a sampler's 1024 and 4096 steps.
  r.add("check/sinusoidal/diffusers/f32/N1/d256", check_timestep_benchmark, std::size_t{1}, std::size_t{256},
        1.0);
  r.add("check/sinusoidal/diffusers/f32/N1024/d1280", check_timestep_benchmark, std::size_t{1024},
        std::size_t{1280}, 1.0);
  r.add("check/sinusoidal/diffusers/f32/N4096/d1280", check_timestep_benchmark, std::size_t{4096},
        std::size_t{1280}, 1.0);
  // SD3's and Flux's t in [0, 1) scaled by 1000 inside the embedding: the scaled frequencies exceed 1.
  r.add("check/sinusoidal/diffusers/f32/N4096/d1280/scale1000", check_timestep_benchmark, std::size_t{4096},
        std::size_t{1280}, 1000.0);
  r.add("check/sinusoidal/grid/f32/64x64/d1024", check_grid_benchmark, std::int64_t{64}, std::int64_t{64});
  return r.count();
}

}  // namespace pe::bench

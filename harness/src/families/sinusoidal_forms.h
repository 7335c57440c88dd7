// The sinusoidal family's forms beyond the paper's integer table, in the census and the benchmarks: diffusion
// timestep embeddings as diffusers' schedulers feed them (issue 49) and an odd dim. Zero rows (fairseq's
// padding row, a ViT's extra tokens) are the harness's own zeros around a variant's rows (variant_rows.h):
// nothing of a kernel's to measure.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "pe/harness/census.h"
#include "pe/harness/family_traits.h"
#include "pe/harness/instance.h"
#include "pe/harness/measure.h"

namespace pe::harness::sinusoidal_family {

// `n` float32 timesteps below `reach` (every other one a whole number, as DDPM's; the others fractional, as
// DPM-Solver's and flow matching's): the first 0, the second the largest whole number below reach (where
// reach > 1; below, every one but the first fractional); one alone is fractional.
std::vector<double> census_timesteps(std::size_t n, double reach, std::uint64_t seed);

// Timestep embeddings of 1..4096 timesteps × dims 256..1280 (quick: 1 and 16 × 256 and 1280) under the three
// switch sets diffusers' models use — SD's UNet (flip_sin_to_cos, shift 0), get_timestep_embedding's defaults
// (shift 1), SD3/Flux's t in [0, 1) with scale 1000 — each in the instance's layout, and an odd dim (321,
// shift 1): the variant's table_at against the exact rows (measure_sinusoidal_rows). Angles stay below
// min(1000, limit); an instance whose contract does not take these forms (a C plugin's) is skipped.
void census_forms(const Instance& in, std::int64_t limit, std::uint64_t seed, const census::Options& options,
                  Measurement& m);

// A benchmark of `shape.length` timesteps × shape.dim through sinusoidal_table_at (SD's UNet switches, the
// instance's layout), checked on its first, middle and last rows.
std::unique_ptr<Workload> timestep_workload(const Instance& in, const BenchShape& shape);

}  // namespace pe::harness::sinusoidal_family

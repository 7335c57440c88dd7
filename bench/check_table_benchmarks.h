// The sinusoidal check on issue 49's tables (diffusion timesteps at real positions, a 2-D image grid): the
// exact per-element path (sinusoidal_rows), against the machine's read limit measured in the same run.
#pragma once

#include "grid.h"

namespace pe::bench {

// check/sinusoidal/diffusers/f32/N{n}/d1280 (n = 1024 fractional timesteps, downscale_freq_shift 1,
// flip_sin_to_cos, concatenated) and check/sinusoidal/grid/f32/48x48/d1024 (get_2d_sincos_pos_embed; 64x64
// took 1.3 s an iteration), under register_check_benchmarks's conditions (Report mode or a --variant glob
// other than "*"). Returns how many it registered.
int register_check_table_benchmarks(const Options& options);

}  // namespace pe::bench

// The check engine's own speed (issue 31's targets): check_rope over a dumped-size batch and the exact
// reference's rotated output, each on buffers made before the timed loop.
#pragma once

#include <string>

#include "grid.h"

namespace pe::bench {

// check/rope/{f32,bf16,f16}/T4096/H32/D128, check/sinusoidal/f32/L131072/d128 (each with its fraction of the
// machine's read limit at the bytes it reads), diagnose/rope/f32/T4096/H32/D128 and
// reference/rope/f32/T2048/H32/D128 when `glob` matches them, in Report
// mode or when the glob is not "*" (each iteration takes seconds: not in the quick grid).
// Returns how many it registered.
int register_check_benchmarks(const Options& options);

}  // namespace pe::bench

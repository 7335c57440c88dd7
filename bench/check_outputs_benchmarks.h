// The checks of what engines write besides a rotated tensor (issue 51's FP8 codes and attention scores) at
// issue 53's measure: time per element, the fraction of the read limit, and the heap a call holds at its peak
// against the bytes it reads (one pass: nothing the size of the data beside it).
#pragma once

#include "grid.h"

namespace pe::bench {

// check/fp8/e4m3fn/T1024/H32/D128 (float32 x and its codes, a correct fused kernel's) and
// check/scores/{alibi,rope}/f32/H8/Q256/K1024/D64, under register_check_benchmarks's conditions. Returns how
// many it registered.
int register_check_outputs_benchmarks(const Options& options);

}  // namespace pe::bench

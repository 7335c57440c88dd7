// The ALiBi check's speed against the machine's read limit (issue 53): check_alibi over a float32 bias
// made by a correct kernel before the timed loop.
#pragma once

#include "grid.h"

namespace pe::bench {

// check/alibi/f32/H32/Q1024/K1024/symmetric (128 MiB, every element compared: the symmetric form masks
// nothing) with its fraction of the read limit, under register_check_benchmarks's conditions (Report mode
// or a --variant glob other than "*": each iteration reads a large tensor). Returns how many it registered.
int register_check_alibi_benchmarks(const Options& options);

}  // namespace pe::bench

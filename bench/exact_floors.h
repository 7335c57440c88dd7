// The exact variants' arithmetic floors (floor/... benchmarks): see exact_floors.cc.
#pragma once

namespace pe::bench {

// Registers floor/sinusoidal.exact/step/{f32,bf16}/L8192/d<row width> and
// floor/rope.exact/rotate/f32/T1/H32/D128.
void register_exact_floors();

}  // namespace pe::bench

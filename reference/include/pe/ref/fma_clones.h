// PE_FMA_CLONES on a hot loop: the compiler builds it twice, with FMA instructions and without, and the
// loader picks one for the CPU (target_clones). The double-double arithmetic calls std::fma for every
// product; in a baseline x86-64 build (Highway dispatches its own kernels; -march=native is not used)
// each is a call into libm. Both clones give the same bits: a fused multiply-add is exact either way.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define PE_FMA_CLONES __attribute__((target_clones("fma", "default")))
#else
#define PE_FMA_CLONES
#endif

// The contract of HF's float32 RoPE (rope.torch_f32, derived there; rope.ggml_f32 changes its angle
// terms), and of its cos/sin stored in a 16-bit cache and read back as float for a float32 rotation
// (rope.cache_bf16, rope.cache_f16), for cache type T with unit roundoff u_T.
//
// Cache derivation, base <= 1e7, N = |a| + |b|: the angle as rope.torch_f32, 22.2·2^-24·|φ|; cosf/sinf and
// the rotation 3.001·2^-24; the cache's rounding of |cos|, |sin| <= 1 moves the output by at most
// N·u_T (ct = 1, table type T); bf16 or float16 data round once more (c0 = 1).
// Budget: N·(c0·u_out + u_T + (3.001 + 22.2·|φ|)·2^-24). Largest position: 2^24.
// Scaling (pe/rope_scaling.h): the formula runs on the plan's base' (NTK, dynamic; at most max_base)
// and multiplies each rescaled frequency by fl(g_j) in float: 2 more roundings of the angle
// (c1_gain = 2.001); cos and sin times the attention factor in float (ca = 3: A rounded to double, to
// the compute type, the product).
#pragma once

#include "pe/contract.h"

namespace pe::detail {

inline Contract hf_rope_contract(const char* depends_on, DType cache_type = DType::F64) {
  return {.layouts = {Layout::Interleaved, Layout::HalfSplit},
          .outputs = {DType::F32, DType::BF16, DType::F16},
          .angle_type = DType::F32,
          .compute_type = DType::F32,
          .max_position = std::int64_t{1} << 24,
          .max_base = 1e7,
          .max_input_abs = 0x1p126,
          .table_type = cache_type,
          .depends_on = depends_on,
          .c0 = 1,
          .ck = 3.001,
          .ct = cache_type == DType::F64 ? 0.0 : 1.0,
          .c1 = 22.2,
          .c1_gain = 2.001};
}

}  // namespace pe::detail

// The contract of a RoPE whose rotation runs in the data's 16-bit type R (docs/contracts.md §2k), with
// unit roundoff u = 2^-8 (bf16) or 2^-11 (f16) and v = 2^-24 (float32):
//   HF's float32 angle, cosf/sinf and attention factor as rope.torch_f32 (c1 = 22.2, c1_gain = 2.001,
//   the kernel's v and A's 3·v), then the cos/sin table either stored in R (table16: HF in a bf16/f16
//   model, `.to(x.dtype)`) or kept in float32, and q·cos + rotate_half(q)·sin with each product and the
//   sum rounded to R. Relative to A·N (N = |a| + |b|):
//     table in R           u (ct = 1, table type R)
//     products             table16: exact in float (bf16 below 2^-126 aside: the floor), one rounding,
//                          u·(1 + u); float32 table: float then R, (u + v + uv)
//     the sum              float then R, (u + v + uv)·(1 + u)^2 (table16) or ·(1 + u + v + uv)
//     cosf/sinf            v
//   ck = the products', the sum's and the kernel's, in units of u: 2.01176 (bf16, table16), 2.00395
//   (bf16, float32 table), 2.00171 (f16, table16), 2.00085 (f16, float32 table), declared rounded up;
//   ca = 3·v/u: A's three float32 roundings in units of u. The output is the sum's own rounding: c0 = 0.
//   float16: |y| <= ‖(a, b)‖·A·(1 + 4u) <= √2·|x|max·A·(1 + 4u), so |x| < 2^15 keeps every product and
//   sum below 65504 for A <= 1.41 (and |x| < 2^14 for A <= 2.8); subnormal products and table entries are
//   within the floor (3·2^-24) and u·A.
#pragma once

#include "pe/contract.h"

namespace pe::detail {

inline Contract rotation16_contract(DType data, bool table16, const char* depends_on) {
  const bool bf16 = data == DType::BF16;
  const double ck = bf16 ? (table16 ? 2.012 : 2.005) : (table16 ? 2.002 : 2.001);
  return {.layouts = {Layout::Interleaved, Layout::HalfSplit},
          .outputs = {data},
          .angle_type = DType::F32,
          .compute_type = data,
          .max_position = std::int64_t{1} << 24,
          .max_base = 1e7,
          .max_input_abs = bf16 ? 0x1p126 : 0x1p15,
          .table_type = table16 ? data : DType::F64,
          .depends_on = depends_on,
          .c0 = 0,
          .ck = ck,
          .ct = table16 ? 1.0 : 0.0,
          .c1 = 22.2,
          .c1_pair = 0,
          .ca = 3 * 0x1p-24 / unit_roundoff(data),
          .c1_gain = 2.001};
}

}  // namespace pe::detail

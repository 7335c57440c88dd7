// rope.hwy (dynamic dispatch to the best target) and rope.hwy@<TARGET> (each compiled Highway
// target this CPU supports). sin/cos of each chunk of pairs as sinusoidal.hwy (angle and reduction
// in double, Highway float Sin/Cos on |r| <= π), computed once per token and applied to every head;
// the rotation in float, rounded once into bfloat16/float16 data.
//
// Contract (derived), per output element of a pair (a, b), N = |a| + |b|:
//   angle 2.03·2^-53·|φ|; sin/cos within 6.16·2^-24 (see sinusoidal/hwy/hwy.cc), moving the output
//   by N times that; rotation fl(fl(a·c) - fl(b·s)) in float: 2·2^-24·N (+ second order);
//   output: float32 is the compute type; bfloat16/float16 round once (c0 = 1).
//   Budget: N·(c0·u_out + 8.2·2^-24 + 2.03·2^-53·|φ|). |input| <= 2^126. Largest position: 2^31.
//   Scaling: the plan's θ'_j; cos and sin times the attention factor in float (ca = 3: A rounded to double,
//   to the compute type, the product).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "rope/hwy/hwy.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include "detail/convert.h"
#include "detail/hwy_register.h"
#include "detail/hwy_sincos-inl.h"

#ifndef PE_ROPE_HWY_CONTRACT_
#define PE_ROPE_HWY_CONTRACT_
namespace pe::rope_hwy {
inline const Contract kContract{
    .layouts = {Layout::Interleaved, Layout::HalfSplit},
    .outputs = {DType::F32, DType::BF16, DType::F16},
    .angle_type = DType::F64,
    .compute_type = DType::F32,
    .max_position = std::int64_t{1} << 31,
    .max_input_abs = 0x1p126,
    .depends_on = "Highway 1.0.3 contrib/math Sin/Cos <= 3 ULP on |x| <= 39000, any compiled target",
    .c0 = 1,
    .ck = 8.2,
    .c1 = 2.03,
};
}  // namespace pe::rope_hwy
#endif

HWY_BEFORE_NAMESPACE();
namespace pe::rope_hwy::HWY_NAMESPACE {

using detail::HWY_NAMESPACE::kChunk;
using detail::HWY_NAMESPACE::SinCosChunk;

template <class T>
void RotateTyped(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction, T* x) {
  const std::size_t h = plan.n_pairs(), offset = plan.pair_offset();
  const float sign = direction == RopeDirection::Inverse ? -1.0f : 1.0f;
  const auto attention = static_cast<float>(plan.attention_factor());
  HWY_ALIGN float s[kChunk];
  HWY_ALIGN float c[kChunk];
  for (std::size_t t = 0; t < batch.tokens(); ++t) {
    for (std::size_t j0 = 0; j0 < h; j0 += kChunk) {
      const std::size_t n = h - j0 < kChunk ? h - j0 : kChunk;
      SinCosChunk(plan.inv_freq().data() + j0, n, batch.position(t), s, c);
      if (attention != 1.0f) {
        for (std::size_t k = 0; k < n; ++k) {
          s[k] *= attention;
          c[k] *= attention;
        }
      }
      for (std::size_t head = 0; head < batch.heads; ++head) {
        T* row = x + batch.row(t, head);
        for (std::size_t k = 0; k < n; ++k) {
          const std::size_t first = plan.pair_first(j0 + k);
          const float a = detail::load_as<float>(row[first]), b = detail::load_as<float>(row[first + offset]);
          const float sk = sign * s[k];
          row[first] = detail::store_as<T>(a * c[k] - b * sk);
          row[first + offset] = detail::store_as<T>(a * sk + b * c[k]);
        }
      }
    }
  }
}

void Rotate(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction, Buffer x) {
  detail::with_typed(x, [&](auto* data) { RotateTyped(plan, batch, direction, data); });
}

}  // namespace pe::rope_hwy::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

// Outside the target region: registration code is compiled for the baseline only.
namespace pe::rope_hwy::HWY_NAMESPACE {
namespace {
PE_REGISTER_HWY_ROPE_TARGET("rope.hwy", kContract, Rotate);
}  // namespace
}  // namespace pe::rope_hwy::HWY_NAMESPACE

#if HWY_ONCE
namespace pe::rope_hwy {
namespace {
PE_REGISTER_HWY_ROPE_DISPATCH("rope.hwy", kContract, Rotate);
}  // namespace
}  // namespace pe::rope_hwy
#endif  // HWY_ONCE

// rope.eigen: Eigen arrays over Eigen::Map'ped heads. Per token and chunk of pairs, the float angle
// fl(fl(p)·fl(θ)) and Eigen's vectorised .sin()/.cos(); the rotation as array expressions on the two
// halves of each pair (strided Maps for interleaved, contiguous for half-split).
//
// Build flags: as sinusoidal.eigen (SSE2 baseline, no FMA: psin_float/pcos_float within 2 ULP).
// Contract (derived), N = |a| + |b|: angle 3.001·2^-24·|φ|; sin/cos 2·2^-24; rotation in float
// 2·2^-24 (+ second order): ck = 4.01. float32 is the compute type; bfloat16/float16 round once.
// Budget: N·(c0·u_out + (4.01 + 3.001·|φ|)·2^-24). |input| <= 2^126. Largest position: 2^24.
// Scaling: the plan's θ'_j; cos and sin times the attention factor in float (ca = 3: A rounded to double, to
// the compute type, the product).
#include <Eigen/Core>

#include "detail/chunk.h"
#include "detail/convert.h"
#include "pe/register.h"
#include "pe/variant.h"

namespace pe {
namespace {

const Contract kContract{
    .layouts = {Layout::Interleaved, Layout::HalfSplit},
    .outputs = {DType::F32, DType::BF16, DType::F16},
    .angle_type = DType::F32,
    .compute_type = DType::F32,
    .max_position = std::int64_t{1} << 24,
    .max_input_abs = 0x1p126,
    .depends_on =
        "Eigen 3.4 psin_float/pcos_float with EIGEN_VECTORIZE_SSE2 and no FMA (2 ULP; 1 ULP with -mfma)",
    .c0 = 1,
    .ck = 4.01,
    .c1 = 3.001,
};

template <class T>
void rotate(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction, T* x) {
  const auto h = static_cast<Eigen::Index>(plan.n_pairs());
  const auto offset = static_cast<Eigen::Index>(plan.pair_offset());
  const Eigen::Index stride = plan.layout() == Layout::Interleaved ? 2 : 1;
  const float sign = direction == RopeDirection::Inverse ? -1.0f : 1.0f;
  const auto attention = static_cast<float>(plan.attention_factor());
  const Eigen::Map<const Eigen::ArrayXd> theta(plan.inv_freq().data(), h);
  for (std::size_t t = 0; t < batch.tokens(); ++t) {
    const auto p = static_cast<float>(batch.position(t));
    for (Eigen::Index j0 = 0; j0 < h; j0 += detail::kEigenChunk) {
      const Eigen::Index n = std::min(detail::kEigenChunk, h - j0);
      const detail::ChunkF angle = p * theta.segment(j0, n).cast<float>();
      detail::ChunkF c = angle.cos(), s = sign * angle.sin();
      if (attention != 1.0f) {
        c *= attention;
        s *= attention;
      }
      const Eigen::Index first = static_cast<Eigen::Index>(plan.pair_first(static_cast<std::size_t>(j0)));
      for (std::size_t head = 0; head < batch.heads; ++head) {
        T* row = x + batch.row(t, head);
        if constexpr (std::is_same_v<T, float>) {
          detail::StridedF a(row + first, n, Eigen::InnerStride<>(stride));
          detail::StridedF b(row + first + offset, n, Eigen::InnerStride<>(stride));
          const detail::ChunkF a0 = a;
          a = a0 * c - b * s;
          b = a0 * s + b * c;
        } else {
          for (Eigen::Index k = 0; k < n; ++k) {
            T& ya = row[first + k * stride];
            T& yb = row[first + k * stride + offset];
            const float a = detail::load_as<float>(ya), b = detail::load_as<float>(yb);
            ya = detail::store_as<T>(a * c[k] - b * s[k]);
            yb = detail::store_as<T>(a * s[k] + b * c[k]);
          }
        }
      }
    }
  }
}

class EigenRope final : public RopeVariant {
 public:
  using RopeVariant::RopeVariant;
  void apply(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction,
             Buffer x) const noexcept override {
    detail::with_typed(x, [&](auto* data) { rotate(plan, batch, direction, data); });
  }
};

PE_REGISTER_ROPE("rope.eigen", kContract, EigenRope);

}  // namespace
}  // namespace pe

// rope.eigen, a backend of the RoPE driver (pe/detail/rope_driver.h): per token and chunk of pairs, the
// float angle fl(fl(p)·fl(θ)) and Eigen's vectorised .sin()/.cos(); the rotation as array expressions
// on the two halves of each pair (strided Maps for interleaved, contiguous for half-split).
//
// Build flags: as sinusoidal.eigen (SSE2 baseline, no FMA: psin_float/pcos_float within 2 ULP).
// Contract (derived), N = |a| + |b|: angle 3.001·2^-24·|φ|; sin/cos 2·2^-24; rotation in float
// 2·2^-24 (+ second order): ck = 4.01. float32 is the compute type; bfloat16/float16 round once.
// Budget: N·(c0·u_out + (4.01 + 3.001·|φ|)·2^-24). |input| <= 2^126. Largest position: 2^24.
// Scaling: the plan's θ'_j; cos and sin times the attention factor in float (ca = 3: A rounded to double, to
// the compute type, the product).
#include <Eigen/Core>

#include "detail/chunk.h"
#include "pe/detail/convert.h"
#include "pe/detail/rope_driver.h"
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

// The driver's backend (pe/detail/rope_driver.h): the chunk's float angles and Eigen's .sin()/.cos(),
// and for float32 data the rotation as array expressions on the two halves of each pair; other
// types take the driver's rotation (the same float arithmetic, element by element).
struct Backend {
  const RopePlan& plan;
  Eigen::Map<const Eigen::ArrayXd> theta{plan.inv_freq().data(), static_cast<Eigen::Index>(plan.n_pairs())};

  // The angles padded with zeros to a multiple of 16 floats, so that every pair takes Eigen's packet
  // sin/cos and none its scalar remainder (std::sin): a pair's bits do not depend on where its chunk
  // starts (M-RoPE's sections cut chunks anywhere).
  void sincos(std::int64_t p, std::size_t j0, std::size_t n, float* s, float* c) const {
    const auto m = static_cast<Eigen::Index>(n);
    const Eigen::Index padded = (m + 15) / 16 * 16;
    detail::ChunkF angle = detail::ChunkF::Zero(padded);
    angle.head(m) = static_cast<float>(p) * theta.segment(static_cast<Eigen::Index>(j0), m).cast<float>();
    const detail::ChunkF sin = angle.sin(), cos = angle.cos();
    Eigen::Map<Eigen::ArrayXf>(s, m) = sin.head(m);
    Eigen::Map<Eigen::ArrayXf>(c, m) = cos.head(m);
  }

  void rotate(float* const* rows, std::size_t n_rows, std::size_t j0, std::size_t n, const float* s_in,
              const float* c_in, float sign) const {
    const auto m = static_cast<Eigen::Index>(n);
    const Eigen::Index stride = plan.pairs_interleaved() ? 2 : 1;
    const auto first = static_cast<Eigen::Index>(plan.pair_first(j0));
    const auto offset = static_cast<Eigen::Index>(plan.pair_offset());
    const detail::ChunkF c = Eigen::Map<const Eigen::ArrayXf>(c_in, m);
    const detail::ChunkF s = sign * Eigen::Map<const Eigen::ArrayXf>(s_in, m);
    for (std::size_t r = 0; r < n_rows; ++r) {
      detail::StridedF a(rows[r] + first, m, Eigen::InnerStride<>(stride));
      detail::StridedF b(rows[r] + first + offset, m, Eigen::InnerStride<>(stride));
      const detail::ChunkF a0 = a;
      a = a0 * c - b * s;
      b = a0 * s + b * c;
    }
  }
};

class EigenRope final : public RopeVariant {
 public:
  using RopeVariant::RopeVariant;
  void apply(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction,
             Buffer x) const noexcept override {
    detail::with_typed(x, [&](auto* data) {
      detail::drive_rope<float, detail::kEigenChunk>(plan, batch, direction, data, Backend{plan});
    });
  }
};

PE_REGISTER_ROPE("rope.eigen", kContract, EigenRope);

}  // namespace
}  // namespace pe

// sinusoidal.eigen: Eigen arrays over Eigen::Map'ped caller rows. The angle fl(fl(fl(t)·fl(ω))·fl(scale))
// (t an integer or real position) is formed in float as a chunk array, and Eigen's vectorised .sin()/.cos()
// (psin_float/pcos_float) evaluate it; float32 rows are written through strided Maps, 16-bit rows rounded
// once per element.
//
// Build flags it depends on: EIGEN_VECTORIZE_SSE2 (the x86-64 baseline; no -march). Without FMA
// Eigen's psin_float/pcos_float are within 2 ULP (GenericPacketMathFunctions.h; 1 ULP with -mfma),
// with a slow exact reduction past 25966 (sin) / 18838 (cos).
//
// Contract (derived): angle as sinusoidal.scalar_f32, c1 = 3.001 (fl(t), fl(ω), the product) and
// c1_scale = 2 (fl(scale) and its product, scaled or real), |φ| = |scale·t·ω|; kernel 2 ULP <= 2·2^-24;
// float32 is the compute type, bfloat16/float16 round once (c0 = 1).
// Budget: c0·u_out + (2 + 3.001·|φ|)·2^-24, + 2·2^-24·|φ| scaled or real. Largest |scale·t|: 2^24; t and
// scale normal float32 magnitudes (pe/api.h).
#include <Eigen/Core>

#include "detail/chunk.h"
#include "pe/detail/convert.h"
#include "pe/register.h"
#include "pe/variant.h"

namespace pe {
namespace {

const Contract kContract{
    .layouts = {Layout::Interleaved, Layout::Concatenated},
    .outputs = {DType::F32, DType::BF16, DType::F16},
    .angle_type = DType::F32,
    .compute_type = DType::F32,
    .max_position = std::int64_t{1} << 24,
    .max_input_abs = 1e30,
    .depends_on =
        "Eigen 3.4 psin_float/pcos_float with EIGEN_VECTORIZE_SSE2 and no FMA (2 ULP; 1 ULP with -mfma)",
    .c0 = 1,
    .ck = 2,
    .c1 = 3.001,
    .c1_scale = 2,
};

template <bool kAdd, class Out>
void write(Out* row, Eigen::Index start, Eigen::Index stride, const detail::ChunkF& v) {
  if constexpr (std::is_same_v<Out, float>) {
    detail::StridedF y(row + start, v.size(), Eigen::InnerStride<>(stride));
    if constexpr (kAdd) {
      y += v;
    } else {
      y = v;
    }
  } else {
    for (Eigen::Index k = 0; k < v.size(); ++k) {
      Out& y = row[start + k * stride];
      y = detail::store_as<Out>(kAdd ? detail::load_as<float>(y) + v[k] : v[k]);
    }
  }
}

// P: std::int64_t (table, add) or double (table_at), converted to float as a float32 tensor would hold it.
template <bool kAdd, class Out, class P>
void rows(const SinusoidalPlan& plan, std::span<const P> positions, std::span<const std::uint8_t> padding,
          Out* out) {
  const auto d = static_cast<Eigen::Index>(plan.dim()), h = static_cast<Eigen::Index>(plan.n_pairs());
  const bool il = plan.layout() == Layout::Interleaved;
  const Eigen::Map<const Eigen::ArrayXd> omega(plan.inv_freq().data(), h);
  const auto scale = static_cast<float>(plan.scale());
  for (std::size_t r = 0; r < positions.size(); ++r) {
    if (kAdd && !padding.empty() && padding[r] != 0) continue;
    Out* row = out + static_cast<Eigen::Index>(r) * d;
    const auto p = static_cast<float>(static_cast<double>(positions[r]));
    if (!kAdd && plan.has_pad()) row[d - 1] = detail::store_as<Out>(0.0f);
    for (Eigen::Index i0 = 0; i0 < h; i0 += detail::kEigenChunk) {
      const Eigen::Index n = std::min(detail::kEigenChunk, h - i0);
      // Multiplying by a scale of 1 is exact: the unscaled table's bits.
      const detail::ChunkF angle = (p * omega.segment(i0, n).cast<float>()) * scale;
      const detail::ChunkF s = angle.sin(), c = angle.cos();
      // The plan's channels (its layout and flip_sin_to_cos): pair i0's, then a stride along the pairs.
      const auto at = [&](std::size_t channel) { return static_cast<Eigen::Index>(channel); };
      write<kAdd>(row, at(plan.sin_index(static_cast<std::size_t>(i0))), il ? 2 : 1, s);
      write<kAdd>(row, at(plan.cos_index(static_cast<std::size_t>(i0))), il ? 2 : 1, c);
    }
  }
}

class EigenSinusoidal final : public SinusoidalVariant {
 public:
  using SinusoidalVariant::SinusoidalVariant;
  void table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
             Buffer out) const noexcept override {
    detail::with_typed(out, [&](auto* y) { rows<false>(plan, positions, {}, y); });
  }
  void table_at(const SinusoidalPlan& plan, std::span<const double> positions,
                Buffer out) const noexcept override {
    detail::with_typed(out, [&](auto* y) { rows<false>(plan, positions, {}, y); });
  }
  void add(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
           std::span<const std::uint8_t> padding, Buffer embeddings) const noexcept override {
    detail::with_typed(embeddings, [&](auto* y) { rows<true>(plan, positions, padding, y); });
  }
};

PE_REGISTER_SINUSOIDAL("sinusoidal.eigen", kContract, EigenSinusoidal);

}  // namespace
}  // namespace pe

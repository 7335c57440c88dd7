// Deliberately broken variants, linked only into pe_props_mutants. Each is the bug a real kernel
// has shipped with; ctest runs the property that must catch it and passes only if RapidCheck
// reports a shrunk counterexample (CMakeLists.txt lists which property catches which mutant).
#include <cmath>

#include "detail/loops.h"
#include "detail/scalar_sincos.h"
#include "pe/variant.h"

namespace pe {
namespace {

// The contracts of scalar_f64 kernels (float64 angle and arithmetic), which the mutants claim.
const Contract kSinusoidalMutantContract{.layouts = {Layout::Interleaved, Layout::Concatenated},
                                         .outputs = {DType::F64},
                                         .angle_type = DType::F64,
                                         .compute_type = DType::F64,
                                         .max_position = std::int64_t{1} << 31,
                                         .max_input_abs = 1e30,
                                         .c0 = 1,
                                         .ck = 1,
                                         .c1 = 2.03};
const Contract kRopeMutantContract{.layouts = {Layout::Interleaved, Layout::HalfSplit},
                                   .outputs = {DType::F64},
                                   .angle_type = DType::F64,
                                   .compute_type = DType::F64,
                                   .max_position = std::int64_t{1} << 31,
                                   .max_input_abs = 0x1p126,
                                   .c0 = 1,
                                   .ck = 3.001,
                                   .c1 = 2.03};

// A sinusoidal mutant from a (position, pair) -> (sin, cos) rule and an optional broken add.
template <class Rule, bool kIgnorePadding = false>
class SinusoidalMutant final : public SinusoidalVariant {
 public:
  explicit SinusoidalMutant(std::string name)
      : SinusoidalVariant(std::move(name), kSinusoidalMutantContract) {}
  void table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
             Buffer out) const noexcept override {
    detail::write_table<double>(plan, positions, static_cast<double*>(out.data), Rule{plan});
  }
  void add(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
           std::span<const std::uint8_t> padding, Buffer emb) const noexcept override {
    detail::add_table<double>(plan, positions, kIgnorePadding ? std::span<const std::uint8_t>{} : padding,
                              static_cast<double*>(emb.data), Rule{plan});
  }
};

struct SwappedSinCos {  // cos where sin belongs
  const SinusoidalPlan& plan;
  void operator()(std::int64_t p, std::size_t i, double& s, double& c) const noexcept {
    detail::LibmSinCos<double, SinusoidalPlan>{plan}(p, i, c, s);
  }
};
struct OffByOnePosition {  // positions counted from 1
  const SinusoidalPlan& plan;
  void operator()(std::int64_t p, std::size_t i, double& s, double& c) const noexcept {
    detail::LibmSinCos<double, SinusoidalPlan>{plan}(p + 1, i, s, c);
  }
};
struct FloatAngleClaimingDouble {  // a float32 angle under a float64 contract
  const SinusoidalPlan& plan;
  void operator()(std::int64_t p, std::size_t i, double& s, double& c) const noexcept {
    const float a = static_cast<float>(p) * static_cast<float>(plan.inv_freq()[i]);
    s = std::sin(static_cast<double>(a));
    c = std::cos(static_cast<double>(a));
  }
};
struct Tensor2TensorExponent {  // ω_i = b^(-i/(d/2 - 1)) where the paper has b^(-2i/d)
  const SinusoidalPlan& plan;
  void operator()(std::int64_t p, std::size_t i, double& s, double& c) const noexcept {
    const double h = static_cast<double>(plan.n_pairs());
    const double w = std::pow(plan.params().base, -static_cast<double>(i) / std::max(h - 1, 1.0));
    s = std::sin(static_cast<double>(p) * w);
    c = std::cos(static_cast<double>(p) * w);
  }
};
using Correct = detail::LibmSinCos<double, SinusoidalPlan>;

// Partial rotary with the frequency exponent over head_dim instead of rotary_dim (a bug the issue
// names); scaled plans' gains are ignored too, which is fine for a mutant.
struct ExponentOverHeadDim {
  const RopePlan& plan;
  void operator()(std::int64_t p, std::size_t j, double& s, double& c) const noexcept {
    const double w =
        std::pow(plan.effective_base(), -2.0 * static_cast<double>(j) / static_cast<double>(plan.head_dim()));
    s = std::sin(static_cast<double>(p) * w);
    c = std::cos(static_cast<double>(p) * w);
  }
};

// A RoPE mutant from a plan transformation and a direction rule.
enum class RopeBug {
  WrongPairing,
  RotatesPastRotaryDim,
  IgnoresDirection,
  IgnoresScaling,
  ExponentOverHeadDim
};

template <RopeBug kBug>
class RopeMutant final : public RopeVariant {
 public:
  explicit RopeMutant(std::string name) : RopeVariant(std::move(name), kRopeMutantContract) {}
  void apply(const RopePlan& plan, const RopeBatch& batch, RopeDirection direction,
             Buffer x) const noexcept override {
    RopeParams params = plan.params();
    if (kBug == RopeBug::WrongPairing) {
      params.layout = params.layout == Layout::Interleaved ? Layout::HalfSplit : Layout::Interleaved;
    }
    if (kBug == RopeBug::RotatesPastRotaryDim) params.rotary_dim = params.head_dim;
    if (kBug == RopeBug::IgnoresDirection) direction = RopeDirection::Forward;
    if (kBug == RopeBug::IgnoresScaling) params.scaling = {};
    // Mutants may allocate: they exist only to be caught.
    const RopePlan used(params);
    auto* data = static_cast<double*>(x.data);
    if constexpr (kBug == RopeBug::ExponentOverHeadDim) {
      detail::rotate<double>(used, batch, direction, data, ExponentOverHeadDim{used});
    } else {
      detail::rotate<double>(used, batch, direction, data, detail::LibmSinCos<double, RopePlan>{used});
    }
  }
};

const Registrar r1{std::make_unique<SinusoidalMutant<SwappedSinCos>>("sinusoidal.mutant_swapped_sincos")};
const Registrar r2{std::make_unique<SinusoidalMutant<OffByOnePosition>>("sinusoidal.mutant_off_by_one")};
const Registrar r3{
    std::make_unique<SinusoidalMutant<FloatAngleClaimingDouble>>("sinusoidal.mutant_float_angle")};
const Registrar r4{
    std::make_unique<SinusoidalMutant<Tensor2TensorExponent>>("sinusoidal.mutant_t2t_exponent")};
const Registrar r5{std::make_unique<SinusoidalMutant<Correct, true>>("sinusoidal.mutant_ignores_padding")};
const Registrar r6{std::make_unique<RopeMutant<RopeBug::WrongPairing>>("rope.mutant_wrong_pairing")};
const Registrar r7{
    std::make_unique<RopeMutant<RopeBug::RotatesPastRotaryDim>>("rope.mutant_past_rotary_dim")};
const Registrar r8{std::make_unique<RopeMutant<RopeBug::IgnoresDirection>>("rope.mutant_ignores_direction")};
const Registrar r9{std::make_unique<RopeMutant<RopeBug::IgnoresScaling>>("rope.mutant_ignores_scaling")};
const Registrar r10{
    std::make_unique<RopeMutant<RopeBug::ExponentOverHeadDim>>("rope.mutant_exponent_over_head_dim")};

}  // namespace
}  // namespace pe

// sinusoidal.scalar_f64: double throughout (frequency, angle, sin/cos, the fused add), rounded once
// into the output type.
//
// Contract (derived):
//   angle: ω_i from the plan carries 1.02·2^-53 (plan.cc), p is exact in double (p <= 2^53), the
//          product 2^-53: |φ̂ - φ| <= 2.03·2^-53·|φ|;
//   kernel: glibc's sin/cos (double) are within 1 ULP (libm-test-ulps): <= 2^-53 absolute below 1;
//   output: float32 rounds once (c0 = 1), float64 is the compute type (nothing rounded).
//   Budget: float64 (1 + 2.03·|φ|)·2^-53; float32 2^-24 + (1 + 2.03·|φ|)·2^-53.
//   Largest position promised: 2^31 (the long-context range; the budget holds to 2^53).
#include "detail/loops.h"
#include "detail/scalar_sincos.h"
#include "pe/variant.h"

namespace pe {
namespace {

Contract declared_contract() {
  Contract c;
  c.family = Family::Sinusoidal;
  c.layouts = {Layout::Interleaved, Layout::Concatenated};
  c.outputs = {DType::F32, DType::F64};
  c.angle_type = DType::F64;
  c.compute_type = DType::F64;
  c.max_position = std::int64_t{1} << 31;
  c.max_input_abs = 1e30;
  c.kernel_ulps = 1;
  c.c0 = 1, c.ck = 1, c.c1 = 2.03;
  return c;
}

using SinCos = detail::LibmSinCos<double, SinusoidalPlan>;

class ScalarF64 final : public SinusoidalVariant {
 public:
  ScalarF64() : SinusoidalVariant("sinusoidal.scalar_f64", declared_contract()) {}

  void table(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
             Buffer out) const noexcept override {
    detail::with_typed(out, [&](auto* y) {
      detail::write_table<double>(plan, positions, y, SinCos{plan});
    });
  }

  void add(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
           std::span<const std::uint8_t> padding, Buffer embeddings) const noexcept override {
    detail::with_typed(embeddings, [&](auto* y) {
      detail::add_table<double>(plan, positions, padding, y, SinCos{plan});
    });
  }
};

const Registrar registrar{std::make_unique<ScalarF64>()};

}  // namespace
}  // namespace pe

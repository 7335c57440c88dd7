// The sinusoidal family's exhaustive table: the table itself, sin and cos of each pair in its layout's
// channels.
#include <cmath>
#include <memory>

#include "families.h"
#include "pe/harness/exhaustive_table.h"
#include "pe/plan.h"
#include "pe/ref/reference.h"

namespace pe::harness::detail {
namespace {

class SinusoidalTable final : public ExhaustiveTable {
 public:
  SinusoidalTable(const SinusoidalParams& params, std::int64_t max_position)
      : plan_(params), ref_(params, max_position) {}
  const ref::dd::DD& omega(std::size_t j) const override { return ref_.omega(j); }
  std::size_t sin_channel(std::size_t j) const override { return plan_.sin_index(j); }
  std::size_t cos_channel(std::size_t j) const override { return plan_.cos_index(j); }
  bool reads_input() const override { return false; }
  void write_input(TypedBuffer& /*input*/, std::int64_t /*rows*/) const override {}
  double element_budget(const Budget& budget, double abs_phi, std::size_t j) const override {
    return budget(nullptr, abs_phi, j, 1.0);
  }
  double abs_angle(std::int64_t p, std::size_t j) const override {
    return std::fabs(ref_.angle(p, plan_.sin_index(j)));
  }
  std::optional<ref::FastSinCos> fast(std::int64_t p, std::size_t j) const override {
    return ref_.fast_pair(p, j);
  }
  ref::Real exact(std::int64_t p, std::size_t j, bool is_sin) const override {
    return ref_.exact(p, is_sin ? plan_.sin_index(j) : plan_.cos_index(j)).value;
  }

 private:
  SinusoidalPlan plan_;
  ref::Sinusoidal ref_;
};

}  // namespace

bool sinusoidal_exhaustive_applies(const Instance& /*in*/) { return true; }

std::unique_ptr<ExhaustiveTable> sinusoidal_exhaustive_table(const Instance& in, std::int64_t dim,
                                                             double base, std::int64_t max_position) {
  return std::make_unique<SinusoidalTable>(SinusoidalParams{dim, base, in.layout}, max_position);
}

}  // namespace pe::harness::detail

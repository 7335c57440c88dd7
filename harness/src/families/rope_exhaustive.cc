// The RoPE family's exhaustive table: each pair's unit vector (1, 0) rotated, so a row holds
// (cos φ, sin φ) in the pair's output channels.
#include <cmath>
#include <memory>

#include "families.h"
#include "pe/harness/exhaustive_table.h"
#include "pe/plan.h"
#include "pe/ref/reference.h"

namespace pe::harness::detail {
namespace {

class RopeTable final : public ExhaustiveTable {
 public:
  RopeTable(const RopeParams& params, std::int64_t max_position)
      : plan_(params), ref_(params, max_position) {}
  const ref::dd::DD& omega(std::size_t j) const override { return ref_.omega(j); }
  std::size_t sin_channel(std::size_t j) const override { return plan_.output_channels(j).second; }
  std::size_t cos_channel(std::size_t j) const override { return plan_.output_channels(j).first; }
  bool reads_input() const override { return true; }
  void write_input(TypedBuffer& input, std::int64_t rows) const override {
    const auto dim = static_cast<std::int64_t>(plan_.head_dim());
    for (std::int64_t r = 0; r < rows; ++r)
      for (std::size_t j = 0; j < plan_.n_pairs(); ++j)
        input.set(static_cast<std::size_t>(r * dim) + plan_.input_channels(j).first, 1.0);
  }
  double element_budget(const Budget& budget, double abs_phi, std::size_t j) const override {
    return budget(&plan_, abs_phi, j, 1.0);
  }
  double abs_angle(std::int64_t p, std::size_t j) const override { return std::fabs(ref_.angle(p, j)); }
  std::optional<ref::FastSinCos> fast(std::int64_t p, std::size_t j) const override {
    const auto v = ref_.fast_rotate(p, j, 1.0, 0.0);
    if (!v) return std::nullopt;
    return ref::FastSinCos{v->second.value, v->first.value, std::max(v->first.radius, v->second.radius)};
  }
  ref::Real exact(std::int64_t p, std::size_t j, bool is_sin) const override {
    const auto r = ref_.rotate(p, j, 1.0, 0.0);
    return is_sin ? r.second.value : r.first.value;
  }

 private:
  RopePlan plan_;
  ref::Rope ref_;
};

}  // namespace

// Every layout but DeepSeek's de-interleaved output order, which the unit-vector table cannot tell from
// interleaved (the same pairs, other channels).
bool rope_exhaustive_applies(const Instance& in) { return in.layout != Layout::Deinterleave; }

std::unique_ptr<ExhaustiveTable> rope_exhaustive_table(const Instance& in, std::int64_t dim, double base,
                                                       std::int64_t max_position) {
  return std::make_unique<RopeTable>(RopeParams{dim, 0, base, in.layout}, max_position);
}

}  // namespace pe::harness::detail

#include <cmath>
#include <string>

#include "detail/check.h"
#include "pe/alibi.h"

namespace pe {

AlibiPlan::AlibiPlan(const AlibiParams& params) : params_(params) {
  if (params.n_heads < 1 || params.n_heads > kMaxAlibiHeads) {
    detail::fail("n_heads", "n_heads must be in [1, 2^20], got " + std::to_string(params.n_heads));
  }
  if (!(params.max_bias > 0 && params.max_bias <= kMaxAlibiBias)) {
    detail::fail("max_bias",
                 "max_bias must be finite and in (0, 1000], got " + detail::show(params.max_bias));
  }
  if (!layout_belongs_to(params.layout, Family::Alibi)) {
    detail::fail("layout", "layout " + std::string(to_string(params.layout)) + " is not an alibi layout");
  }
  base_heads_ = params.n_heads;
  if (params.slopes == AlibiSlopes::Interpolated) {
    base_heads_ = 1;
    while (2 * base_heads_ <= params.n_heads) base_heads_ *= 2;
  }
  slopes_.resize(n_heads());
  for (std::size_t h = 0; h < n_heads(); ++h) slopes_[h] = std::exp2(-exponent(h));
}

std::int64_t AlibiPlan::power(std::size_t h) const noexcept {
  const auto i = static_cast<std::int64_t>(h);
  return i < base_heads_ ? i + 1 : 2 * (i - base_heads_) + 1;
}

std::int64_t AlibiPlan::denominator(std::size_t h) const noexcept {
  return static_cast<std::int64_t>(h) < base_heads_ ? base_heads_ : 2 * base_heads_;
}

double AlibiPlan::exponent(std::size_t h) const noexcept {
  return params_.max_bias * static_cast<double>(power(h)) / static_cast<double>(denominator(h));
}

}  // namespace pe

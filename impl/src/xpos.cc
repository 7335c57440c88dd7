#include "pe/xpos.h"

#include <cmath>
#include <string>

#include "detail/check.h"
#include "pe/plan.h"

namespace pe {

void validate(const XPos& x) {
  if (!x.enabled()) return;
  if (!std::isfinite(x.scale_base) || !(x.scale_base > 0))
    detail::fail("xpos_scale_base",
                 "xpos_scale_base must be finite and > 0 (0: no xPos), got " + detail::show(x.scale_base));
  if (x.centre < 0 || x.centre > kMaxPosition)
    detail::fail("xpos_centre", "xpos_centre must lie in [0, 2^53], got " + std::to_string(x.centre));
}

double xpos_ratio(std::int64_t pair, std::int64_t rotary_dim) noexcept {
  // (2j + 0.4d)/(1.4d) = (10j + 2d)/(7d): integers, one rounding.
  return static_cast<double>(10 * pair + 2 * rotary_dim) / static_cast<double>(7 * rotary_dim);
}

double xpos_exponent(const XPos& x, std::int64_t position) noexcept {
  const double w = static_cast<double>(position - x.centre) / x.scale_base;
  return x.keys ? -w : w;
}

double xpos_relative_error(DType out) noexcept { return 4 * 0x1p-24 + 2 * unit_roundoff(out); }

double xpos_table_floor(DType out) noexcept { return (denorm_min(DType::F32) + denorm_min(out)) / 2; }

}  // namespace pe

#include "pe/contract.h"

#include <algorithm>

#include "pe/plan.h"

namespace pe {

namespace {
double output_rounding(const Contract& c, DType out) noexcept {
  return out == c.compute_type ? 0.0 : c.c0 * unit_roundoff(out);
}
}  // namespace

double element_budget(const Contract& c, DType out, double abs_phi, std::size_t pair, double scale) noexcept {
  const double angle = (c.c1 + c.c1_pair * static_cast<double>(pair)) * unit_roundoff(c.angle_type) * abs_phi;
  const double relative = output_rounding(c, out) + c.ck * unit_roundoff(c.compute_type) +
                          c.ct * unit_roundoff(c.table_type) + angle;
  return relative * scale + 2 * denorm_min(c.compute_type) + denorm_min(out);
}

double table_element_budget(const Contract& c, DType out, double abs_phi, std::size_t pair,
                            double real_scale) noexcept {
  const double base = element_budget(c, out, abs_phi, pair);
  if (real_scale == 0) return base;
  return base + c.c1_scale * unit_roundoff(c.angle_type) * abs_phi +
         2 * real_scale * denorm_min(c.angle_type);
}

double rope_element_budget(const Contract& c, const RopePlan& plan, DType out, double abs_phi,
                           std::size_t pair, double abs_pair) noexcept {
  // RopeBudgetTerms's operations without its per-pair tables: the same bits.
  const double a = plan.attention_factor();
  double relative = output_rounding(c, out) + c.ck * unit_roundoff(c.compute_type) +
                    c.ct * unit_roundoff(c.table_type) +
                    (c.c1 + c.c1_pair * static_cast<double>(pair)) * unit_roundoff(c.angle_type) * abs_phi;
  if (a != 1.0) relative += c.ca * unit_roundoff(c.compute_type);
  if (plan.gain()[pair] != 1.0) relative += c.c1_gain * unit_roundoff(c.angle_type) * abs_phi;
  relative += std::max(0.0, plan.frequency_error() - 1.02 * 0x1p-53) * abs_phi;
  return a * relative * abs_pair + (2 * denorm_min(c.compute_type) + denorm_min(out));
}

RopeBudgetTerms::RopeBudgetTerms(const Contract& c, const RopePlan& plan, DType out)
    : attention_(plan.attention_factor()),
      relative_(output_rounding(c, out) + c.ck * unit_roundoff(c.compute_type) +
                c.ct * unit_roundoff(c.table_type)),
      floor_(2 * denorm_min(c.compute_type) + denorm_min(out)),
      attention_term_(c.ca * unit_roundoff(c.compute_type)),
      gain_term_(c.c1_gain * unit_roundoff(c.angle_type)),
      frequency_term_(std::max(0.0, plan.frequency_error() - 1.02 * 0x1p-53)) {
  for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
    angle_.push_back((c.c1 + c.c1_pair * static_cast<double>(j)) * unit_roundoff(c.angle_type));
    gained_.push_back(plan.gain()[j] != 1.0);
  }
}

double add_budget(const Contract& c, DType out, double abs_embedding) noexcept {
  return (unit_roundoff(out) + unit_roundoff(c.compute_type)) * (abs_embedding + 1.0);
}

double effective_c0(const Contract& c, DType out) noexcept {
  return (output_rounding(c, out) + c.ck * unit_roundoff(c.compute_type) +
          c.ct * unit_roundoff(c.table_type)) /
         unit_roundoff(out);
}

}  // namespace pe

#include "engine/contract_class.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "pe/ref/fma_clones.h"

namespace pe::check {

std::vector<const Variant*> contracts_for(Family family, DType dtype) {
  std::vector<const Variant*> out;
  for (const Variant* v : registry()) {
    if (v->family() != family || !v->supports(dtype) || v->name().find('@') != std::string::npos ||
        v->name().find("mutant") != std::string::npos)
      continue;
    out.push_back(v);
  }
  return out;
}

namespace {
// A formulation of the data's precision class: its arithmetic in float64 for float64 data; for float32
// data in float32 without a stored table; for 16-bit data in float32 or in the data's own type, with its
// cos/sin table (if it stores one) in the data's type — the ways engines compute a bf16/f16 RoPE
// (docs/contracts.md §2i, §2k). A 16-bit cache's budget covers nearly anything at float32: not a
// float32 data's class.
bool of_precision_class(const Contract& c, DType dtype) {
  if (dtype == DType::F64) return c.compute_type == DType::F64 && c.ct == 0;
  const bool sixteen = dtype == DType::BF16 || dtype == DType::F16;
  const bool compute = c.compute_type == DType::F32 || (sixteen && c.compute_type == dtype);
  const bool table = c.ct == 0 || (sixteen && c.table_type == dtype);
  return compute && table;
}
// Tallied on the "contracts:" line: every contract for the data's type whose table, if any, is stored
// in the data's type.
bool tallied(const Contract& c, DType dtype) { return c.ct == 0 || c.table_type == dtype; }
}  // namespace

std::vector<const Variant*> default_class(Family family, DType dtype) {
  std::vector<const Variant*> out;
  for (const Variant* v : contracts_for(family, dtype)) {
    if (of_precision_class(v->contract(), dtype)) out.push_back(v);
  }
  return out;
}

std::string precision_class_words(DType dtype, const std::vector<const Variant*>& members) {
  if (dtype == DType::F64) return "float64";
  if (dtype != DType::BF16 && dtype != DType::F16) return "float32";  // a float32 member is no 16-bit word
  const bool sixteen = std::any_of(members.begin(), members.end(), [&](const Variant* v) {
    return v->contract().compute_type == dtype ||
           (v->contract().ct != 0 && v->contract().table_type == dtype);
  });
  if (!sixteen) return "float32";
  const std::string t = dtype == DType::BF16 ? "bfloat16" : "float16";
  return fmt::format("{} (float32 or {} arithmetic, float32 or {} tables)", t, t, t);
}

std::string names_of(const std::vector<const Variant*>& variants) {
  std::string s;
  for (const Variant* v : variants) s += (s.empty() ? "" : ", ") + v->name();
  return s;
}

ContractTally::ContractTally(Family family, DType dtype, const RopePlan* plan, TallyTables tables)
    : dtype_(dtype), plan_(plan) {
  std::vector<const Contract*> contracts;
  for (const Variant* v : contracts_for(family, dtype)) {
    const Contract& c = v->contract();
    const bool other_sixteen =
        c.ct != 0 && (c.table_type == DType::BF16 || c.table_type == DType::F16) && c.table_type != dtype;
    if (tables == TallyTables::DataType ? !tallied(c, dtype) : !other_sixteen) continue;
    variants_.push_back(v);
    contracts.push_back(&v->contract());
  }
  if (plan != nullptr) {
    slopes_.emplace(contracts, *plan, dtype, plan->n_pairs());
    slopes_at_.assign(plan->n_pairs(), -1);
    bar_slope_.assign(plan->n_pairs(), 0.0);
    bar_floor_.assign(plan->n_pairs(), 0.0);
  }
  worst_.assign(variants_.size(), 0.0);
}

double ContractTally::table_budget(const Contract& c, const harness::ElementRecord& e) const {
  harness::Budget budget{&c, dtype_};
  budget.real_scale = real_scale_;
  return budget(nullptr, e.abs_phi, e.pair, e.scale);
}

void ContractTally::add(const harness::ElementRecord& e) {
  for (std::size_t k = 0; k < variants_.size(); ++k) {
    const double contract_term = e.unchanged ? 0.0
                                 : slopes_   ? slopes_->terms(k)(e.abs_phi, e.pair, e.scale)
                                             : table_budget(variants_[k]->contract(), e);
    const double r = harness::ElementRecord::ratio_of(e.abs_error, e.gain * contract_term + e.gain_extra);
    if (!(r <= worst_[k])) worst_[k] = r;  // NaN-safe: a NaN ratio is the worst
  }
}

void ContractTally::merge(const ContractTally& later) {
  if (later.variants_ != variants_)
    throw std::logic_error("ContractTally::merge: tallies of other contracts");
  for (std::size_t k = 0; k < worst_.size(); ++k) worst_[k] = std::max(worst_[k], later.worst_[k]);
}

void ContractTally::line_for_token(const harness::RopeRow& row) {
  const std::size_t n = row.size();
  line_row_ = row.row;
  line_slope_.resize(n);
  line_floor_.resize(n);
  for (std::size_t i = 0; i < n; ++i) {
    // A pass-through channel has no contract term: its budget is 0 (without a gain) for every contract.
    if (row.unchanged[i] != 0) {
      line_slope_[i] = line_floor_[i] = 0;
      continue;
    }
    // With a gain, add()'s gain·term + extra: the contracts' loop (a gained pass-through channel has gain 0).
    line_slope_[i] = line_floor_[i] = -INFINITY;
    if (row.gain[i] != 1) continue;
    const std::size_t j = row.pair[i];
    if (slopes_at_[j] != row.row) {
      slopes_->at(j, j, row.abs_phi[i]);
      slopes_at_[j] = row.row;
      bar_slope_[j] = bar_floor_[j] = INFINITY;
      for (std::size_t k = 0; k < variants_.size(); ++k) {
        bar_slope_[j] = std::min(bar_slope_[j], worst_[k] * slopes_->slope(j, k));
        bar_floor_[j] = std::min(bar_floor_[j], worst_[k] * slopes_->terms(k).floor());
      }
    }
    line_slope_[i] = bar_slope_[j];
    line_floor_[i] = bar_floor_[j];
  }
}

namespace {
// How many elements lie strictly above their line (or have a NaN, or an extra term), each flagged:
// err <= (that line)·(1 - 2^-45) leaves every contract's worst as it is (the line's and the budgets'
// roundings are far inside the margin). Branch-free, so that it runs in vectors.
PE_FMA_CLONES std::size_t flag_above_line(const harness::RopeRow& row, const std::vector<double>& slope,
                                          const std::vector<double>& floor, std::vector<std::uint8_t>& loud) {
  const std::size_t n = row.size();
  loud.resize(n);
  const double *err = row.abs_error.data(), *scale = row.scale.data(), *extra = row.gain_extra.data();
  std::size_t count = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool quiet = (extra[i] == 0) & (err[i] <= (slope[i] * scale[i] + floor[i]) * (1 - 0x1p-45));
    loud[i] = quiet ? 0 : 1;
    count += quiet ? 0 : 1;
  }
  return count;
}
}  // namespace

void ContractTally::add_row(const harness::RopeRow& row) {
  if (!slopes_) {
    for (std::size_t i = 0; i < row.size(); ++i) add(row.record(i));
    return;
  }
  // The slopes and lines are the token's: taken at its first row (the worsts only grow, so a line taken
  // earlier is lower: more elements through the loop, never fewer).
  if (row.row != line_row_ || line_slope_.size() != row.size()) line_for_token(row);
  if (flag_above_line(row, line_slope_, line_floor_, loud_) == 0) return;
  // err <= worst·b·(1 - 2^-49) in rounded arithmetic proves err/b <= worst after rounding: nothing to update.
  constexpr double kSafe = 1 - 0x1p-49;
  for (std::size_t i = 0; i < row.size(); ++i) {
    if (loud_[i] == 0) continue;
    const double err = row.abs_error[i], g = row.gain[i], extra = row.gain_extra[i];
    // add()'s gain·term + extra is extra here: no contract term for a pass-through channel, and a gain of
    // 0 (a gained pass-through channel, |x_a| + |x_b| = 0: a finite term).
    const bool contract_free = row.unchanged[i] != 0 || g == 0;
    const std::size_t j = row.pair[i];
    for (std::size_t k = 0; k < variants_.size(); ++k) {
      const double b = contract_free ? extra : g * (*slopes_)(j, k, row.scale[i]) + extra;
      if (err <= worst_[k] * b * kSafe) continue;
      const double r = harness::ElementRecord::ratio_of(err, b);
      if (!(r <= worst_[k])) worst_[k] = r;  // NaN-safe: a NaN ratio is the worst
    }
  }
}

void ContractTally::table_screen_line(std::span<const ref::dd::DD> omegas, std::int64_t max_position,
                                      std::span<const double> phi_lo, double* line) {
  const std::size_t n = phi_lo.size();
  if (!table_bounds_) {
    std::vector<const Contract*> contracts;
    for (const Variant* v : variants_) contracts.push_back(&v->contract());
    table_bounds_.emplace(contracts, omegas, max_position, dtype_, 0.0, real_scale_);
  }
  // add()'s ratio err/budget stays at most the worst where err <= worst·budget·(1 − 2^-45) (the division's
  // rounding); a NaN worst (a NaN met) can rise no further, and a product that is NaN (an infinite worst
  // against a bound of 0) puts nothing quiet. Loops over pairs inside, so that they run in vectors.
  std::fill_n(line, n, INFINITY);
  for (std::size_t c = 0; c < variants_.size(); ++c) {
    const double w = worst_[c];
    if (std::isnan(w)) continue;
    for (std::size_t j = 0; j < n; ++j) {
      const double bar = w * table_bounds_->lower(c, j, phi_lo[j]);
      line[j] = std::min(line[j], bar >= 0 ? bar * (1 - 0x1p-45) : 0.0);
    }
  }
}

namespace {
// slope[j] = min(slope[j], w·(α + β[j]·φ[j])) over a token's pairs (screen_line): built with AVX as well as
// without (PE_FMA_CLONES): the baseline build's loop ran two doubles a step (perf, the 4096-token float32
// RoPE check's process: screen_line with it 3.9% of its samples, 3.4% with AVX). -ffp-contract=off: the
// same bits from both.
PE_FMA_CLONES void lower_to_line(double* slope, double w, double alpha, const double* beta, const double* phi,
                                 std::size_t n) {
  for (std::size_t j = 0; j < n; ++j) slope[j] = std::min(slope[j], w * (alpha + beta[j] * phi[j]));
}
}  // namespace

void ContractTally::screen_line(std::span<const double> phi_lo, double* slope, double* floor) {
  const std::size_t n = phi_lo.size();
  if (!slopes_) {  // no RoPE plan: every element with an error goes through add()
    std::fill_n(slope, n, 0.0);
    std::fill_n(floor, n, 0.0);
    return;
  }
  if (alpha_.empty()) {
    for (std::size_t c = 0; c < variants_.size(); ++c) {
      alpha_.push_back(slopes_->terms(c).slope_at_zero());
      beta_.emplace_back(n);
      for (std::size_t j = 0; j < n; ++j) beta_.back()[j] = slopes_->terms(c).slope_per_radian(j);
      // The line holds only for budgets that grow with the angle: else every element goes through add().
      monotone_ = monotone_ && alpha_.back() >= 0 &&
                  std::all_of(beta_.back().begin(), beta_.back().end(), [](double b) { return b >= 0; });
    }
  }
  if (!monotone_) {
    std::fill_n(slope, n, 0.0);
    std::fill_n(floor, n, 0.0);
    return;
  }
  // A contract's computed budget is within 2^-50 of A·(α + β·|φ|)·s + floor (contract.h), growing with |φ|;
  // the margin 2^-44 also covers add()'s own division. A NaN worst (a NaN met) leaves the contract out: it
  // can rise no further. Loops over pairs inside, so that they run in vectors.
  // The floor is the same for every pair: the least over contracts, once.
  std::fill_n(slope, n, INFINITY);
  double least_floor = INFINITY;
  for (std::size_t c = 0; c < variants_.size(); ++c) {
    const double w = worst_[c];
    if (std::isnan(w)) continue;
    const double a = alpha_[c];
    least_floor = std::min(least_floor, w * slopes_->terms(c).floor());
    const double* b = beta_[c].data();
    lower_to_line(slope, w, a, b, phi_lo.data(), n);
  }
  constexpr double kShrink = 1 - 0x1p-44;
  // (std::min keeps the first of a NaN pair: least_floor is never NaN; the test only guards that.)
  const double shrunk_floor = std::isnan(least_floor) ? 0.0 : least_floor * kShrink;
  for (std::size_t j = 0; j < n; ++j) {
    // An infinite slope (every contract's worst infinite) is no line at all: 0·s + ∞, not ∞·0 at s = 0.
    const bool none = std::isinf(slope[j]);
    slope[j] = std::isnan(slope[j]) || none ? 0.0 : slope[j] * kShrink;
    floor[j] = none ? INFINITY : shrunk_floor;
  }
}

std::vector<std::size_t> ContractTally::order() const {
  std::vector<std::size_t> order(variants_.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return worst_[a] < worst_[b]; });
  return order;
}

nlohmann::json ContractTally::to_json() const {
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t k : order()) {
    out.push_back(
        {{"contract", variants_[k]->name()},
         {"worst_ratio", std::isfinite(worst_[k]) ? nlohmann::json(worst_[k]) : nlohmann::json("inf")},
         {"met", worst_[k] <= 1}});
  }
  return out;
}

std::vector<std::pair<std::string, double>> ContractTally::met() const {
  std::vector<std::pair<std::string, double>> out;
  for (std::size_t k : order())
    if (worst_[k] <= 1) out.emplace_back(variants_[k]->name(), worst_[k]);
  return out;
}

std::string ContractTally::summary() const {
  const std::vector<std::size_t> order = this->order();
  std::string meets, misses;
  for (std::size_t k : order) {
    std::string& list = worst_[k] <= 1 ? meets : misses;
    list += fmt::format("{}{} ({:.3g})", list.empty() ? "" : ", ", variants_[k]->name(), worst_[k]);
  }
  std::string s;
  if (!meets.empty()) s = "meets " + meets;
  if (!misses.empty()) s += (s.empty() ? "misses " : "; misses ") + misses;
  return s;
}

}  // namespace pe::check

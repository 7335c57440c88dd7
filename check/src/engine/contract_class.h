// What `check` judges outside data by: its default budget, the class of formulations in the data's
// precision (float64 data: every registered variant computing in float64; float32: in float32 without
// a stored table; bfloat16/float16: in float32 or in the data's type, with float32 tables or tables
// stored in the data's type, as engines run a 16-bit RoPE), and the tally of every contract the data
// meets or misses, so that one run names its accuracy class.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pe/harness/measure.h"
#include "pe/harness/sinusoidal_screen.h"
#include "pe/variant.h"

namespace pe::check {

// The family's variants whose contract covers `dtype`, one per name (no @TARGET copies, no mutants).
std::vector<const Variant*> contracts_for(Family family, DType dtype);
// The default class: the formulations of the data's precision (above).
std::vector<const Variant*> default_class(Family family, DType dtype);
// "float32", "bfloat16 (float32 or bfloat16 arithmetic, ...)": the words for the budget line of the
// class `members` (default_class's) of `dtype` data: 16-bit words only where a member computes or
// stores its table in the data's type (RoPE; the sinusoidal and ALiBi classes are float32's).
std::string precision_class_words(DType dtype, const std::vector<const Variant*>& members);
// "rope.scalar_f32, rope.torch_f32, ..."
std::string names_of(const std::vector<const Variant*>& variants);

// Which contracts a tally reads: those storing no cos/sin table or storing it in the data's type (the
// "contracts:" line), or those storing a 16-bit table of another type than the data's (what 32- or 64-bit
// data computed through a bf16/f16 cos/sin cache would meet: the diagnosis's claim).
enum class TallyTables { DataType, OtherSixteenBit };

// The worst error/budget of the compared elements under each contract of contracts_for() that `tables`
// selects.
class ContractTally {
 public:
  // `plan`: RoPE's (the scaled frequencies and the attention factor its budget reads), else null.
  ContractTally(Family family, DType dtype, const RopePlan* plan = nullptr,
                TallyTables tables = TallyTables::DataType);
  bool empty() const noexcept { return variants_.empty(); }
  // The contracts met (worst error/budget <= 1), best first, with their worst ratio.
  std::vector<std::pair<std::string, double>> met() const;
  void add(const harness::ElementRecord& e);
  // Every element of a RoPE row, as add() would take them (the same worst ratios): a token's slopes once
  // per pair, and a ratio divided out only where it can raise a contract's worst.
  void add_row(const harness::RopeRow& row);
  // The screened pass's line (harness::ScreenedSinks::line): per pair j, slope and floor such that an element
  // with err <= slope[j]·(|x_a| + |x_b|) + floor[j] at an angle of at least phi_lo[j] changes no contract's
  // worst.
  void screen_line(std::span<const double> phi_lo, double* slope, double* floor);
  // The sinusoidal table's (harness::TableSinks::line): per pair j, an element with err <= line[j] at an
  // angle of at least phi_lo[j] changes no contract's worst. `omegas` and `max_position`: the table's, for
  // the contracts' lower bounds (made on the first call).
  void table_screen_line(std::span<const ref::dd::DD> omegas, std::int64_t max_position,
                         std::span<const double> phi_lo, double* line);
  // The elements `later` (a tally of the same family, type and plan) took, as if this one had taken them:
  // each contract's worst the larger (ratios are never NaN: ElementRecord::ratio_of).
  void merge(const ContractTally& later);
  // A table scaled or at real positions: its |scale|, each contract's terms for them charged
  // (harness::Budget::real_scale); 0 otherwise.
  void charge_scale(double real_scale) noexcept { real_scale_ = real_scale; }
  // "meets rope.ggml_f32 (0.43), rope.torch_f32 (0.61); misses rope.scalar_f32 (2.66)", best first.
  std::string summary() const;
  // [{"contract": name, "worst_ratio": r, "met": bool}], best first.
  nlohmann::json to_json() const;

 private:
  std::vector<std::size_t> order() const;  // by worst ratio, best first
  double table_budget(const Contract& c, const harness::ElementRecord& e) const;  // RoPE's without a plan

  std::vector<const Variant*> variants_;
  double real_scale_ = 0;
  // RoPE: each contract's budget with the plan's constants folded in, and per pair (slot j) its slopes at
  // the angle of the token slopes_at_[j] (-1: none yet), for add_row.
  std::optional<harness::RopeSlopes> slopes_;
  std::vector<std::int64_t> slopes_at_;
  // Per pair, min over contracts of worst·slope and of worst·floor when its slopes were taken: below that
  // line no contract's worst can rise (the worsts only grow), so most elements skip the contracts' loop.
  std::vector<double> bar_slope_, bar_floor_;
  // Per element of the token line_row_'s rows, its pair's line (0 for a pass-through channel, -inf where
  // the contracts' loop must run: a gain), and add_row's flags of the elements above it.
  void line_for_token(const harness::RopeRow& row);
  std::int64_t line_row_ = -1;
  std::vector<double> line_slope_, line_floor_;
  std::vector<std::uint8_t> loud_;
  std::vector<double> worst_;
  // screen_line's: per contract A·α and A·β per pair (RopeBudgetTerms), made on its first call.
  std::vector<double> alpha_;
  std::vector<std::vector<double>> beta_;
  bool monotone_ = true;                                    // every α, β >= 0
  std::optional<harness::TableBudgetBounds> table_bounds_;  // table_screen_line's
  DType dtype_;
  const RopePlan* plan_;
};

}  // namespace pe::check

// What `check` judges outside data by: its default budget, the class of formulations in the data's
// precision (every registered variant computing in float32 for float32/bfloat16/float16 data, in
// float64 for float64 data; cached cos/sin tables only when asked with --contract), and the tally of
// every contract the data meets or misses, so that one run names its accuracy class.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pe/harness/measure.h"
#include "pe/variant.h"

namespace pe::cli {

// The family's variants whose contract covers `dtype`, one per name (no @TARGET copies, no mutants).
std::vector<const Variant*> contracts_for(Family family, DType dtype);
// The default class: those computing in the data's precision, without a stored table.
std::vector<const Variant*> default_class(Family family, DType dtype);
// "rope.scalar_f32, rope.torch_f32, ..."
std::string names_of(const std::vector<const Variant*>& variants);

// The worst error/budget of the compared elements under each contract of contracts_for() that stores
// no cos/sin table.
class ContractTally {
 public:
  // `plan`: RoPE's (the scaled frequencies and the attention factor its budget reads), else null.
  ContractTally(Family family, DType dtype, const RopePlan* plan = nullptr);
  void add(const harness::ElementRecord& e);
  // "meets rope.ggml_f32 (0.43), rope.torch_f32 (0.61); misses rope.scalar_f32 (2.66)", best first.
  std::string summary() const;
  // [{"contract": name, "worst_ratio": r, "met": bool}], best first.
  nlohmann::json to_json() const;

 private:
  std::vector<std::size_t> order() const;  // by worst ratio, best first

  std::vector<const Variant*> variants_;
  std::vector<double> worst_;
  DType dtype_;
  const RopePlan* plan_;
};

}  // namespace pe::cli

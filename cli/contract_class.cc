#include "contract_class.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

namespace pe::cli {

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

std::vector<const Variant*> default_class(Family family, DType dtype) {
  const DType compute = dtype == DType::F64 ? DType::F64 : DType::F32;
  std::vector<const Variant*> out;
  for (const Variant* v : contracts_for(family, dtype)) {
    const Contract& c = v->contract();
    if (c.compute_type == compute && c.ct == 0) out.push_back(v);
  }
  return out;
}

std::string names_of(const std::vector<const Variant*>& variants) {
  std::string s;
  for (const Variant* v : variants) s += (s.empty() ? "" : ", ") + v->name();
  return s;
}

ContractTally::ContractTally(Family family, DType dtype, const RopePlan* plan) : dtype_(dtype), plan_(plan) {
  // A 16-bit cos/sin cache's budget covers nearly anything at float32: listed only when asked for.
  for (const Variant* v : contracts_for(family, dtype)) {
    if (v->contract().ct == 0) variants_.push_back(v);
  }
  worst_.assign(variants_.size(), 0.0);
}

void ContractTally::add(const harness::ElementRecord& e) {
  for (std::size_t k = 0; k < variants_.size(); ++k) {
    const double contract_term =
        e.unchanged ? 0.0
                    : harness::Budget{&variants_[k]->contract(), dtype_}(plan_, e.abs_phi, e.pair, e.scale);
    harness::ElementRecord judged = e;
    judged.budget = e.gain * contract_term + e.gain_extra;
    const double r = judged.ratio();
    if (!(r <= worst_[k])) worst_[k] = r;  // NaN-safe: a NaN ratio is the worst
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

}  // namespace pe::cli

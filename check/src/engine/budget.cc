#include "engine/budget.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/contract_class.h"
#include "pe/variant.h"

namespace pe::check {

Budget budget_for(const BudgetOptions& o, Family family, DType dtype, const Names& names) {
  if (o.max_abs && !o.contract.empty())
    throw BadRequest(fmt::format("{} and {}: give at most one", names("max_abs"), names("contract")),
                     "max_abs");
  if (o.max_abs) {
    if (!(*o.max_abs >= 0)) names.fail("max_abs", fmt::format("must be >= 0, got {}", *o.max_abs));
    return {{nullptr, dtype, *o.max_abs}, fmt::format("|err| <= {:g} ({})", *o.max_abs, names("max_abs"))};
  }
  // Default: what every known formulation computing in the data's precision achieves (the largest of
  // their budgets): a correct kernel written the way engines write it passes.
  if (o.contract.empty()) {
    Budget b;
    b.dtype = dtype;
    const std::vector<const Variant*> members = default_class(family, dtype);
    for (const Variant* v : members) b.any_of.push_back(&v->contract());
    if (members.empty())
      names.fail("dtype", fmt::format("no {} variant computes {} data", to_string(family), to_string(dtype)));
    b.text = fmt::format("the largest of the {} formulations' contracts ({}; {} or {} to tighten)",
                         precision_class_words(dtype, members), names_of(members), names("contract"),
                         names("max_abs"));
    return b;
  }
  const std::string& name = o.contract;
  const Variant* v = find_variant(name);
  if (v == nullptr) names.fail("contract", "no variant named '" + name + "' (see pe-suite list)");
  if (v->family() != family)
    names.fail("contract", fmt::format("{} is a {} variant, the data is {}", name, to_string(v->family()),
                                       to_string(family)));
  const auto& outs = v->contract().outputs;
  if (std::find(outs.begin(), outs.end(), dtype) == outs.end())
    names.fail("contract", fmt::format("{} promises nothing for {} output", name, to_string(dtype)));
  return {{&v->contract(), dtype}, fmt::format("contract of {} ({})", name, names("contract"))};
}

std::int64_t promised_up_to(const Budget& budget) {
  std::int64_t up_to = -1;
  for (const Contract* c : budget.members())
    up_to = up_to < 0 ? c->max_position : std::min(up_to, c->max_position);
  return up_to;
}

}  // namespace pe::check

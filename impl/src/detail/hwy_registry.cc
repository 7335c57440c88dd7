#include <hwy/targets.h>

#include "detail/function_variant.h"

namespace pe::detail {

bool register_hwy_target(std::string_view name, std::int64_t target, std::int64_t dispatched,
                         std::unique_ptr<Variant> (*make)(std::string name)) {
  // The dispatcher first: HWY_DYNAMIC_DISPATCH calls the dispatched target whether or not
  // SupportedTargets lists it (its fallback), so the plain name does not depend on the check below.
  if (target == dispatched) {
    const Registrar dispatcher{make(std::string(name))};
  }
  if ((hwy::SupportedTargets() & target) == 0) return false;
  const Registrar registrar{make(std::string(name) + "@" + hwy::TargetName(target))};
  return true;
}

}  // namespace pe::detail

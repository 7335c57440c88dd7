#include <hwy/targets.h>

#include "detail/function_variant.h"

namespace pe::detail {

bool register_hwy_target(std::int64_t target, std::unique_ptr<Variant> (*make)(std::string name)) {
  if ((hwy::SupportedTargets() & target) == 0) return false;
  const Registrar registrar{make(hwy::TargetName(target))};
  return true;
}

}  // namespace pe::detail

#include "detail/check.h"

#include <fmt/format.h>

namespace pe::detail {

std::string show(double v) { return fmt::format("{}", v); }

}  // namespace pe::detail

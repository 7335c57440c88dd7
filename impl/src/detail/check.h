// Helpers for validation messages.
#pragma once

#include <string>

#include "pe/errors.h"

namespace pe::detail {

[[noreturn]] inline void fail(const std::string& parameter, const std::string& message) {
  throw InvalidArgument(parameter, message);
}

// Shortest text that reads back as the same double ("1e+04", "nan", "-inf").
std::string show(double v);

}  // namespace pe::detail

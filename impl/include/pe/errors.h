// The one exception type of pe-suite's public API.
#pragma once

#include <stdexcept>
#include <string>

namespace pe {

// Raised for every invalid parameter, before anything is written to a caller's buffer.
// The message names the parameter and its value ("dim must be even, got 7").
class InvalidArgument : public std::invalid_argument {
 public:
  InvalidArgument(std::string parameter, const std::string& message)
      : std::invalid_argument(message), parameter_(std::move(parameter)) {}
  const std::string& parameter() const noexcept { return parameter_; }

 private:
  std::string parameter_;
};

}  // namespace pe

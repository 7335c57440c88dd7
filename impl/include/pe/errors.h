// The exceptions of pe-suite's public API: a caller's mistake (InvalidArgument) and a kernel's
// (KernelFault).
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

// Raised after a guarded kernel call (pe/kernel_guard.h) when the kernel wrote outside the rows it was
// handed: into a gap between rows, a pass-through channel, a padding row, or before or past the buffer.
// The message names the variant and where ("rope.mine wrote 2 elements past row (token 3, head 1):
// channels 192–193 of a 192-channel row (rotary_offset 128, rotary_dim 64)"); the caller's buffers are as
// they were before the call.
class KernelFault : public std::runtime_error {
 public:
  KernelFault(std::string variant, const std::string& where)
      : std::runtime_error(variant + " wrote outside its rows: " + where), variant_(std::move(variant)) {}
  const std::string& variant() const noexcept { return variant_; }

 private:
  std::string variant_;
};

}  // namespace pe

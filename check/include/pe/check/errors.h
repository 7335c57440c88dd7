// The check engine's one error: a request it cannot run, with the parameter it is about. The message
// already says that parameter in the caller's words ("--factor: ..." for the command line,
// "scaling['factor']: ..." for Python): the engine builds it with the front end's Names (names.h), so
// no front end rewrites another's messages.
#pragma once

#include <stdexcept>
#include <string>

namespace pe::check {

class BadRequest : public std::runtime_error {
 public:
  explicit BadRequest(const std::string& message, std::string parameter = "")
      : std::runtime_error(message), parameter_(std::move(parameter)) {}
  // The canonical name (names.h) of the parameter at fault; "" when the message names several.
  const std::string& parameter() const noexcept { return parameter_; }

 private:
  std::string parameter_;
};

}  // namespace pe::check

// The check engine's one error: a request it cannot run, with the parameter it is about. The message
// already says that parameter in the caller's words (the command line says --factor: ...,
// "scaling['factor']: ..." for Python): the engine builds it with the front end's Names (names.h), so
// no front end rewrites another's messages.
#pragma once

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace pe::check {

// Why `path` cannot be read, in words for a message: "no such file", "a directory, not a file", or the
// system's reason (errno as the failed open left it).
inline std::string why_unreadable(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (status.type() == std::filesystem::file_type::not_found) return "no such file";
  if (status.type() == std::filesystem::file_type::directory) return "a directory, not a file";
  return errno != 0 ? std::strerror(errno) : "unreadable";
}

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

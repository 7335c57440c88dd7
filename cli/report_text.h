// Where `check` writes its report: stdout for the command, or captured (text and the JSON of
// `check --json`) for the Python module's Report. Thread-local and scoped.
#pragma once

#include <fmt/format.h>

#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace pe::cli {

struct CapturedReport {
  std::string text;
  nlohmann::json json;  // the check's JSON with its schema (null until written)
  // export: the values it would have written, their shape, and its metadata (null when none).
  std::vector<double> values;
  std::vector<std::size_t> shape;
  nlohmann::json metadata;
};

inline CapturedReport*& active_capture() {
  thread_local CapturedReport* capture = nullptr;
  return capture;
}

// Prints the report's text: to stdout, or into the active capture.
template <class... Args>
void say(fmt::format_string<Args...> format, Args&&... args) {
  if (CapturedReport* c = active_capture()) {
    fmt::format_to(std::back_inserter(c->text), format, std::forward<Args>(args)...);
  } else {
    fmt::print(format, std::forward<Args>(args)...);
  }
}

// While alive, say() and the check's JSON go into `into`.
class CaptureScope {
 public:
  explicit CaptureScope(CapturedReport& into) : previous_(active_capture()) { active_capture() = &into; }
  ~CaptureScope() { active_capture() = previous_; }
  CaptureScope(const CaptureScope&) = delete;
  CaptureScope& operator=(const CaptureScope&) = delete;

 private:
  CapturedReport* previous_;
};

}  // namespace pe::cli

// What each front end calls a request's parameters. The engine knows every parameter by its canonical
// name: the core's own (RopeScaling's fields and InvalidArgument::parameter(): "base", "factor",
// "rotary_dim", "mrope_section"), the data's ("x", "y", "table", "positions") and the budget's
// ("contract", "max_abs"). A front end supplies the words its user typed: the command line's flags
// ("--factor"), Python's keywords ("scaling['factor']"). A name the front end does not map is shown as is
// (and a core InvalidArgument about it travels unchanged: rethrow_named in options.h).
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "pe/check/errors.h"

namespace pe::check {

class Names {
 public:
  using Map = std::function<std::string(std::string_view canonical)>;
  Names() = default;
  explicit Names(Map map) : map_(std::move(map)) {}
  std::string operator()(std::string_view canonical) const {
    std::string word = map_ ? map_(canonical) : std::string();
    return word.empty() ? std::string(canonical) : word;
  }
  bool knows(std::string_view canonical) const { return map_ && !map_(canonical).empty(); }
  // BadRequest "<name>: message" about `canonical`.
  [[noreturn]] void fail(std::string_view canonical, const std::string& message) const {
    throw BadRequest((*this)(canonical) + ": " + message, std::string(canonical));
  }

 private:
  Map map_;
};

}  // namespace pe::check

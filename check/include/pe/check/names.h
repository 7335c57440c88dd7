// What each front end calls a request's parameters. The engine knows every parameter by its canonical
// name: the core's own (RopeScaling's fields and InvalidArgument::parameter(): "base", "factor",
// "rotary_dim", "mrope_section"), the data's ("x", "y", "table", "positions") and the budget's
// ("contract", "max_abs"). A front end supplies the words its user typed: the command line's flags
// (--factor), Python's keywords ("scaling['factor']"). A name the front end does not map is shown as is
// (and a core InvalidArgument about it travels unchanged: rethrow_named in spec.h).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "pe/check/errors.h"

namespace pe::check {

// One given parameter of a spec (spec.h) by its canonical name, with its value.
struct SpecEntry {
  std::string_view name;
  nlohmann::json value;
};

// A hypothesis restated in a front end's words so that its user can check it: `text` is what they would
// type (--base 500000 --scaling llama3 ... on the command line, base=500000, scaling={...} in Python),
// `label` introduces it in a report ("as flags"), `key` holds it in the report's JSON ("flags").
struct Restated {
  std::string label, key, text;
};

class Names {
 public:
  using Map = std::function<std::string(std::string_view canonical)>;
  using Render = std::function<Restated(const std::vector<SpecEntry>&)>;
  Names() = default;
  explicit Names(Map map, Render render = {}) : map_(std::move(map)), render_(std::move(render)) {}
  std::string operator()(std::string_view canonical) const {
    std::string word = map_ ? map_(canonical) : std::string();
    return word.empty() ? std::string(canonical) : word;
  }
  bool knows(std::string_view canonical) const { return map_ && !map_(canonical).empty(); }
  // BadRequest "<name>: message" about `canonical`.
  [[noreturn]] void fail(std::string_view canonical, const std::string& message) const {
    throw BadRequest((*this)(canonical) + ": " + message, std::string(canonical));
  }
  // The entries in the front end's words; without a renderer, name=value by canonical name.
  Restated restate(const std::vector<SpecEntry>& entries) const;

 private:
  Map map_;
  Render render_;
};

}  // namespace pe::check

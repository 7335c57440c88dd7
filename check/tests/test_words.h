// A front end of the tests' own: no parameter words, and each restated hypothesis as <name=value> pairs,
// so that a test reads exactly which typed entries a finding carries, in order.
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "pe/check/check.h"

namespace pe::check {

inline Names test_words() {
  return Names([](std::string_view) { return std::string(); },
               [](const std::vector<SpecEntry>& entries) {
                 std::string text;
                 for (const SpecEntry& e : entries) text += fmt::format("<{}={}>", e.name, e.value.dump());
                 return Restated{"in test words", "test_words", text};
               });
}

}  // namespace pe::check

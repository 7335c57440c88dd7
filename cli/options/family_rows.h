// What a command's per-family rows share: the words naming the families whose row reads an option group.
#pragma once

#include <string>

#include "pe/types.h"

namespace pe::cli {

// "--family rope", "--family sinusoidal and rope": the families of `rows` whose `group` is set.
template <class Row, std::size_t N>
std::string families_reading(const Row (&rows)[N], bool Row::*group) {
  std::string out;
  for (const Row& r : rows)
    if (r.*group) out += (out.empty() ? "--family " : " and ") + std::string(to_string(r.family));
  return out;
}

}  // namespace pe::cli

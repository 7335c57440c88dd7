// Every named enumeration (pe/enum_names.h) as its word in JSON, read back through the same table: one
// serializer for all of them. pe_harness compiles with JSON_DISABLE_ENUM_SERIALIZATION, so an enumeration
// without names (or a file without this header) cannot silently write integers.
#pragma once

#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

#include "pe/enum_names.h"

template <pe::NamedEnum E>
struct nlohmann::adl_serializer<E> {
  template <class Json>
  static void to_json(Json& j, E value) {
    j = pe::enum_name(value);
  }
  // Throws std::runtime_error "must be a or b, got "c"" for a word that names no value.
  template <class Json>
  static void from_json(const Json& j, E& value) {
    if (const auto parsed = j.is_string() ? pe::parse_enum<E>(j.template get<std::string>()) : std::nullopt) {
      value = *parsed;
      return;
    }
    std::string message = "must be ";
    for (const auto& r : pe::EnumNames<E>::rows) {
      if (&r != pe::EnumNames<E>::rows) message += " or ";
      message += r.name;
    }
    message += ", got ";
    throw std::runtime_error(message += j.dump());
  }
};

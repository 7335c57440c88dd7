// A census band's measured numbers as the report reads them. A kernel that writes NaN or infinity leaves
// NaN or inf in the band, which JSON holds as null: the report reads them back as what they were (an error
// NaN, a ratio infinite) instead of failing or reading 0.
#pragma once

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

namespace pe::reports {

// j[key] as a number; `if_null` where it is null or absent.
inline double measured_or(const nlohmann::json& j, const char* key, double if_null) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number() ? it->get<double>() : if_null;
}

// The larger of two errors, a NaN larger than any number.
inline double worse(double a, double b) { return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b); }

}  // namespace pe::reports

// Test support for the in-place checks: values stored in a 16/32-bit type as the caller's bytes, beside the
// same elements as doubles; a report's JSON without its 99th percentiles (the screened passes' only
// estimates); and a RoPE check run with the screen on or off (the exact path).
#pragma once

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pe/check/check.h"
#include "pe/half.h"
#include "pe/harness/rope_screen.h"

namespace pe::check {

// v rounded to `type` and stored as its bytes.
inline std::vector<unsigned char> stored(const std::vector<double>& v, DType type) {
  std::vector<unsigned char> bytes(v.size() * size_of(type));
  for (std::size_t i = 0; i < v.size(); ++i) {
    unsigned char* at = bytes.data() + i * size_of(type);
    if (type == DType::F32) {
      const auto f = static_cast<float>(v[i]);
      std::memcpy(at, &f, 4);
    } else if (type == DType::BF16) {
      const BFloat16 b = to_bfloat16(v[i]);
      std::memcpy(at, &b, 2);
    } else {
      const Float16 h = to_float16(v[i]);
      std::memcpy(at, &h, 2);
    }
  }
  return bytes;
}

// Values held both ways: the elements stored in `type`, and the same elements as doubles.
struct Held {
  std::vector<double> doubles;
  std::vector<unsigned char> bytes;
  DType type;
  Held(const std::vector<double>& v, DType t) : doubles(v), bytes(stored(v, t)), type(t) {
    for (double& d : doubles)
      d = t == DType::F32    ? static_cast<float>(d)
          : t == DType::BF16 ? to_float(to_bfloat16(d))
                             : to_float(to_float16(d));
  }
  DataView as_doubles(std::vector<std::size_t> shape, const std::string& name) const {
    return {doubles, std::move(shape), type, name};
  }
  DataView in_place(std::vector<std::size_t> shape, const std::string& name) const {
    return {{}, std::move(shape), type, name, bytes.data()};
  }
};

// The JSON with every band's p99_abs and p99_ulp taken out (into *p99, in order, where given).
inline nlohmann::json without_p99(nlohmann::json j, std::vector<double>* p99 = nullptr) {
  if (j.is_object()) {
    for (const char* key : {"p99_abs", "p99_ulp"}) {
      if (!j.contains(key)) continue;
      if (p99) p99->push_back(j[key].get<double>());
      j.erase(key);
    }
    for (auto& [key, value] : j.items()) value = without_p99(value, p99);
  } else if (j.is_array()) {
    for (auto& value : j) value = without_p99(value, p99);
  }
  return j;
}

// check_rope of `r` with the RoPE screen on or off, the screen on again after.
inline Report checked_with_screen(const RopeRequest& r, bool screen) {
  harness::set_rope_screen(screen);
  Report out = check_rope(r, Names());
  harness::set_rope_screen(true);
  return out;
}

}  // namespace pe::check

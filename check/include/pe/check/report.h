// A check's result, built once for every front end: the text a person reads (what `pe-suite check` prints
// and what Python's str(Report) is) and the same result as JSON for programs (schema "pe-suite/check/2":
// the inputs and resolved parameters, the budget, every position band with max and p99 of |err| and of
// ULP and the ULP floor, the worst elements, the contracts met and missed, the diagnosis's candidates with
// their residuals and the fit). Pinned by check/tests.
#pragma once

#include <fmt/format.h>

#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "pe/harness/measure.h"

namespace pe::check {

inline constexpr const char* kCheckSchema = "pe-suite/check/2";

nlohmann::json record_json(const harness::ElementRecord& e);
// The bands with samples, each with its statistics and verdict; `ulp_floor` is the output type's
// smallest subnormal, where ULP errors stop shrinking.
nlohmann::json bands_json(const harness::Measurement& m, DType dtype);

struct Report {
  bool passed = false;
  std::string text;
  nlohmann::json j = nlohmann::json::object();  // without the schema: json() adds it

  template <class... Args>
  void say(fmt::format_string<Args...> format, Args&&... args) {
    fmt::format_to(std::back_inserter(text), format, std::forward<Args>(args)...);
  }
  // The measurement's part: budget text, verdict, bands, worst elements.
  void measured(const harness::Measurement& m, DType dtype, const std::string& budget);
  // The JSON document, schema included.
  nlohmann::json json() const;
};

}  // namespace pe::check

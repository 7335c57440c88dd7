// `check --json F.json`: the verdict in a typed form for CI (schema "pe-suite/check/1"): the inputs
// and resolved parameters, the budget, every position band (max and p99 of |err| and of ULP, the ULP
// floor), the worst elements, the contracts met and missed, and every diagnosis candidate with its
// residual. Pinned by cli/cli_unit_test.cc.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "pe/harness/measure.h"

namespace pe::cli {

inline constexpr const char* kCheckSchema = "pe-suite/check/1";

nlohmann::json record_json(const harness::ElementRecord& e);
// The bands with samples, each with its statistics and verdict; `ulp_floor` is the output type's
// smallest subnormal, where ULP errors stop shrinking.
nlohmann::json bands_json(const harness::Measurement& m, DType dtype);

// Collects a check's result and writes it when a path was given.
struct CheckJson {
  std::string path;
  nlohmann::json j = nlohmann::json::object();
  // The measurement's part: budget text, verdict, bands, worst elements.
  void measured(const harness::Measurement& m, DType dtype, const std::string& budget);
  // Writes j (with the schema) to path; nothing when the path is empty.
  void write() const;
};

}  // namespace pe::cli

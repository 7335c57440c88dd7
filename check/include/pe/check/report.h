// A check's result, built once for every front end: the text a person reads (what `pe-suite check` prints
// and what Python's str(Report) is) and the same result as JSON for programs (schema "pe-suite/check/2":
// the inputs and resolved parameters, the budget, every position band with max and p99 of |err| and of
// ULP and the ULP floor, the worst elements, the contracts met and missed, the diagnosis's candidates with
// their residuals and the fit). Pinned by check/tests.
#pragma once

#include <fmt/format.h>

#include <iterator>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pe/check/names.h"
#include "pe/check/spec.h"
#include "pe/harness/measure.h"

namespace pe::check {

inline constexpr const char* kCheckSchema = "pe-suite/check/2";

nlohmann::json record_json(const harness::ElementRecord& e);
// The bands with samples, each with its statistics and verdict; `ulp_floor` is the output type's
// smallest subnormal, where ULP errors stop shrinking.
nlohmann::json bands_json(const harness::Measurement& m, DType dtype);

// A known convention tried, with its residual over the sample (best first in the document).
struct Candidate {
  std::string convention;
  double residual = 0;
};

// A claim that the data fits a hypothesis and what supports it (rows, pairs, the residual against its
// tolerance), printed as "the data fits: <fits> (<support>)". `hypothesis`: the parameters to rerun the check
// with, where parameters can state it; `restated`: the same in the front end's words (names.h).
struct Finding {
  std::string fits, support;
  std::optional<RopeSpec> hypothesis;
  std::optional<Restated> restated;
};

// The check's result for programs, one typed field a key of schema pe-suite/check/2 (to_json writes it,
// from_json reads it back; a key whose field is empty is absent). The sub-documents that their own
// components shape stay JSON: the family's parameters, the model config's resolution, the bands and worst
// elements (bands_json, record_json), the contracts, --against's table and what was read back.
struct CheckDocument {
  std::string family;
  std::optional<std::string> input, output, table;  // RoPE's x and y; a sinusoidal or ALiBi table
  nlohmann::json parameters = nlohmann::json::object();
  std::optional<nlohmann::json> hf_config, nonfinite_input;
  // The measurement (Report::measured).
  DType dtype = DType::F32;
  std::string budget;
  harness::Verdict verdict = harness::Verdict::Fail;
  bool passed = false;
  std::size_t elements = 0, violations = 0, undecidable = 0;
  double max_abs = 0;
  nlohmann::json bands = nlohmann::json::array(), worst = nlohmann::json::array();
  std::optional<nlohmann::json> contracts, against;
  // The explanation of a failure: the conventions tried, the claims (the first is "fits"), the read-backs.
  std::optional<std::vector<Candidate>> diagnosis;
  std::optional<std::vector<Finding>> explanations;
  std::optional<nlohmann::json> frequencies_read_back, axes_read_back;
  std::optional<std::string> positions_recovered, channel_mixing;
  std::optional<std::size_t> unrotated_rows;
};
void to_json(nlohmann::json& j, const CheckDocument& d);
void from_json(const nlohmann::json& j, CheckDocument& d);

struct Report {
  bool passed = false;
  std::string text;
  CheckDocument doc;
  // The verdict alone (RopeRequest::quiet): say() writes nothing, measured() no bands, worst elements or
  // max_abs (NaN: the measurement kept the verdict alone).
  bool quiet = false;

  template <class... Args>
  void say(fmt::format_string<Args...> format, Args&&... args) {
    if (quiet) return;
    fmt::format_to(std::back_inserter(text), format, std::forward<Args>(args)...);
  }
  // The measurement's part: budget text, verdict, bands, worst elements.
  void measured(const harness::Measurement& m, DType dtype, const std::string& budget);
  // A finding, appended to the document's explanations.
  void found(Finding f);
  // The JSON document, schema included.
  nlohmann::json json() const;
};

}  // namespace pe::check

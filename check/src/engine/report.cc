#include "pe/check/report.h"

namespace pe::check {

nlohmann::json record_json(const harness::ElementRecord& e) {
  return {{"row", e.row},       {"head", e.head},    {"position", e.position},   {"channel", e.channel},
          {"value", e.y},       {"exact", e.exact},  {"abs_error", e.abs_error}, {"ulp", e.ulp},
          {"budget", e.budget}, {"ratio", e.ratio()}};
}

nlohmann::json bands_json(const harness::Measurement& m, DType dtype) {
  nlohmann::json out = nlohmann::json::array();
  for (const harness::BandStats& b : m.bands()) {
    if (b.samples == 0) continue;
    out.push_back({{"lo", b.lo},
                   {"hi", b.hi},
                   {"samples", b.samples},
                   {"violations", b.violations},
                   {"undecidable", b.undecidable},
                   {"max_abs", b.max_abs.value},
                   {"p99_abs", b.p99_abs},
                   {"max_ulp", b.max_ulp.value},
                   {"p99_ulp", b.p99_ulp},
                   {"ulp_floor", denorm_min(dtype)},
                   {"worst", record_json(b.max_ratio.at)},
                   {"verdict", b.verdict()}});
  }
  return out;
}

void Report::measured(const harness::Measurement& m, DType dtype, const std::string& budget) {
  j["dtype"] = to_string(dtype);
  j["budget"] = budget;
  j["passed"] = m.verdict_pass();
  j["verdict"] = m.verdict();
  j["elements"] = m.count();
  j["violations"] = m.violations();
  j["undecidable"] = m.undecidable();
  j["max_abs"] = m.max_abs();
  j["bands"] = bands_json(m, dtype);
  nlohmann::json worst = nlohmann::json::array();
  for (const harness::ElementRecord& e : m.worst()) worst.push_back(record_json(e));
  j["worst"] = worst;
}

nlohmann::json Report::json() const {
  nlohmann::json out = j;
  out["schema"] = kCheckSchema;
  return out;
}

}  // namespace pe::check

#include "pe/check/report.h"

#include <cmath>

#include "pe/harness/enum_json.h"

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
                   {"p99_samples", b.percentile_samples},
                   {"ulp_floor", denorm_min(dtype)},
                   {"worst", record_json(b.max_ratio.at)},
                   {"verdict", b.verdict()}});
  }
  return out;
}

void Report::measured(const harness::Measurement& m, DType dtype, const std::string& budget) {
  doc.dtype = dtype;
  doc.budget = budget;
  doc.passed = m.verdict_pass();
  doc.verdict = m.verdict();
  doc.elements = m.count();
  doc.violations = m.violations();
  doc.undecidable = m.undecidable();
  // Quiet: the measurement kept the verdict alone (Measurement::verdict_only), not the largest error.
  doc.max_abs = quiet ? NAN : m.max_abs();
  if (quiet) return;
  doc.bands = bands_json(m, dtype);
  doc.worst = nlohmann::json::array();
  for (const harness::ElementRecord& e : m.worst()) doc.worst.push_back(record_json(e));
}

void Report::found(Finding f) {
  if (!doc.explanations) doc.explanations.emplace();
  doc.explanations->push_back(std::move(f));
}

nlohmann::json Report::json() const {
  nlohmann::json out = doc;
  out["schema"] = kCheckSchema;
  return out;
}

namespace {

template <class T>
void put(nlohmann::json& j, std::string_view key, const T& v) {
  j[std::string(key)] = v;
}
template <class T>
void put(nlohmann::json& j, std::string_view key, const std::optional<T>& v) {
  if (v) j[std::string(key)] = *v;
}
template <class T>
void get(const nlohmann::json& j, std::string_view key, T& v) {
  j.at(key).get_to(v);
}
template <class T>
void get(const nlohmann::json& j, std::string_view key, std::optional<T>& v) {
  if (const auto it = j.find(key); it != j.end()) v = it->template get<T>();
}

// Every field of the document under its key: one list for writing and reading.
template <class D, class F>
void for_each_field(D& d, F&& f) {
  f("family", d.family);
  f("input", d.input);
  f("output", d.output);
  f("table", d.table);
  f("parameters", d.parameters);
  f("hf_config", d.hf_config);
  f("nonfinite_input", d.nonfinite_input);
  f("dtype", d.dtype);
  f("budget", d.budget);
  f("verdict", d.verdict);
  f("passed", d.passed);
  f("elements", d.elements);
  f("violations", d.violations);
  f("undecidable", d.undecidable);
  f("max_abs", d.max_abs);
  f("bands", d.bands);
  f("worst", d.worst);
  f("contracts", d.contracts);
  f("against", d.against);
  f("diagnosis", d.diagnosis);
  f("explanations", d.explanations);
  f("frequencies_read_back", d.frequencies_read_back);
  f("axes_read_back", d.axes_read_back);
  f("positions_recovered", d.positions_recovered);
  f("channel_mixing", d.channel_mixing);
  f("unrotated_rows", d.unrotated_rows);
}

}  // namespace

void to_json(nlohmann::json& j, const Candidate& c) {
  j = {{"convention", c.convention}, {"residual", c.residual}};
}
void from_json(const nlohmann::json& j, Candidate& c) {
  j.at("convention").get_to(c.convention);
  j.at("residual").get_to(c.residual);
}

void to_json(nlohmann::json& j, const Finding& f) {
  j = {{"fits", f.fits}, {"support", f.support}};
  if (f.hypothesis) j["hypothesis"] = *f.hypothesis;
  if (f.restated) j[f.restated->key] = f.restated->text;
}
void from_json(const nlohmann::json& j, Finding& f) {
  j.at("fits").get_to(f.fits);
  j.at("support").get_to(f.support);
  for (const auto& [key, value] : j.items()) {  // the front end's words, under its own key
    if (key != "fits" && key != "support" && key != "hypothesis") f.restated = Restated{"", key, value};
  }
  if (j.contains("hypothesis")) f.hypothesis = j.at("hypothesis").get<RopeSpec>();
}

void to_json(nlohmann::json& j, const CheckDocument& d) {
  j = nlohmann::json::object();
  for_each_field(d, [&j](std::string_view key, const auto& v) { put(j, key, v); });
  if (d.explanations && !d.explanations->empty()) j["fits"] = d.explanations->front().fits;
}

void from_json(const nlohmann::json& j, CheckDocument& d) {
  for_each_field(d, [&j](std::string_view key, auto& v) { get(j, key, v); });
}

}  // namespace pe::check

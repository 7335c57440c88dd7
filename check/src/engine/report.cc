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
  doc.dtype = to_string(dtype);
  doc.budget = budget;
  doc.passed = m.verdict_pass();
  doc.verdict = m.verdict();
  doc.elements = m.count();
  doc.violations = m.violations();
  doc.undecidable = m.undecidable();
  doc.max_abs = m.max_abs();
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
void put(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
template <class T>
void get(const nlohmann::json& j, const char* key, std::optional<T>& v) {
  if (j.contains(key)) v = j.at(key).get<T>();
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
  j = {{"family", d.family},     {"parameters", d.parameters}, {"dtype", d.dtype},
       {"budget", d.budget},     {"passed", d.passed},         {"verdict", d.verdict},
       {"elements", d.elements}, {"violations", d.violations}, {"undecidable", d.undecidable},
       {"max_abs", d.max_abs},   {"bands", d.bands},           {"worst", d.worst}};
  put(j, "input", d.input);
  put(j, "output", d.output);
  put(j, "table", d.table);
  put(j, "hf_config", d.hf_config);
  put(j, "nonfinite_input", d.nonfinite_input);
  put(j, "contracts", d.contracts);
  put(j, "against", d.against);
  put(j, "diagnosis", d.diagnosis);
  put(j, "explanations", d.explanations);
  if (d.explanations && !d.explanations->empty()) j["fits"] = d.explanations->front().fits;
  put(j, "frequencies_read_back", d.frequencies_read_back);
  put(j, "axes_read_back", d.axes_read_back);
  put(j, "positions_recovered", d.positions_recovered);
  put(j, "channel_mixing", d.channel_mixing);
  put(j, "unrotated_rows", d.unrotated_rows);
}

void from_json(const nlohmann::json& j, CheckDocument& d) {
  j.at("family").get_to(d.family);
  j.at("parameters").get_to(d.parameters);
  j.at("dtype").get_to(d.dtype);
  j.at("budget").get_to(d.budget);
  j.at("passed").get_to(d.passed);
  j.at("verdict").get_to(d.verdict);
  j.at("elements").get_to(d.elements);
  j.at("violations").get_to(d.violations);
  j.at("undecidable").get_to(d.undecidable);
  j.at("max_abs").get_to(d.max_abs);
  j.at("bands").get_to(d.bands);
  j.at("worst").get_to(d.worst);
  get(j, "input", d.input);
  get(j, "output", d.output);
  get(j, "table", d.table);
  get(j, "hf_config", d.hf_config);
  get(j, "nonfinite_input", d.nonfinite_input);
  get(j, "contracts", d.contracts);
  get(j, "against", d.against);
  get(j, "diagnosis", d.diagnosis);
  get(j, "explanations", d.explanations);
  get(j, "frequencies_read_back", d.frequencies_read_back);
  get(j, "axes_read_back", d.axes_read_back);
  get(j, "positions_recovered", d.positions_recovered);
  get(j, "channel_mixing", d.channel_mixing);
  get(j, "unrotated_rows", d.unrotated_rows);
}

}  // namespace pe::check

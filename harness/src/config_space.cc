#include "pe/harness/config_space.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace pe::harness {

extern const char* const kConfigSpaceText;  // config_space_data.cc, generated from the JSON file

namespace {

template <class T>
T field(const nlohmann::json& j, const char* name, const char* where) {
  if (!j.contains(name)) throw std::invalid_argument(fmt::format("config space: {} lacks '{}'", where, name));
  try {
    return j.at(name).get<T>();
  } catch (const nlohmann::json::exception& e) {
    throw std::invalid_argument(fmt::format("config space: {}.{}: {}", where, name, e.what()));
  }
}

std::pair<std::int64_t, std::int64_t> range_of(const nlohmann::json& j, const char* name, const char* where) {
  const auto v = field<std::vector<std::int64_t>>(j, name, where);
  if (v.size() != 2 || v[0] > v[1])
    throw std::invalid_argument(fmt::format("config space: {}.{}: expected [lo, hi]", where, name));
  return {v[0], v[1]};
}

double rounded(const ParamSpec& p, double v) {
  if (p.multiple_of) v = std::round(v / *p.multiple_of) * *p.multiple_of;
  if (p.digits) v = std::stod(fmt::format("{:.{}g}", v, *p.digits));
  return v;
}

}  // namespace

void from_json(const nlohmann::json& j, ParamSpec& p) {
  const int kinds = j.contains("choice") + j.contains("uniform") + j.contains("loguniform");
  if (kinds != 1)
    throw std::invalid_argument("config space: a parameter needs one of choice, uniform, loguniform");
  if (j.contains("choice")) p.choice = j.at("choice").get<std::vector<double>>();
  const auto interval = [&](const char* name) -> std::optional<std::pair<double, double>> {
    if (!j.contains(name)) return std::nullopt;
    const auto v = j.at(name).get<std::vector<double>>();
    if (v.size() != 2 || !(v[0] <= v[1]) || (std::string(name) == "loguniform" && !(v[0] > 0)))
      throw std::invalid_argument(fmt::format("config space: {}: expected [lo, hi]", name));
    return std::pair{v[0], v[1]};
  };
  p.uniform = interval("uniform");
  p.loguniform = interval("loguniform");
  if (p.choice.empty() && !p.uniform && !p.loguniform)
    throw std::invalid_argument("config space: an empty choice");
  if (j.contains("digits")) p.digits = j.at("digits").get<int>();
  if (j.contains("multiple_of")) p.multiple_of = j.at("multiple_of").get<double>();
  p.share = j.value("share", 1.0);
  if (!(p.share > 0 && p.share <= 1)) throw std::invalid_argument("config space: share outside (0, 1]");
  if (j.contains("otherwise")) p.otherwise = {j.at("otherwise").get<ParamSpec>()};
}

void to_json(nlohmann::json& j, const ParamSpec& p) {
  j = nlohmann::json::object();
  if (!p.choice.empty()) j["choice"] = p.choice;
  if (p.uniform) j["uniform"] = {p.uniform->first, p.uniform->second};
  if (p.loguniform) j["loguniform"] = {p.loguniform->first, p.loguniform->second};
  if (p.digits) j["digits"] = *p.digits;
  if (p.multiple_of) j["multiple_of"] = *p.multiple_of;
  if (!p.otherwise.empty()) j["otherwise"] = p.otherwise.front();
  if (p.share != 1) j["share"] = p.share;
}

void from_json(const nlohmann::json& j, ConfigSpace& s) {
  const char* top = "the space";
  if (field<std::string>(j, "schema", top) != "pe-suite/config-space/1")
    throw std::invalid_argument("config space: schema is not pe-suite/config-space/1");
  s.rope_types = field<std::vector<std::string>>(j, "rope_types", top);
  s.forms = field<std::vector<std::string>>(j, "forms", top);
  s.scenarios = field<std::vector<std::string>>(j, "scenarios", top);
  s.dtypes = field<std::vector<std::string>>(j, "dtypes", top);
  s.layouts = field<std::vector<std::string>>(j, "layouts", top);
  s.head_dims = field<std::vector<std::int64_t>>(j, "head_dims", top);
  s.rope_theta = field<ParamSpec>(j, "rope_theta", top);
  s.partial_rotary_factor = field<ParamSpec>(j, "partial_rotary_factor", top);
  s.shipped_share = field<double>(j, "shipped_share", top);
  const auto tokens = field<nlohmann::json>(j, "tokens", top);
  s.decode_tokens = range_of(tokens, "decode", "tokens");
  s.other_tokens = range_of(tokens, "other", "tokens");
  s.heads = range_of(j, "heads", top);
  s.input_scale_log2 = range_of(j, "input_scale_log2", top);
  s.methods = field<std::map<std::string, std::map<std::string, ParamSpec>>>(j, "methods", top);
  for (const std::string& t : s.rope_types)
    if (t != "default" && !s.methods.contains(t))
      throw std::invalid_argument(fmt::format("config space: methods lacks rope_type '{}'", t));
}

void to_json(nlohmann::json& j, const ConfigSpace& s) {
  j = {{"schema", "pe-suite/config-space/1"},
       {"rope_types", s.rope_types},
       {"forms", s.forms},
       {"scenarios", s.scenarios},
       {"dtypes", s.dtypes},
       {"layouts", s.layouts},
       {"head_dims", s.head_dims},
       {"rope_theta", s.rope_theta},
       {"partial_rotary_factor", s.partial_rotary_factor},
       {"shipped_share", s.shipped_share},
       {"tokens",
        {{"decode", {s.decode_tokens.first, s.decode_tokens.second}},
         {"other", {s.other_tokens.first, s.other_tokens.second}}}},
       {"heads", {s.heads.first, s.heads.second}},
       {"input_scale_log2", {s.input_scale_log2.first, s.input_scale_log2.second}},
       {"methods", s.methods}};
}

const ParamSpec& ConfigSpace::param(const std::string& rope_type, const std::string& name) const {
  const auto m = methods.find(rope_type);
  if (m == methods.end() || !m->second.contains(name))
    throw std::out_of_range(fmt::format("config space: no parameter {}.{}", rope_type, name));
  return m->second.at(name);
}

const std::string& config_space_text() {
  static const std::string text = kConfigSpaceText;
  return text;
}

const ConfigSpace& config_space() {
  static const ConfigSpace space = nlohmann::json::parse(config_space_text()).get<ConfigSpace>();
  return space;
}

double value_of(const ParamSpec& p, double pick, double u) {
  if (!p.choice.empty()) {
    const auto n = p.choice.size();
    return rounded(p, p.choice[std::min(n - 1, static_cast<std::size_t>(pick * static_cast<double>(n)))]);
  }
  if (p.uniform) return rounded(p, p.uniform->first + u * (p.uniform->second - p.uniform->first));
  const auto [lo, hi] = *p.loguniform;
  return rounded(p, std::exp(std::log(lo) + u * (std::log(hi) - std::log(lo))));
}

}  // namespace pe::harness

// The model-config space (harness/data/config_space.json, schema pe-suite/config-space/1): the one definition
// that the C++ properties (properties/support/model_configs.cc) and the Python module
// (pe_suite/config_space.py: verify_rope, pe_suite.strategies) draw model configs from. HF-style RoPE configs
// with realistic parameters per rope_type, position scenarios, shapes and dtypes. The file is compiled in
// here and installed beside the Python package, so both read the same bytes.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pe::harness {

// One parameter's distribution: a choice among values, or uniform / log-uniform on [lo, hi]; then rounded to
// `digits` significant digits or to a multiple of `multiple_of`; given at all with probability `share`
// (else `otherwise` is drawn, when there is one, or the parameter is absent).
struct ParamSpec {
  std::vector<double> choice;
  std::optional<std::pair<double, double>> uniform, loguniform;
  std::optional<int> digits;
  std::optional<double> multiple_of;
  double share = 1;
  std::vector<ParamSpec> otherwise;  // at most one
};

struct ConfigSpace {
  std::vector<std::string> rope_types, forms, scenarios, dtypes, layouts;
  std::vector<std::int64_t> head_dims;
  ParamSpec rope_theta, partial_rotary_factor;
  double shipped_share = 0;
  std::pair<std::int64_t, std::int64_t> decode_tokens, other_tokens, heads, input_scale_log2;
  std::map<std::string, std::map<std::string, ParamSpec>> methods;  // rope_type -> parameter -> spec

  // The method's parameter; throws std::out_of_range naming it when the space lacks it.
  const ParamSpec& param(const std::string& rope_type, const std::string& name) const;
};

void from_json(const nlohmann::json& j, ParamSpec& p);
void to_json(nlohmann::json& j, const ParamSpec& p);
void from_json(const nlohmann::json& j, ConfigSpace& s);
void to_json(nlohmann::json& j, const ConfigSpace& s);

// The compiled-in definition, parsed once (a malformed file fails its first use, naming the field).
const ConfigSpace& config_space();
// Its text, byte for byte the file's.
const std::string& config_space_text();

// A value drawn from the spec by a uniform variate in [0, 1) (`pick` for a choice's index, `u` for a range);
// rounding applied. The generators of both languages draw this way.
double value_of(const ParamSpec& p, double pick, double u);

}  // namespace pe::harness

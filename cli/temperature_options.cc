#include "temperature_options.h"

#include <fmt/format.h>

#include <array>
#include <string_view>

#include "args.h"
#include "pe/errors.h"

namespace pe::cli {
namespace {

// Each flag with the parameter it sets and the type that reads it.
struct TemperatureFlag {
  std::string_view flag, parameter;
  AttnTemperatureType type;
};
constexpr std::array<TemperatureFlag, 4> kTemperatureFlags = {
    {{"--attn-scale", "attn_scale", AttnTemperatureType::Llama4},
     {"--floor-scale", "floor_scale", AttnTemperatureType::Llama4},
     {"--beta", "beta", AttnTemperatureType::Mistral},
     {"--original-max-position", "original_max_position", AttnTemperatureType::Mistral}}};

}  // namespace

void add_temperature_options(CLI::App& cmd, TemperatureFlags& f) {
  const auto add = [&cmd](const char* name, auto& value, const char* help) {
    cmd.add_option(name, value, help)->group("Attention temperature");
  };
  add("--attn-temperature", f.type,
      "RoPE: a gain t(p) on q: llama4 (1 + A ln(floor((p+1)/F) + 1)) or mistral (1 + B ln(1 + floor(p/L)))");
  add("--attn-scale", f.attn_scale, "llama4: attn_scale A (HF default 0.1)");
  add("--floor-scale", f.floor_scale, "llama4: floor_scale F (HF default 8192)");
  add("--beta", f.beta,
      "mistral: llama_4_scaling_beta B (0.1 in the published configs); L is --original-max-position");
}

std::set<std::string> given_temperature_flags(const CLI::App& cmd) {
  std::set<std::string> given;
  for (const char* name : {"--attn-temperature", "--attn-scale", "--floor-scale", "--beta"}) {
    const CLI::Option* o = cmd.get_option_no_throw(name);
    if (o != nullptr && o->count() > 0) given.insert(name);
  }
  return given;
}

AttnTemperature to_attn_temperature(const TemperatureFlags& f, const ScalingFlags& scaling) {
  const auto type = parse_attn_temperature_type(f.type.empty() ? "none" : f.type);
  if (!type) throw UsageError("--attn-temperature: llama4 or mistral, got '" + f.type + "'");
  AttnTemperature t;
  t.type = *type;
  for (const TemperatureFlag& flag : kTemperatureFlags) {
    const std::string name(flag.flag);
    if (f.given.count(name) == 0) continue;  // --original-max-position is the scaling's, never here
    if (*type == AttnTemperatureType::None)
      throw UsageError(name + ": applies with --attn-temperature " + std::string(to_string(flag.type)));
    if (flag.type != *type)
      throw UsageError(fmt::format("{}: not read by --attn-temperature {} (it is {}'s)", name,
                                   to_string(*type), to_string(flag.type)));
  }
  if (*type == AttnTemperatureType::None) return t;
  t.attn_scale = f.attn_scale;
  t.floor_scale = f.floor_scale;
  t.beta = f.beta;
  if (*type == AttnTemperatureType::Mistral) {
    if (scaling.given.count("--original-max-position") == 0)
      throw UsageError(
          "--original-max-position: required with --attn-temperature mistral (L, HF "
          "original_max_position_embeddings)");
    t.original_max_position = scaling.original_max_position;
  }
  try {
    validate(t);
  } catch (const InvalidArgument& e) {
    for (const TemperatureFlag& flag : kTemperatureFlags) {
      if (flag.parameter == e.parameter()) throw UsageError(std::string(flag.flag) + ": " + e.what());
    }
    throw;
  }
  return t;
}

ScalingFlags scaling_flags_besides(ScalingFlags scaling, const AttnTemperature& t) {
  const auto method = parse_rope_scaling_type(scaling.scaling);
  const bool scaling_reads_l = method && reads_field(*method, "original_max_position");
  if (t.type == AttnTemperatureType::Mistral && !scaling_reads_l)
    scaling.given.erase("--original-max-position");
  return scaling;
}

void reject_temperature_flags(const TemperatureFlags& f, const std::string& why) {
  for (const std::string& flag : f.given) throw UsageError(flag + ": " + why);
}

std::string describe_temperature(const AttnTemperature& t) {
  switch (t.type) {
    case AttnTemperatureType::Llama4:
      return fmt::format("llama4 (attn_scale {:g}, floor_scale {})", t.attn_scale, t.floor_scale);
    case AttnTemperatureType::Mistral:
      return fmt::format("mistral (beta {:g}, original_max_position {})", t.beta, t.original_max_position);
    case AttnTemperatureType::None:
      break;
  }
  return "none";
}

std::string describe_gain_budget(DType out, const std::string& magnitude) {
  return fmt::format(
      "(6*2^-24 + 2*u_{}) * t(p) * {} (the gain in float32, rounded into {} with the product: {:.3g} "
      "relative)",
      to_string(out), magnitude, to_string(out), gain_relative_error(out));
}

}  // namespace pe::cli

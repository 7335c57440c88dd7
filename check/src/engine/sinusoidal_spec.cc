// pe/check/spec.h's sinusoidal table: the spec's entries and the parameters it describes.
#include <nlohmann/json.hpp>

#include "pe/check/spec.h"
#include "pe/harness/enum_json.h"
#include "pe/pe.h"

namespace pe::check {

std::vector<SpecEntry> entries(const SinusoidalSpec& s) {
  std::vector<SpecEntry> out;
  const auto add = [&out](std::string_view name, const auto& v) {
    if (v) out.push_back({name, nlohmann::json(*v)});  // enumerations by their names (enum_json.h)
  };
  add("base", s.base);
  add("layout", s.layout);
  add("flip_sin_to_cos", s.flip_sin_to_cos);
  add("downscale_freq_shift", s.downscale_freq_shift);
  add("scale", s.scale);
  add("padding_idx", s.padding_idx);
  add("grid", s.grid);
  add("base_size", s.base_size);
  add("interpolation_scale", s.interpolation_scale);
  add("temporal_interpolation_scale", s.temporal_interpolation_scale);
  add("extra_tokens", s.extra_tokens);
  return out;
}

SinusoidalParams sinusoidal_params(const SinusoidalSpec& s, std::int64_t dim, const Names& names) {
  if (!s.grid) {
    for (const auto& [given, name] :
         {std::pair{s.base_size.has_value(), "base_size"},
          {s.interpolation_scale.has_value(), "interpolation_scale"},
          {s.temporal_interpolation_scale.has_value(), "temporal_interpolation_scale"},
          {s.extra_tokens.has_value(), "extra_tokens"}})
      if (given) names.fail(name, "applies to a grid only (give " + names("grid") + ")");
  } else if (s.padding_idx) {
    names.fail("padding_idx", "applies to a 1-D table only, not to a grid");
  }
  SinusoidalParams p;
  p.dim = dim;
  p.base = s.base.value_or(10000.0);
  // Every grid definition (MAE, diffusers, CogVideoX) concatenates [sin | cos]; a table the paper's layout.
  p.layout = s.layout.value_or(s.grid ? Layout::Concatenated : default_layout(Family::Sinusoidal));
  p.flip_sin_to_cos = s.flip_sin_to_cos.value_or(false);
  p.downscale_freq_shift = s.downscale_freq_shift.value_or(0.0);
  p.scale = s.scale.value_or(1.0);
  try {
    validate_table_params(p);
  } catch (const InvalidArgument& e) {
    rethrow_named(e, names);
  }
  return p;
}

harness::GridSpec grid_spec(const SinusoidalSpec& s) {
  return {*s.grid, s.base_size, s.interpolation_scale.value_or(1.0),
          s.temporal_interpolation_scale.value_or(1.0), s.extra_tokens.value_or(0)};
}

}  // namespace pe::check

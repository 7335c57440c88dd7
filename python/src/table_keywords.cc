// keywords.h's sinusoidal table keywords: diffusers' names into check::SinusoidalSpec, and the positions,
// integers or real numbers.
#include <fmt/format.h>

#include "arrays.h"
#include "keywords.h"

namespace pe::python {
namespace {

std::vector<std::int64_t> sizes_of(py::handle grid) {
  std::vector<std::int64_t> out;
  if (!py::isinstance<py::sequence>(grid) || py::isinstance<py::str>(grid))
    throw py::type_error(fmt::format("grid: expected (H, W) or (T, H, W), got {}", text(py::type::of(grid))));
  for (py::handle v : grid) out.push_back(integer(v, "grid"));
  if (out.size() != 2 && out.size() != 3)
    throw py::value_error(fmt::format("grid: expected (H, W) or (T, H, W), got {} sizes", out.size()));
  return out;
}

}  // namespace

check::SinusoidalSpec table_spec(const TableKeywords& k, const check::Names& names,
                                 std::vector<check::HfValue>* taken) {
  check::SinusoidalSpec s;
  if (!k.base.is_none()) s.base = number(k.base, "base");
  if (!k.layout.is_none()) {
    const std::string words = text(k.layout);
    s.layout = without_gil([&] { return check::parse_layout(words, Family::Sinusoidal, names); });
  }
  if (!k.flip_sin_to_cos.is_none()) {
    if (!py::isinstance<py::bool_>(k.flip_sin_to_cos))
      throw py::type_error(fmt::format("flip_sin_to_cos: expected True or False, got {}",
                                       text(py::type::of(k.flip_sin_to_cos))));
    s.flip_sin_to_cos = k.flip_sin_to_cos.cast<bool>();
  }
  if (!k.downscale_freq_shift.is_none())
    s.downscale_freq_shift = number(k.downscale_freq_shift, "downscale_freq_shift");
  if (!k.scale.is_none()) s.scale = number(k.scale, "scale");
  if (!k.padding_idx.is_none()) s.padding_idx = integer(k.padding_idx, "padding_idx");
  if (!k.grid.is_none()) s.grid = sizes_of(k.grid);
  if (!k.base_size.is_none()) s.base_size = number(k.base_size, "base_size");
  if (!k.interpolation_scale.is_none())
    s.interpolation_scale = number(k.interpolation_scale, "interpolation_scale");
  if (!k.temporal_interpolation_scale.is_none())
    s.temporal_interpolation_scale = number(k.temporal_interpolation_scale, "temporal_interpolation_scale");
  if (!k.extra_tokens.is_none()) s.extra_tokens = integer(k.extra_tokens, "extra_tokens");
  if (k.hf_config.is_none()) return s;
  const check::HfSource hf = hf_source_of(k.hf_config, names);
  std::vector<check::HfValue> ignored;
  return without_gil([&] { return check::sinusoidal_spec_from(hf, s, taken != nullptr ? *taken : ignored); });
}

TablePositions table_positions(py::handle positions) {
  TablePositions out;
  if (positions.is_none()) return out;
  try {
    out.integer = positions_of(positions);
    return out;
  } catch (const py::type_error&) {  // a float array: real positions
  }
  const check::NpyArray a = read_floats(positions, "positions", std::nullopt, false);
  if (a.shape.size() > 1)
    throw py::value_error(
        fmt::format("positions: expected a 1-D array of real positions, got rank {}", a.shape.size()));
  out.real = a.values;
  return out;
}

}  // namespace pe::python

// The Python functions' keyword arguments as the check engine's typed options (pe/check/spec.h), with
// Python's words for every parameter (pe/check/names.h): `scaling['factor']` for a key of HF's
// rope_scaling dict, the keyword itself elsewhere. Errors come back as ValueError / TypeError in those
// words; nothing here builds a command line.
#pragma once

#include <pybind11/pybind11.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pe/check/check.h"

namespace pe::python {

namespace py = pybind11;

// The RoPE keywords every function shares (None: not given).
struct RopeKeywords {
  py::object base, layout, rotary_dim, rotary_offset, scaling, hf_config, layer, layer_type, mrope_section,
      mrope_layout, vision, axes_dim;
  bool heads_first = false;
  py::object xpos_scale_base = py::none(), xpos_centre = py::none(), xpos_keys = py::none();
};

// Python's words; `config_word` is what names the model config in messages ("hf_config", or "scaling"
// when it is the scaling dict), `dim_word` what names the sinusoidal dim.
check::Names python_names(const std::string& config_word = "hf_config", const std::string& dim_word = "dim");

// The spec and the config the keywords give, for data whose head dim is `head_dim` (0: unknown).
// Layout defaults to half-split (HF's rotate_half) unless a config is given.
struct RopeSetup {
  check::RopeSpec spec;
  check::HfSource hf;
  check::Names names;
};
RopeSetup rope_setup(const RopeKeywords& k, std::size_t head_dim);
// A model config keyword: a config.json path or a dict.
check::HfSource hf_source_of(py::handle hf_config, const check::Names& names);

// The sinusoidal table's keywords under diffusers' names (None: not given); base is max_period.
struct TableKeywords {
  py::object base, layout, flip_sin_to_cos, downscale_freq_shift, scale, padding_idx, grid, base_size,
      interpolation_scale, temporal_interpolation_scale, extra_tokens, hf_config;
};
// The spec they give (a diffusers config's values where they are silent: `taken` lists them).
check::SinusoidalSpec table_spec(const TableKeywords& k, const check::Names& names,
                                 std::vector<check::HfValue>* taken = nullptr);
// A table's positions: integers (a range, an integer array) or real numbers (a float array: diffusion
// timesteps, exact as stored); None (a grid's table) gives neither.
struct TablePositions {
  check::Positions integer;
  std::vector<double> real;
};
TablePositions table_positions(py::handle positions);

// A float or int keyword (numpy and torch scalars too); TypeError naming `name` otherwise.
double number(py::handle value, const std::string& name);
std::int64_t integer(py::handle value, const std::string& name);
std::string text(py::handle value);

// Runs `work` with the GIL released, turning the engine's errors into ValueError (TypeError for a
// malformed array), in the words they already carry.
template <class Work>
auto without_gil(Work&& work) -> decltype(work());

// The budget keywords: a registered contract's name or a flat bound (default: check's class).
check::BudgetOptions budget(py::handle contract, py::handle max_abs);

// The positions array ([tokens] or [n_axes, tokens]) as the engine takes them.
check::Positions positions_of(py::handle positions);
// The same, or RoPE's real positions (Positions::real) from a float array with a non-integer or negative
// value (NaN and inf included: the engine refuses them, naming positions); integer-valued floats in [0, 2^53]
// as the integers they hold.
check::Positions rope_positions_of(py::handle positions);

}  // namespace pe::python

#include "keywords_inl.h"

// reference_sinusoidal, reference_rope and rope_cos_sin: `pe-suite export --reference` on the caller's
// positions and arrays, the correctly rounded values returned as numpy arrays (the same bits as the
// command's files).
#include <fmt/format.h>

#include <cmath>

#include "arguments.h"
#include "arrays.h"
#include "bindings.h"
#include "common.h"
#include "in_process.h"
#include "pe/ref/fast_trig.h"

namespace pe::python {
namespace {

cli::CapturedReport exported(Invocation& call, DType dtype) {
  call.flag("--dtype", std::string(to_string(dtype)));
  call.args.insert(call.args.end(), {"--reference", "--out", "out.npy"});
  auto [code, captured] = run(call, cli::export_in_process);
  if (code != cli::kOk)
    throw std::runtime_error("the reference could not decide a rounding (see stderr); no values returned");
  return std::move(captured);
}

void add_positions(Invocation& call, py::handle positions) {
  call.files.arrays["positions.npy"] = read_integers(positions, "positions");
  call.flag("--positions-file", "positions.npy");
}

py::array reference_sinusoidal(py::handle positions, py::handle dim, py::handle base, py::handle layout,
                               py::handle dtype) {
  Invocation call;
  call.name("--dim", "dim");
  call.args = {"--family", "sinusoidal", "--dim", number(dim, "dim")};
  add_positions(call, positions);
  call.flag("--base", number(base, "base"));
  call.flag("--layout", py::str(layout).cast<std::string>());
  for (const auto& [flag, parameter] : {std::pair{"--base", "base"},
                                        {"--layout", "layout"},
                                        {"--positions-file positions.npy", "positions"},
                                        {"positions.npy", "positions"},
                                        {"--positions-file", "positions"},
                                        {"--dtype", "dtype"}})
    call.name(flag, parameter);
  const DType type = dtype_argument(dtype, "dtype").value_or(DType::F32);
  const cli::CapturedReport r = exported(call, type);
  return to_numpy(r.values, r.shape, type);
}

py::array reference_rope(py::handle x, py::handle positions, const RopeKeywords& k, py::handle dtype) {
  Invocation call;
  call.name("--dim", "rotary_dim");
  const auto declared = dtype_argument(dtype, "dtype");
  // dtype is the output's type; it also says how to read 16-bit integers (bfloat16 bits).
  call.files.arrays["x"] = read_floats(x, "x", declared, false);
  const cli::NpyArray& xa = call.files.arrays["x"];
  for (std::size_t i = 0; i < xa.values.size(); ++i)
    if (std::isinf(xa.values[i]))
      throw py::value_error(
          fmt::format("x: holds {} at flat index {}; the reference rotates finite values", xa.values[i], i));
  if (xa.shape.empty())
    throw py::value_error("x: expected [tokens, heads, head_dim] or [tokens, head_dim], got a scalar");
  call.args = {"--family", "rope", "--input", "x"};
  add_positions(call, positions);
  add_rope_keywords(call, k, xa.shape.back(), "--dim");
  if (k.rotary_dim.is_none() && k.scaling.is_none() && k.hf_config.is_none()) call.flag("--dim", "0");  // all
  call.name("--input", "x");
  const DType type = declared.value_or(xa.dtype);
  const cli::CapturedReport r = exported(call, type);
  return to_numpy(r.values, r.shape, type);
}

py::tuple rope_cos_sin(py::handle positions, const RopeKeywords& k, py::handle dtype) {
  Invocation call;
  call.name("--dim", "rotary_dim");
  call.name("head_dim", "rotary_dim");  // export's table is as wide as its --dim
  if (k.rotary_dim.is_none() && k.hf_config.is_none())
    throw py::value_error("rotary_dim: required (or an hf_config that gives it)");
  call.args = {"--family", "rope"};
  add_positions(call, positions);
  std::size_t head_dim = 0;
  if (!k.rotary_dim.is_none()) {
    const std::string d = number(k.rotary_dim, "rotary_dim");
    if (d.find_first_not_of("0123456789") != std::string::npos || d.size() > 9)
      throw py::value_error("rotary_dim: expected an even positive integer, got " + d);
    head_dim = std::stoul(d);
  }
  add_rope_keywords(call, k, head_dim, "--dim");
  const DType type = dtype_argument(dtype, "dtype").value_or(DType::F32);
  const cli::CapturedReport r = exported(call, type);
  // [tokens, pairs, (cos, sin)] laid out as the rotation reads it: HF's cat(freqs, freqs) for halfsplit,
  // each frequency twice in a row for interleaved.
  const std::size_t tokens = r.shape.at(0), pairs = r.shape.at(1);
  // The layout the export resolved (the keyword's, or the config's).
  const bool interleaved =
      r.metadata.is_object() ? r.metadata.value("layout", "") == "interleaved"
                             : !k.layout.is_none() && py::str(k.layout).cast<std::string>() == "interleaved";
  std::vector<double> c(tokens * 2 * pairs), s(tokens * 2 * pairs);
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t j = 0; j < pairs; ++j) {
      const double cv = r.values[(t * pairs + j) * 2], sv = r.values[(t * pairs + j) * 2 + 1];
      const std::size_t a = t * 2 * pairs + (interleaved ? 2 * j : j);
      const std::size_t b = interleaved ? a + 1 : a + pairs;
      c[a] = c[b] = cv;
      s[a] = s[b] = sv;
    }
  }
  return py::make_tuple(to_numpy(c, {tokens, 2 * pairs}, type), to_numpy(s, {tokens, 2 * pairs}, type));
}

auto rope_keyword_arguments() {
  return std::tuple{py::arg("base") = py::none(),          py::arg("layout") = py::none(),
                    py::arg("rotary_offset") = py::none(), py::arg("scaling") = py::none(),
                    py::arg("hf_config") = py::none(),     py::arg("layer") = py::none(),
                    py::arg("layer_type") = py::none(),    py::arg("mrope_section") = py::none(),
                    py::arg("mrope_layout") = py::none(),  py::arg("vision") = py::none(),
                    py::arg("heads_first") = false,        py::arg("dtype") = py::none()};
}

}  // namespace

void add_reference_functions(py::module_& m) {
  m.def("reference_sinusoidal", reference_sinusoidal,
        "The sinusoidal table [positions, dim], correctly rounded to dtype (float32 by default; bfloat16 as "
        "uint16 bits): the same bits as `pe-suite export --family sinusoidal --reference`.",
        py::arg("positions"), py::arg("dim"), py::kw_only(), py::arg("base") = 10000.0,
        py::arg("layout") = "interleaved", py::arg("dtype") = "float32");
  std::apply(
      [&](auto&&... a) {
        m.def(
            "reference_rope",
            [](py::handle x, py::handle positions, py::object rotary_dim, py::object base, py::object layout,
               py::object rotary_offset, py::object scaling, py::object hf_config, py::object layer,
               py::object layer_type, py::object mrope_section, py::object mrope_layout, py::object vision,
               bool heads_first, py::handle dtype) {
              const RopeKeywords k{base,  layout,     rotary_dim,    rotary_offset, scaling, hf_config,
                                   layer, layer_type, mrope_section, mrope_layout,  vision,  heads_first};
              return reference_rope(x, positions, k, dtype);
            },
            "x rotated by the exact RoPE and correctly rounded to dtype (x's own type by default): the same "
            "bits as `pe-suite export --family rope --input x --reference`. Keywords as check_rope's.",
            py::arg("x"), py::arg("positions"), py::kw_only(), py::arg("rotary_dim") = py::none(), a...);
        m.def(
            "rope_cos_sin",
            [](py::handle positions, py::object rotary_dim, py::object base, py::object layout,
               py::object rotary_offset, py::object scaling, py::object hf_config, py::object layer,
               py::object layer_type, py::object mrope_section, py::object mrope_layout, py::object vision,
               bool heads_first, py::handle dtype) {
              const RopeKeywords k{base,  layout,     rotary_dim,    rotary_offset, scaling, hf_config,
                                   layer, layer_type, mrope_section, mrope_layout,  vision,  heads_first};
              return rope_cos_sin(positions, k, dtype);
            },
            "The exact (cos, sin) tables [positions, rotary_dim], attention factor included (as HF's), "
            "correctly "
            "rounded to dtype (float32 by default): halfsplit (default) repeats the frequencies as HF's "
            "cat(freqs, freqs), interleaved as each one twice in a row.",
            py::arg("positions"), py::arg("rotary_dim") = py::none(), py::kw_only(), a...);
      },
      rope_keyword_arguments());
  m.def("reference_fallbacks", &ref::mpfr_fallbacks,
        "How many roundings the reference's fast path left to MPFR in this process (expected: a few in a "
        "million)");
}

}  // namespace pe::python

// check_rope, check_sinusoidal and their assert_ forms: `pe-suite check` on the caller's arrays, its
// report as a Report (the command's text, its JSON as a dict).
#include <fmt/format.h>

#include "arguments.h"
#include "arrays.h"
#include "bindings.h"
#include "common.h"
#include "in_process.h"

namespace pe::python {
namespace {

struct Report {
  bool passed = false;
  std::string text;
  std::string json;  // check --json's document (schema pe-suite/check/1)

  py::object to_dict() const { return py::module_::import("json").attr("loads")(json); }
  py::object get(const char* key) const {
    py::dict d = to_dict();
    return d.contains(key) ? py::object(d[key]) : py::object(py::none());
  }
};

// The budget keywords: a registered contract's name or a flat bound (default: check's class).
void add_budget(Invocation& call, py::handle contract, py::handle max_abs) {
  if (!contract.is_none()) call.flag("--contract", py::str(contract).cast<std::string>());
  if (!max_abs.is_none()) call.flag("--max-abs", number(max_abs, "max_abs"));
  call.name("--contract", "contract");
  call.name("--max-abs", "max_abs");
}

void add_positions(Invocation& call, py::handle positions) {
  call.files.arrays["positions.npy"] = read_integers(positions, "positions");
  call.flag("--positions-file", "positions.npy");
}

Report finish(const Invocation& call) {
  auto [code, captured] = run(call, cli::check_in_process);
  return {code == cli::kOk, std::move(captured.text), captured.json.dump()};
}

Report check_rope(py::handle x, py::handle y, py::handle positions, const RopeKeywords& k, py::handle dtype,
                  py::handle contract, py::handle max_abs, py::handle against) {
  Invocation call;
  const auto declared = dtype_argument(dtype, "dtype");
  call.files.arrays["x"] = read_floats(x, "x", declared);
  call.files.arrays["y"] = read_floats(y, "y", declared);
  const auto& shape = call.files.arrays["x"].shape;
  if (shape.empty())
    throw py::value_error("x: expected [tokens, heads, head_dim] or [tokens, head_dim], got a scalar");
  call.args = {"--family", "rope", "--input", "x", "--output", "y"};
  if (!against.is_none()) {
    call.files.arrays["against"] = read_floats(against, "against", declared);
    call.flag("--against", "against");
  }
  add_positions(call, positions);
  add_rope_keywords(call, k, shape.back(), "--rotary-dim");
  add_budget(call, contract, max_abs);
  for (const auto& [flag, parameter] :
       {std::pair{"--input", "x"}, {"--output", "y"}, {"--against", "against"}, {"--head-dim", "head_dim"}})
    call.name(flag, parameter);
  return finish(call);
}

Report check_sinusoidal(py::handle table, py::handle positions, py::handle base, py::handle layout,
                        py::handle dtype, py::handle contract, py::handle max_abs, py::handle against) {
  Invocation call;
  const auto declared = dtype_argument(dtype, "dtype");
  call.files.arrays["table"] = read_floats(table, "table", declared);
  call.args = {"--family", "sinusoidal", "table"};
  if (!against.is_none()) {
    call.files.arrays["against"] = read_floats(against, "against", declared);
    call.flag("--against", "against");
  }
  add_positions(call, positions);
  if (!base.is_none()) call.flag("--base", number(base, "base"));
  if (!layout.is_none()) call.flag("--layout", py::str(layout).cast<std::string>());
  add_budget(call, contract, max_abs);
  for (const auto& [flag, parameter] : {std::pair{"TABLE", "table"},
                                        {"--against", "against"},
                                        {"--base", "base"},
                                        {"--layout", "layout"},
                                        {"--dim", "table's width"},
                                        {"--positions-file positions.npy", "positions"},
                                        {"positions.npy", "positions"},
                                        {"--positions-file", "positions"},
                                        {"--dtype", "dtype"}})
    call.name(flag, parameter);
  return finish(call);
}

[[noreturn]] void raise_assertion(const Report& r) {
  PyErr_SetString(PyExc_AssertionError, r.text.c_str());
  throw py::error_already_set();
}

const char* kCheckRopeDoc =
    R"(Check a RoPE output against the exact reference, as `pe-suite check --family rope`.

x, y: the input and the output of the rotation, [tokens, heads, head_dim] or [tokens, head_dim]
(heads_first=True: [heads, tokens, head_dim]); numpy arrays (float16/32/64, bfloat16 as uint16 bits with
dtype="bfloat16") or PyTorch CPU tensors. positions: one integer per token ([n_axes, tokens] for M-RoPE).
base, layout ("halfsplit", HF's rotate_half, by default; "interleaved"; "deinterleave"), rotary_dim,
rotary_offset; scaling: HF's rope_scaling dict; hf_config: a config.json path or dict (layer / layer_type:
which layer's RoPE). Budget: check's default (every formulation of the data's precision class passes:
float32/float64; bfloat16/float16 with 16-bit caches and HF's 16-bit arithmetic), contract="rope.exact" or
max_abs=1e-6. against: a second implementation's output of the same x.
Returns a Report: .passed, .bands, .worst, .diagnosis, str() the command's text, .to_dict() its JSON.)";

}  // namespace

void add_check_functions(py::module_& m) {
  py::class_<Report>(m, "Report", "A check's verdict: the text and JSON of `pe-suite check`")
      .def_readonly("passed", &Report::passed)
      .def_readonly("text", &Report::text)
      .def("to_dict", &Report::to_dict, "The JSON of `check --json` (schema pe-suite/check/1) as a dict")
      .def_property_readonly(
          "bands", [](const Report& r) { return r.get("bands"); },
          "Per position band: samples, max/p99 |error|, max/p99 ULP, verdict, worst element")
      .def_property_readonly(
          "worst", [](const Report& r) { return r.get("worst"); }, "The worst elements")
      .def_property_readonly(
          "diagnosis", [](const Report& r) { return r.get("diagnosis"); },
          "The conventions that fit a failing output, best first (None when it passes)")
      .def_property_readonly("max_abs", [](const Report& r) { return r.get("max_abs"); })
      .def("__bool__", [](const Report& r) { return r.passed; })
      .def("__str__", [](const Report& r) { return r.text; })
      .def("__repr__",
           [](const Report& r) { return fmt::format("<pe_suite.Report {}>", r.passed ? "PASS" : "FAIL"); });

  auto rope_check = [](py::handle x, py::handle y, py::handle positions, py::object base, py::object layout,
                       py::object rotary_dim, py::object rotary_offset, py::object scaling,
                       py::object hf_config, py::object layer, py::object layer_type,
                       py::object mrope_section, py::object mrope_layout, py::object vision, bool heads_first,
                       py::handle dtype, py::handle contract, py::handle max_abs, py::handle against) {
    const RopeKeywords k{base,  layout,     rotary_dim,    rotary_offset, scaling, hf_config,
                         layer, layer_type, mrope_section, mrope_layout,  vision,  heads_first};
    return check_rope(x, y, positions, k, dtype, contract, max_abs, against);
  };
  auto rope_arguments = [](auto&&... extra) {
    return std::tuple{py::arg("x"),
                      py::arg("y"),
                      py::arg("positions"),
                      py::kw_only(),
                      py::arg("base") = py::none(),
                      py::arg("layout") = py::none(),
                      py::arg("rotary_dim") = py::none(),
                      py::arg("rotary_offset") = py::none(),
                      py::arg("scaling") = py::none(),
                      py::arg("hf_config") = py::none(),
                      py::arg("layer") = py::none(),
                      py::arg("layer_type") = py::none(),
                      py::arg("mrope_section") = py::none(),
                      py::arg("mrope_layout") = py::none(),
                      py::arg("vision") = py::none(),
                      py::arg("heads_first") = false,
                      py::arg("dtype") = py::none(),
                      py::arg("contract") = py::none(),
                      py::arg("max_abs") = py::none(),
                      py::arg("against") = py::none(),
                      extra...};
  };
  std::apply([&](auto&&... a) { m.def("check_rope", rope_check, kCheckRopeDoc, a...); }, rope_arguments());
  std::apply(
      [&](auto&&... a) {
        m.def(
            "assert_rope_close",
            [rope_check](py::handle x, py::handle y, py::handle positions, py::object base, py::object layout,
                         py::object rotary_dim, py::object rotary_offset, py::object scaling,
                         py::object hf_config, py::object layer, py::object layer_type,
                         py::object mrope_section, py::object mrope_layout, py::object vision,
                         bool heads_first, py::handle dtype, py::handle contract, py::handle max_abs,
                         py::handle against) {
              const Report r = rope_check(x, y, positions, base, layout, rotary_dim, rotary_offset, scaling,
                                          hf_config, layer, layer_type, mrope_section, mrope_layout, vision,
                                          heads_first, dtype, contract, max_abs, against);
              if (!r.passed) raise_assertion(r);
            },
            "check_rope, raising AssertionError whose message is the report (bands, worst elements, "
            "diagnosis)",
            a...);
      },
      rope_arguments());

  auto sin_check = [](py::handle table, py::handle positions, py::handle base, py::handle layout,
                      py::handle dtype, py::handle contract, py::handle max_abs, py::handle against) {
    return check_sinusoidal(table, positions, base, layout, dtype, contract, max_abs, against);
  };
  const auto sin_arguments = std::tuple{py::arg("table"),
                                        py::arg("positions"),
                                        py::kw_only(),
                                        py::arg("base") = py::none(),
                                        py::arg("layout") = py::none(),
                                        py::arg("dtype") = py::none(),
                                        py::arg("contract") = py::none(),
                                        py::arg("max_abs") = py::none(),
                                        py::arg("against") = py::none()};
  std::apply(
      [&](auto&&... a) {
        m.def(
            "check_sinusoidal", sin_check,
            "Check a sinusoidal table [positions, dim] against the exact reference (pe-suite check --family "
            "sinusoidal); layout \"interleaved\" (the paper's) by default. Returns a Report.",
            a...);
        m.def(
            "assert_sinusoidal_close",
            [sin_check](py::handle table, py::handle positions, py::handle base, py::handle layout,
                        py::handle dtype, py::handle contract, py::handle max_abs, py::handle against) {
              const Report r = sin_check(table, positions, base, layout, dtype, contract, max_abs, against);
              if (!r.passed) raise_assertion(r);
            },
            "check_sinusoidal, raising AssertionError whose message is the report", a...);
      },
      sin_arguments);
}

}  // namespace pe::python

// check_rope, check_sinusoidal, check_alibi and their assert_ forms: the check engine's requests built
// from the caller's arrays and keywords, its Report returned (the text and JSON `pe-suite check` shows,
// in Python's words).
#include <fmt/format.h>
#include <pybind11/stl.h>

#include <cmath>
#include <optional>

#include "arrays.h"
#include "bindings.h"
#include "keywords.h"
#include "pe/harness/enum_json.h"
#include "report.h"

namespace pe::python {
namespace {

// Keys of scaling= or hf_config= that the resolver did not read (a typo such as "factr"): a Python warning
// with the key, as transformers warns of unrecognized rope_scaling keys, besides the report's line.
void warn_not_read(const check::Report& r) {
  if (!r.doc.hf_config) return;  // the report's "hf_config" (read here without writing the whole report)
  for (const auto& key : r.doc.hf_config->value("not_read", nlohmann::json::array())) {
    const std::string message = fmt::format(
        "pe_suite: {} is not read (a typo, or a key of another rope_type)", key.get<std::string>());
    if (PyErr_WarnEx(PyExc_UserWarning, message.c_str(), 2) != 0) throw py::error_already_set();
  }
}

Report check_rope(py::handle x, py::handle y, py::handle positions, const RopeKeywords& k, py::handle dtype,
                  py::handle contract, py::handle max_abs, py::handle against, std::size_t threads = 0,
                  bool exact_p99 = false, bool quiet = false) {
  const auto declared = dtype_argument(dtype, "dtype");
  const check::NpyArray xa = read_floats(x, "x", declared, true, true),
                        ya = read_floats(y, "y", declared, true, true);
  if (xa.shape.empty())
    throw py::value_error("x: expected [tokens, heads, head_dim] or [tokens, head_dim], got a scalar");
  check::NpyArray ba;
  if (!against.is_none()) ba = read_floats(against, "against", declared, true, true);
  check::RopeRequest request;
  request.x = view_of(xa, "x");
  request.y = view_of(ya, "y");
  if (!against.is_none()) request.against = view_of(ba, "against");
  request.positions = rope_positions_of(positions);
  request.heads_first = k.heads_first;
  request.threads = threads;
  request.exact_percentiles = exact_p99;
  request.quiet = quiet;
  RopeSetup setup = rope_setup(k, xa.shape.back());
  request.spec = std::move(setup.spec);
  request.hf = std::move(setup.hf);
  request.budget = budget(contract, max_abs);
  check::Report r = without_gil([&] { return check::check_rope(request, setup.names); });
  // Lists have no type: say which type they were read in, which sets the budget.
  if (!declared) {
    std::string lists;
    for (const auto& [obj, name] : {std::pair{x, "x"}, std::pair{y, "y"}})
      if (plain_sequence(obj)) lists += fmt::format("{}{}", lists.empty() ? "" : " and ", name);
    if (!lists.empty())
      r.text = fmt::format(
                   "note: {} given as Python lists, read as float64 (the budget is float64's); give "
                   "dtype=\"float32\" (or arrays of the kernel's type) to check a float32 kernel\n",
                   lists) +
               r.text;
  }
  warn_not_read(r);
  return {std::move(r)};
}

Report check_sinusoidal(py::handle table, py::handle positions, py::handle base, py::handle layout,
                        py::handle flip_sin_to_cos, py::handle downscale_freq_shift, py::handle scale,
                        py::handle padding_idx, py::handle grid, py::handle base_size,
                        py::handle interpolation_scale, py::handle temporal_interpolation_scale,
                        py::handle extra_tokens, py::handle hf_config, py::handle dtype, py::handle contract,
                        py::handle max_abs, py::handle against, bool exact_p99) {
  const auto declared = dtype_argument(dtype, "dtype");
  const check::NpyArray ta = read_floats(table, "table", declared, true, true);
  check::NpyArray ba;
  if (!against.is_none()) ba = read_floats(against, "against", declared, true, true);
  check::SinusoidalRequest request;
  request.table = view_of(ta, "table");
  if (!against.is_none()) request.against = view_of(ba, "against");
  TablePositions p = table_positions(positions);
  request.positions = std::move(p.integer);
  request.real_positions = std::move(p.real);
  request.budget = budget(contract, max_abs);
  request.exact_percentiles = exact_p99;
  const check::Names names = python_names("hf_config", "the table's width");
  const auto o = [](py::handle h) { return py::reinterpret_borrow<py::object>(h); };
  request.spec = table_spec(
      {o(base), o(layout), o(flip_sin_to_cos), o(downscale_freq_shift), o(scale), o(padding_idx), o(grid),
       o(base_size), o(interpolation_scale), o(temporal_interpolation_scale), o(extra_tokens), py::none()},
      names);
  if (!hf_config.is_none()) request.hf = hf_source_of(hf_config, names);
  return {without_gil([&] { return check::check_sinusoidal(request, names); })};
}

// An ALiBi range keyword: positions [A, B) from range(A, B) or any 1-D integer array.

Report check_alibi(py::handle table, py::handle max_bias, py::handle alibi_slopes, py::handle alibi_form,
                   py::handle queries, py::handle keys, py::handle heads, py::handle dtype,
                   py::handle contract, py::handle max_abs) {
  const auto declared = dtype_argument(dtype, "dtype");
  const check::NpyArray ta = read_floats(table, "table", declared, true, true);
  check::AlibiRequest request;
  request.table = view_of(ta, "table");
  check::AlibiSpec& o = request.spec;
  const check::Names names = python_names();
  if (!max_bias.is_none()) o.max_bias = number(max_bias, "max_bias");
  if (!alibi_slopes.is_none()) {
    const std::string words = text(alibi_slopes);
    o.slopes = without_gil([&] { return check::parse_slopes(words, names); });
  }
  if (!alibi_form.is_none()) {
    const std::string words = text(alibi_form);
    o.form = without_gil([&] { return check::parse_alibi_form(words, names); });
  }
  if (!heads.is_none()) o.heads = integer(heads, "heads");
  if (!queries.is_none()) o.queries = one_axis_positions(queries, "queries");
  if (!keys.is_none()) o.keys = one_axis_positions(keys, "keys");
  request.budget = budget(contract, max_abs);
  return {without_gil([&] { return check::check_alibi(request, names); })};
}

[[noreturn]] void raise_assertion(const Report& r) {
  PyErr_SetString(PyExc_AssertionError, r.r.text.c_str());
  throw py::error_already_set();
}

const char* kCheckRopeDoc =
    R"(Check a RoPE output against the exact reference, as `pe-suite check --family rope`.

x, y: the input and the output of the rotation, [tokens, heads, head_dim] or [tokens, head_dim]
(heads_first=True: [heads, tokens, head_dim]); numpy arrays (float16/32/64, bfloat16 as uint16 bits with
dtype="bfloat16") or PyTorch CPU tensors. positions: one integer per token ([n_axes, tokens] for M-RoPE), or
real ones in a float array (a video grid's fractional coordinates, exact as given; docs/contracts.md §2a).
base, layout ("halfsplit", HF's rotate_half, by default; "interleaved"; "deinterleave"), rotary_dim,
rotary_offset; xpos_scale_base, xpos_centre, xpos_keys: xPos's gain after the rotation (flash-attention's
RotaryEmbedding(scale_base), rotary-embedding-torch's use_xpos; the centre by default (largest position + 1)
// 2, xpos_keys=True for k); scaling: HF's rope_scaling dict; hf_config: a config.json path or dict (layer / layer_type:
which layer's RoPE). Budget: check's default (every formulation of the data's precision class passes:
float32/float64; bfloat16/float16 with 16-bit caches and HF's 16-bit arithmetic), contract="rope.exact" or
max_abs=1e-6. against: a second implementation's output of the same x. threads: for the pass over the data
(0, the default: one per 2^18 elements, at most every hardware thread; the report is the same for any count
but the bands' p99s). exact_p99: every band's p99 over all its elements (by default a band of 2^21 elements and
more takes it over 1 token in 8; a band's "p99_samples" says how many).
Returns a Report: .passed, .bands, .worst, .diagnosis (what the data fits), .explanations, .candidates,
str() the report's text, .to_dict() its JSON.)";

const char* kCheckAlibiDoc =
    R"(Check ALiBi slopes [heads] or a bias [heads, queries, keys] against the exact reference, as
`pe-suite check --family alibi`. max_bias (8), alibi_slopes ("interpolated": the paper, HF, ggml, vLLM;
"direct"), alibi_form ("causal" -m(i-j), "symmetric" -m|i-j|, "bloom" m·j); queries, keys: their positions
(default: keys 0..K-1, queries the last Q of them); heads: checked against the data's. Budget as check_rope's.
Returns a Report.)";

// The Report class: the verdict, the text and the JSON's parts as properties.
void add_report_class(py::module_& m) {
  py::class_<Report>(m, "Report", "A check's verdict: the text and JSON `pe-suite check` shows")
      .def_property_readonly("passed", &Report::passed)
      .def_property_readonly(
          "verdict", [](const Report& r) { return r.get("verdict"); },
          "'PASS', 'FAIL' (an element over budget) or 'UNDECIDABLE' (none over budget, but a position band "
          "whose "
          "every budget reaches the largest error any output could have: nothing there could fail)")
      .def_property_readonly(
          "undecidable", [](const Report& r) { return r.get("undecidable"); },
          "How many elements could not be judged (their budget reaches any output's error)")
      .def_property_readonly("text", [](const Report& r) { return r.r.text; })
      .def("to_dict", &Report::to_dict, "The report as JSON (schema pe-suite/check/2), a dict")
      .def_property_readonly(
          "bands", [](const Report& r) { return r.get("bands"); },
          "Per position band: samples, max/p99 |error|, max/p99 ULP, verdict, worst element")
      .def_property_readonly(
          "worst", [](const Report& r) { return r.get("worst"); }, "The worst elements")
      .def_property_readonly("diagnosis", &Report::fits,
                             "What a failing output fits, as the text's 'the data fits:' lines say it (a "
                             "convention, the positions or the frequencies read back); [] when it passes or "
                             "nothing fits")
      .def_property_readonly(
          "explanations", [](const Report& r) { return r.list("explanations"); },
          "The fits with what supports each: [{'fits': ..., 'support': ...}]")
      .def_property_readonly(
          "candidates", [](const Report& r) { return r.list("diagnosis"); },
          "The known conventions tried, best first, each with its residual (runners-up included); [] when "
          "it passes")
      .def_property_readonly("max_abs", [](const Report& r) { return r.get("max_abs"); })
      .def_property_readonly(
          "parameters", [](const Report& r) { return r.get("parameters"); },
          "What was checked: head_dim, rotary_dim, base, layout, scaling, form, tokens, heads, and the "
          "plan's attention_factor and inv_freq")
      .def("__bool__", [](const Report& r) { return r.passed(); })
      .def("__str__", [](const Report& r) { return r.r.text; })
      .def("__repr__", [](const Report& r) {
        return fmt::format("<pe_suite.Report {}>", r.json().value("verdict", r.passed() ? "PASS" : "FAIL"));
      });
}

// check_rope's keywords as the module's signature takes them.
Report rope_check(py::handle x, py::handle y, py::handle positions, py::object base, py::object layout,
                  py::object rotary_dim, py::object rotary_offset, py::object scaling, py::object hf_config,
                  py::object layer, py::object layer_type, py::object mrope_section, py::object mrope_layout,
                  py::object vision, py::object axes_dim, py::object xpos_scale_base, py::object xpos_centre,
                  py::object xpos_keys, bool heads_first, py::handle dtype, py::handle contract,
                  py::handle max_abs, py::handle against, std::size_t threads, bool exact_p99) {
  const RopeKeywords k{base,        layout,          rotary_dim,    rotary_offset, scaling, hf_config,
                       layer,       layer_type,      mrope_section, mrope_layout,  vision,  axes_dim,
                       heads_first, xpos_scale_base, xpos_centre,   xpos_keys};
  return check_rope(x, y, positions, k, dtype, contract, max_abs, against, threads, exact_p99);
}

// verify_rope's check of a call: check_rope's verdict alone (RopeRequest::quiet), its report read only
// where it passes (verify_rope checks a call that does not pass again with check_rope, for the report).
Report rope_verdict(py::handle x, py::handle y, py::handle positions, py::object hf_config, py::object layout,
                    py::handle contract, py::object xpos_scale_base, py::object xpos_centre,
                    py::object xpos_keys) {
  const py::object none = py::none();
  RopeKeywords k{
      none, std::move(layout), none, none, none, std::move(hf_config), none, none, none, none, none, none,
      false};
  k.xpos_scale_base = std::move(xpos_scale_base);
  k.xpos_centre = std::move(xpos_centre);
  k.xpos_keys = std::move(xpos_keys);
  return check_rope(x, y, positions, k, none, contract, none, none, 0, false, true);
}

// A check function and its assert_ form (AssertionError whose message is the report), under `arguments`.
template <class... A, class... Arguments>
void add_check(py::module_& m, const char* name, Report (*check)(A...), const char* doc,
               const char* assert_name, const char* assert_doc, const std::tuple<Arguments...>& arguments) {
  std::apply(
      [&](auto&&... a) {
        m.def(name, check, doc, a...);
        m.def(
            assert_name,
            [check](A... values) {
              const Report r = check(values...);
              if (!r.passed()) raise_assertion(r);
            },
            assert_doc, a...);
      },
      arguments);
}

// check_rope, check_sinusoidal and check_alibi with their assert_ forms.
void add_family_functions(py::module_& m) {
  add_check(m, "check_rope", rope_check, kCheckRopeDoc, "assert_rope_close",
            "check_rope, raising AssertionError whose message is the report (bands, worst elements, "
            "diagnosis)",
            std::tuple{py::arg("x"),
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
                       py::arg("axes_dim") = py::none(),
                       py::arg("xpos_scale_base") = py::none(),
                       py::arg("xpos_centre") = py::none(),
                       py::arg("xpos_keys") = py::none(),
                       py::arg("heads_first") = false,
                       py::arg("dtype") = py::none(),
                       py::arg("contract") = py::none(),
                       py::arg("max_abs") = py::none(),
                       py::arg("against") = py::none(),
                       py::arg("threads") = 0,
                       py::arg("exact_p99") = false});
  m.def("_rope_verdict", rope_verdict, "check_rope's verdict alone (verify_rope's): no text or bands",
        py::arg("x"), py::arg("y"), py::arg("positions"), py::kw_only(), py::arg("hf_config"),
        py::arg("layout"), py::arg("contract") = py::none(), py::arg("xpos_scale_base") = py::none(),
        py::arg("xpos_centre") = py::none(), py::arg("xpos_keys") = py::none());
  add_check(
      m, "check_sinusoidal", check_sinusoidal,
      "Check a sinusoidal table [positions, dim] against the exact reference (pe-suite check --family "
      "sinusoidal); layout \"interleaved\" (the paper's) by default, \"concatenated\" with a grid. "
      "positions: integers, or a float array of real positions (diffusion timesteps); None with grid. "
      "The switches under diffusers' names (base is max_period); hf_config: a diffusers config.json "
      "(flip_sin_to_cos, freq_shift, a patch or video grid). exact_p99: every band's p99 over all its "
      "elements (by default a table's band of 2^21 elements and more takes it over 1 row in 8). Returns "
      "a Report.",
      "assert_sinusoidal_close", "check_sinusoidal, raising AssertionError whose message is the report",
      std::tuple{py::arg("table"),
                 py::arg("positions") = py::none(),
                 py::kw_only(),
                 py::arg("base") = py::none(),
                 py::arg("layout") = py::none(),
                 py::arg("flip_sin_to_cos") = py::none(),
                 py::arg("downscale_freq_shift") = py::none(),
                 py::arg("scale") = py::none(),
                 py::arg("padding_idx") = py::none(),
                 py::arg("grid") = py::none(),
                 py::arg("base_size") = py::none(),
                 py::arg("interpolation_scale") = py::none(),
                 py::arg("temporal_interpolation_scale") = py::none(),
                 py::arg("extra_tokens") = py::none(),
                 py::arg("hf_config") = py::none(),
                 py::arg("dtype") = py::none(),
                 py::arg("contract") = py::none(),
                 py::arg("max_abs") = py::none(),
                 py::arg("against") = py::none(),
                 py::arg("exact_p99") = false});
  add_check(m, "check_alibi", check_alibi, kCheckAlibiDoc, "assert_alibi_close",
            "check_alibi, raising AssertionError whose message is the report",
            std::tuple{py::arg("table"), py::kw_only(), py::arg("max_bias") = py::none(),
                       py::arg("alibi_slopes") = py::none(), py::arg("alibi_form") = py::none(),
                       py::arg("queries") = py::none(), py::arg("keys") = py::none(),
                       py::arg("heads") = py::none(), py::arg("dtype") = py::none(),
                       py::arg("contract") = py::none(), py::arg("max_abs") = py::none()});
}

}  // namespace

void add_check_functions(py::module_& m) {
  add_report_class(m);
  add_family_functions(m);
  add_output_checks(m);
}

}  // namespace pe::python

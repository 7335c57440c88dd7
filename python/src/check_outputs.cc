// The checks of what engines write besides a rotated tensor (issue 51): FP8 codes (pe/check/fp8.h), attention
// scores with the encoding inside (pe/check/scores.h) and T5's buckets (pe/check/t5.h), each the engine's
// check behind a thin Python function (fp8.py, scores.py, t5.py).
#include <fmt/format.h>
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "keywords.h"
#include "pe/check/fp8.h"
#include "pe/check/scores.h"
#include "pe/check/t5.h"
#include "report.h"

namespace pe::python {
namespace {

// check_rope_fp8's engine (pe/check/fp8.h): x as check_rope reads it, the codes uint8 in x's shape (fp8.py
// gives them from a float8 tensor's bits or a uint8 array), the scale one value or one per head.
Report rope_fp8_check(py::handle x, const py::array_t<std::uint8_t, py::array::c_style>& codes,
                      py::handle positions, std::vector<double> scale, const std::string& fmt,
                      py::handle rotation_dtype, py::object base, py::object layout, py::object rotary_dim,
                      py::object rotary_offset, py::object scaling, py::object hf_config, py::object layer,
                      py::object layer_type, py::object mrope_section, py::object mrope_layout,
                      py::object vision, py::object axes_dim) {
  const auto format = check::parse_fp8_format(fmt);
  if (!format) throw py::value_error(fmt::format("fmt: expected 'e4m3fn' or 'e5m2', got '{}'", fmt));
  const check::NpyArray xa = read_floats(x, "x", std::nullopt, true, true);
  if (xa.shape.empty())
    throw py::value_error("x: expected [tokens, heads, head_dim] or [tokens, head_dim], got a scalar");
  const RopeKeywords k{base,       layout,        rotary_dim,   rotary_offset, scaling,  hf_config, layer,
                       layer_type, mrope_section, mrope_layout, vision,        axes_dim, false};
  RopeSetup setup = rope_setup(k, xa.shape.back());
  check::Fp8RopeRequest r;
  r.rope.x = view_of(xa, "x");
  r.rope.positions = rope_positions_of(positions);
  r.rope.spec = std::move(setup.spec);
  r.rope.hf = std::move(setup.hf);
  r.codes = {codes.data(), static_cast<std::size_t>(codes.size())};
  for (py::ssize_t i = 0; i < codes.ndim(); ++i)
    r.codes_shape.push_back(static_cast<std::size_t>(codes.shape(i)));
  r.codes_name = "y";
  r.scale = std::move(scale);
  r.format = *format;
  if (const auto t = dtype_argument(rotation_dtype, "rotation_dtype")) {
    if (*t == DType::F64)
      throw py::value_error("rotation_dtype: expected float32, bfloat16 or float16, got float64");
    r.rotation = *t;
  }
  return without_gil([&] { return check::check_rope_fp8(r, setup.names); });
}

// check_scores's engine (pe/check/scores.h); scores.py's check_scores reads torch tensors and calls it.
Report scores_check(py::handle scores, py::handle q, py::handle k, py::handle queries, py::handle keys,
                    py::handle scale, const std::string& encoding, py::handle max_bias,
                    py::handle alibi_slopes, py::handle alibi_form, bool scale_bias, py::handle dtype,
                    py::object base, py::object layout, py::object rotary_dim, py::object rotary_offset,
                    py::object scaling, py::object hf_config, py::object layer, py::object layer_type) {
  const auto declared = dtype_argument(dtype, "dtype");
  const check::NpyArray sa = read_floats(scores, "scores", declared, true, true),
                        qa = read_floats(q, "q", declared, true, true),
                        ka = read_floats(k, "k", declared, true, true);
  check::ScoresRequest r;
  r.scores = view_of(sa, "scores");
  r.q = view_of(qa, "q");
  r.k = view_of(ka, "k");
  const check::Names names = python_names();
  const auto e = check::parse_score_encoding(encoding);
  if (!e)
    throw py::value_error(fmt::format("encoding: expected 'rope', 'alibi' or 'none'; got '{}'", encoding));
  r.encoding = *e;
  if (!queries.is_none()) r.query_positions = one_axis_positions(queries, "queries");
  if (!keys.is_none()) r.key_positions = one_axis_positions(keys, "keys");
  if (!scale.is_none()) r.scale = number(scale, "scale");
  if (!max_bias.is_none()) r.alibi.max_bias = number(max_bias, "max_bias");
  if (!alibi_slopes.is_none()) r.alibi.slopes = check::parse_slopes(text(alibi_slopes), names);
  if (!alibi_form.is_none()) r.alibi.form = check::parse_alibi_form(text(alibi_form), names);
  r.scale_bias = scale_bias;
  if (*e == check::ScoreEncoding::Rope) {
    const RopeKeywords kw{base,       layout,     rotary_dim, rotary_offset, scaling,    hf_config, layer,
                          layer_type, py::none(), py::none(), py::none(),    py::none(), false};
    RopeSetup setup = rope_setup(kw, qa.shape.empty() ? 0 : qa.shape.back());
    r.rope = std::move(setup.spec);
    r.hf = std::move(setup.hf);
    return without_gil([&] { return check::check_scores(r, setup.names); });
  }
  for (const auto& [given, name] :
       {std::pair{&base, "base"}, std::pair{&layout, "layout"}, std::pair{&rotary_dim, "rotary_dim"},
        std::pair{&scaling, "scaling"}, std::pair{&hf_config, "hf_config"}})
    if (!given->is_none()) throw py::value_error(fmt::format("{}: applies to encoding='rope'", name));
  return without_gil([&] { return check::check_scores(r, names); });
}

// T5's exact buckets of each offset and float32's other bucket (-1 where none): t5.py's t5_buckets.
py::tuple t5_buckets(py::handle relative, bool bidirectional, std::int64_t num_buckets,
                     std::int64_t max_distance) {
  const check::NpyArray n = read_integers(relative, "relative_position");
  std::vector<std::int64_t> values(n.values.size());
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<std::int64_t>(n.values[i]);
  const auto [b, alt] = without_gil([&] {
    return check::t5_buckets_of({bidirectional, num_buckets, max_distance}, values, python_names());
  });
  const auto array = [&n](const std::vector<std::int64_t>& v) {
    py::array_t<std::int64_t> out(std::vector<py::ssize_t>(n.shape.begin(), n.shape.end()));
    std::copy(v.begin(), v.end(), out.mutable_data());
    return out;
  };
  return py::make_tuple(array(b), array(alt));
}

// check_t5's engine (pe/check/t5.h): integer data are bucket indices, floating data a bias gathered from
// `table`.
Report t5_check(py::handle data, py::handle queries, py::handle keys, bool bidirectional,
                std::int64_t num_buckets, std::int64_t max_distance, py::handle table, bool integers) {
  const check::NpyArray da =
      integers ? read_integers(data, "data") : read_floats(data, "data", std::nullopt, true, true);
  check::NpyArray ta;
  check::T5Request r;
  r.data = view_of(da, "data");
  if (!table.is_none()) {
    ta = read_floats(table, "table", std::nullopt, true, true);
    r.table = view_of(ta, "table");
  }
  r.queries = one_axis_positions(queries, "queries");
  r.keys = one_axis_positions(keys, "keys");
  r.buckets = {bidirectional, num_buckets, max_distance};
  return without_gil([&] { return check::check_t5(r, python_names()); });
}

}  // namespace

void add_output_checks(py::module_& m) {
  m.def("_t5_buckets", t5_buckets,
        "T5's exact buckets and float32's other ones (pe_suite.t5.buckets calls it)",
        py::arg("relative_position"), py::arg("bidirectional"), py::arg("num_buckets"),
        py::arg("max_distance"));
  m.def("_check_t5", t5_check, "check_t5's engine (pe_suite.t5.check_t5 calls it)", py::arg("data"),
        py::arg("queries"), py::arg("keys"), py::kw_only(), py::arg("bidirectional"), py::arg("num_buckets"),
        py::arg("max_distance"), py::arg("table"), py::arg("integers"));
  m.def("_check_rope_fp8", rope_fp8_check, "check_rope_fp8's engine (pe_suite.fp8.check_rope_fp8 calls it)",
        py::arg("x"), py::arg("codes"), py::arg("positions"), py::kw_only(), py::arg("scale"), py::arg("fmt"),
        py::arg("rotation_dtype") = py::none(), py::arg("base") = py::none(), py::arg("layout") = py::none(),
        py::arg("rotary_dim") = py::none(), py::arg("rotary_offset") = py::none(),
        py::arg("scaling") = py::none(), py::arg("hf_config") = py::none(), py::arg("layer") = py::none(),
        py::arg("layer_type") = py::none(), py::arg("mrope_section") = py::none(),
        py::arg("mrope_layout") = py::none(), py::arg("vision") = py::none(),
        py::arg("axes_dim") = py::none());
  m.def("_check_scores", scores_check, "check_scores's engine (pe_suite.scores.check_scores calls it)",
        py::arg("scores"), py::arg("q"), py::arg("k"), py::kw_only(), py::arg("queries") = py::none(),
        py::arg("keys") = py::none(), py::arg("scale") = py::none(), py::arg("encoding") = "alibi",
        py::arg("max_bias") = py::none(), py::arg("alibi_slopes") = py::none(),
        py::arg("alibi_form") = py::none(), py::arg("scale_bias") = false, py::arg("dtype") = py::none(),
        py::arg("base") = py::none(), py::arg("layout") = py::none(), py::arg("rotary_dim") = py::none(),
        py::arg("rotary_offset") = py::none(), py::arg("scaling") = py::none(),
        py::arg("hf_config") = py::none(), py::arg("layer") = py::none(), py::arg("layer_type") = py::none());
}

}  // namespace pe::python

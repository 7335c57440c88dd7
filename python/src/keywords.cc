#include "keywords.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "arrays.h"
#include "pe/plan.h"
#include "pe/rope_scaling.h"

namespace pe::python {
namespace {

// `v` as nlohmann::json::parse(json.dumps(v)) reads it, where v holds only what that reads back unchanged
// without the text: dicts with str keys, lists, tuples, str, bool, None, int within 64 bits (parse's
// unsigned type for >= 0) and finite floats (a float's repr is its shortest round-trip digits, which parse's
// strtod reads back as the float). False for anything else (json_of then writes the text, which refuses
// NaN or names what is not JSON).
bool plain_json(py::handle v, nlohmann::json& out, int depth = 0) {
  PyObject* o = v.ptr();
  if (depth > 64) return false;
  if (o == Py_None) {
    out = nullptr;
  } else if (PyBool_Check(o)) {
    out = o == Py_True;
  } else if (PyLong_CheckExact(o)) {
    int overflow = 0;
    const long long i = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow != 0 || (i == -1 && PyErr_Occurred() != nullptr)) return PyErr_Clear(), false;
    if (i >= 0) {
      out = static_cast<std::uint64_t>(i);
    } else {
      out = static_cast<std::int64_t>(i);
    }
  } else if (PyFloat_CheckExact(o)) {
    const double d = PyFloat_AS_DOUBLE(o);
    if (!std::isfinite(d)) return false;
    out = d;
  } else if (PyUnicode_CheckExact(o)) {
    Py_ssize_t size = 0;
    const char* utf8 = PyUnicode_AsUTF8AndSize(o, &size);
    if (utf8 == nullptr) return PyErr_Clear(), false;  // a lone surrogate: json.dumps escapes it
    out = std::string(utf8, static_cast<std::size_t>(size));
  } else if (PyList_CheckExact(o) || PyTuple_CheckExact(o)) {
    out = nlohmann::json::array();
    for (const py::handle e : v)
      if (!plain_json(e, out.emplace_back(), depth + 1)) return false;
  } else if (PyDict_CheckExact(o)) {
    out = nlohmann::json::object();
    for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(v)) {
      if (!PyUnicode_CheckExact(key.ptr())) return false;
      Py_ssize_t size = 0;
      const char* utf8 = PyUnicode_AsUTF8AndSize(key.ptr(), &size);
      if (utf8 == nullptr) return PyErr_Clear(), false;
      // A later duplicate (none: a dict's str keys differ) would replace the earlier, as parse's does.
      if (!plain_json(value, out[std::string(utf8, static_cast<std::size_t>(size))], depth + 1)) return false;
    }
  } else {
    return false;
  }
  return true;
}

// A dict as JSON: numpy and torch scalars as their Python numbers; NaN and infinities refused (JSON has
// none), naming `name`.
nlohmann::json json_of(py::handle dict, const std::string& name) {
  if (nlohmann::json plain; plain_json(dict, plain)) return plain;  // no text between (a drawn config)
  const py::module_ json = py::module_::import("json");
  const py::cpp_function item([](py::handle o) -> py::object {
    if (py::hasattr(o, "item")) return o.attr("item")();
    if (py::hasattr(o, "tolist")) return o.attr("tolist")();
    throw py::type_error("cannot be written as JSON: " + text(py::type::of(o)));
  });
  std::string dumped;
  try {
    dumped =
        json.attr("dumps")(dict, py::arg("default") = item, py::arg("allow_nan") = false).cast<std::string>();
  } catch (py::error_already_set& e) {
    throw py::value_error(
        fmt::format("{}: {}", name, e.value().is_none() ? std::string("not JSON") : text(e.value())));
  }
  return nlohmann::json::parse(dumped);
}

}  // namespace

std::string text(py::handle value) { return py::str(value).cast<std::string>(); }

double number(py::handle value, const std::string& name) {
  if (py::isinstance<py::bool_>(value))
    throw py::type_error(fmt::format("{}: expected a number, got a bool", name));
  if (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value) || py::hasattr(value, "__float__"))
    return value.cast<double>();
  throw py::type_error(fmt::format("{}: expected a number, got {}", name, text(py::type::of(value))));
}

std::int64_t integer(py::handle value, const std::string& name) {
  if (py::isinstance<py::bool_>(value))
    throw py::type_error(fmt::format("{}: expected an integer, got a bool", name));
  if (py::isinstance<py::int_>(value) || py::hasattr(value, "__index__")) {
    try {
      return py::int_(py::reinterpret_borrow<py::object>(value)).cast<std::int64_t>();
    } catch (const py::cast_error&) {
      throw py::value_error(fmt::format("{}: {} is out of range", name, text(value)));
    }
  }
  if (py::hasattr(value, "__float__")) {
    const double v = value.cast<double>();
    if (v == static_cast<double>(static_cast<std::int64_t>(v))) return static_cast<std::int64_t>(v);
    throw py::value_error(fmt::format("{}: expected an integer, got {}", name, text(value)));
  }
  throw py::type_error(fmt::format("{}: expected an integer, got {}", name, text(py::type::of(value))));
}

namespace {

// A hypothesis as the keywords that state it: the scaling as HF's rope_scaling dict, the rest as keywords;
// a parameter no keyword takes is named after them.
check::Restated as_keywords(const std::vector<check::SpecEntry>& entries) {
  const auto python = [](const nlohmann::json& v) {
    if (v.is_number_float()) return fmt::format("{:.17g}", v.get<double>());
    if (v.is_string()) return fmt::format("'{}'", v.get<std::string>());
    if (v.is_boolean()) return std::string(v.get<bool>() ? "True" : "False");
    return v.dump();
  };
  std::string keywords, scaling, none;
  for (const check::SpecEntry& e : entries) {
    const auto field = std::find_if(scaling_fields().begin(), scaling_fields().end(),
                                    [&](const ScalingField& f) { return f.name == e.name; });
    const std::string_view key = e.name == "scaling"               ? std::string_view("rope_type")
                                 : field != scaling_fields().end() ? field->hf_key
                                                                   : std::string_view();
    if (!key.empty()) {
      scaling += fmt::format("{}'{}': {}", scaling.empty() ? "" : ", ", key, python(e.value));
    } else if (field != scaling_fields().end()) {
      none += fmt::format("{}{} {}", none.empty() ? "" : ", ", e.name, python(e.value));
    } else {
      keywords += fmt::format("{}{}={}", keywords.empty() ? "" : ", ", e.name, python(e.value));
    }
  }
  if (!scaling.empty()) keywords += fmt::format("{}scaling={{{}}}", keywords.empty() ? "" : ", ", scaling);
  if (!none.empty()) keywords += fmt::format(" (no keyword states {})", none);
  return {"as keywords", "keywords", keywords};
}

}  // namespace

check::Names python_names(const std::string& config_word, const std::string& dim_word) {
  return check::Names(
      [config_word, dim_word](std::string_view canonical) -> std::string {
        for (const ScalingField& f : scaling_fields()) {
          if (f.name == canonical && !f.hf_key.empty()) return fmt::format("scaling['{}']", f.hf_key);
        }
        if (canonical == "scaling") return "scaling['rope_type']";
        if (canonical == "hf_config") return config_word;
        if (canonical == "dim") return dim_word;
        if (canonical == "positions_file") return "positions";
        for (std::string_view k : {"x",
                                   "y",
                                   "table",
                                   "against",
                                   "positions",
                                   "rotary_dim",
                                   "rotary_offset",
                                   "base",
                                   "layout",
                                   "dtype",
                                   "contract",
                                   "max_abs",
                                   "layer",
                                   "layer_type",
                                   "mrope_section",
                                   "mrope_layout",
                                   "vision",
                                   "axes_dim",
                                   "xpos_scale_base",
                                   "xpos_centre",
                                   "xpos_keys",
                                   "heads_first",
                                   "heads",
                                   "max_bias",
                                   "alibi_slopes",
                                   "alibi_form",
                                   "queries",
                                   "keys",
                                   "flip_sin_to_cos",
                                   "downscale_freq_shift",
                                   "scale",
                                   "padding_idx",
                                   "grid",
                                   "base_size",
                                   "interpolation_scale",
                                   "temporal_interpolation_scale",
                                   "extra_tokens"}) {
          if (k == canonical) return std::string(k);
        }
        return "";  // the core's own name, and its own "invalid ..." error
      },
      as_keywords);
}

check::HfSource hf_source_of(py::handle hf_config, const check::Names& names) {
  check::HfSource hf;
  if (py::isinstance<py::dict>(hf_config)) {
    hf.config = json_of(hf_config, "hf_config");
    hf.file = hf.label = hf.source = "hf_config";
    return hf;
  }
  if (!py::isinstance<py::str>(hf_config) && !py::hasattr(hf_config, "__fspath__"))
    throw py::type_error(
        fmt::format("hf_config: expected a config.json path or dict, got {}", text(py::type::of(hf_config))));
  const std::string path = py::module_::import("os").attr("fspath")(hf_config).cast<std::string>();
  hf.config = check::read_hf_config(path, names);
  hf.file = path;
  hf.label = hf.source = "hf_config " + path;
  return hf;
}

namespace {
// A keyword's list of integers; TypeError naming it (with what it lists) for a string or a non-iterable.
std::vector<std::int64_t> integer_list(py::handle v, const char* name, const char* what) {
  if (!py::isinstance<py::iterable>(v) || py::isinstance<py::str>(v))
    throw py::type_error(fmt::format("{}: expected a list of {}, got {}", name, what, text(v)));
  std::vector<std::int64_t> out;
  for (py::handle e : v) out.push_back(integer(e, name));
  return out;
}
}  // namespace

RopeSetup rope_setup(const RopeKeywords& k, std::size_t head_dim) {
  if (!k.scaling.is_none() && !k.hf_config.is_none())
    throw py::value_error("scaling and hf_config: give one (a config's own rope_scaling is read from it)");
  RopeSetup s{{}, {}, python_names(k.scaling.is_none() ? "hf_config" : "scaling")};
  check::RopeSpec& o = s.spec;
  if (!k.scaling.is_none()) {
    if (!py::isinstance<py::dict>(k.scaling))
      throw py::type_error(
          fmt::format("scaling: expected HF's rope_scaling dict, got {}", text(py::type::of(k.scaling))));
    // HF's rope_scaling as the config it comes from: the resolver reads it as HF does.
    s.hf.config = {{"rope_scaling", json_of(k.scaling, "scaling")},
                   {"head_dim", head_dim},
                   {"rope_theta", k.base.is_none() ? 10000.0 : number(k.base, "base")}};
    s.hf.file = s.hf.label = s.hf.source = "scaling";
  } else if (!k.hf_config.is_none()) {
    s.hf = hf_source_of(k.hf_config, s.names);
  }
  const bool configured = !s.hf.config.is_null();
  if (!k.layer.is_none()) s.hf.layer = integer(k.layer, "layer");
  if (!k.layer_type.is_none()) s.hf.layer_type = text(k.layer_type);
  // The scaling dict's config carries the base as its rope_theta: a config's value, not an override.
  if (!k.base.is_none() && k.scaling.is_none()) o.base = number(k.base, "base");
  const check::Names& names = s.names;
  if (!k.layout.is_none()) {
    const std::string layout = text(k.layout);
    o.layout = without_gil([&] { return check::parse_layout(layout, Family::Rope, names); });
  } else if (!configured) {
    o.layout = Layout::HalfSplit;  // HF's rotate_half: the module's default
  }
  if (!k.rotary_dim.is_none()) o.rotary_dim = integer(k.rotary_dim, "rotary_dim");
  if (!k.rotary_offset.is_none()) o.form.rotary_offset = integer(k.rotary_offset, "rotary_offset");
  if (!k.mrope_section.is_none())
    o.form.mrope_section = integer_list(k.mrope_section, "mrope_section", "pair counts (16, 24, 24)");
  if (!k.axes_dim.is_none())
    o.form.axes_dim = integer_list(k.axes_dim, "axes_dim", "channels per axis (16, 56, 56)");
  if (!k.xpos_scale_base.is_none()) o.xpos.scale_base = number(k.xpos_scale_base, "xpos_scale_base");
  if (!k.xpos_centre.is_none()) o.xpos.centre = integer(k.xpos_centre, "xpos_centre");
  if (!k.xpos_keys.is_none()) {
    if (!py::isinstance<py::bool_>(k.xpos_keys))
      throw py::type_error(
          fmt::format("xpos_keys: expected True (k) or False (q), got {}", text(py::type::of(k.xpos_keys))));
    o.xpos.keys = k.xpos_keys.cast<bool>();
  }
  if (!k.mrope_layout.is_none()) {
    const std::string layout = text(k.mrope_layout);
    o.form.mrope_layout = without_gil([&] { return check::parse_mrope_layout(layout, names); });
  }
  if (!k.vision.is_none()) {
    const std::string vision = text(k.vision);
    o.form.vision = without_gil([&] { return check::parse_vision(vision, names); });
  }
  return s;
}

check::BudgetOptions budget(py::handle contract, py::handle max_abs) {
  check::BudgetOptions b;
  if (!contract.is_none()) b.contract = text(contract);
  if (!max_abs.is_none()) b.max_abs = number(max_abs, "max_abs");
  return b;
}

check::Positions rope_positions_of(py::handle positions) {
  std::string not_integers;
  try {
    return positions_of(positions);
  } catch (const py::type_error& e) {  // a float array: integer-valued ones keep the integer path
    not_integers = e.what();
  }
  check::NpyArray a;
  try {
    a = read_floats(positions, "positions", std::nullopt, false);
  } catch (const py::type_error&) {
    throw py::type_error(not_integers + " (or a float array of real positions)");
  }
  check::Positions p;
  p.shape = a.shape;
  if (std::all_of(a.values.begin(), a.values.end(), [](double v) {
        return v >= 0 && v <= static_cast<double>(kMaxPosition) && v == std::floor(v);
      })) {
    for (double v : a.values) p.values.push_back(static_cast<std::int64_t>(v));
    if (!p.values.empty()) return p;
  }
  p.values.clear();
  p.real = std::move(a.values);
  return p;
}

check::Positions positions_of(py::handle positions) {
  const check::NpyArray a = read_integers(positions, "positions");
  check::Positions p;
  p.values.reserve(a.values.size());
  for (double v : a.values) p.values.push_back(static_cast<std::int64_t>(v));
  p.shape = a.shape;
  return p;
}

}  // namespace pe::python

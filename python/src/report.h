// The Report class Python's checks return (pe_suite.Report): the engine's report with its JSON's parts as
// Python objects, shared by the family checks (check.cc) and the checks of what engines write
// (check_outputs.cc).
#pragma once

#include <pybind11/pybind11.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "arrays.h"
#include "keywords.h"
#include "pe/check/check.h"
#include "pe/harness/enum_json.h"

namespace pe::python {

namespace py = pybind11;

struct Report {
  Report(check::Report report) : r(std::move(report)) {}  // NOLINT: implicit, as the checks return it

  check::Report r;
  // r.json(), built on the first read of a part that needs it: r does not change once wrapped.
  mutable std::optional<nlohmann::json> document;

  const nlohmann::json& json() const {
    if (!document) document = r.json();
    return *document;
  }
  bool passed() const { return r.passed; }
  // j as json.loads(j.dump()) gives it, without the text: a double's shortest round-trip digits read back
  // are the double, an integer is Python's int, an object keeps its keys' order (dump's, sorted).
  static py::object python_of(const nlohmann::json& j) {
    switch (j.type()) {
      case nlohmann::json::value_t::null:
      case nlohmann::json::value_t::discarded:
        return py::none();
      case nlohmann::json::value_t::boolean:
        return py::bool_(j.get<bool>());
      case nlohmann::json::value_t::number_integer:
        return py::int_(j.get<std::int64_t>());
      case nlohmann::json::value_t::number_unsigned:
        return py::int_(j.get<std::uint64_t>());
      case nlohmann::json::value_t::number_float:
        return float_of(j.get<double>());
      case nlohmann::json::value_t::string:
        return py::str(j.get_ref<const std::string&>());
      case nlohmann::json::value_t::array: {
        py::list out(j.size());
        for (std::size_t i = 0; i < j.size(); ++i) out[i] = python_of(j[i]);
        return out;
      }
      case nlohmann::json::value_t::object: {
        py::dict out;
        for (const auto& [key, value] : j.items()) out[py::str(key)] = python_of(value);
        return out;
      }
      case nlohmann::json::value_t::binary:
        break;
    }
    return py::module_::import("json").attr("loads")(j.dump());
  }
  // dump() writes a NaN or an infinity as null (JSON has none), which json.loads reads as None.
  static py::object float_of(double v) { return std::isfinite(v) ? py::object(py::float_(v)) : py::none(); }
  py::object to_dict() const { return python_of(json()); }
  py::object get(const char* key) const {
    // The fields verify_rope reads of every case's report, from the document's own fields: the whole JSON
    // (bands, worst elements, contracts, the config's resolution) is written only when something else is
    // read.
    const std::string_view k = key;
    if (k == "parameters") return python_of(r.doc.parameters);
    if (k == "undecidable") return py::int_(r.doc.undecidable);
    if (k == "verdict") return python_of(nlohmann::json(r.doc.verdict));
    const nlohmann::json& j = json();
    return j.contains(key) ? python_of(j[key]) : py::object(py::none());
  }
  // A list the JSON holds under `key`, or an empty one (a pass, or nothing to say).
  py::list list(const char* key) const {
    const py::object v = get(key);
    return v.is_none() ? py::list() : py::list(v);
  }
  // What the text prints after "the data fits:", in order.
  py::list fits() const {
    py::list out;
    for (const check::Finding& f : r.doc.explanations.value_or(std::vector<check::Finding>{}))
      out.append(f.fits);
    return out;
  }
};

// An array as the engine reads it (in place where read_floats kept it so); `data` keeps the values alive.
inline check::DataView view_of(const check::NpyArray& data, const std::string& name) {
  return {data.values, data.shape, data.dtype, name, data.typed};
}

// A 1-D list of positions (queries, keys), or none.
inline std::vector<std::int64_t> one_axis_positions(py::handle v, const char* name) {
  if (v.is_none()) return {};
  check::Positions p = positions_of(v);
  if (p.shape.size() > 1) throw py::value_error(std::string(name) + ": expected a 1-D list of positions");
  return p.values;
}

}  // namespace pe::python

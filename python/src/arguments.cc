#include "arguments.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "common.h"
#include "npy.h"
#include "pe/errors.h"
#include "pe/rope_scaling.h"
#include "scaling_options.h"

namespace pe::python {
namespace {

// `message` with each flag or file name replaced by its parameter (longest first, whole words only).
std::string python_words(std::string message, std::vector<std::pair<std::string, std::string>> names) {
  std::sort(names.begin(), names.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  std::string out;
  for (std::size_t i = 0; i < message.size();) {
    bool replaced = false;
    const bool word_start = i == 0 || !(std::isalnum(static_cast<unsigned char>(message[i - 1])) ||
                                        message[i - 1] == '-' || message[i - 1] == '_');
    for (const auto& [from, to] : names) {
      if (!word_start || message.compare(i, from.size(), from) != 0) continue;
      const std::size_t end = i + from.size();
      const bool word_end =
          end == message.size() || !(std::isalnum(static_cast<unsigned char>(message[end])) ||
                                     message[end] == '-' || message[end] == '_');
      if (!word_end) continue;
      out += to;
      i = end;
      replaced = true;
      break;
    }
    if (!replaced) out += message[i++];
  }
  return out;
}

std::string text_of(py::handle value) { return py::str(value).cast<std::string>(); }

// A dict as JSON text: numpy and torch scalars as their Python numbers; NaN and infinities refused
// (JSON has none), naming `name`.
std::string json_text(py::handle dict, const std::string& name) {
  const py::module_ json = py::module_::import("json");
  const py::cpp_function item([](py::handle o) -> py::object {
    if (py::hasattr(o, "item")) return o.attr("item")();
    if (py::hasattr(o, "tolist")) return o.attr("tolist")();
    throw py::type_error("cannot be written as JSON: " + text_of(py::type::of(o)));
  });
  try {
    return json.attr("dumps")(dict, py::arg("default") = item, py::arg("allow_nan") = false)
        .cast<std::string>();
  } catch (py::error_already_set& e) {
    throw py::value_error(
        fmt::format("{}: {}", name, e.value().is_none() ? std::string("not JSON") : text_of(e.value())));
  }
}

}  // namespace

std::string number(py::handle value, const std::string& name) {
  if (py::isinstance<py::bool_>(value))
    throw py::type_error(fmt::format("{}: expected a number, got a bool", name));
  if (py::isinstance<py::int_>(value)) return text_of(value);
  if (py::isinstance<py::float_>(value) || py::hasattr(value, "__float__")) {
    const double v = value.cast<double>();
    return fmt::format("{:.17g}", v);
  }
  throw py::type_error(fmt::format("{}: expected a number, got {}", name, text_of(py::type::of(value))));
}

void add_rope_keywords(Invocation& call, const RopeKeywords& k, std::size_t head_dim,
                       const std::string& rotary_flag) {
  const py::module_ json = py::module_::import("json");
  if (!k.scaling.is_none() && !k.hf_config.is_none())
    throw py::value_error("scaling and hf_config: give one (a config's own rope_scaling is read from it)");
  const bool configured = !k.scaling.is_none() || !k.hf_config.is_none();
  if (!k.scaling.is_none()) {
    if (!py::isinstance<py::dict>(k.scaling))
      throw py::type_error(
          fmt::format("scaling: expected HF's rope_scaling dict, got {}", text_of(py::type::of(k.scaling))));
    // HF's rope_scaling as the config it comes from: the resolver reads it as HF does.
    py::dict config;
    config["rope_scaling"] = k.scaling;
    config["head_dim"] = head_dim;
    config["rope_theta"] = k.base.is_none() ? py::float_(10000.0) : k.base;
    call.files.texts["scaling"] = json_text(config, "scaling");
    call.flag("--hf-config", "scaling");
    call.name("--hf-config scaling", "scaling");
    call.name("--hf-config", "scaling");
  } else if (!k.hf_config.is_none()) {
    if (py::isinstance<py::dict>(k.hf_config)) {
      call.files.texts["hf_config"] = json_text(k.hf_config, "hf_config");
      call.flag("--hf-config", "hf_config");
      call.name("--hf-config hf_config", "hf_config");
    } else {
      if (!py::isinstance<py::str>(k.hf_config) && !py::hasattr(k.hf_config, "__fspath__"))
        throw py::type_error(fmt::format("hf_config: expected a config.json path or dict, got {}",
                                         text_of(py::type::of(k.hf_config))));
      const std::string path = py::module_::import("os").attr("fspath")(k.hf_config).cast<std::string>();
      call.flag("--hf-config", path);
      call.name("--hf-config " + path, "hf_config " + path);
    }
    call.name("--hf-config", "hf_config");
  }
  if (!k.base.is_none() && k.scaling.is_none()) call.flag("--base", number(k.base, "base"));
  if (!k.layout.is_none()) {
    call.flag("--layout", text_of(k.layout));
  } else if (!configured) {
    call.flag("--layout", "halfsplit");  // HF's rotate_half: the module's default
  }
  if (!k.rotary_dim.is_none()) call.flag(rotary_flag, number(k.rotary_dim, "rotary_dim"));
  if (!k.rotary_offset.is_none()) call.flag("--rotary-offset", number(k.rotary_offset, "rotary_offset"));
  if (!k.layer.is_none()) call.flag("--layer", number(k.layer, "layer"));
  if (!k.layer_type.is_none()) call.flag("--layer-type", text_of(k.layer_type));
  if (!k.mrope_section.is_none()) {
    if (!py::isinstance<py::iterable>(k.mrope_section) || py::isinstance<py::str>(k.mrope_section))
      throw py::type_error(fmt::format("mrope_section: expected a list of pair counts (16, 24, 24), got {}",
                                       text_of(k.mrope_section)));
    std::string s;
    for (py::handle v : k.mrope_section) s += (s.empty() ? "" : ",") + number(v, "mrope_section");
    call.flag("--mrope-section", s);
  }
  if (!k.mrope_layout.is_none()) call.flag("--mrope-layout", text_of(k.mrope_layout));
  if (!k.vision.is_none()) call.flag("--vision", text_of(k.vision));
  if (k.heads_first) call.args.emplace_back("--heads-first");
  // Scaling flags in a message ("--low-freq-factor: ...") are the dict's keys.
  for (const ScalingField& f : scaling_fields()) {
    const std::string flag = cli::flag_for_parameter(std::string(f.name));
    if (!flag.empty() && !f.hf_key.empty()) call.name(flag, fmt::format("scaling['{}']", f.hf_key));
  }
  call.name("--hf-config", "hf_config");
  call.name("--input", "x");
  for (const auto& [flag, parameter] : {std::pair{"--base", "base"},
                                        {"--layout", "layout"},
                                        {"--rotary-offset", "rotary_offset"},
                                        {"--layer-type", "layer_type"},
                                        {"--layer", "layer"},
                                        {"--mrope-section", "mrope_section"},
                                        {"--mrope-layout", "mrope_layout"},
                                        {"--vision", "vision"},
                                        {"--heads-first", "heads_first"},
                                        {"--positions-file positions.npy", "positions"},
                                        {"--positions-file", "positions"},
                                        {"--positions", "positions"},
                                        {"positions.npy", "positions"},
                                        {"--dtype", "dtype"}})
    call.name(flag, parameter);
  call.name(rotary_flag, "rotary_dim");
}

std::pair<int, cli::CapturedReport> run(const Invocation& call,
                                        int (*command)(const std::vector<std::string>&)) {
  cli::CapturedReport report;
  std::string error;
  bool type_error = false;
  int code = cli::kUsage;
  {
    py::gil_scoped_release release;
    const cli::MemoryFilesScope files(call.files);
    const cli::CaptureScope capture(report);
    try {
      code = command(call.args);
    } catch (const InvalidArgument& e) {
      error = fmt::format("invalid {}: {}", e.parameter(), e.what());
    } catch (const cli::NpyError& e) {
      error = e.what();
      type_error = true;
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (!error.empty()) {
    const std::string message = python_words(error, call.names);
    if (type_error) throw py::type_error(message);
    throw py::value_error(message);
  }
  return {code, std::move(report)};
}

}  // namespace pe::python

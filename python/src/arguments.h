// The Python functions' keyword arguments as the command's own flags: a pe_suite call runs `check` or
// `export` in-process with the arrays held in memory (cli/memory_files.h) and the report captured
// (cli/report_text.h), so the checks, the words and the errors are the command's. Errors come back as
// ValueError / TypeError in the caller's names (x, rotary_dim, scaling), not the flags'.
#pragma once

#include <pybind11/pybind11.h>

#include <string>
#include <utility>
#include <vector>

#include "memory_files.h"
#include "report_text.h"

namespace pe::python {

namespace py = pybind11;

struct Invocation {
  std::vector<std::string> args;
  cli::MemoryFiles files;
  std::vector<std::pair<std::string, std::string>> names;  // flag or file name -> the Python parameter

  void flag(const std::string& name, const std::string& value) {
    args.push_back(name);
    args.push_back(value);
  }
  void name(const std::string& flag_or_file, const std::string& parameter) {
    names.emplace_back(flag_or_file, parameter);
  }
};

// The RoPE keywords every function shares (None: not given).
struct RopeKeywords {
  py::object base, layout, rotary_dim, rotary_offset, scaling, hf_config, layer, layer_type, mrope_section,
      mrope_layout, vision;
  bool heads_first = false;
};

// Adds the RoPE keywords' flags. `head_dim`: the data's (a scaling dict becomes a config with it);
// `rotary_flag`: check's --rotary-dim or export's --dim.
void add_rope_keywords(Invocation& call, const RopeKeywords& k, std::size_t head_dim,
                       const std::string& rotary_flag);

// A float or int keyword as the command line writes it (every digit of a double).
std::string number(py::handle value, const std::string& name);

// Runs `command` on the invocation with the GIL released: the exit code and the captured report.
// Bad input raises ValueError (TypeError for a wrong type) with the flags renamed to `call.names`.
std::pair<int, cli::CapturedReport> run(const Invocation& call,
                                        int (*command)(const std::vector<std::string>&));

}  // namespace pe::python

// `pe-suite check` and `pe-suite export` run in-process (the Python module): `args` as on the command
// line after the subcommand's name; files read as the command reads them, or from the active
// MemoryFiles (memory_files.h); the report said as the command says it, or into the active capture
// (report_text.h), where export leaves its values instead of writing a file.
#pragma once

#include <string>
#include <vector>

namespace pe::cli {

// The exit code: kOk or kCheckFailed. Throws UsageError for bad usage (a CLI11 parse error as one
// too), pe::InvalidArgument or NpyError for bad input, exactly as the command reports them.
int check_in_process(const std::vector<std::string>& args);
int export_in_process(const std::vector<std::string>& args);

}  // namespace pe::cli

// --plugin LIB.so (repeatable) on the subcommands that read the registry: list, verify, census,
// bench, run, export. The plugins load before the subcommand does anything else, with those in
// $PE_PLUGINS, and $PE_PLUGINS then names them all for the property and benchmark binaries pe-suite
// runs.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <string>
#include <vector>

namespace pe::cli {

// Adds the option to `cmd`; the paths land in the returned vector when it parses.
std::shared_ptr<std::vector<std::string>> add_plugin_option(CLI::App& cmd);

// Loads $PE_PLUGINS, then `paths`, and sets $PE_PLUGINS to every plugin loaded. A refused plugin
// throws (pe-suite exits 2 with the plugin's path and the reason).
void load_plugins(const std::vector<std::string>& paths);

// The loaded plugins' file names (a sweep's documents name them: the same in every array task, wherever
// each task's copy lies).
std::vector<std::string> plugin_file_names();

}  // namespace pe::cli

#include "plugin_option.h"

#include <cstdlib>
#include <filesystem>

#include "pe/harness/plugin.h"

namespace pe::cli {

std::shared_ptr<std::vector<std::string>> add_plugin_option(CLI::App& cmd) {
  auto paths = std::make_shared<std::vector<std::string>>();
  // One path per --plugin, so that a path is never taken for a positional argument.
  cmd.add_option("--plugin", *paths,
                 "Load this C plugin (pe/plugin.h) and register its kernels beside the built-in ones "
                 "(repeatable; also read from $PE_PLUGINS, ':'-separated)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("LIB.so");
  return paths;
}

void load_plugins(const std::vector<std::string>& paths) {
  harness::load_plugins_from_env();
  for (const std::string& p : paths) harness::load_plugin(p);
  if (harness::loaded_plugins().empty()) return;
  // The children (pe_props, pe_bench) inherit the environment: they load the same files, by absolute
  // path, whatever their working directory.
  setenv(harness::kPluginsEnv, harness::plugins_env_value(harness::loaded_plugins()).c_str(), 1);
}

std::vector<std::string> plugin_file_names() {
  std::vector<std::string> out;
  for (const std::string& p : harness::loaded_plugins())
    out.push_back(std::filesystem::path(p).filename().string());
  return out;
}

}  // namespace pe::cli

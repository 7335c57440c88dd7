// --hf-config FILE [--layer N | --layer-type T] for check, export and census: the config resolved by the
// check engine (pe/check/hf_config.h) into the command's own options. A flag given on the command line
// wins and is reported as an override; --scaling drops the config's whole scaling block, a single scaling
// flag (--factor) overrides its one key.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pe/check/hf_config.h"

namespace pe::cli {

struct HfConfigFlags {
  std::string path, layer_type;
  std::vector<std::string> paths;  // --hf-config repeated (a sweep's configs: census, verify)
  std::int64_t layer = 0;
};

// `many`: --hf-config may be repeated (into `paths`), each config a sweep's own run.
void add_hf_config_options(CLI::App& cmd, HfConfigFlags& flags, bool many = false);

// The config the flags name (read from its file), as the engine takes it; the second form reads `path`
// (one of `paths`) under the flags' --layer and --layer-type.
check::HfSource hf_source(const HfConfigFlags& flags, const CLI::App& cmd);
check::HfSource hf_source(const HfConfigFlags& flags, const CLI::App& cmd, const std::string& path);

}  // namespace pe::cli

// --hf-config FILE [--layer N | --layer-type T] for check, export and census: the config resolved by the
// check engine (pe/check/hf_config.h) into the command's own options. A flag given on the command line
// wins and is reported as an override; --scaling drops the config's whole scaling block, a single scaling
// flag (--factor) overrides its one key.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "pe/check/hf_config.h"

namespace pe::cli {

struct HfConfigFlags {
  std::string path, layer_type;
  std::int64_t layer = 0;
};

void add_hf_config_options(CLI::App& cmd, HfConfigFlags& flags);

// The config the flags name (read from its file), as the engine takes it.
check::HfSource hf_source(const HfConfigFlags& flags, const CLI::App& cmd);

// The canonical names of `cmd`'s flags among `parameters` that were given ("base" for --base, ...).
std::set<std::string> given_parameters(const CLI::App& cmd, std::initializer_list<const char*> parameters);

}  // namespace pe::cli

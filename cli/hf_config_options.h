// --hf-config FILE [--layer N | --layer-type T] for check, export and census: the resolved config
// (hf_config.h) written into the command's own flags, as a user would type them. A flag given on the
// command line wins and is reported as an override; --scaling drops the config's whole scaling block,
// a single scaling flag (--factor) overrides its one key.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <optional>
#include <string>

#include "form_options.h"
#include "hf_config.h"
#include "scaling_options.h"
#include "temperature_options.h"

namespace pe::cli {

struct HfConfigFlags {
  std::string path, layer_type;
  std::int64_t layer = 0;
};

void add_hf_config_options(CLI::App& cmd, HfConfigFlags& flags);

// The command's flags the config may fill; null where the command has none.
struct HfTargets {
  double* base = nullptr;
  std::string* layout = nullptr;
  std::int64_t* rotary_dim = nullptr;  // check's --rotary-dim, export's --dim
  const char* rotary_flag = "--rotary-dim";
  std::int64_t* head_dim = nullptr;      // check's --head-dim
  std::string* head_dim_flag = nullptr;  // how check names it in its message
  ScalingFlags* scaling = nullptr;
  FormFlags* form = nullptr;
  TemperatureFlags* temperature = nullptr;
  bool* no_rope = nullptr;
  // The positions, for HF's seq_len = max(position_ids) + 1 under dynamic and longrope.
  const std::string* positions = nullptr;
  const std::string* positions_file = nullptr;
};

// Nothing without --hf-config (and UsageError for --layer/--layer-type without it). Otherwise resolves
// the config, fills the targets the command line left alone, prints the resolution block and returns
// it (check --json's "hf_config"). Call after the command's `given` sets are filled.
std::optional<HfResolution> apply_hf_config(const HfConfigFlags& flags, const CLI::App& cmd,
                                            const HfTargets& t);

// Another layer type's setting as the scaling it resolves to, with no flag given (HF's seq_len from
// t's positions), for the diagnosis's per-layer candidates.
RopeScaling rope_scaling_of(const HfRopeSetting& s, const HfTargets& t);

}  // namespace pe::cli

#include "hf_config_options.h"

#include <filesystem>

#include "names.h"

namespace pe::cli {

void add_hf_config_options(CLI::App& cmd, HfConfigFlags& f, bool many) {
  if (many) {
    cmd.add_option("--hf-config", f.paths,
                   "A model's config.json (transformers'): its scaling and form, flags given overriding "
                   "it. Repeat it for a sweep over several configs (one census per config, --shard "
                   "splitting config x instance pairs)")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->type_name("FILE")
        ->group("Model config");
  } else {
    cmd.add_option(
           "--hf-config", f.path,
           "A model's config.json (transformers'): fills --base, the scaling, the rotary dim, the form; "
           "flags given override it")
        ->group("Model config");
  }
  cmd.add_option("--layer", f.layer, "--hf-config: the layer whose RoPE to use (configs whose layers differ)")
      ->group("Model config");
  cmd.add_option(
         "--layer-type", f.layer_type,
         "--hf-config: the layer type whose RoPE to use (sliding_attention, full_attention, nope, ...)")
      ->group("Model config");
}

check::HfSource hf_source(const HfConfigFlags& flags, const CLI::App& cmd) {
  return hf_source(flags, cmd, flags.path);
}

check::HfSource hf_source(const HfConfigFlags& flags, const CLI::App& cmd, const std::string& path) {
  check::HfSource s;
  if (cmd.count("--layer") > 0) s.layer = flags.layer;
  s.layer_type = flags.layer_type;
  if (path.empty()) return s;
  s.file = std::filesystem::path(path).filename().string();
  s.label = "hf-config " + s.file;
  s.source = "--hf-config " + s.file;
  s.config = check::read_hf_config(path, flag_names());
  return s;
}

}  // namespace pe::cli

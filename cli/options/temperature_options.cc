#include "temperature_options.h"

namespace pe::cli {

void add_temperature_options(CLI::App& cmd, TemperatureFlags& f) {
  const auto add = [&cmd](const char* name, auto& value, const char* help) {
    cmd.add_option(name, value, help)->group("Attention temperature");
  };
  add("--attn-temperature", f.type,
      "RoPE: a gain t(p) on q: llama4 (1 + A ln(floor((p+1)/F) + 1)) or mistral (1 + B ln(1 + floor(p/L)))");
  add("--attn-scale", f.spec.attn_scale, "llama4: attn_scale A (HF default 0.1)");
  add("--floor-scale", f.spec.floor_scale, "llama4: floor_scale F (HF default 8192)");
  add("--beta", f.spec.beta,
      "mistral: llama_4_scaling_beta B (0.1 in the published configs); L is --original-max-position");
}

void add_xpos_options(CLI::App& cmd, TemperatureFlags& f) {
  const auto group =
      "xPos (flash-attention's RotaryEmbedding(scale_base), rotary-embedding-torch's use_xpos)";
  cmd.add_option("--xpos-scale-base", f.xpos.scale_base,
                 "RoPE: xPos's scale_base (512: rotary-embedding-torch's default, flash-attention's advice): "
                 "pair j gained by "
                 "((2j + 0.4d)/(1.4d))^((p - centre)/scale_base) on q, divided on k")
      ->group(group);
  cmd.add_option("--xpos-centre", f.xpos.centre,
                 "xPos's centre, the engines' seqlen // 2 of the table they built (default: (largest "
                 "position + 1) div 2)")
      ->group(group);
  cmd.add_flag("--xpos-keys", f.xpos_keys, "xPos: the data is k (divided by the gain), not q")->group(group);
}

void read_temperature_flags(const CLI::App& cmd, TemperatureFlags& f) {
  if (cmd.count("--attn-temperature") > 0) f.spec.type = check::parse_temperature(f.type, flag_names());
  if (f.xpos_keys) f.xpos.keys = true;
}

void reject_temperature_flags(const TemperatureFlags& f, const std::string& why) {
  check::reject_temperature(f.spec, flag_names(), why);
  check::reject_xpos(f.xpos, flag_names(), why);
}

}  // namespace pe::cli

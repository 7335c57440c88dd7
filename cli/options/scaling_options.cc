#include "scaling_options.h"

namespace pe::cli {

void add_scaling_options(CLI::App& cmd, ScalingFlags& f) {
  cmd.add_option("--scaling", f.scaling, "RoPE scaling: none, linear, ntk, dynamic, yarn, llama3, longrope")
      ->capture_default_str()
      ->group("RoPE scaling");
  const auto add = [&cmd](const char* name, auto& value, const char* help) {
    cmd.add_option(name, value, help)->group("RoPE scaling");
  };
  add("--factor", f.factor, "Scaling factor s (every method but none)");
  add("--original-max-position", f.original_max_position,
      "L, HF original_max_position_embeddings (dynamic, yarn, llama3, longrope)");
  add("--seq-len", f.seq_len, "Current sequence length (dynamic: the base; longrope: long factors when > L)");
  add("--beta-fast", f.beta_fast, "yarn: correction range, fast end (HF default 32)");
  add("--beta-slow", f.beta_slow, "yarn: correction range, slow end (HF default 1)");
  add("--mscale", f.mscale, "yarn: mscale (with --mscale-all-dim)");
  add("--mscale-all-dim", f.mscale_all_dim, "yarn: mscale_all_dim (with --mscale)");
  add("--attention-factor", f.attention_factor,
      "Attention factor on cos and sin, any method (yarn and longrope: instead of their own)");
  add("--position-scale", f.position_scale, "Positions divided by this before the rotation, any method");
  add("--truncate", f.truncate, "yarn: true|false, floor/ceil the correction range (HF default true)");
  add("--low-freq-factor", f.low_freq_factor, "llama3: low_freq_factor (HF default 1)");
  add("--high-freq-factor", f.high_freq_factor, "llama3: high_freq_factor (HF default 4)");
  add("--longrope-switch", f.longrope_switch,
      "longrope: per-sequence (HF: long once the sequence passes L) or per-token (TGI: long from position "
      "L)");
  add("--short-factors", f.short_factors, "longrope: short_factor, a 1-D f32/f64 .npy of rotary_dim/2");
  add("--long-factors", f.long_factors, "longrope: long_factor, a 1-D f32/f64 .npy of rotary_dim/2");
  add("--partial-rotary-factor", f.partial_rotary_factor,
      "Rotate int(head_dim * F) channels (HF partial_rotary_factor)");
}

std::set<std::string> given_scaling_flags(const CLI::App& cmd) {
  std::set<std::string> given;
  for (std::string_view p : check::scaling_parameters()) {
    const CLI::Option* o = cmd.get_option_no_throw(flag_for_parameter(p));
    if (o != nullptr && o->count() > 0) given.insert(std::string(p));
  }
  return given;
}

RopeScaling to_rope_scaling(const ScalingFlags& f) { return check::to_rope_scaling(f, flag_names()); }

void reject_scaling_flags(const ScalingFlags& f, const std::string& why) {
  check::reject_scaling(f, flag_names(), why);
}

RopePlan rope_plan(const RopeParams& params) { return check::rope_plan(params, flag_names()); }

}  // namespace pe::cli

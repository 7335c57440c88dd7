#include "scaling_options.h"

#include <tuple>

namespace pe::cli {

void add_scaling_options(CLI::App& cmd, ScalingFlags& f) {
  cmd.add_option("--scaling", f.scaling,
                 "RoPE scaling: none, linear, ntk, dynamic, yarn, llama3, longrope, proportional")
      ->capture_default_str()
      ->group("RoPE scaling");
  const auto add = [&cmd](const char* name, auto& value, const char* help) {
    cmd.add_option(name, value, help)->group("RoPE scaling");
  };
  add("--factor", f.spec.factor, "Scaling factor s (every method but none)");
  add("--original-max-position", f.spec.original_max_position,
      "L, HF original_max_position_embeddings (dynamic, yarn, llama3, longrope)");
  add("--seq-len", f.spec.seq_len,
      "Current sequence length (dynamic: the base; longrope: long factors when > L)");
  add("--beta-fast", f.spec.beta_fast, "yarn: correction range, fast end (HF default 32)");
  add("--beta-slow", f.spec.beta_slow, "yarn: correction range, slow end (HF default 1)");
  add("--mscale", f.spec.mscale, "yarn: mscale (with --mscale-all-dim)");
  add("--mscale-all-dim", f.spec.mscale_all_dim, "yarn: mscale_all_dim (with --mscale)");
  add("--attention-factor", f.spec.attention_factor,
      "Attention factor on cos and sin, any method (yarn and longrope: instead of their own)");
  add("--position-scale", f.spec.position_scale, "Positions divided by this before the rotation, any method");
  add("--truncate", f.truncate, "yarn: true|false, floor/ceil the correction range (HF default true)");
  add("--low-freq-factor", f.spec.low_freq_factor, "llama3: low_freq_factor (HF default 1)");
  add("--high-freq-factor", f.spec.high_freq_factor, "llama3: high_freq_factor (HF default 4)");
  add("--longrope-switch", f.longrope_switch,
      "longrope: per-sequence (HF: long once the sequence passes L) or per-token (TGI: long from position "
      "L)");
  add("--dynamic-semantics", f.dynamic_semantics,
      "dynamic: live (HF: base' from n = max(seq_len, L)) or static (vLLM, SGLang: one table at n = "
      "factor*L)");
  add("--yarn-attention", f.yarn_attention,
      "yarn: replace (HF: --attention-factor instead of its mscale) or multiply (vLLM, SGLang: mscale times "
      "it)");
  add("--alpha", f.spec.alpha, "dynamic: Hunyuan's alpha, base' = base * alpha^(d/(d-2)) (vLLM's NTK alpha)");
  add("--short-factors", f.short_factors, "longrope: short_factor, a 1-D f32/f64 .npy of rotary_dim/2");
  add("--long-factors", f.long_factors, "longrope: long_factor, a 1-D f32/f64 .npy of rotary_dim/2");
  add("--partial-rotary-factor", f.spec.partial_rotary_factor,
      "Rotate int(head_dim * F) channels (HF partial_rotary_factor); with --scaling proportional: the first "
      "int(F * rotary_dim // 2) pairs turn, the rest by 0 (Gemma 4)");
}

void read_scaling_flags(const CLI::App& cmd, ScalingFlags& f) {
  const check::Names names = flag_names();
  check::ScalingSpec& s = f.spec;
  const auto given = [&cmd](std::string_view p) { return cmd.count(flag_for_parameter(p)) > 0; };
  if (given("scaling")) s.method = check::parse_scaling(f.scaling, names);
  if (given("truncate")) s.truncate = check::parse_truncate(f.truncate, names);
  if (given("longrope_switch")) s.longrope_switch = check::parse_switch(f.longrope_switch, names);
  if (given("yarn_attention")) s.yarn_attention = check::parse_yarn_attention(f.yarn_attention, names);
  if (given("dynamic_semantics"))
    s.dynamic_semantics = check::parse_dynamic_semantics(f.dynamic_semantics, names);
  // The lists are read only where the method reads them: elsewhere they are given, to be refused by name.
  const bool lists = s.method && reads_field(*s.method, "short_factor");
  for (auto [p, path, list] : {std::tuple{"short_factor", &f.short_factors, &s.short_factor},
                               std::tuple{"long_factor", &f.long_factors, &s.long_factor}}) {
    if (given(p)) *list = lists ? check::read_factors(*path, p, names) : std::vector<double>{};
  }
}

RopeScaling to_rope_scaling(const check::ScalingSpec& spec) {
  return check::to_rope_scaling(spec, flag_names());
}

void reject_scaling_flags(const ScalingFlags& f, const std::string& why) {
  check::reject_scaling(f.spec, flag_names(), why);
}

RopePlan rope_plan(const RopeParams& params) { return check::rope_plan(params, flag_names()); }

}  // namespace pe::cli

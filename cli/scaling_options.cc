#include "scaling_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

#include "args.h"
#include "form_options.h"
#include "npy.h"

namespace pe::cli {
namespace {

using T = RopeScalingType;

// Every flag with the core's parameter it sets ("" for the two that are not RopeScaling fields).
struct Flag {
  std::string_view flag, parameter;
};
constexpr std::array<Flag, 15> kFlags = {{{"--scaling", ""},
                                          {"--factor", "factor"},
                                          {"--original-max-position", "original_max_position"},
                                          {"--seq-len", "seq_len"},
                                          {"--beta-fast", "beta_fast"},
                                          {"--beta-slow", "beta_slow"},
                                          {"--mscale", "mscale"},
                                          {"--mscale-all-dim", "mscale_all_dim"},
                                          {"--attention-factor", "attention_factor"},
                                          {"--truncate", "truncate"},
                                          {"--low-freq-factor", "low_freq_factor"},
                                          {"--high-freq-factor", "high_freq_factor"},
                                          {"--short-factors", "short_factor"},
                                          {"--long-factors", "long_factor"},
                                          {"--partial-rotary-factor", "partial_rotary_factor"}}};

// The flags of the fields a method reads or requires (the table in pe/rope_scaling.h).
std::vector<std::string_view> flags_of(std::span<const std::string_view> fields) {
  std::vector<std::string_view> out;
  for (const Flag& f : kFlags) {
    if (!f.parameter.empty() && std::find(fields.begin(), fields.end(), f.parameter) != fields.end())
      out.push_back(f.flag);
  }
  return out;
}

std::string list_flags(const std::vector<std::string_view>& flags) {
  std::string s;
  for (std::string_view f : flags) s += (s.empty() ? "" : ", ") + std::string(f);
  return s.empty() ? "no other flag" : s;
}

// A 1-D float32/float64 .npy of factors.
std::vector<double> read_factors(const std::string& path, const std::string& flag) {
  NpyArray a;
  try {
    a = read_npy(path);
  } catch (const NpyError& e) {
    throw UsageError(flag + ": " + e.what());
  }
  if (a.integer || (a.dtype != DType::F32 && a.dtype != DType::F64))
    throw UsageError(fmt::format("{}: {} holds {}; expected float32 or float64", flag, path,
                                 a.integer ? "integers" : std::string(to_string(a.dtype))));
  if (a.shape.size() != 1)
    throw UsageError(fmt::format("{}: {} has rank {}; expected a 1-D array of rotary_dim/2 factors", flag,
                                 path, a.shape.size()));
  return a.values;
}

}  // namespace

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
  add("--attention-factor", f.attention_factor, "yarn, longrope: explicit attention factor");
  add("--truncate", f.truncate, "yarn: true|false, floor/ceil the correction range (HF default true)");
  add("--low-freq-factor", f.low_freq_factor, "llama3: low_freq_factor (HF default 1)");
  add("--high-freq-factor", f.high_freq_factor, "llama3: high_freq_factor (HF default 4)");
  add("--short-factors", f.short_factors, "longrope: short_factor, a 1-D f32/f64 .npy of rotary_dim/2");
  add("--long-factors", f.long_factors, "longrope: long_factor, a 1-D f32/f64 .npy of rotary_dim/2");
  add("--partial-rotary-factor", f.partial_rotary_factor,
      "Rotate int(head_dim * F) channels (HF partial_rotary_factor)");
}

std::set<std::string> given_scaling_flags(const CLI::App& cmd) {
  std::set<std::string> given;
  for (const Flag& f : kFlags) {
    const CLI::Option* o = cmd.get_option_no_throw(std::string(f.flag));
    if (o != nullptr && o->count() > 0) given.insert(std::string(f.flag));
  }
  return given;
}

RopeScaling to_rope_scaling(const ScalingFlags& f) {
  const auto type = parse_rope_scaling_type(f.scaling);
  if (!type)
    throw UsageError("--scaling: unknown method '" + f.scaling +
                     "' (none, linear, ntk, dynamic, yarn, llama3, longrope)");
  const auto given = [&f](std::string_view flag) { return f.given.count(std::string(flag)) > 0; };
  const ScalingMethod& method = scaling_method(*type);
  const std::vector<std::string_view> used = flags_of(method.reads);
  for (const Flag& flag : kFlags) {
    if (flag.flag == "--scaling" || flag.flag == "--partial-rotary-factor" || !given(flag.flag)) continue;
    if (std::find(used.begin(), used.end(), flag.flag) == used.end())
      throw UsageError(
          fmt::format("{}: not used by --scaling {} (it reads {})", flag.flag, f.scaling, list_flags(used)));
  }
  RopeScaling s;
  s.type = *type;
  if (*type == T::None) return s;
  for (std::string_view flag : flags_of(method.required)) {
    if (!given(flag)) throw UsageError(fmt::format("{}: required with --scaling {}", flag, f.scaling));
  }
  s.factor = f.factor;
  s.original_max_position = f.original_max_position;
  s.seq_len = f.seq_len;
  s.beta_fast = f.beta_fast;
  s.beta_slow = f.beta_slow;
  s.low_freq_factor = f.low_freq_factor;
  s.high_freq_factor = f.high_freq_factor;
  if (f.truncate != "true" && f.truncate != "false")
    throw UsageError("--truncate: expected true or false, got '" + f.truncate + "'");
  s.truncate = f.truncate == "true";
  // HF reads mscale only together with mscale_all_dim, and neither when attention_factor is given.
  if (given("--mscale") != given("--mscale-all-dim"))
    throw UsageError(fmt::format("{}: HF ignores it without {}; give both or neither",
                                 given("--mscale") ? "--mscale" : "--mscale-all-dim",
                                 given("--mscale") ? "--mscale-all-dim" : "--mscale"));
  if (given("--attention-factor") && given("--mscale"))
    throw UsageError(
        "--attention-factor: it overrides --mscale and --mscale-all-dim (as in HF); give one or the other");
  if (given("--mscale")) {
    s.mscale = f.mscale;
    s.mscale_all_dim = f.mscale_all_dim;
  }
  if (given("--attention-factor")) s.attention_factor = f.attention_factor;
  if (reads_field(*type, "short_factor")) {
    s.short_factor = f.short_factors.empty() && !f.short_factor_list.empty()
                         ? f.short_factor_list
                         : read_factors(f.short_factors, "--short-factors");
    s.long_factor = f.long_factors.empty() && !f.long_factor_list.empty()
                        ? f.long_factor_list
                        : read_factors(f.long_factors, "--long-factors");
  }
  return s;
}

void reject_scaling_flags(const ScalingFlags& f, const std::string& why) {
  if (f.given.count("--scaling") > 0 && f.scaling != "none") throw UsageError("--scaling: " + why);
  for (const std::string& flag : f.given) {
    if (flag == "--scaling") continue;  // "none": no scaling
    throw UsageError(flag + ": " + why);
  }
}

std::int64_t rotary_dim_for(const ScalingFlags& f, std::int64_t head_dim, std::int64_t rotary_dim,
                            const std::string& rotary_flag) {
  if (f.given.count("--partial-rotary-factor") == 0) return rotary_dim;
  if (rotary_dim != 0)
    throw UsageError(rotary_flag + " and --partial-rotary-factor: give one, not both (got " +
                     std::to_string(rotary_dim) + " and " + fmt::format("{:g}", f.partial_rotary_factor) +
                     ")");
  try {
    return partial_rotary_dim(head_dim, f.partial_rotary_factor);
  } catch (const InvalidArgument& e) {
    throw UsageError(std::string("--partial-rotary-factor: ") + e.what());
  }
}

std::string flag_for_parameter(const std::string& parameter) {
  for (const Flag& f : kFlags) {
    if (!f.parameter.empty() && f.parameter == parameter) return std::string(f.flag);
  }
  return form_flag_for_parameter(parameter);
}

void rethrow_with_flag(const InvalidArgument& e) {
  const std::string flag = flag_for_parameter(e.parameter());
  if (flag.empty()) throw e;
  throw UsageError(flag + ": " + e.what());
}

RopePlan rope_plan(const RopeParams& params) {
  try {
    return RopePlan(params);
  } catch (const InvalidArgument& e) {
    rethrow_with_flag(e);
  }
}

std::string describe_scaling(const RopeScaling& s, const RopePlan& plan) {
  if (s.type == T::None) return "none";
  std::string out = fmt::format("{} (factor {:g}", to_string(s.type), s.factor);
  if (s.original_max_position > 0) out += fmt::format(", original_max_position {}", s.original_max_position);
  if (s.seq_len > 0) out += fmt::format(", seq_len {}", s.seq_len);
  if (plan.effective_base() != plan.params().base)
    out += fmt::format("; base' {:.6g}", plan.effective_base());
  if (plan.attention_factor() != 1.0)
    out += fmt::format("; attention factor {:.17g}", plan.attention_factor());
  return out + ")";
}

}  // namespace pe::cli

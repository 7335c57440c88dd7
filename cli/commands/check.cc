// pe-suite check: an outside implementation's dumped output (.npy) against the exact reference. The flags
// and files become a check engine request (pe/check/check.h); its report is printed, and written as JSON
// with --json.
#include "pe/check/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <span>

#include "alibi_options.h"
#include "common.h"
#include "family_rows.h"
#include "form_options.h"
#include "hf_config_options.h"
#include "names.h"
#include "pe/check/fp8.h"
#include "pe/check/npy.h"
#include "pe/check/scores.h"
#include "pe/check/t5.h"
#include "pe/pe.h"
#include "progress.h"
#include "scaling_options.h"
#include "scores_options.h"
#include "sinusoidal_options.h"
#include "temperature_options.h"

namespace pe::cli {
namespace {

struct CheckOptions {
  std::string family, table, input, output, positions, positions_file, layout, dtype, contract, json;
  std::string against;         // a second implementation's output of the same input
  std::string rotation_dtype;  // FP8 codes: the type the rotation ran in before the quantization
  std::int64_t dim = 0, head_dim = 0, rotary_dim = 0;
  double base = 10000.0, max_abs = 0;
  std::size_t threads = 0;  // RoPE's pass: 0, one per 2^18 elements (at most every hardware thread)
  bool heads_first = false, has_max_abs = false, no_rope = false;
  bool exact_p99 = false;  // RoPE and sinusoidal tables: every element's p99, not a sample's
  ScalingFlags scaling;
  FormFlags form;
  AlibiFlags alibi;
  SinusoidalFlags sinusoidal;
  TemperatureFlags temperature;
  ScoresFlags scores;
  HfConfigFlags hf;
  check::HfSource hf_source;
  check::RopeSpec spec;  // the RoPE flags given, typed
};

// The RoPE flags `cmd` was given, typed (the layout parsed as RoPE's only when the family is).
check::RopeSpec rope_spec_of(const CLI::App& cmd, const CheckOptions& o, bool rope) {
  check::RopeSpec s;
  if (cmd.count("--base") > 0) s.base = o.base;
  if (rope && cmd.count("--layout") > 0) s.layout = check::parse_layout(o.layout, Family::Rope, flag_names());
  if (cmd.count("--rotary-dim") > 0) s.rotary_dim = o.rotary_dim;
  if (cmd.count("--head-dim") > 0) s.head_dim = o.head_dim;
  s.scaling = o.scaling.spec;
  s.form = o.form.spec;
  s.temperature = o.temperature.spec;
  s.xpos = o.temperature.xpos;
  if (o.no_rope) s.no_rope = true;
  return s;
}

// check's words for the engine's parameters: the data by their flags, the rotary dim as --rotary-dim.
const check::Names& check_names() {
  static const check::Names n = flag_names({{"table", "TABLE"},
                                            {"x", "--input"},
                                            {"y", "--output"},
                                            {"rotary_dim", "--rotary-dim"},
                                            {"head_dim", "--head-dim"},
                                            {"dim", "--dim"},
                                            {"positions", "--positions"},
                                            {"positions_file", "--positions-file"}});
  return n;
}

// A .npy file with its values (in place where the file allows: read_npy_in_place); `name` is the flag it
// came from.
struct Loaded {
  check::NpyArray array;
  check::DataView view(const std::string& path) const {
    return {array.values, array.shape, array.dtype, path, array.typed};
  }
};

// `own_type`: `dtype` only says how 16-bit integers read (bf16 bits), a float file keeps its own type
// (scores' bf16 q and k beside float32 scores); otherwise the file must hold `dtype`.
Loaded load(const std::string& path, const std::string& dtype, const char* option, bool own_type = false) {
  std::optional<DType> declared;
  if (!dtype.empty()) {
    declared = parse_dtype(dtype);
    if (!declared) throw UsageError("--dtype: expected f32, f64, f16 or bf16, got '" + dtype + "'");
  }
  check::NpyArray a = [&] {
    try {
      return check::read_npy_in_place(path, declared.value_or(DType::F32));
    } catch (const check::NpyError& e) {  // which flag read the file, as every other message says
      throw UsageError(fmt::format("{}: {}", option, e.what()));
    }
  }();
  if (a.integer)
    throw UsageError(
        fmt::format("{}: {} holds integers; if they are bfloat16 bits pass --dtype bf16", option, path));
  if (declared && *declared != a.dtype && !own_type)
    throw UsageError(fmt::format("--dtype: {} given, but {} holds {}", dtype, path, to_string(a.dtype)));
  return {std::move(a)};
}

check::BudgetOptions budget_of(const CheckOptions& o) {
  return {o.contract, o.has_max_abs ? std::optional(o.max_abs) : std::nullopt};
}

// Prints the report, writes its JSON with --json; the exit code.
int finish(const check::Report& r, const CheckOptions& o) {
  fmt::print("{}", r.text);
  if (!o.json.empty()) write_text(o.json, r.json().dump(2) + "\n");
  return r.passed ? kOk : kCheckFailed;
}

// --against's file, when given.
std::optional<Loaded> load_against(const CheckOptions& o) {
  if (o.against.empty()) return std::nullopt;
  return load(o.against, o.dtype, "--against");
}

// Runs the engine on `r` with a progress line on a terminal (cleared before the report prints), then
// finish()es.
template <class Request>
int run(Request& r, check::Report (*engine)(const Request&, const check::Names&), const CheckOptions& o) {
  std::optional<Progress> progress;
  r.progress = [&progress](std::size_t done, std::size_t total) {
    if (!progress) progress.emplace("check", total);
    progress->update(done);
  };
  const check::Report report = engine(r, check_names());
  progress.reset();
  return finish(report, o);
}

int check_sinusoidal(const CheckOptions& o) {
  if (o.table.empty()) throw UsageError("TABLE: give the .npy table to check");
  const Loaded a = load(o.table, o.dtype, "TABLE");
  const std::optional<Loaded> b = load_against(o);
  check::SinusoidalRequest r;
  r.table = a.view(o.table);
  if (b) r.against = b->view(o.against);
  r.spec = o.sinusoidal.spec;
  r.hf = o.hf_source;
  sinusoidal_positions(o.positions, o.positions_file, r.spec.grid.has_value(), r);
  r.dim = o.dim;
  r.budget = budget_of(o);
  r.exact_percentiles = o.exact_p99;
  return run(r, check::check_sinusoidal, o);
}

// --dtype e4m3|e5m2: --output holds FP8 codes (uint8), checked against the exact rotation's rounding
// (pe/check/fp8.h); --scale divides the rotation before the quantization.
int check_rope_fp8_codes(const CheckOptions& o, check::Fp8Format format) {
  for (const auto& [given, flag] :
       {std::pair{!o.against.empty(), "--against"}, std::pair{!o.contract.empty(), "--contract"},
        std::pair{o.has_max_abs, "--max-abs"}})
    if (given) throw UsageError(fmt::format("{}: not with FP8 codes (--dtype {})", flag, o.dtype));
  const Loaded x = load(o.input, "", "--input");
  // A uint8 file is read where it lies (mapped: NpyArray::typed with integer); any other is converted, each
  // value checked to be a code (a float file mapped in place is read again as values, for the message).
  const check::NpyArray y = [&] {
    try {
      check::NpyArray a = check::read_npy_in_place(o.output);
      return a.typed != nullptr && !a.integer ? check::read_npy(o.output) : a;
    } catch (const check::NpyError& e) {
      throw UsageError(fmt::format("--output: {}", e.what()));
    }
  }();
  std::size_t count = 1;
  for (const std::size_t n : y.shape) count *= n;
  std::vector<std::uint8_t> copied(y.typed != nullptr ? 0 : y.values.size());
  const std::span<const std::uint8_t> codes =
      y.typed != nullptr ? std::span(static_cast<const std::uint8_t*>(y.typed), count)
                         : std::span<const std::uint8_t>(copied);
  for (std::size_t i = 0; i < copied.size(); ++i) {
    if (!y.integer || !(y.values[i] >= 0 && y.values[i] <= 255))
      throw UsageError(
          fmt::format("--output: expected FP8 codes as uint8 (--dtype {}); {} holds {} at flat index {}",
                      o.dtype, o.output, y.values[i], i));
    copied[i] = static_cast<std::uint8_t>(y.values[i]);
  }
  check::Fp8RopeRequest r;
  r.rope.x = x.view(o.input);
  r.rope.positions = rope_positions_of(o.positions, o.positions_file);
  r.rope.heads_first = o.heads_first;
  r.rope.threads = o.threads;
  r.rope.spec = o.spec;
  r.rope.hf = o.hf_source;
  r.codes = codes;
  r.codes_shape = y.shape;
  r.codes_name = o.output;
  r.scale = {o.sinusoidal.scale};
  r.format = format;
  if (!o.rotation_dtype.empty()) {
    const std::optional<DType> t = parse_dtype(o.rotation_dtype);
    if (!t || *t == DType::F64)
      throw UsageError("--rotation-dtype: expected f32, bf16 or f16, got '" + o.rotation_dtype + "'");
    r.rotation = *t;
  }
  return finish(check::check_rope_fp8(r, check_names()), o);
}

int check_rope(const CheckOptions& o) {
  if (o.input.empty() || o.output.empty())
    throw UsageError("--input and --output: RoPE needs both .npy files");
  if (const auto format = check::parse_fp8_format(o.dtype)) return check_rope_fp8_codes(o, *format);
  if (!o.rotation_dtype.empty())
    throw UsageError("--rotation-dtype: applies to FP8 codes (--dtype e4m3fn|e5m2)");
  const Loaded x = load(o.input, o.dtype, "--input"), y = load(o.output, o.dtype, "--output");
  const std::optional<Loaded> b = load_against(o);
  check::RopeRequest r;
  r.x = x.view(o.input);
  r.y = y.view(o.output);
  if (b) r.against = b->view(o.against);
  r.positions = rope_positions_of(o.positions, o.positions_file);
  r.heads_first = o.heads_first;
  r.threads = o.threads;
  r.exact_percentiles = o.exact_p99;
  r.spec = o.spec;
  r.hf = o.hf_source;
  r.budget = budget_of(o);
  return run(r, check::check_rope, o);
}

int check_alibi(const CheckOptions& o) {
  if (o.table.empty()) throw UsageError("TABLE: give the .npy slopes [heads] or bias [heads, queries, keys]");
  const Loaded a = load(o.table, o.dtype, "TABLE");
  check::AlibiRequest r;
  r.table = a.view(o.table);
  r.spec = o.alibi.spec;
  r.budget = budget_of(o);
  return finish(check::check_alibi(r, check_names()), o);
}

// --family scores: TABLE the scores [heads, queries, keys], --q and --k before the encoding, ALiBi's
// --queries and
// --keys ranges their positions; the flags of the encoding chosen, no other.
int check_scores(const CheckOptions& o, const CLI::App& cmd) {
  const check::ScoreEncoding encoding = score_encoding_of(o.scores);
  reject_sinusoidal_flags(cmd, "applies to --family sinusoidal only");
  reject_temperature_flags(o.temperature, "not inside --family scores");
  for (const char* flag : {"--input", "--output", "--against", "--contract", "--max-abs", "--threads",
                           "--exact-p99", "--heads-first", "--no-rope", "--positions", "--positions-file",
                           "--dim", "--head-dim", "--heads", "--slopes-only", "--rotation-dtype"})
    if (cmd.count(flag) > 0) throw UsageError(fmt::format("{}: not with --family scores", flag));
  if (encoding != check::ScoreEncoding::Rope) {
    const std::string why = "applies to --family scores with --encoding rope";
    reject_scaling_flags(o.scaling, why);
    reject_form_flags(o.form, why);
    for (const char* flag : {"--base", "--layout", "--rotary-dim", "--hf-config"})
      if (cmd.count(flag) > 0) throw UsageError(fmt::format("{}: {}", flag, why));
  }
  if (encoding != check::ScoreEncoding::Alibi)
    for (const char* flag : {"--max-bias", "--alibi-slopes", "--alibi-form", "--scale-bias"})
      if (cmd.count(flag) > 0) throw UsageError(fmt::format("{}: applies to --encoding alibi", flag));
  if (o.table.empty() || o.scores.q.empty() || o.scores.k.empty())
    throw UsageError(
        "TABLE, --q and --k: scores need the scores [heads, queries, keys] and q and k before the encoding");
  // Each file in its own type (bf16 q and k beside float32 scores, as engines write them): --dtype bf16 reads
  // 16-bit integer files as bfloat16 bits, a float file is its own.
  const Loaded scores = load(o.table, o.dtype, "TABLE", true), q = load(o.scores.q, o.dtype, "--q", true),
               k = load(o.scores.k, o.dtype, "--k", true);
  check::ScoresRequest r;
  r.scores = scores.view(o.table);
  r.q = q.view(o.scores.q);
  r.k = k.view(o.scores.k);
  r.query_positions = o.alibi.spec.queries;
  r.key_positions = o.alibi.spec.keys;
  r.scale = o.scores.scale;
  r.encoding = encoding;
  r.alibi = o.alibi.spec;
  r.scale_bias = o.scores.scale_bias;
  r.rope = o.spec;
  r.hf = o.hf_source;
  static const check::Names names = flag_names({{"scores", "TABLE"},
                                                {"q", "--q"},
                                                {"k", "--k"},
                                                {"scale", "--softmax-scale"},
                                                {"encoding", "--encoding"}});
  return finish(check::check_scores(r, names), o);
}

// --family t5: TABLE the bucket indices [queries, keys] (integers), or the bias [heads, queries, keys]
// gathered from
// --t5-table [num_buckets, heads]; ALiBi's --queries and --keys ranges the positions.
int check_t5(const CheckOptions& o, const CLI::App& cmd) {
  reject_sinusoidal_flags(cmd, "applies to --family sinusoidal only");
  reject_scores_flags(cmd, "applies to --family scores only");
  reject_temperature_flags(o.temperature, "not with --family t5");
  reject_scaling_flags(o.scaling, "not with --family t5");
  reject_form_flags(o.form, "not with --family t5");
  for (const char* flag :
       {"--input",          "--output",     "--against",     "--contract",  "--max-abs",
        "--threads",        "--exact-p99",  "--heads-first", "--no-rope",   "--positions",
        "--positions-file", "--dim",        "--head-dim",    "--heads",     "--slopes-only",
        "--base",           "--layout",     "--rotary-dim",  "--hf-config", "--max-bias",
        "--alibi-slopes",   "--alibi-form", "--dtype",       "--layer",     "--layer-type",
        "--rotation-dtype"})
    if (cmd.count(flag) > 0) throw UsageError(fmt::format("{}: not with --family t5", flag));
  if (o.table.empty())
    throw UsageError("TABLE: give the buckets [queries, keys] or the bias [heads, queries, keys]");
  if (!o.alibi.spec.queries || !o.alibi.spec.keys)
    throw UsageError("--queries and --keys: T5's buckets need the positions of both (ranges A:B)");
  const check::NpyArray data = [&] {
    try {
      return check::read_npy(o.table);
    } catch (const check::NpyError& e) {
      throw UsageError(fmt::format("TABLE: {}", e.what()));
    }
  }();
  if (o.scores.t5_table.empty() && !data.integer)
    throw UsageError(
        fmt::format("TABLE: {} holds floats: bucket indices are integers, a bias needs --t5-table", o.table));
  if (!o.scores.t5_table.empty() && data.integer)
    throw UsageError(
        fmt::format("TABLE: {} holds integers: a bias gathered from --t5-table holds its values "
                    "(bucket indices are checked without --t5-table)",
                    o.table));
  std::optional<Loaded> table;
  if (!o.scores.t5_table.empty()) table = load(o.scores.t5_table, "", "--t5-table");
  check::T5Request r;
  r.data = {data.values, data.shape, data.dtype, o.table, nullptr};
  if (table) r.table = table->view(o.scores.t5_table);
  r.queries = *o.alibi.spec.queries;
  r.keys = *o.alibi.spec.keys;
  r.buckets = {!o.scores.causal, o.scores.num_buckets, o.scores.max_distance};
  static const check::Names names = flag_names({{"data", "TABLE"},
                                                {"table", "--t5-table"},
                                                {"num_buckets", "--num-buckets"},
                                                {"max_distance", "--max-distance"}});
  return finish(check::check_t5(r, names), o);
}

// How `check` reads each family's dumped data, and which of the option groups it reads: the rest are
// refused, naming the families that read them.
struct Checker {
  Family family;
  int (*check)(const CheckOptions&);
  bool rope_options = false, alibi_options = false, against = true, sinusoidal_options = false;
};
constexpr Checker kCheckers[] = {{Family::Sinusoidal, check_sinusoidal, false, false, true, true},
                                 {Family::Rope, check_rope, true},
                                 {Family::Alibi, check_alibi, false, true, false}};

// Refuses the option groups `c`'s family does not read.
void reject_unread(const Checker& c, const CheckOptions& o, const CLI::App& cmd) {
  // RoPE's FP8 codes take --scale, the quantization's.
  const bool fp8 = c.family == Family::Rope && check::parse_fp8_format(o.dtype);
  if (!c.sinusoidal_options)
    reject_sinusoidal_flags(
        cmd,
        "applies to " + families_reading(kCheckers, &Checker::sinusoidal_options) + " only" +
            (c.family == Family::Rope ? " (and to rope with --dtype e4m3fn|e5m2, as its FP8 scale)" : ""),
        fp8 ? "--scale" : "");
  if (!c.rope_options) {
    const std::string rope = families_reading(kCheckers, &Checker::rope_options);
    if (!o.hf.path.empty() && !c.sinusoidal_options)
      throw UsageError("--hf-config: applies to " + rope + " and sinusoidal (a diffusers config)");
    if (c.sinusoidal_options && (!o.hf.layer_type.empty() || o.hf.layer != 0))
      throw UsageError("--layer and --layer-type: apply to " + rope + " only");
    reject_scaling_flags(o.scaling, "RoPE scaling applies to " + rope + " only");
    reject_form_flags(o.form, "rotary forms apply to " + rope + " only");
    reject_temperature_flags(o.temperature, "applies to " + rope + " only");
    if (o.no_rope) throw UsageError("--no-rope: applies to " + rope + " only");
    if (o.threads != 0) throw UsageError("--threads: applies to " + rope + " only");
    if (o.exact_p99 && !c.sinusoidal_options)
      throw UsageError("--exact-p99: applies to " + rope + " and sinusoidal only");
  }
  if (!c.alibi_options)
    reject_alibi_flags(o.alibi,
                       "applies to " + families_reading(kCheckers, &Checker::alibi_options) + " only");
  if (c.family != Family::Rope && !o.rotation_dtype.empty())
    throw UsageError("--rotation-dtype: applies to --family rope with FP8 codes (--dtype e4m3fn|e5m2)");
  if (!c.against && !o.against.empty())
    throw UsageError("--against: applies to " + families_reading(kCheckers, &Checker::against));
}

// How the pass over the data runs, not what it checks.
void add_pass_options(CLI::App& cmd, CheckOptions& o) {
  cmd.add_option("--threads", o.threads,
                 "RoPE: threads for the pass over the data (default 0: one per 2^18 elements, at most every "
                 "hardware thread; the report is the same for any count but the p99 columns)");
  cmd.add_flag("--exact-p99", o.exact_p99,
               "RoPE and sinusoidal tables: each band's p99 over every element (default: a band of 2^21 "
               "elements and more takes it over 1 token or table row in 8, a fifth to a third faster)");
}

}  // namespace

void add_check(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("check", "Check an outside implementation's .npy output against the reference");
  auto o = std::make_shared<CheckOptions>();
  cmd->add_option(
      "TABLE", o->table,
      "Sinusoidal: the [positions, dim] table; ALiBi: [heads] slopes or [heads, queries, keys] bias (.npy)");
  cmd->add_option("--family", o->family, "sinusoidal, rope, alibi, scores or t5")->required();
  cmd->add_option("--input", o->input, "RoPE: q or k before rotation (.npy, [tokens, heads, head_dim])");
  cmd->add_option("--output", o->output, "RoPE: the same after rotation (.npy)");
  cmd->add_option("--positions", o->positions, "Half-open range A:B, one per row/token (every axis)");
  cmd->add_option(
      "--positions-file", o->positions_file,
      ".npy of integers ([n_axes, T] for M-RoPE and vision), or a text file of them; also a float "
      ".npy of real positions, exact as stored (sinusoidal: diffusion timesteps; rope: a video "
      "grid's fractional coordinates)");
  cmd->add_option("--dim", o->dim, "Sinusoidal: model dimension (default: the table's width)");
  cmd->add_option("--head-dim", o->head_dim, "RoPE: head dimension (default: the data's last axis)");
  cmd->add_option("--rotary-dim", o->rotary_dim,
                  "RoPE: channels rotated, even, in [2, head_dim] (0, the default: all of them)");
  cmd->add_option("--base,--max-period", o->base, "Frequency base (diffusers' max_period)")
      ->capture_default_str();
  cmd->add_option("--layout", o->layout,
                  "interleaved|concatenated (sinusoidal), interleaved|halfsplit|deinterleave (rope)");
  cmd->add_option(
      "--dtype", o->dtype,
      "Element type; bf16 reads 16-bit integers as bfloat16 bits; rope: e4m3fn or e5m2 reads --output "
      "as FP8 codes (uint8), quantized with --scale");
  cmd->add_option(
      "--rotation-dtype", o->rotation_dtype,
      "RoPE's FP8 codes: the type the engine rotated in before quantizing (f32, the default; bf16 or "
      "f16: an unfused RoPE, then an fp8 cache)");
  cmd->add_option("--against", o->against,
                  "A second implementation's output of the same input (RoPE --output or sinusoidal TABLE): "
                  "both checked, band by band, which is wrong where");
  cmd->add_option("--json", o->json, "Also write the result as JSON (schema pe-suite/check/2) to this file");
  add_pass_options(*cmd, *o);
  cmd->add_flag("--heads-first", o->heads_first,
                "RoPE data is [heads, tokens, head_dim] (as in Hugging Face)");
  auto* max_abs = cmd->add_option("--max-abs", o->max_abs, "Budget: this absolute error for every element");
  cmd->add_option("--contract", o->contract,
                  "Budget: a registered variant's contract (default: the class of the data's precision)");
  add_scaling_options(*cmd, o->scaling);
  add_form_options(*cmd, o->form);
  cmd->add_flag(
      "--no-rope", o->no_rope,
      "RoPE: a NoPE layer (Llama-4's every 4th, SmolLM3, Cohere2): output = input, times the temperature");
  add_temperature_options(*cmd, o->temperature);
  add_xpos_options(*cmd, o->temperature);
  add_alibi_options(*cmd, o->alibi);
  add_sinusoidal_options(*cmd, o->sinusoidal);
  add_hf_config_options(*cmd, o->hf);
  add_scores_options(*cmd, o->scores);
  cmd->callback([o, cmd, max_abs, &exit_code] {
    check_output_paths(*cmd, {"--json"},
                       {"TABLE", "--input", "--output", "--against", "--positions-file", "--hf-config",
                        "--short-factors", "--long-factors"});
    read_alibi_flags(*cmd, o->alibi);
    read_form_flags(*cmd, o->form);
    read_scaling_flags(*cmd, o->scaling);
    read_temperature_flags(*cmd, o->temperature);
    o->has_max_abs = max_abs->count() > 0;
    read_scores_flags(*cmd, o->scores);
    if (o->family == "scores") {
      reject_t5_flags(*cmd, "applies to --family t5 only");
      o->spec = rope_spec_of(*cmd, *o, true);
      o->hf_source = hf_source(o->hf, *cmd);
      exit_code = check_scores(*o, *cmd);
      return;
    }
    if (o->family == "t5") {
      exit_code = check_t5(*o, *cmd);
      return;
    }
    reject_scores_flags(*cmd, "applies to --family scores only");
    reject_t5_flags(*cmd, "applies to --family t5 only");
    const auto family = parse_family(o->family);
    const auto checker = std::find_if(std::begin(kCheckers), std::end(kCheckers),
                                      [&](const Checker& c) { return family && c.family == *family; });
    if (checker == std::end(kCheckers)) {
      std::string known;
      for (const Checker& c : kCheckers)
        known += (known.empty() ? "" : " or ") + std::string(to_string(c.family));
      throw UsageError("--family: check reads " + known + " data, or scores or t5, got '" + o->family + "'");
    }
    reject_unread(*checker, *o, *cmd);
    o->spec = rope_spec_of(*cmd, *o, checker->family == Family::Rope);
    if (checker->family == Family::Sinusoidal) {
      read_sinusoidal_flags(*cmd, o->sinusoidal);
      if (cmd->count("--base") > 0) o->sinusoidal.spec.base = o->base;
      if (cmd->count("--layout") > 0)
        o->sinusoidal.spec.layout = check::parse_layout(o->layout, Family::Sinusoidal, check_names());
    }
    o->hf_source = hf_source(o->hf, *cmd);
    exit_code = checker->check(*o);
  });
}

}  // namespace pe::cli

// pe-suite check: an outside implementation's dumped output (.npy) against the exact reference,
// within a budget: per position band, the worst elements, a verdict, and when it fails badly a
// diagnosis of the convention that fits (diagnose.h).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "alibi_cli.h"
#include "check_against.h"
#include "check_diagnosis.h"
#include "check_json.h"
#include "common.h"
#include "contract_class.h"
#include "diagnose.h"
#include "error_bands.h"
#include "form_options.h"
#include "hf_config_options.h"
#include "in_process.h"
#include "npy.h"
#include "pe/harness/measure.h"
#include "pe/pe.h"
#include "progress.h"
#include "report_text.h"
#include "scaling_options.h"
#include "temperature_options.h"

namespace pe::cli {
namespace {

struct CheckOptions {
  std::string family, table, input, output, positions, positions_file, layout, dtype, contract, json;
  std::string against;  // a second implementation's output of the same input
  std::int64_t dim = 0, head_dim = 0, rotary_dim = 0;
  double base = 10000.0, max_abs = 0;
  bool heads_first = false, has_max_abs = false, no_rope = false;
  ScalingFlags scaling;
  FormFlags form;
  AlibiFlags alibi;
  TemperatureFlags temperature;
  HfConfigFlags hf;
  nlohmann::json hf_config;                    // the resolution, for --json
  std::vector<HfRopeSetting> hf_other_layers;  // the config's other RoPE settings, for the diagnosis
  std::string head_dim_flag = "--head-dim";    // or the config key the head dim came from
};

// A budget with the words that say where it came from.
struct Budget : harness::Budget {
  std::string text;
};

Budget budget_for(const CheckOptions& o, Family family, DType dtype) {
  if (o.has_max_abs && !o.contract.empty()) throw UsageError("--max-abs and --contract: give at most one");
  if (o.has_max_abs) {
    if (!(o.max_abs >= 0)) throw UsageError(fmt::format("--max-abs: must be >= 0, got {}", o.max_abs));
    return {{nullptr, dtype, o.max_abs}, fmt::format("|err| <= {:g} (--max-abs)", o.max_abs)};
  }
  // Default: what every known formulation computing in the file's precision achieves (the largest of
  // their budgets): a correct kernel written the way engines write it passes.
  if (o.contract.empty()) {
    Budget b;
    b.dtype = dtype;
    const std::vector<const Variant*> members = default_class(family, dtype);
    for (const Variant* v : members) b.any_of.push_back(&v->contract());
    if (members.empty())
      throw UsageError(
          fmt::format("--dtype: no {} variant computes {} data", to_string(family), to_string(dtype)));
    b.text =
        fmt::format("the largest of the {} formulations' contracts ({}; --contract or --max-abs to tighten)",
                    precision_class_words(dtype, members), names_of(members));
    return b;
  }
  const std::string& name = o.contract;
  const Variant* v = find_variant(name);
  if (v == nullptr) throw UsageError("--contract: no variant named '" + name + "' (see pe-suite list)");
  if (v->family() != family)
    throw UsageError(fmt::format("--contract: {} is a {} variant, the data is {}", name,
                                 to_string(v->family()), to_string(family)));
  const auto& outs = v->contract().outputs;
  if (std::find(outs.begin(), outs.end(), dtype) == outs.end())
    throw UsageError(fmt::format("--contract: {} promises nothing for {} output", name, to_string(dtype)));
  return {{&v->contract(), dtype}, fmt::format("contract of {} (--contract)", name)};
}

std::string shape_words(const std::vector<std::size_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

NpyArray load(const std::string& path, const std::string& dtype, const char* option) {
  std::optional<DType> declared;
  if (!dtype.empty()) {
    declared = parse_dtype(dtype);
    if (!declared) throw UsageError("--dtype: expected f32, f64, f16 or bf16, got '" + dtype + "'");
  }
  NpyArray a = read_npy(path, declared.value_or(DType::F32));
  if (a.integer)
    throw UsageError(
        fmt::format("{}: {} holds integers; if they are bfloat16 bits pass --dtype bf16", option, path));
  if (declared && *declared != a.dtype)
    throw UsageError(fmt::format("--dtype: {} given, but {} holds {}", dtype, path, to_string(a.dtype)));
  return a;
}

// --against's file (empty without it): the same shape and type as `a`, which `a_name` names.
NpyArray load_against(const CheckOptions& o, const NpyArray& a, const char* a_name) {
  if (o.against.empty()) return {};
  NpyArray b = load(o.against, o.dtype, "--against");
  if (b.shape != a.shape || b.dtype != a.dtype)
    throw UsageError(fmt::format(
        "--against: {} holds {} {}, {} {} {}: compare two outputs of one shape and type", o.against,
        to_string(b.dtype), shape_words(b.shape), a_name, to_string(a.dtype), shape_words(a.shape)));
  return b;
}

void print_verdict(const harness::Measurement& bands, const Budget& budget, CheckJson& out,
                   const ContractTally* tally = nullptr) {
  out.measured(bands, budget.dtype, budget.text);
  if (tally != nullptr) out.j["contracts"] = tally->to_json();
  say("budget: {}\n\n{}\n", budget.text, band_table(bands));
  say("verdict: {} ({} of {} elements over budget; max |err| {:.3g})\n", bands.pass() ? "PASS" : "FAIL",
      bands.violations(), bands.count(), bands.max_abs());
  if (tally != nullptr) say("contracts: {}\n", tally->summary());
}

Layout layout_for(const CheckOptions& o, Family family) {
  if (o.layout.empty()) return default_layout(family);
  const auto l = parse_layout(o.layout);
  if (!l) throw UsageError("--layout: unknown layout '" + o.layout + "'");
  return *l;
}

int check_sinusoidal(const CheckOptions& o) {
  reject_scaling_flags(o.scaling, "RoPE scaling applies to --family rope only");
  reject_form_flags(o.form, "rotary forms apply to --family rope only");
  if (o.table.empty()) throw UsageError("TABLE: give the .npy table to check");
  const NpyArray a = load(o.table, o.dtype, "TABLE");
  const auto positions = positions_from(o.positions, o.positions_file);
  if (a.shape.size() != 2)
    throw UsageError(
        fmt::format("TABLE: expected [positions, dim], {} has rank {}", o.table, a.shape.size()));
  if (a.shape[0] != positions.size())
    throw UsageError(
        fmt::format("TABLE: {} has {} rows, the positions are {}", o.table, a.shape[0], positions.size()));
  if (o.dim != 0 && static_cast<std::size_t>(o.dim) != a.shape[1])
    throw UsageError(fmt::format("--dim: {} given, {} has {} columns", o.dim, o.table, a.shape[1]));
  const SinusoidalParams params{static_cast<std::int64_t>(a.shape[1]), o.base,
                                layout_for(o, Family::Sinusoidal)};
  const SinusoidalPlan plan(params);  // validates dim, base, layout
  const Budget budget = budget_for(o, Family::Sinusoidal, a.dtype);
  say("checking {}: {} positions x dim {}, {}, {}, base {:g}\n", o.table, positions.size(), plan.dim(),
      to_string(a.dtype), to_string(params.layout), params.base);

  const NpyArray b = load_against(o, a, "TABLE");
  harness::Measurement bands;
  ContractTally tally(Family::Sinusoidal, a.dtype);
  Progress progress("check", positions.size());
  harness::measure_sinusoidal(params, positions, a.values, budget, [&](const harness::ElementRecord& e) {
    progress.update(static_cast<std::size_t>(e.row));
    bands.add(e);
    tally.add(e);
  });
  CheckJson out{o.json};
  out.j["family"] = "sinusoidal";
  out.j["table"] = o.table;
  out.j["parameters"] = {{"dim", plan.dim()},
                         {"base", params.base},
                         {"layout", to_string(params.layout)},
                         {
                             "positions",
                             {positions.front(), positions.back()},
                         }};
  print_verdict(bands, budget, out, &tally);
  const Convention given{params.layout, params.base};
  std::optional<Against> against;
  if (!o.against.empty()) {
    against.emplace(a.values);
    harness::measure_sinusoidal(params, positions, b.values, budget, [&](const harness::ElementRecord& e) {
      against->add(e, static_cast<std::size_t>(e.row) * plan.dim() + static_cast<std::size_t>(e.channel));
    });
    say("{}", against->table(bands, o.table, o.against));
    out.j["against"] = against->to_json(bands, a.dtype, o.against);
  }
  // The diagnosis is the wrong one's: A's, or B's when only B fails.
  const bool b_only = against && bands.pass() && !against->b().pass();
  const harness::Measurement& failing = b_only ? against->b() : bands;
  if (!failing.pass() && failing.max_abs() >= 1e-3) {
    if (b_only) say("\nB ({}):", o.against);
    print_diagnosis(diagnose_sinusoidal(b_only ? b.values : a.values, plan.dim(), positions, given), given,
                    failing, out);
  }
  out.write();
  return bands.pass() && (!against || against->b().pass()) ? kOk : kCheckFailed;
}

// The gain's error model for the data type, or nothing under a flat --max-abs.
harness::OutputGain output_gain(const CheckOptions& o, const AttnTemperature& t, DType dtype) {
  if (o.has_max_abs || t.type == AttnTemperatureType::None) return {t};
  return {t, gain_relative_error(dtype), gain_floor(dtype)};
}

// A NoPE layer: y = t(p)·x, bit for bit without a temperature (an identity has nothing to round).
// When it fails, RoPE at the bases of real configs is fitted (TensorRT-LLM PR #3382 rotated one).
int check_nope(const CheckOptions& o, const NpyArray& xa, const NpyArray& ya, const AttnTemperature& t) {
  reject_scaling_flags(scaling_flags_besides(o.scaling, t), "a NoPE layer has no rotation to scale");
  reject_form_flags(o.form, "a NoPE layer has no rotary form");
  if (o.rotary_dim != 0) throw UsageError("--rotary-dim: a NoPE layer (--no-rope) rotates nothing");
  if (!o.layout.empty()) throw UsageError("--layout: a NoPE layer (--no-rope) rotates nothing");
  if (!o.contract.empty())
    throw UsageError(
        "--contract: a NoPE layer has no rotation to contract for (--max-abs: a fused kernel's)");
  if (o.has_max_abs && !(o.max_abs >= 0))
    throw UsageError(fmt::format("--max-abs: must be >= 0, got {}", o.max_abs));
  const std::size_t hd = xa.shape.back();
  const auto positions = positions_from(o.positions, o.positions_file);
  const RopeBatch batch = rope_batch_of(xa.shape, positions, o.heads_first, o.input);
  const harness::Budget budget{nullptr, ya.dtype, o.has_max_abs ? o.max_abs : 0.0};
  const std::string budget_text = o.has_max_abs ? fmt::format("|err| <= {:g} (--max-abs)", o.max_abs)
                                  : t.type == AttnTemperatureType::None
                                      ? "identity, bit for bit (--max-abs for a fused kernel)"
                                      : "t(p)*x within " + describe_gain_budget(ya.dtype, "|x|");
  say("checking {} -> {}: {} tokens x {} heads x head_dim {}, {}, NoPE layer (no rotation){}\n", o.input,
      o.output, batch.tokens(), batch.heads, hd, to_string(ya.dtype),
      t.type == AttnTemperatureType::None ? "" : ", attention temperature " + describe_temperature(t));
  harness::Measurement bands;
  Progress progress("check", batch.tokens());
  harness::measure_nope(
      batch, hd, xa.values, ya.values, budget,
      [&](const harness::ElementRecord& e) {
        progress.update(static_cast<std::size_t>(e.row));
        bands.add(e);
      },
      output_gain(o, t, ya.dtype));
  CheckJson out{o.json};
  out.j["family"] = "rope";
  out.j["input"] = o.input;
  out.j["output"] = o.output;
  out.j["parameters"] = {{"no_rope", true}, {"attn_temperature", to_string(t.type)}};
  if (!o.hf_config.is_null()) out.j["hf_config"] = o.hf_config;
  print_verdict(bands, {budget, budget_text}, out);
  Convention given{default_layout(Family::Rope), o.base};
  given.rotated = false;
  given.temperature = t;
  if (!bands.pass() && bands.max_abs() >= 1e-3)
    print_diagnosis(diagnose_nope({xa.values, ya.values, batch, hd, hd}, given), given, bands, out);
  out.write();
  return bands.pass() ? kOk : kCheckFailed;
}

int check_rope(const CheckOptions& o) {
  if (o.input.empty() || o.output.empty())
    throw UsageError("--input and --output: RoPE needs both .npy files");
  const AttnTemperature temperature = to_attn_temperature(o.temperature, o.scaling);
  const NpyArray xa = load(o.input, o.dtype, "--input"), ya = load(o.output, o.dtype, "--output");
  if (xa.shape != ya.shape) throw UsageError("--output: shape differs from --input's");
  const NpyArray yb = load_against(o, ya, "--output");
  const std::size_t hd = xa.shape.back();
  if (o.head_dim != 0 && static_cast<std::size_t>(o.head_dim) != hd)
    throw UsageError(
        fmt::format("{}: {} given, the data's last axis is {}", o.head_dim_flag, o.head_dim, hd));
  if (o.no_rope && !o.against.empty())
    throw UsageError("--against: a NoPE layer (--no-rope) has no rotation");
  if (o.no_rope) return check_nope(o, xa, ya, temperature);
  const auto head_dim = static_cast<std::int64_t>(hd);
  const RopeParams params =
      with_form({head_dim, rotary_dim_for(o.scaling, head_dim, o.rotary_dim, "--rotary-dim"), o.base,
                 layout_for(o, Family::Rope), to_rope_scaling(scaling_flags_besides(o.scaling, temperature))},
                o.form);
  // HF reads the temperature at the token's index (cache_position), which the forms' positions are not.
  if (temperature.type != AttnTemperatureType::None && !params.form.is_text())
    throw UsageError("--attn-temperature: applies to text RoPE (the forms' positions are not token indices)");
  const std::size_t axes = n_axes(params.form);
  const auto positions = axis_positions_from(o.positions, o.positions_file, axes, axes_flag(o.form));
  const RopeBatch batch = rope_batch_of(xa.shape, positions, o.heads_first, o.input, axes);
  const std::vector<double>& x = xa.values;
  const std::vector<double>& y = ya.values;
  const std::size_t heads = batch.heads;
  const RopePlan plan = rope_plan(params);
  Budget budget = budget_for(o, Family::Rope, ya.dtype);
  const harness::OutputGain gain = output_gain(o, temperature, ya.dtype);
  if (gain.relative_error > 0)
    budget.text += ", times t(p), plus " + describe_gain_budget(ya.dtype, "(|x_a| + |x_b|)");
  if (budget.contract != nullptr && plan.effective_base() > budget.contract->max_base) {
    say("note: the scaled base {:g} exceeds the contract's max_base {:g}: its budget is not derived "
        "for it\n",
        plan.effective_base(), budget.contract->max_base);
  }
  const std::string form = describe_form(params);
  say("checking {} -> {}: {} tokens x {} heads x head_dim {} (rotary {}{}), {}, {}, base {:g}{}\n", o.input,
      o.output, batch.tokens(), heads, hd, plan.rotary_dim(), form.empty() ? "" : ", " + form,
      to_string(ya.dtype), to_string(params.layout), params.base,
      params.scaling.type == RopeScalingType::None ? ""
                                                   : ", scaling " + describe_scaling(params.scaling, plan));
  if (temperature.type != AttnTemperatureType::None)
    say("attention temperature {}\n", describe_temperature(temperature));

  harness::Measurement bands;
  ContractTally tally(Family::Rope, ya.dtype, &plan);
  const harness::ElementRecord* moved = nullptr;  // the first pass-through channel that changed
  harness::ElementRecord first_moved;
  std::vector<bool> over(batch.tokens() * heads);  // the rows with an element over budget
  Progress progress("check", batch.tokens());
  harness::measure_rope(
      params, batch, x, y, budget,
      [&](const harness::ElementRecord& e) {
        progress.update(static_cast<std::size_t>(e.row));
        bands.add(e);
        tally.add(e);
        if (e.unchanged && e.abs_error != 0 && moved == nullptr) moved = &(first_moved = e);
        if (!(e.ratio() <= 1))
          over[static_cast<std::size_t>(e.row) * heads + static_cast<std::size_t>(e.head)] = true;
      },
      {}, RopeDirection::Forward, gain);
  CheckJson out{o.json};
  out.j["family"] = "rope";
  out.j["input"] = o.input;
  out.j["output"] = o.output;
  out.j["parameters"] = {
      {"head_dim", hd},
      {"rotary_dim", plan.rotary_dim()},
      {"rotary_offset", params.rotary_offset},
      {"base", params.base},
      {"layout", to_string(params.layout)},
      {"scaling", params.scaling.type == RopeScalingType::None ? std::string("none")
                                                               : describe_scaling(params.scaling, plan)},
      {"form", form.empty() ? std::string("text") : form},
      {"attn_temperature", to_string(temperature.type)},
      {"tokens", batch.tokens()},
      {"heads", heads}};
  if (!o.hf_config.is_null()) out.j["hf_config"] = o.hf_config;
  print_verdict(bands, budget, out, &tally);
  if (moved != nullptr) {
    say("pass-through: channel {} of token {} head {} lies outside the rotated channels [{}, {}) and must "
        "equal the input bit for bit (budget 0); it moved by {:.3g} ({:.3g} ulp)\n",
        moved->channel, moved->row, moved->head, params.rotary_offset,
        params.rotary_offset + plan.rotary_dim(), moved->abs_error, moved->ulp);
  }
  Convention given{params.layout, params.base};
  given.form = params.form;
  given.rotary_offset = params.rotary_offset;
  given.temperature = temperature;
  given.rotary_dim = static_cast<std::int64_t>(plan.rotary_dim());
  given.scaling = params.scaling;
  // Every candidate is a RopePlan (with its attention factor): the mistakes of the form, layout, base,
  // positions and direction under the given scaling, and those of the check's own arguments (rotary
  // dim, the scaling ignored, its factor, another method, YaRN's truncate and betas).
  std::optional<Against> against;
  if (!o.against.empty()) {  // B: the same input through another implementation
    against.emplace(y);
    std::vector<bool> over_b(over.size());
    harness::measure_rope(
        params, batch, x, yb.values, budget,
        [&](const harness::ElementRecord& e) {
          against->add(e, batch.row(static_cast<std::size_t>(e.row), static_cast<std::size_t>(e.head)) +
                              static_cast<std::size_t>(e.channel));
          if (!(e.ratio() <= 1))
            over_b[static_cast<std::size_t>(e.row) * heads + static_cast<std::size_t>(e.head)] = true;
        },
        {}, RopeDirection::Forward, gain);
    say("{}", against->table(bands, o.output, o.against));
    out.j["against"] = against->to_json(bands, ya.dtype, o.against);
    if (bands.pass() && !against->b().pass()) {  // the diagnosis is the wrong one's
      say("\nB ({}):", o.against);
      diagnose_rope_output({x, yb.values, batch, hd, plan.rotary_dim(), params.scaling}, plan, given,
                           against->b(), over_b, out,
                           other_layers(o.hf_other_layers, given, hd, o.positions, o.positions_file));
      out.write();
      return kCheckFailed;
    }
  }
  diagnose_rope_output({x, y, batch, hd, plan.rotary_dim(), params.scaling}, plan, given, bands, over, out,
                       other_layers(o.hf_other_layers, given, hd, o.positions, o.positions_file));
  out.write();
  return bands.pass() && (!against || against->b().pass()) ? kOk : kCheckFailed;
}

int check_alibi_table(const CheckOptions& o) {
  if (!o.against.empty()) throw UsageError("--against: applies to --family sinusoidal and rope");
  reject_scaling_flags(o.scaling, "RoPE scaling applies to --family rope only");
  reject_form_flags(o.form, "rotary forms apply to --family rope only");
  if (o.table.empty()) throw UsageError("TABLE: give the .npy slopes [heads] or bias [heads, queries, keys]");
  const NpyArray a = load(o.table, o.dtype, "TABLE");
  const Budget budget = budget_for(o, Family::Alibi, a.dtype);
  return check_alibi(a, o.table, o.alibi, budget, budget.text, o.json);
}

// How `check` reads each family's dumped data.
struct Checker {
  Family family;
  int (*check)(const CheckOptions&);
};
constexpr Checker kCheckers[] = {
    {Family::Sinusoidal, check_sinusoidal}, {Family::Rope, check_rope}, {Family::Alibi, check_alibi_table}};

}  // namespace

void add_check(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("check", "Check an outside implementation's .npy output against the reference");
  auto o = std::make_shared<CheckOptions>();
  cmd->add_option(
      "TABLE", o->table,
      "Sinusoidal: the [positions, dim] table; ALiBi: [heads] slopes or [heads, queries, keys] bias (.npy)");
  cmd->add_option("--family", o->family, "sinusoidal, rope or alibi")->required();
  cmd->add_option("--input", o->input, "RoPE: q or k before rotation (.npy, [tokens, heads, head_dim])");
  cmd->add_option("--output", o->output, "RoPE: the same after rotation (.npy)");
  cmd->add_option("--positions", o->positions, "Half-open range A:B, one per row/token (every axis)");
  cmd->add_option("--positions-file", o->positions_file,
                  ".npy of integers ([n_axes, T] for M-RoPE and vision), or a text file of them");
  cmd->add_option("--dim", o->dim, "Sinusoidal: model dimension (default: the table's width)");
  cmd->add_option("--head-dim", o->head_dim, "RoPE: head dimension (default: the data's last axis)");
  cmd->add_option("--rotary-dim", o->rotary_dim, "RoPE: channels rotated (default: all)");
  cmd->add_option("--base", o->base, "Frequency base")->capture_default_str();
  cmd->add_option("--layout", o->layout,
                  "interleaved|concatenated (sinusoidal), interleaved|halfsplit|deinterleave (rope)");
  cmd->add_option("--dtype", o->dtype, "Element type; bf16 reads 16-bit integers as bfloat16 bits");
  cmd->add_option("--against", o->against,
                  "A second implementation's output of the same input (RoPE --output or sinusoidal TABLE): "
                  "both checked, band by band, which is wrong where");
  cmd->add_option("--json", o->json, "Also write the result as JSON (schema pe-suite/check/1) to this file");
  cmd->add_flag("--heads-first", o->heads_first,
                "RoPE data is [heads, tokens, head_dim] (as in Hugging Face)");
  auto* max_abs = cmd->add_option("--max-abs", o->max_abs, "Budget: this absolute error for every element");
  cmd->add_option(
      "--contract", o->contract,
      "Budget: a registered variant's contract (default: <family>.scalar_f32, or scalar_f64 for f64 data)");
  add_scaling_options(*cmd, o->scaling);
  add_form_options(*cmd, o->form);
  cmd->add_flag("--no-rope", o->no_rope,
                "RoPE: a NoPE layer (Llama-4's every 4th, SmolLM3, Cohere2): output = input, times the "
                "temperature");
  add_temperature_options(*cmd, o->temperature);
  add_alibi_options(*cmd, o->alibi);
  add_hf_config_options(*cmd, o->hf);
  cmd->callback([o, cmd, max_abs, &exit_code] {
    note_given_alibi_flags(*cmd, o->alibi);
    o->has_max_abs = max_abs->count() > 0;
    o->scaling.given = given_scaling_flags(*cmd);
    o->temperature.given = given_temperature_flags(*cmd);
    if (!o->hf.path.empty() && parse_family(o->family) != Family::Rope)
      throw UsageError("--hf-config: applies to --family rope");
    if (const auto r = apply_hf_config(
            o->hf, *cmd,
            {&o->base, &o->layout, &o->rotary_dim, "--rotary-dim", &o->head_dim, &o->head_dim_flag,
             &o->scaling, &o->form, &o->temperature, &o->no_rope, &o->positions, &o->positions_file})) {
      o->hf_config = r->to_json();
      for (HfRopeSetting& s : hf_rope_settings(read_hf_config(o->hf.path), o->hf.path))
        if (s.rope && s.name != r->setting.name) o->hf_other_layers.push_back(std::move(s));
    }
    if (const auto family = parse_family(o->family); family && *family != Family::Rope) {
      reject_temperature_flags(o->temperature, "applies to --family rope only");
      if (o->no_rope) throw UsageError("--no-rope: applies to --family rope only");
    }
    const auto family = parse_family(o->family);
    const auto checker = std::find_if(std::begin(kCheckers), std::end(kCheckers),
                                      [&](const Checker& c) { return family && c.family == *family; });
    if (checker == std::end(kCheckers)) {
      std::string known;
      for (const Checker& c : kCheckers)
        known += (known.empty() ? "" : " or ") + std::string(to_string(c.family));
      throw UsageError("--family: check reads " + known + " data, got '" + o->family + "'");
    }
    if (checker->family != Family::Alibi) reject_alibi_flags(o->alibi, "applies to --family alibi only");
    exit_code = checker->check(*o);
  });
}

int check_in_process(const std::vector<std::string>& args) {
  return run_in_process(add_check, "check", args);
}

}  // namespace pe::cli

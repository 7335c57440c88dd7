// An outside RoPE kernel's output against the exact reference, from its input and output (check.h); a
// NoPE layer's against the identity. A model config fills what the request leaves alone first.
#include <fmt/format.h>

#include <algorithm>

#include "engine/against.h"
#include "engine/rope_pass.h"
#include "engine/verdict.h"
#include "explain/explanation.h"
#include "explain/xpos_fit.h"
#include "pe/check/check.h"
#include "pe/harness/measure.h"
#include "pe/pe.h"

namespace pe::check {
namespace {

// The request with its model config applied: the spec as the data is checked under.
struct Resolved {
  RopeSpec o;
  std::optional<HfResolution> hf;
  std::vector<HfRopeSetting> other_layers;  // the config's other RoPE settings, for the diagnosis
  std::string head_dim_source;              // what names the head dim in messages
  std::int64_t mla_nope_head_dim = 0;       // a DeepSeek MLA config's qk_nope_head_dim
};

Resolved resolve(const RopeRequest& r, const Names& names) {
  Resolved out{r.spec, std::nullopt, {}, names("head_dim")};
  HfUse use;
  use.positions = [&r, &names] {
    // HF's seq_len = max(position_ids) + 1 counts tokens: real positions do not say it.
    if (!r.positions.real.empty())
      names.fail("scaling",
                 fmt::format("dynamic and longrope read the sequence length from integer positions; "
                             "the positions are real (give {})",
                             names("seq_len")));
    return r.positions.values;
  };
  out.hf = apply_hf_config(r.hf, out.o, use, names);
  if (!out.hf) return out;
  const HfRopeSetting& s = out.hf->setting;
  if (!r.spec.head_dim && out.o.head_dim && s.rope()) {  // the config's
    out.head_dim_source = fmt::format("{}: head_dim from {}", r.hf.source,
                                      std::find_if(s.sources.begin(), s.sources.end(), [](const HfValue& v) {
                                        return v.name == "head_dim";
                                      })->key);
    if (s.mla) out.mla_nope_head_dim = s.mla_nope_head_dim;
  }
  for (HfRopeSetting& other : hf_rope_settings(r.hf.config, r.hf.source))
    if (other.rope() && other.name != s.name) out.other_layers.push_back(std::move(other));
  return out;
}

// Whether no element has the all-ones exponent of an infinity or a NaN: one pass over the bits, which the
// compiler runs in vectors (a large batch is read at memory speed, not element by element).
template <class Bits>
bool no_all_ones_exponent(const void* data, std::size_t n, Bits exponent) {
  Bits bad = 0;
  const auto* p = static_cast<const Bits*>(data);
  for (std::size_t i = 0; i < n; ++i) bad |= (p[i] & exponent) == exponent ? 1 : 0;
  return bad == 0;
}
bool all_finite(const DataView& x) {
  const std::size_t n = x.count();
  const void* data = x.typed != nullptr ? x.typed : static_cast<const void*>(x.values.data());
  const DType type = x.typed != nullptr ? x.dtype : DType::F64;
  switch (type) {
    case DType::F64:
      return no_all_ones_exponent<std::uint64_t>(data, n, 0x7ff0000000000000ULL);
    case DType::F32:
      return no_all_ones_exponent<std::uint32_t>(data, n, 0x7f800000U);
    case DType::BF16:
      return no_all_ones_exponent<std::uint16_t>(data, n, 0x7f80U);
    case DType::F16:
      return no_all_ones_exponent<std::uint16_t>(data, n, 0x7c00U);
  }
  return false;
}

// The tokens whose every input value is finite (empty: all of them), after saying which are not; BadRequest
// when none is.
harness::Sample finite_tokens(const RopeBatch& batch, const DataView& x, std::size_t hd, const Names& names,
                              Report& out) {
  if (all_finite(x)) return {};
  const harness::Values xv = x.read();
  std::vector<std::size_t> finite;
  std::size_t count = 0, first_token = 0, first_head = 0, first_channel = 0;
  double first_value = 0;
  for (std::size_t t = 0; t < batch.tokens(); ++t) {
    bool ok = true;
    for (std::size_t h = 0; h < batch.heads; ++h) {
      const std::size_t row = batch.row(t, h);
      for (std::size_t ch = 0; ch < hd; ++ch) {
        const double v = xv[row + ch];
        if (std::isfinite(v)) continue;
        if (count++ == 0) first_token = t, first_head = h, first_channel = ch, first_value = v;
        ok = false;
      }
    }
    if (ok) finite.push_back(t);
  }
  if (count == 0) return {};
  const std::string where = fmt::format("first: token {}, head {}, channel {} = {}", first_token, first_head,
                                        first_channel, first_value);
  if (finite.empty())
    names.fail("x", fmt::format("every token holds a non-finite value ({} of them; {}): nothing to check",
                                count, where));
  out.say(
      "input: {} non-finite values in {} ({}): the exact rotation of NaN or inf is undefined, so their {} of "
      "{} "
      "tokens are the input's, not judged\n",
      count, names("x"), where, batch.tokens() - finite.size(), batch.tokens());
  out.doc.nonfinite_input = {{"values", count}, {"tokens", batch.tokens() - finite.size()}};
  return {finite, {}};
}

// The gain's error model for the data type, or nothing under a flat bound.
harness::OutputGain output_gain(const RopeRequest& r, const AttnTemperature& t, DType dtype,
                                const XPos& xpos = {}) {
  if (r.budget.max_abs || (t.type == AttnTemperatureType::None && !xpos.enabled())) return {t, 0, 0, xpos};
  if (xpos.enabled())
    return {t,    xpos_relative_error(dtype), gain_floor(dtype),
            xpos, kXPosPerExponent,           xpos_table_floor(dtype)};
  return {t, gain_relative_error(dtype), gain_floor(dtype)};
}

// Quiet (the verdict alone): the keys not read, of which the caller warns, and nothing else.
void add_hf(Report& out, const std::optional<HfResolution>& hf, bool quiet = false) {
  if (hf) out.doc.hf_config = quiet ? nlohmann::json{{"not_read", hf->not_read}} : hf->to_json();
}

// A NoPE layer: y = t(p)·x, bit for bit without a temperature (an identity has nothing to round).
// When it fails, RoPE at the bases of real configs is fitted (TensorRT-LLM PR #3382 rotated one).
Report check_nope(const RopeRequest& r, const Resolved& v, const AttnTemperature& t, const Names& names,
                  Report out) {
  const RopeSpec& o = v.o;
  reject_scaling(scaling_besides(o.scaling, t), names, "a NoPE layer has no rotation to scale");
  reject_form(o.form, names, "a NoPE layer has no rotary form");
  reject_xpos(o.xpos, names, "a NoPE layer has no rotated pairs to gain");
  const std::string nope = names("no_rope");
  if (o.rotary_dim.value_or(0) != 0) names.fail("rotary_dim", "a NoPE layer (" + nope + ") rotates nothing");
  if (o.layout) names.fail("layout", "a NoPE layer (" + nope + ") rotates nothing");
  if (!r.budget.contract.empty())
    names.fail("contract", fmt::format("a NoPE layer has no rotation to contract for ({}: a fused kernel's)",
                                       names("max_abs")));
  if (r.budget.max_abs && !(*r.budget.max_abs >= 0))
    names.fail("max_abs", fmt::format("must be >= 0, got {}", *r.budget.max_abs));
  std::vector<double> x_storage, y_storage;
  const DataView x = as_doubles(r.x, x_storage), y = as_doubles(r.y, y_storage);
  const std::size_t hd = x.shape.back();
  const std::vector<std::int64_t> keys = band_keys(r.positions.real);  // the batch's at real positions
  const RopeBatch batch = rope_batch_of(x.shape, r.positions.real.empty() ? r.positions.values : keys,
                                        r.heads_first, x.name, 1, names("heads_first"));
  const double max_abs = r.budget.max_abs.value_or(0.0);
  const harness::Budget budget{nullptr, y.dtype, max_abs};
  const std::string budget_text =
      r.budget.max_abs ? fmt::format("|err| <= {:g} ({})", max_abs, names("max_abs"))
      : t.type == AttnTemperatureType::None
          ? fmt::format("identity, bit for bit ({} for a fused kernel)", names("max_abs"))
          : "t(p)*x within " + describe_gain_budget(y.dtype, "|x|");
  out.say("checking {} -> {}: {} tokens x {} heads x head_dim {}, {}, NoPE layer (no rotation){}\n", x.name,
          y.name, batch.tokens(), batch.heads, hd, to_string(y.dtype),
          t.type == AttnTemperatureType::None ? "" : ", attention temperature " + describe_temperature(t));
  harness::Measurement bands;
  harness::measure_nope(
      batch, hd, x.values, y.values, budget,
      [&](const harness::ElementRecord& e) {
        if (r.progress) r.progress(static_cast<std::size_t>(e.row), batch.tokens());
        bands.add(e);
      },
      output_gain(r, t, y.dtype));
  out.doc.family = "rope";
  out.doc.input = x.name;
  out.doc.output = y.name;
  out.doc.parameters = {{"no_rope", true}, {"attn_temperature", to_string(t.type)}};
  add_hf(out, v.hf, r.quiet);
  report_verdict(bands, {budget, budget_text}, out);
  Convention given{default_layout(Family::Rope), o.base.value_or(10000.0)};
  given.rotated = false;
  given.temperature = t;
  if (!bands.pass() && bands.max_abs() >= 1e-3) {
    double magnitude = 0;
    for (const double e : x.values)
      magnitude = std::isfinite(e) ? std::max(magnitude, std::fabs(e)) : magnitude;
    std::int64_t top = 0;
    for (std::size_t k = 0; k < batch.tokens(); ++k) top = std::max(top, batch.position(k));
    print_diagnosis(diagnose_nope({x.values, y.values, batch, hd, hd}, given), given, bands, out, names,
                    fit_tolerance(y.dtype, magnitude, top));
  }
  return out;
}

// The header: what is checked under which parameters, and a note where the input's type is not the output's.
void say_header(const RopeRequest& r, const RopeParams& params, const RopePlan& plan, const RopeBatch& batch,
                const std::string& form, const harness::OutputGain& gain, const Names& names, Report& out) {
  const AttnTemperature& temperature = gain.temperature;
  const DataView &x = r.x, &y = r.y;
  const std::size_t hd = x.shape.back(), heads = batch.heads;
  out.say("checking {} -> {}: {} tokens x {} heads x head_dim {} (rotary {}{}), {}, {}, base {:g}{}\n",
          x.name, y.name, batch.tokens(), heads, hd, plan.rotary_dim(), form.empty() ? "" : ", " + form,
          to_string(y.dtype), to_string(params.layout), params.base,
          !scales(params.scaling) ? "" : ", scaling " + describe_scaling(params.scaling, plan));
  if (temperature.type != AttnTemperatureType::None)
    out.say("attention temperature {}\n", describe_temperature(temperature));
  if (gain.xpos.enabled()) out.say("{}\n", describe_xpos(gain.xpos, plan.rotary_dim()));
  if (x.dtype != y.dtype)
    out.say("note: {} is {}, {} is {}: the output's type sets the budget (the rotation rounded into {})\n",
            names("x"), to_string(x.dtype), names("y"), to_string(y.dtype), to_string(y.dtype));
}

// BadRequest for positions out of range, x and y of different shapes, a scalar, or B unlike y.
void validate_data(const RopeRequest& r, const Names& names) {
  validate_positions(r.positions, names);
  if (r.x.shape != r.y.shape)
    names.fail("y", fmt::format("shape {} differs from {}'s {}", shape_words(r.y.shape), names("x"),
                                shape_words(r.x.shape)));
  if (r.x.shape.empty())
    names.fail("x", "expected [tokens, heads, head_dim] or [tokens, head_dim], got a scalar");
  if (r.against) require_same(*r.against, r.y, "y", names);
}

// DeepSeek MLA's full q/k, [q_nope | q_pe]: the rope part (the config's head dim) at offset
// qk_nope_head_dim; the nope part passes through.
void mla_full_head(Resolved& v, std::int64_t last, Report& out) {
  const std::int64_t nope = v.mla_nope_head_dim;
  if (nope <= 0 || v.o.head_dim.value_or(0) <= 0 || last != nope + *v.o.head_dim ||
      v.o.form.rotary_offset.value_or(0) != 0)
    return;
  out.say(
      "MLA: the data holds the full q/k, qk_nope_head_dim {} + qk_rope_head_dim {} = {} channels: the rope "
      "part is checked at offset {}, the nope part must pass through unchanged\n",
      nope, *v.o.head_dim, last, nope);
  v.o.rotary_dim = v.o.head_dim;
  v.o.head_dim = last;
  v.o.form.rotary_offset = nope;
}

// BadRequest when a head dim is given (or a config's) and the data's last axis is another.
void require_head_dim(const Resolved& v, std::size_t hd, const Names& names) {
  const std::int64_t given_head_dim = v.o.head_dim.value_or(0);
  if (given_head_dim == 0 || static_cast<std::size_t>(given_head_dim) == hd) return;
  throw BadRequest(
      fmt::format("{}: {} given, the data's last axis is {}{}", v.head_dim_source, given_head_dim, hd,
                  v.hf && v.hf->setting.mla && hd > static_cast<std::size_t>(given_head_dim)
                      ? fmt::format(" (a DeepSeek MLA q/k with its rope part at the end: give {} {})",
                                    names("rotary_offset"), hd - static_cast<std::size_t>(given_head_dim))
                      : ""),
      "head_dim");
}

// The parameters as checked (verify_rope's black-box properties build their budgets on the plan's gain
// and frequencies).
nlohmann::json parameters_json(const RopeParams& params, const RopePlan& plan, const std::string& form,
                               const harness::OutputGain& gain, const RopeBatch& batch, std::size_t hd) {
  const XPos& x = gain.xpos;
  return {{"head_dim", hd},
          {"rotary_dim", plan.rotary_dim()},
          {"rotary_offset", params.rotary_offset},
          {"base", params.base},
          {"layout", to_string(params.layout)},
          {"scaling", !scales(params.scaling) ? std::string("none") : describe_scaling(params.scaling, plan)},
          {"form", form.empty() ? std::string("text") : form},
          {"attn_temperature", to_string(gain.temperature.type)},
          {"xpos", x.enabled()
                       ? nlohmann::json{{"scale_base", x.scale_base}, {"centre", x.centre}, {"keys", x.keys}}
                       : nlohmann::json()},
          {"tokens", batch.tokens()},
          {"heads", batch.heads},
          {"attention_factor", plan.attention_factor()},
          {"inv_freq", std::vector<double>(plan.inv_freq().begin(), plan.inv_freq().end())}};
}

// 32- or 64-bit data that misses every contract of its own type: is its error that of a 16-bit cos/sin
// cache (a contract of one met)? Not when a contract of its type is met (a budget asked tighter than the
// class, or one that a float32 angle's error saturates at such positions: then every contract is met and
// the claim would say nothing). Measured again only then, so a passing check pays nothing for it.
std::vector<Finding> sixteen_bit_cache(const RopeRequest& r, const RopeParams& params, const RopePlan& plan,
                                       const RopeBatch& batch, const Budget& budget,
                                       const harness::Sample& judged, const harness::OutputGain& gain,
                                       const harness::Measurement& bands, const ContractTally& tally) {
  const DType dtype = r.y.dtype;
  if (bands.pass() || !tally.met().empty() || (dtype != DType::F32 && dtype != DType::F64)) return {};
  ContractTally caches(Family::Rope, dtype, &plan, TallyTables::OtherSixteenBit);
  if (caches.empty()) return {};
  harness::measure_rope_rows(
      params, batch, r.x.read(), r.y.read(), budget,
      [&](const harness::RopeRow& row) { caches.add_row(row); }, judged, RopeDirection::Forward, gain);
  const auto met = caches.met();
  if (met.empty()) return {};
  return {{fmt::format("a 16-bit cos/sin cache: the error is within {}'s contract (a {} table; worst "
                       "error/budget {:.3g}), beyond {} data's class",
                       met.front().first, met.front().first.ends_with("_bf16") ? "bfloat16" : "float16",
                       met.front().second, to_string(dtype)),
           "every compared element within that contract", std::nullopt, std::nullopt}};
}

// At real positions the read-back (positions, frequencies, conventions) assumes integer positions: a failure
// is reported without a cause rather than with a guessed one.
Report undetermined_at_real_positions(const harness::Measurement& bands, Report out) {
  if (bands.pass()) return out;
  out.say(
      "\ndiagnosis: undetermined (the positions are real; reading positions and conventions back assumes "
      "integer positions)\n");
  return out;
}

// B, the same input through another implementation, measured beside A: the table of both, the verdict of
// both, and B's diagnosis when only B fails (true: the report is complete).
bool against_diagnosed(const RopeRequest& r, const RopeParams& params, const RopePlan& plan,
                       const RopeBatch& batch, const Budget& budget, const harness::Sample& judged,
                       const harness::OutputGain& gain, const harness::Measurement& bands,
                       const std::vector<bool>& over, const DataView& xd, const DataView& yd,
                       const Convention& given, const std::vector<Convention>& alternatives,
                       const Names& names, Report& out, std::span<const double> reals) {
  std::vector<double> b_storage;
  const DataView b = as_doubles(*r.against, b_storage);
  const std::size_t heads = batch.heads, hd = r.x.shape.back();
  Against against(yd.values, promised_up_to(budget));
  std::vector<bool> over_b(over.size());
  harness::measure_rope(
      params, batch, xd.values, b.values, budget,
      [&](const harness::ElementRecord& e) {
        against.add(e, batch.row(static_cast<std::size_t>(e.row), static_cast<std::size_t>(e.head)) +
                           static_cast<std::size_t>(e.channel));
        if (!(e.ratio() <= 1))
          over_b[static_cast<std::size_t>(e.row) * heads + static_cast<std::size_t>(e.head)] = true;
      },
      judged, RopeDirection::Forward, gain, reals);
  out.say("{}", against.table(bands, r.y.name, b.name));
  out.doc.against = against.to_json(bands, r.y.dtype, b.name);
  out.passed = bands.verdict_pass() && against.b().verdict_pass();
  if (!bands.pass() || against.b().pass()) return false;
  out.say("\nB ({}):", b.name);  // the diagnosis is the wrong one's
  if (!reals.empty()) {
    out = undetermined_at_real_positions(against.b(), std::move(out));
    return true;
  }
  diagnose_rope_output({xd.values, b.values, batch, hd, plan.rotary_dim(), params.scaling}, plan, given,
                       against.b(), over_b, out, names, alternatives, r.against->dtype);
  return true;
}

// The header's line on real positions: how many, the largest magnitude, how they are read.
void say_real_positions(std::span<const double> reals, Report& out) {
  double top = 0;
  for (const double t : reals) top = std::max(top, std::fabs(t));
  out.say(
      "positions: real, {} values, |t| up to {:g}, each the exact value given (its band: that of ceil |t|)\n",
      reals.size(), top);
}

// The budget at real positions is the integer one at |φ| = |t·θ_j| (docs/contracts.md §2a, "Real positions
// (RoPE)"): every float32-angle contract's c1 already charges fl(p) one rounding, which is the one a real t
// adds to fl(fl(t)·fl(θ)) or fl(t·θ), and a float64 angle reads the double t exactly.
// Real positions (Positions::real): the plan's axes of them, or BadRequest for a scaling that switches per
// token (it reads an integer position); any other scaling is a frequency table, read at a real t alike.
std::vector<double> real_axis_positions(const RopeRequest& r, const RopeParams& params, const RopeSpec& o,
                                        const Names& names) {
  if (switches_per_token(params.scaling))
    names.fail("scaling", fmt::format("{} switches its list per token at original_max_position {}, read from "
                                      "integer positions; the positions are real",
                                      to_string(params.scaling.type), params.scaling.original_max_position));
  return axis_real_positions(r.positions, n_axes(params.form), axes_parameter(o.form), names);
}

// The temperature; BadRequest at real positions (it reads a token's integer index).
AttnTemperature temperature_of(const RopeSpec& o, const RopeRequest& r, const Names& names) {
  const AttnTemperature temperature = to_attn_temperature(o, names);
  if (!r.positions.real.empty() && temperature.type != AttnTemperatureType::None)
    names.fail("attn_temperature", fmt::format("{} reads each token's integer index; the positions are real",
                                               to_string(temperature.type)));
  return temperature;
}

// xPos as the spec gives it, the centre's default from the largest position; BadRequest naming
// xpos_scale_base with real positions, a temperature or a multi-axis form, and attn_temperature with a
// multi-axis form (both gains read a token index, which the forms' positions are not).
XPos checked_xpos(const RopeSpec& o, const RopeParams& params, std::span<const std::int64_t> positions,
                  bool real, const AttnTemperature& temperature, const Names& names) {
  if (temperature.type != AttnTemperatureType::None && !params.form.is_text())
    names.fail("attn_temperature", "applies to text RoPE (the forms' positions are not token indices)");
  if (!o.xpos.scale_base) return to_xpos(o.xpos, 0, names);
  if (real) names.fail("xpos_scale_base", "xPos reads each token's integer position; the positions are real");
  if (!params.form.is_text()) names.fail("xpos_scale_base", "applies to text RoPE (one position per token)");
  if (temperature.type != AttnTemperatureType::None)
    names.fail("xpos_scale_base",
               fmt::format("one gain at a time; {} is given too", names("attn_temperature")));
  const auto [lo, hi] = std::minmax_element(positions.begin(), positions.end());
  const XPos x = to_xpos(o.xpos, positions.empty() ? 0 : *hi, names);
  // ζ_0^w leaves double's range at |w·ln 3.5| = 709; the budgets are then not defined.
  for (const std::int64_t p : positions.empty() ? std::vector<std::int64_t>{} : std::vector{*lo, *hi}) {
    if (std::fabs(xpos_exponent(x, p)) * std::log(3.5) > 700)
      names.fail(
          "xpos_scale_base",
          fmt::format("{:g} puts position {} at w = {:g} from the centre {}: the gain leaves double's range "
                      "(|w| up to 558)",
                      x.scale_base, p, xpos_exponent(x, p), x.centre));
  }
  return x;
}

}  // namespace

Report check_rope(const RopeRequest& r, const Names& names) {
  validate_data(r, names);
  // A second implementation's comparison can turn the verdict (against_diagnosed): the verdict alone is
  // the check's own.
  if (r.quiet && r.against) names.fail("quiet", "the verdict alone is the check's own; not with --against");
  Report out;
  out.quiet = r.quiet;
  Resolved v = resolve(r, names);
  if (v.hf && !r.quiet) out.text += v.hf->block;
  mla_full_head(v, static_cast<std::int64_t>(r.x.shape.back()), out);
  const RopeSpec& o = v.o;
  const AttnTemperature temperature = temperature_of(o, r, names);
  const DataView &x = r.x, &y = r.y;
  const std::size_t hd = x.shape.back();
  require_head_dim(v, hd, names);
  if (o.nope() && r.against)
    names.fail("against", fmt::format("a NoPE layer ({}) has no rotation", names("no_rope")));
  if (o.nope()) return check_nope(r, v, temperature, names, std::move(out));
  const RopeParams params = rope_params(o, static_cast<std::int64_t>(hd), temperature, names);
  const std::size_t axes = n_axes(params.form);
  const bool real = !r.positions.real.empty();
  const std::vector<double> reals = real ? real_axis_positions(r, params, o, names) : std::vector<double>{};
  const std::vector<std::int64_t> positions =
      real ? band_keys(reals) : axis_positions(r.positions, axes, axes_parameter(o.form), names);
  const RopeBatch batch =
      rope_batch_of(x.shape, positions, r.heads_first, x.name, axes, names("heads_first"));
  const RopePlan plan = rope_plan(params, names);
  const XPos xpos = checked_xpos(o, params, positions, real, temperature, names);
  Budget budget = budget_for(r.budget, Family::Rope, y.dtype, names);
  const harness::OutputGain gain = output_gain(r, temperature, y.dtype, xpos);
  if (gain.relative_error > 0)
    budget.text += xpos.enabled() ? ", times g_j(p), plus " + describe_xpos_budget(y.dtype)
                                  : ", times t(p), plus " + describe_gain_budget(y.dtype, "(|x_a| + |x_b|)");
  if (!r.quiet && budget.contract != nullptr && plan.effective_base() > budget.contract->max_base)
    out.say(
        "note: the scaled base {:g} exceeds the contract's max_base {:g}: its budget is not derived for it\n",
        plan.effective_base(), budget.contract->max_base);
  const std::string form = describe_form(params);
  if (!r.quiet) say_header(r, params, plan, batch, form, gain, names, out);
  if (real && !r.quiet) say_real_positions(reals, out);

  // NaN or ±inf in the input: the exact rotation of a non-finite value is undefined, so those tokens are
  // the input's, not the kernel's error: named, and left out of the verdict. The screened pass finds them
  // among its loud elements (no scan of its own); a non-finite value met, the scan and the pass again.
  harness::Sample judged;
  std::optional<Pass> pass = measure_rope_pass(r, params, plan, batch, budget, judged, false, gain, reals);
  if (!pass) {
    judged = finite_tokens(batch, x, hd, names, out);
    pass = measure_rope_pass(r, params, plan, batch, budget, judged, true, gain, reals);
  }
  harness::Measurement& bands = pass->bands;
  ContractTally& tally = pass->tally;
  const std::vector<bool>& over = pass->over;
  const std::optional<harness::ElementRecord>& moved = pass->moved;
  out.doc.family = "rope";
  out.doc.input = x.name;
  out.doc.output = y.name;
  out.doc.parameters = parameters_json(params, plan, form, gain, batch, hd);
  add_hf(out, v.hf, r.quiet);
  const Judging judging{Family::Rope, &plan, &names};
  report_verdict(bands, budget, out, &tally, &judging);
  if (r.quiet) return out;  // the verdict alone: no diagnosis
  // As doubles from here on only where a second implementation or a diagnosis reads them (typed data).
  std::vector<double> x_storage, y_storage;
  const bool reread = r.against || !bands.pass();
  const DataView xd = reread ? as_doubles(x, x_storage) : x, yd = reread ? as_doubles(y, y_storage) : y;
  if (moved)
    out.say(
        "pass-through: channel {} of token {} head {} lies outside the rotated channels [{}, {}) and must "
        "equal the input bit for bit (budget 0); it moved by {:.3g} ({:.3g} ulp)\n",
        moved->channel, moved->row, moved->head, params.rotary_offset,
        params.rotary_offset + plan.rotary_dim(), moved->abs_error, moved->ulp);
  Convention given{params.layout, params.base};
  given.form = params.form;
  given.rotary_offset = params.rotary_offset;
  given.temperature = temperature;
  given.rotary_dim = static_cast<std::int64_t>(plan.rotary_dim());
  given.scaling = params.scaling;
  // Every candidate is a RopePlan (with its attention factor): the mistakes of the form, layout, base,
  // positions and direction under the given scaling, and those of the check's own arguments (rotary
  // dim, the scaling ignored, its factor, another method, YaRN's truncate and betas).
  const std::vector<Convention> alternatives =
      real ? std::vector<Convention>{} : other_layers(v.other_layers, given, hd, r.positions.values, names);
  if (r.against && against_diagnosed(r, params, plan, batch, budget, judged, gain, bands, over, xd, yd, given,
                                     alternatives, names, out, reals))
    return out;
  if (real) return undetermined_at_real_positions(bands, std::move(out));
  if (xpos.enabled()) {
    diagnose_xpos_output({xd.values, yd.values, batch, hd, plan.rotary_dim(), params.scaling}, plan, given,
                         xpos, bands, over, out, names, alternatives, yd.dtype);
    return out;
  }
  const std::vector<Finding> measured =
      sixteen_bit_cache(r, params, plan, batch, budget, judged, gain, bands, tally);
  diagnose_rope_output({xd.values, yd.values, batch, hd, plan.rotary_dim(), params.scaling}, plan, given,
                       bands, over, out, names, alternatives, yd.dtype, measured);
  return out;
}

}  // namespace pe::check

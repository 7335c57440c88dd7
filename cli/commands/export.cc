// pe-suite export: golden tables from the exact reference (correctly rounded) or from a variant,
// as .npy or CSV, for other frameworks' tests. Sinusoidal: [n_positions, dim] in the layout.
// RoPE: [n_positions, dim/2, 2] holding (cos, sin) of each pair's angle times the scaling's attention
// factor; --dim is the rotary dim (with --partial-rotary-factor, the head dim it is taken from); with
// --input, the given q/k rotated (the golden output `check --family rope` compares against).
// RoPE scaling flags: scaling_options.h.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "alibi_export.h"
#include "common.h"
#include "family_rows.h"
#include "form_options.h"
#include "hf_config_options.h"
#include "names.h"
#include "pe/check/check.h"
#include "pe/check/golden.h"
#include "pe/check/npy.h"
#include "pe/harness/contract_json.h"
#include "pe/harness/plugin.h"
#include "pe/harness/typed_buffer.h"
#include "pe/harness/variant_rows.h"
#include "pe/harness/worker.h"
#include "pe/pe.h"
#include "pe/ref/real.h"
#include "pe/ref/reference.h"
#include "pe/ref/temperature.h"
#include "pe/variant.h"
#include "plugin_option.h"
#include "scaling_options.h"
#include "sinusoidal_options.h"
#include "temperature_options.h"

namespace pe::cli {
namespace {

// An outside kernel that crashed or hung in its worker, or wrote outside its rows (KernelFault, from the
// guard zones of pe/kernel_guard.h): the command names it and exits 1 (the kernel is wrong), having
// written nothing.
struct KernelFailed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A registered kernel's call; an outside one's first in a forked worker, so that a crash or hang is named,
// and a write outside its rows (KernelFault) named with its origin too.
void guarded(const std::string& name, const std::function<void()>& call) {
  const Variant* v = find_variant(name);
  const std::string who = v != nullptr ? harness::kernel_origin_words(*v) : "";
  if (!who.empty()) {
    const std::string failed = harness::in_worker(who + name, 60, [&](const harness::Started& started) {
      started("export's call");
      call();
    });
    if (!failed.empty()) throw KernelFailed(failed);
  }
  try {
    call();
  } catch (const KernelFault& e) {
    throw KernelFailed(who + e.what());
  }
}

struct ExportOptions {
  std::string family, layout, dtype = "f32", positions, positions_file, variant, format, out, input;
  std::int64_t dim = 0;
  double base = 10000.0;
  bool reference = false, heads_first = false;
  ScalingFlags scaling;
  FormFlags form;
  TemperatureFlags temperature;
  AlibiFlags alibi;
  SinusoidalFlags sinusoidal;  // its spec: the flags given, base and layout included
  bool dim_given = false;
  HfConfigFlags hf;
};

// export's words for the engine's parameters: the rotary dim is --dim.
const check::Names& export_names() {
  static const check::Names n = flag_names({{"rotary_dim", "--dim"}, {"dim", "--dim"}, {"x", "--input"}});
  return n;
}

// The RoPE parameters of a head of `head_dim` rotating `rotary_dim` channels (0: all, or the partial
// factor's).
RopeParams rope_params_for(const ExportOptions& o, std::int64_t head_dim, std::int64_t rotary_dim,
                           Layout layout, const AttnTemperature& temperature) {
  check::RopeSpec spec;
  spec.base = o.base;
  if (!o.layout.empty()) spec.layout = layout;  // else the spec's default (a grid's is concatenated)
  spec.rotary_dim = rotary_dim;
  spec.scaling = o.scaling.spec;
  spec.form = o.form.spec;
  return check::rope_params(spec, head_dim, temperature, export_names());
}

template <class T>
T parsed(std::optional<T> v, const char* option, const std::string& text) {
  if (!v) throw UsageError(std::string(option) + ": unknown value '" + text + "'");
  return *v;
}

// Values of the sinusoidal table [n, dim].
std::vector<double> sinusoidal_values(const ExportOptions& o, const SinusoidalParams& params,
                                      const std::vector<std::int64_t>& positions, DType dtype) {
  // Each value is built as a double and once more in the output type, before anything is allocated.
  const std::size_t n =
      output_values({{"--positions", positions.size()},
                     {"--dim", static_cast<std::size_t>(std::max<std::int64_t>(params.dim, 0))}},
                    sizeof(double) + size_of(dtype));
  const SinusoidalPlan plan(params);
  std::vector<double> v(n);
  if (o.reference) return check::golden_sinusoidal(params, positions, dtype);
  harness::TypedBuffer y(dtype, v.size());
  guarded(o.variant, [&] { sinusoidal_table(*find_variant(o.variant), plan, positions, y.view()); });
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = y.get(i);
  return v;
}

// (cos, sin) per pair [n, rotary_dim/2, 2], times the attention factor (HF's cos and sin carry it).
// A variant's come from rotating the unit vector (1, 0) of each pair: (1·cos - 0·sin, 1·sin + 0·cos)
// is exact in any arithmetic, and the variant applies the attention factor itself.
std::vector<double> rope_values(const ExportOptions& o, const RopeParams& params,
                                const std::vector<std::int64_t>& positions, DType dtype,
                                std::vector<std::size_t>& shape, std::string& scaling_note) {
  const RopePlan plan = check::rope_plan(params, export_names());
  const std::size_t tokens = positions.size() / plan.n_axes();
  output_values({{"--positions", tokens},
                 {"--dim", static_cast<std::size_t>(std::max<std::int64_t>(params.rotary_dim, 0))}},
                sizeof(double) + 2 * size_of(dtype));
  shape = {tokens, plan.n_pairs(), 2};
  scaling_note = check::describe_scaling(params.scaling, plan);
  RopeBatch batch = RopeBatch::tokens_first(std::span(positions).first(tokens), 1, plan.head_dim());
  batch.positions = positions;
  batch.n_axes = plan.n_axes();
  const std::size_t h = plan.n_pairs(), d = plan.head_dim();
  std::vector<double> v(tokens * h * 2);
  if (o.reference) return check::golden_rope_table(params, positions, dtype);
  harness::TypedBuffer x(dtype, tokens * d);  // zeros
  for (std::size_t i = 0; i < tokens; ++i) {
    for (std::size_t j = 0; j < h; ++j) x.set(i * d + plan.input_channels(j).first, 1.0);
  }
  guarded(o.variant, [&] { rope_apply(*find_variant(o.variant), plan, batch, x.view()); });
  for (std::size_t i = 0; i < tokens; ++i) {
    for (std::size_t j = 0; j < h; ++j) {
      const auto [o0, o1] = plan.output_channels(j);
      v[(i * h + j) * 2] = x.get(i * d + o0);
      v[(i * h + j) * 2 + 1] = x.get(i * d + o1);
    }
  }
  return v;
}

// q/k rotated and then scaled by the attention temperature t(p): the reference's t(p)·R(p)·x rounded
// once (pass-through channels t(p)·x), or a variant's rotation times t(p) in double, rounded into dtype.
std::vector<double> gained_values(const ExportOptions& o, const RopeParams& params, const RopeBatch& batch,
                                  harness::TypedBuffer& buf, DType dtype,
                                  const AttnTemperature& temperature) {
  const RopePlan plan = check::rope_plan(params, export_names());
  const ref::Temperature tr(temperature);
  const TemperatureSteps steps = validate(temperature);
  std::vector<double> y(buf.size());
  if (o.reference) {
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = buf.get(i);  // the input, in the output type
    return check::golden_rope(params, batch, y, dtype, temperature);
  }
  guarded(o.variant, [&] { rope_apply(*find_variant(o.variant), plan, batch, buf.view()); });
  for (std::size_t t = 0; t < batch.tokens(); ++t) {
    const double g = attn_temperature(steps, batch.position(t));
    for (std::size_t h = 0; h < batch.heads; ++h) {
      const std::size_t row = batch.row(t, h);
      for (std::size_t ch = 0; ch < plan.head_dim(); ++ch) buf.set(row + ch, g * buf.get(row + ch));
    }
  }
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = buf.get(i);
  return y;
}

// RoPE applied to given q/k ([tokens, H], [tokens, heads, H]; with --heads-first [heads, tokens, H];
// --dim is the rotary dim): the correctly rounded rotation, or a variant's, in the input's shape.
std::vector<double> rotated_values(const ExportOptions& o, const std::vector<std::int64_t>& positions,
                                   DType dtype, Layout layout, const RopeScaling& scaling,
                                   std::vector<std::size_t>& shape, std::string& scaling_note,
                                   const AttnTemperature& temperature) {
  const check::NpyArray x = check::read_npy(o.input, dtype);
  if (x.integer) throw UsageError("--input: " + o.input + " holds integers, not q/k values");
  shape = x.shape;
  const auto head_dim = static_cast<std::int64_t>(shape.back());
  const RopeParams params = rope_params_for(o, head_dim, o.dim, layout, temperature);
  const RopePlan plan = check::rope_plan(params, export_names());
  const RopeBatch batch =
      check::rope_batch_of(shape, positions, o.heads_first, "--input", plan.n_axes(), "--heads-first");
  scaling_note = check::describe_scaling(scaling, plan);
  std::vector<double> y(x.values.size());
  harness::TypedBuffer buf(dtype, y.size());
  for (std::size_t i = 0; i < y.size(); ++i) buf.set(i, x.values[i]);  // the input, in the output type
  if (temperature.type != AttnTemperatureType::None) {
    if (plan.n_axes() != 1)
      throw UsageError(
          "--attn-temperature: applies to text RoPE (the forms' positions are not token indices)");
    return gained_values(o, params, batch, buf, dtype, temperature);
  }
  if (o.reference) {
    for (std::size_t i = 0; i < y.size(); ++i) y[i] = buf.get(i);  // the input, in the output type
    return check::golden_rope(params, batch, y, dtype);
  }
  guarded(o.variant, [&] { rope_apply(*find_variant(o.variant), plan, batch, buf.view()); });
  for (std::size_t i = 0; i < y.size(); ++i) y[i] = buf.get(i);
  return y;
}

double softmax_scale_multiplier(const RopeParams& params) {
  const RopeScaling& s = params.scaling;
  if (s.type != RopeScalingType::Yarn || !s.mscale_all_dim) return 1.0;
  const ScalingRule<long double> rule(s, params.rotary_dim, params.base,
                                      3.14159265358979323846264338327950288L);
  const long double m = rule.mscale_of(*s.mscale_all_dim);
  return static_cast<double>(m * m);
}

// What a RoPE golden file's values alone do not say, for the file beside it (<out>.json) and the CSV
// header: the form and the factors outside cos and sin. DeepSeek multiplies its softmax scale by
// m(s, mscale_all_dim)² (HF DeepseekV3Attention.softmax_scale), which engines keep dropping.
nlohmann::json rope_metadata(const ExportOptions& o, const RopeParams& params, DType dtype,
                             const std::vector<std::size_t>& shape) {
  const RopePlan plan = check::rope_plan(params, export_names());
  nlohmann::json m;
  m["family"] = "rope";
  m["source"] = o.reference ? "reference" : o.variant;
  m["dtype"] = to_string(dtype);
  m["shape"] = shape;
  m["values"] = o.input.empty() ? "(cos, sin) per pair, times attention_factor" : "q/k rotated";
  m["layout"] = to_string(params.layout);
  m["base"] = params.base;
  m["head_dim"] = plan.head_dim();
  m["rotary_dim"] = plan.rotary_dim();
  m["rotary_offset"] = plan.rotary_offset();
  if (!params.form.mrope_section.empty()) {
    m["mrope_section"] = params.form.mrope_section;
    m["mrope_layout"] = to_string(params.form.mrope_layout);
  }
  if (params.form.vision != VisionRope::None) m["vision"] = to_string(params.form.vision);
  m["position_axes"] = plan.n_axes();
  m["scaling"] = params.scaling;  // the schema of pe/harness/contract_json.h
  m["attention_factor"] = plan.attention_factor();
  m["softmax_scale_multiplier"] = softmax_scale_multiplier(params);
  return m;
}

void write_csv(const std::string& path, const std::vector<double>& v, std::size_t row_width, DType dtype,
               const std::string& header) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw UsageError("--out: cannot write '" + path + "'");
  if (!header.empty()) std::fprintf(f, "%s\n", header.c_str());
  // Enough digits to read back the same value: 17 for double, 9 for float and the 16-bit types.
  const char* fmt_spec = dtype == DType::F64 ? "%.17g" : "%.9g";
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::fprintf(f, fmt_spec, v[i]);
    std::fputc((i + 1) % row_width == 0 ? '\n' : ',', f);
  }
  std::fclose(f);
}

struct Exported {
  std::vector<double> values;
  std::vector<std::size_t> shape;
  std::string scaling_note = "none";
  nlohmann::json metadata;  // RoPE: written beside a .npy, and the CSV header where it matters
};

// The paper's table at integer positions from a variant or the reference; every other form (real positions,
// a grid, a scale, an odd dim, a padding row) from the rows of pe/harness/sinusoidal_rows.h, the reference's
// or the variant's (pe/harness/variant_rows.h: sinusoidal_table_at per block).
Exported export_sinusoidal(const ExportOptions& o, Layout layout, DType dtype,
                           const std::vector<std::int64_t>& positions) {
  check::SinusoidalSpec spec = o.sinusoidal.spec;
  spec.base = o.base;
  if (!o.layout.empty()) spec.layout = layout;  // else the spec's default (a grid's is concatenated)
  const SinusoidalParams params = check::sinusoidal_params(spec, o.dim, export_names());
  const auto dim = static_cast<std::size_t>(params.dim);
  check::SinusoidalRequest given;
  sinusoidal_positions(o.positions, o.positions_file, spec.grid.has_value(), given);
  if (!spec.grid && given.real_positions.empty() && !spec.padding_idx && params.scale == 1 && dim % 2 == 0)
    return {sinusoidal_values(o, params, positions, dtype), {positions.size(), dim}, "none", {}};
  if (spec.grid) {  // the output's size before the rows are built
    const std::size_t cells = [&] {
      try {
        return harness::grid_cells(check::grid_spec(spec));
      } catch (const InvalidArgument& e) {
        check::rethrow_named(e, export_names());
      }
    }();
    output_values({{"--grid", cells}, {"--dim", dim}}, sizeof(double) + size_of(dtype));
  }
  const harness::SinusoidalRows rows =
      check::sinusoidal_rows(spec, params, given.positions, given.real_positions, export_names());
  output_values({{"rows", rows.rows()}, {"--dim", dim}}, sizeof(double) + size_of(dtype));
  if (o.reference) return {check::golden_sinusoidal(rows, dtype), {rows.rows(), dim}, "none", {}};
  std::vector<double> v(rows.rows() * dim);
  guarded(o.variant, [&] {
    try {
      const harness::TypedBuffer y = harness::variant_rows(*find_variant(o.variant), rows, dtype);
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = y.get(i);
    } catch (const InvalidArgument& e) {
      check::rethrow_named(e, export_names());
    }
  });
  return {std::move(v), {rows.rows(), dim}, "none", {}};
}

// The temperature per token, correctly rounded into dtype from the reference (whether the values are the
// reference's or a variant's), beside the output: <out without .npy/.csv>.temperature.<format>, [tokens].
nlohmann::json write_temperature(const ExportOptions& o, const AttnTemperature& temperature, DType dtype,
                                 const std::vector<std::int64_t>& positions, std::size_t tokens) {
  const std::string format = !o.format.empty() ? o.format : o.out.ends_with(".csv") ? "csv" : "npy";
  std::string stem = o.out;
  for (const char* ext : {".npy", ".csv"}) {
    if (stem.ends_with(ext)) stem.resize(stem.size() - 4);
  }
  const std::string path = stem + ".temperature." + format;
  const ref::Temperature reference(temperature);
  std::vector<double> t(tokens);
  for (std::size_t i = 0; i < tokens; ++i) t[i] = reference.rounded(positions[i], dtype);
  if (format == "npy") {
    check::write_npy(path, t, {tokens}, dtype);
  } else {
    write_csv(path, t, 1, dtype, "# attention temperature t(p), one per position");
  }
  fmt::print("wrote {} ({} {}, attention temperature {})\n", path, tokens, to_string(dtype),
             check::describe_temperature(temperature));
  nlohmann::json m;
  m["type"] = to_string(temperature.type);
  if (temperature.type == AttnTemperatureType::Llama4) {
    m["attn_scale"] = temperature.attn_scale;
    m["floor_scale"] = temperature.floor_scale;
    m["formula"] = "1 + attn_scale*ln(floor((p + 1)/floor_scale) + 1)";
  } else {
    m["beta"] = temperature.beta;
    m["original_max_position"] = temperature.original_max_position;
    m["formula"] = "1 + beta*ln(1 + floor(p/original_max_position))";
  }
  m["file"] = path;
  m["applied"] = o.input.empty() ? "not in (cos, sin): q is multiplied by t(p) after the rotation"
                                 : "in the values: t(p) times q/k rotated";
  return m;
}

// RoPE at real positions (a float .npy of fractional [n_axes, T] coordinates, as check reads them): the
// correctly rounded rotation of --input; a variant takes integer positions, and the (cos, sin) table is at
// integers.
Exported export_rope_at_real(const ExportOptions& o, Layout layout, DType dtype, const RopeScaling& scaling) {
  if (!o.reference)
    throw UsageError(
        "--positions-file: real positions are exported by --reference only (a variant takes "
        "integer positions)");
  if (o.input.empty())
    throw UsageError(
        "--positions-file: at real positions export rotates an --input (the (cos, sin) table is "
        "at integer positions)");
  if (switches_per_token(scaling))
    throw UsageError("--longrope-switch: per-token reads integer positions, not real ones");
  const check::Positions p = rope_positions_of(o.positions, o.positions_file);
  check::validate_positions(p, export_names());
  const check::NpyArray x = check::read_npy(o.input, dtype);
  if (x.integer) throw UsageError("--input: " + o.input + " holds integers, not q/k values");
  Exported e;
  e.shape = x.shape;
  const RopeParams params = rope_params_for(o, static_cast<std::int64_t>(e.shape.back()), o.dim, layout, {});
  const RopePlan plan = check::rope_plan(params, export_names());
  const std::vector<double> reals =
      check::axis_real_positions(p, plan.n_axes(), check::axes_parameter(o.form.spec), export_names());
  const std::vector<std::int64_t> keys = check::band_keys(reals);
  const RopeBatch batch =
      check::rope_batch_of(e.shape, keys, o.heads_first, "--input", plan.n_axes(), "--heads-first");
  harness::TypedBuffer buf(dtype, x.values.size());  // the input, in the output type
  std::vector<double> in(x.values.size());
  for (std::size_t i = 0; i < in.size(); ++i) buf.set(i, x.values[i]), in[i] = buf.get(i);
  e.values = check::golden_rope_at(params, batch, reals, in, dtype);
  e.scaling_note = check::describe_scaling(scaling, plan);
  e.metadata = rope_metadata(o, params, dtype, e.shape);
  e.metadata["positions"] = "real, from " + o.positions_file;
  return e;
}

Exported export_rope(const ExportOptions& o, Layout layout, DType dtype,
                     const std::vector<std::int64_t>& positions) {
  check::RopeSpec spec;
  spec.scaling = o.scaling.spec;
  spec.temperature = o.temperature.spec;
  const AttnTemperature temperature = check::to_attn_temperature(spec, export_names());
  const RopeScaling scaling = to_rope_scaling(check::scaling_besides(o.scaling.spec, temperature));
  if (switches_per_token(scaling) && !o.reference)
    throw UsageError(
        "--longrope-switch: per-token applies to --reference (a variant rotates with one list per call)");
  Exported e;
  if (o.heads_first && o.input.empty()) throw UsageError("--heads-first: applies to --input");
  if (holds_real_positions(o.positions_file)) {
    if (temperature.type != AttnTemperatureType::None)
      throw UsageError("--attn-temperature: applies at integer positions (token indices), not real ones");
    return export_rope_at_real(o, layout, dtype, scaling);
  }
  if (temperature.type != AttnTemperatureType::None && n_axes(to_rope_form(o.form.spec)) != 1)
    throw UsageError("--attn-temperature: applies to text RoPE (the forms' positions are not token indices)");
  const std::uint64_t undecided_before = ref::undecided_roundings_in_this_thread();
  if (!o.input.empty()) {
    e.values = rotated_values(o, positions, dtype, layout, scaling, e.shape, e.scaling_note, temperature);
    const auto head_dim = static_cast<std::int64_t>(e.shape.back());
    e.metadata = rope_metadata(o, rope_params_for(o, head_dim, o.dim, layout, temperature), dtype, e.shape);
  } else {
    if (o.form.spec.rotary_offset.value_or(0) != 0)
      throw UsageError(
          "--rotary-offset: applies with --input (the (cos, sin) table is the rotary channels')");
    // --dim is the rotary dim, or with --partial-rotary-factor the head dim it is taken from.
    const RopeParams params = rope_params_for(o, o.dim, 0, layout, temperature);
    e.values = rope_values(o, params, positions, dtype, e.shape, e.scaling_note);
    e.metadata = rope_metadata(o, params, dtype, e.shape);
  }
  // What the reference could not decide is not written (run_export says so): nor is the temperature.
  if (temperature.type != AttnTemperatureType::None &&
      ref::undecided_roundings_in_this_thread() == undecided_before)
    e.metadata["attn_temperature"] = write_temperature(o, temperature, dtype, positions, positions.size());
  return e;
}

// What `export` writes for each family it knows.
// [heads] slopes or [heads, queries, keys] bias; the positions come from --queries and --keys.
Exported export_alibi_table(const ExportOptions& o, Layout /*layout*/, DType dtype,
                            const std::vector<std::int64_t>& /*positions*/) {
  AlibiExport e = export_alibi(o.alibi, o.reference, o.variant, dtype);
  return {std::move(e.values), std::move(e.shape), "none", {}};
}

// What `export` writes for each family it knows, whether it reads --dim and --positions, and which option
// groups it reads (the rest are refused, naming the families that read them).
struct Exporter {
  Family family;
  Exported (*run)(const ExportOptions&, Layout, DType, const std::vector<std::int64_t>&);
  bool positions_and_dim = true, rope_options = false, alibi_options = false;
};
constexpr Exporter kExporters[] = {{Family::Sinusoidal, export_sinusoidal},
                                   {Family::Rope, export_rope, true, true},
                                   {Family::Alibi, export_alibi_table, false, false, true}};

const Exporter* exporter_of(const std::string& family) {
  const auto f = parse_family(family);
  const auto e = std::find_if(std::begin(kExporters), std::end(kExporters),
                              [&](const Exporter& x) { return f && x.family == *f; });
  return e == std::end(kExporters) ? nullptr : e;
}

// Refuses the option groups `e`'s family does not read.
void reject_unread(const Exporter& e, const ExportOptions& o) {
  if (!e.rope_options) {
    const std::string rope = families_reading(kExporters, &Exporter::rope_options);
    if (!o.hf.path.empty()) throw UsageError("--hf-config: applies to " + rope);
    reject_scaling_flags(o.scaling, "RoPE scaling applies to " + rope + " only");
    reject_form_flags(o.form, "rotary forms apply to " + rope + " only");
    reject_temperature_flags(o.temperature, "applies to " + rope + " only");
    if (!o.input.empty()) throw UsageError("--input: only RoPE rotates an input");
    if (o.heads_first) throw UsageError("--heads-first: only RoPE's --input has heads");
  }
  if (!e.alibi_options)
    reject_alibi_flags(o.alibi,
                       "applies to " + families_reading(kExporters, &Exporter::alibi_options) + " only");
}

int run_export(const ExportOptions& o) {
  const Family family = parsed(parse_family(o.family), "--family", o.family);
  const Exporter* exporter = exporter_of(o.family);
  if (exporter == nullptr) throw UsageError("--family: export does not write " + o.family);
  const DType dtype = parsed(parse_dtype(o.dtype), "--dtype", o.dtype);
  const Layout layout =
      o.layout.empty() ? default_layout(family) : parsed(parse_layout(o.layout), "--layout", o.layout);
  if (o.reference == !o.variant.empty()) throw UsageError("--reference or --variant: give exactly one");
  if (!o.reference && find_variant(o.variant) == nullptr) {
    throw UsageError("--variant: no variant named '" + o.variant + "' (see pe-suite list)");
  }
  std::string format = o.format;
  if (format.empty()) format = o.out.ends_with(".csv") ? "csv" : "npy";
  if (format != "npy" && format != "csv") throw UsageError("--format: npy or csv, got '" + format + "'");
  // RoPE forms read [n_axes][tokens] positions.
  const std::size_t axes = exporter->rope_options ? n_axes(to_rope_form(o.form.spec)) : 1;
  if (!exporter->positions_and_dim && (!o.positions.empty() || !o.positions_file.empty() || o.dim_given))
    throw UsageError(o.dim_given
                         ? "--dim: " + o.family + " takes no --dim"
                         : "--positions: " + o.family + " takes its positions from --queries and --keys");
  if (exporter->positions_and_dim && !o.dim_given)
    throw UsageError("--dim: required for --family " + o.family);
  // A sinusoidal grid has no positions; real ones are read by export_sinusoidal and export_rope.
  const bool table_rows = (family == Family::Sinusoidal && o.sinusoidal.spec.grid) ||
                          (family != Family::Alibi && holds_real_positions(o.positions_file));
  const auto positions = exporter->positions_and_dim && !table_rows
                             ? axis_positions_from(o.positions, o.positions_file, axes, o.form.spec)
                             : std::vector<std::int64_t>{};
  const std::uint64_t undecided_before = ref::undecided_roundings_in_this_thread();
  const auto [values, shape, scaling_note, metadata] = exporter->run(o, layout, dtype, positions);
  // A golden file is only as good as its roundings: refuse to write one the reference could not decide.
  if (o.reference && ref::undecided_roundings_in_this_thread() != undecided_before) {
    fmt::print(stderr,
               "export: the reference could not decide {} roundings even at {} bits; {} not written\n",
               ref::undecided_roundings_in_this_thread() - undecided_before, ref::precision_bits<ref::Real>(),
               o.out);
    return kCheckFailed;
  }
  if (format == "npy") {
    check::write_npy(o.out, values, shape, dtype);
    if (!metadata.is_null()) write_text(o.out + ".json", metadata.dump(2) + "\n");
  } else {
    // A comment line (numpy.loadtxt and pandas' comment='#' skip it) only where a factor lives outside
    // the values: DeepSeek's softmax-scale multiplier.
    std::string header;
    if (!metadata.is_null() && metadata["softmax_scale_multiplier"].get<double>() != 1.0) {
      header = fmt::format(
          "# softmax_scale_multiplier={:.17g} (m(s, mscale_all_dim)^2, applied to the "
          "softmax scale, not in cos/sin); attention_factor={:.17g}",
          metadata["softmax_scale_multiplier"].get<double>(), metadata["attention_factor"].get<double>());
    }
    write_csv(o.out, values, values.size() / std::max<std::size_t>(1, shape[0]), dtype,
              header);  // one row per position
  }
  std::string dims;
  for (std::size_t s : shape) dims += (dims.empty() ? "" : " x ") + std::to_string(s);
  fmt::print("wrote {} ({} {}, {}{})\n", o.out, dims, o.dtype, o.reference ? "reference" : o.variant,
             scaling_note == "none" ? "" : ", scaling " + scaling_note);
  return kOk;
}

}  // namespace

void add_export(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("export", "Write a golden table (exact reference or a variant) as .npy or CSV");
  auto o = std::make_shared<ExportOptions>();
  cmd->add_option("--family", o->family, "sinusoidal, rope or alibi")->required();
  cmd->add_option("--dim", o->dim,
                  "Model dimension, required but for alibi (RoPE: the rotary dimension, with --input 0 means "
                  "all; with --partial-rotary-factor and no --input, the head dimension)");
  cmd->add_option("--input", o->input,
                  "RoPE: rotate this q/k .npy ([tokens, (heads,) head_dim]) instead of writing (cos, sin)");
  cmd->add_flag("--heads-first", o->heads_first,
                "RoPE --input is [heads, tokens, head_dim] (as in Hugging Face)");
  cmd->add_option("--base,--max-period", o->base, "Frequency base (diffusers' max_period)")
      ->capture_default_str();
  cmd->add_option("--layout", o->layout,
                  "interleaved|concatenated (sinusoidal), interleaved|halfsplit|deinterleave (rope)");
  cmd->add_option("--positions", o->positions, "Half-open range A:B (every axis)");
  cmd->add_option("--positions-file", o->positions_file,
                  "Text file of whitespace-separated positions, or a .npy ([n_axes, T] for M-RoPE, vision)");
  cmd->add_option("--dtype", o->dtype, "f32, f64, f16 or bf16 (.npy: bf16 as its bits in uint16)")
      ->capture_default_str();
  cmd->add_flag("--reference", o->reference, "Correctly rounded values from the exact reference");
  cmd->add_option("--variant", o->variant, "A registered variant's values instead");
  cmd->add_option("--format", o->format, "npy or csv (default: from --out's extension, else npy)");
  cmd->add_option("--out", o->out, "Output file")->required();
  add_scaling_options(*cmd, o->scaling);
  add_form_options(*cmd, o->form);
  add_temperature_options(*cmd, o->temperature);
  add_alibi_options(*cmd, o->alibi);
  add_sinusoidal_options(*cmd, o->sinusoidal);
  add_hf_config_options(*cmd, o->hf);
  const auto plugins = add_plugin_option(*cmd);
  cmd->callback([o, cmd, plugins, &exit_code] {
    check_output_paths(*cmd, {"--out"},
                       {"--input", "--positions-file", "--hf-config", "--short-factors", "--long-factors"},
                       {".json"});
    load_plugins(*plugins);
    read_alibi_flags(*cmd, o->alibi);
    read_form_flags(*cmd, o->form);
    read_scaling_flags(*cmd, o->scaling);
    read_temperature_flags(*cmd, o->temperature);
    if (parse_family(o->family) == Family::Sinusoidal) {
      read_sinusoidal_flags(*cmd, o->sinusoidal);
    } else {
      reject_sinusoidal_flags(*cmd, "applies to --family sinusoidal only");
    }
    o->dim_given = cmd->count("--dim") > 0;
    if (const Exporter* e = exporter_of(o->family)) reject_unread(*e, *o);
    // The flags given, typed, for a model config to fill around; export has no rotary or head dim of
    // its own (--dim is either), and writes no NoPE layer.
    check::RopeSpec spec;
    if (cmd->count("--base") > 0) spec.base = o->base;
    if (const auto layout = parse_layout(o->layout); layout && cmd->count("--layout") > 0)
      spec.layout = layout;
    spec.scaling = o->scaling.spec;
    spec.form = o->form.spec;
    spec.temperature = o->temperature.spec;
    const check::HfUse use{.rotary_dim = false,
                           .head_dim = false,
                           .no_rope = false,
                           .positions =
                               [o] {
                                 return o->positions.empty() && o->positions_file.empty()
                                            ? std::vector<std::int64_t>{}
                                            : positions_from(o->positions, o->positions_file);
                               },
                           .command = "export"};
    const auto r = check::apply_hf_config(hf_source(o->hf, *cmd), spec, use, export_names());
    if (r) {
      fmt::print("{}", r->block);
      o->base = spec.base.value_or(o->base);
      if (spec.layout && cmd->count("--layout") == 0) o->layout = to_string(*spec.layout);
      o->scaling.spec = spec.scaling;
      o->form.spec = spec.form;
      o->temperature.spec = spec.temperature;
    }
    // --dim: the head dim the partial factor is taken from; with --input the data's (0).
    if (r && !o->dim_given) {
      o->dim = o->input.empty() ? r->setting.head_dim() : 0;
      o->dim_given = true;
    }
    try {
      exit_code = run_export(*o);
    } catch (const KernelFailed& e) {
      fmt::print(stderr, "pe-suite: {}; nothing written\n", e.what());
      exit_code = kCheckFailed;
    }
  });
}

}  // namespace pe::cli

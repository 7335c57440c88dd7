// pe-suite export: golden tables from the exact reference (correctly rounded) or from a variant,
// as .npy or CSV, for other frameworks' tests. Sinusoidal: [n_positions, dim] in the layout.
// RoPE: [n_positions, dim/2, 2] holding (cos, sin) of each pair's angle; --dim is the rotary dim.
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include "common.h"
#include "npy.h"
#include "pe/pe.h"
#include "pe/ref/reference.h"

namespace pe::cli {
namespace {

struct ExportOptions {
  std::string family, layout, dtype = "f32", positions, positions_file, variant, format, out;
  std::int64_t dim = 0;
  double base = 10000.0;
  bool reference = false;
};

template <class T>
T parsed(std::optional<T> v, const char* option, const std::string& text) {
  if (!v) throw UsageError(std::string(option) + ": unknown value '" + text + "'");
  return *v;
}

// Values of the sinusoidal table [n, dim].
std::vector<double> sinusoidal_values(const ExportOptions& o, const SinusoidalParams& params,
                                      const std::vector<std::int64_t>& positions, DType dtype) {
  const SinusoidalPlan plan(params);
  std::vector<double> v(positions.size() * plan.dim());
  if (o.reference) {
    const ref::Sinusoidal r(params, *std::max_element(positions.begin(), positions.end()));
    for (std::size_t i = 0; i < positions.size(); ++i) {
      for (std::size_t ch = 0; ch < plan.dim(); ++ch)
        v[i * plan.dim() + ch] = r.rounded(positions[i], ch, dtype);
    }
    return v;
  }
  const Variant* variant = find_variant(o.variant);
  if (dtype == DType::F32) {
    std::vector<float> y(v.size());
    sinusoidal_table(*variant, plan, positions, buffer(std::span<float>(y)));
    std::copy(y.begin(), y.end(), v.begin());
  } else {
    sinusoidal_table(*variant, plan, positions, buffer(std::span<double>(v)));
  }
  return v;
}

// (cos, sin) per pair [n, dim/2, 2]. A variant's come from rotating the unit vector (1, 0) of each
// pair: (1·cos - 0·sin, 1·sin + 0·cos) is exact in any arithmetic.
std::vector<double> rope_values(const ExportOptions& o, const RopeParams& params,
                                const std::vector<std::int64_t>& positions, DType dtype) {
  const RopePlan plan(params);
  const std::size_t h = plan.n_pairs(), d = plan.head_dim();
  std::vector<double> v(positions.size() * h * 2);
  if (o.reference) {
    const ref::Rope r(params, *std::max_element(positions.begin(), positions.end()));
    for (std::size_t i = 0; i < positions.size(); ++i) {
      for (std::size_t j = 0; j < h; ++j) {
        const auto [c, s] = r.cos_sin(positions[i], j, dtype);
        v[(i * h + j) * 2] = c;
        v[(i * h + j) * 2 + 1] = s;
      }
    }
    return v;
  }
  std::vector<double> x(positions.size() * d, 0.0);
  for (std::size_t i = 0; i < positions.size(); ++i) {
    for (std::size_t j = 0; j < h; ++j) x[i * d + plan.pair_first(j)] = 1.0;
  }
  const Variant* variant = find_variant(o.variant);
  if (dtype == DType::F32) {
    std::vector<float> xf(x.begin(), x.end());
    rope_apply(*variant, plan, positions, 1, buffer(std::span<float>(xf)));
    std::copy(xf.begin(), xf.end(), x.begin());
  } else {
    rope_apply(*variant, plan, positions, 1, buffer(std::span<double>(x)));
  }
  for (std::size_t i = 0; i < positions.size(); ++i) {
    for (std::size_t j = 0; j < h; ++j) {
      v[(i * h + j) * 2] = x[i * d + plan.pair_first(j)];
      v[(i * h + j) * 2 + 1] = x[i * d + plan.pair_first(j) + plan.pair_offset()];
    }
  }
  return v;
}

void write_csv(const std::string& path, const std::vector<double>& v, std::size_t row_width, DType dtype) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) throw UsageError("--out: cannot write '" + path + "'");
  // Enough digits to read back the same value: 9 for float, 17 for double.
  const char* fmt_spec = dtype == DType::F32 ? "%.9g" : "%.17g";
  for (std::size_t i = 0; i < v.size(); ++i) {
    std::fprintf(f, fmt_spec, v[i]);
    std::fputc((i + 1) % row_width == 0 ? '\n' : ',', f);
  }
  std::fclose(f);
}

int run_export(const ExportOptions& o) {
  const Family family = parsed(parse_family(o.family), "--family", o.family);
  const DType dtype = parsed(parse_dtype(o.dtype), "--dtype", o.dtype);
  if (dtype != DType::F32 && dtype != DType::F64)
    throw UsageError("--dtype: f32 or f64 for now, got " + o.dtype);
  const Layout layout = o.layout.empty() ? (family == Family::Rope ? Layout::HalfSplit : Layout::Interleaved)
                                         : parsed(parse_layout(o.layout), "--layout", o.layout);
  if (o.reference == !o.variant.empty()) throw UsageError("--reference or --variant: give exactly one");
  if (!o.reference && find_variant(o.variant) == nullptr) {
    throw UsageError("--variant: no variant named '" + o.variant + "' (see pe-suite list)");
  }
  std::string format = o.format;
  if (format.empty()) format = o.out.ends_with(".csv") ? "csv" : "npy";
  if (format != "npy" && format != "csv") throw UsageError("--format: npy or csv, got '" + format + "'");
  const auto positions = positions_from(o.positions, o.positions_file);

  std::vector<double> values;
  std::vector<std::size_t> shape;
  if (family == Family::Sinusoidal) {
    values = sinusoidal_values(o, {o.dim, o.base, layout}, positions, dtype);
    shape = {positions.size(), static_cast<std::size_t>(o.dim)};
  } else {
    values = rope_values(o, {o.dim, 0, o.base, layout}, positions, dtype);
    shape = {positions.size(), static_cast<std::size_t>(o.dim / 2), 2};
  }
  if (format == "npy") {
    write_npy(o.out, values, shape, dtype);
  } else {
    write_csv(o.out, values, family == Family::Sinusoidal ? shape[1] : shape[1] * 2, dtype);
  }
  std::string dims;
  for (std::size_t s : shape) dims += (dims.empty() ? "" : " x ") + std::to_string(s);
  fmt::print("wrote {} ({} {}, {})\n", o.out, dims, o.dtype, o.reference ? "reference" : o.variant);
  return kOk;
}

}  // namespace

void add_export(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("export", "Write a golden table (exact reference or a variant) as .npy or CSV");
  auto o = std::make_shared<ExportOptions>();
  cmd->add_option("--family", o->family, "sinusoidal or rope")->required();
  cmd->add_option("--dim", o->dim, "Model dimension (RoPE: the rotary dimension)")->required();
  cmd->add_option("--base", o->base, "Frequency base")->capture_default_str();
  cmd->add_option("--layout", o->layout,
                  "interleaved|concatenated (sinusoidal), interleaved|halfsplit (rope)");
  cmd->add_option("--positions", o->positions, "Half-open range A:B");
  cmd->add_option("--positions-file", o->positions_file, "Text file of whitespace-separated positions");
  cmd->add_option("--dtype", o->dtype, "f32 or f64")->capture_default_str();
  cmd->add_flag("--reference", o->reference, "Correctly rounded values from the exact reference");
  cmd->add_option("--variant", o->variant, "A registered variant's values instead");
  cmd->add_option("--format", o->format, "npy or csv (default: from --out's extension, else npy)");
  cmd->add_option("--out", o->out, "Output file")->required();
  cmd->callback([o, &exit_code] { exit_code = run_export(*o); });
}

}  // namespace pe::cli

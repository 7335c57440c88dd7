// reference_sinusoidal, reference_rope, rope_cos_sin and reference_alibi: the check engine's golden values
// (pe/check/golden.h) on the caller's positions and arrays, as numpy arrays: the same bits as
// `pe-suite export --reference`.
#include "pe/ref/reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "arrays.h"
#include "bindings.h"
#include "keywords.h"
#include "pe/check/golden.h"
#include "pe/harness/sinusoidal_rows.h"
#include "pe/harness/typed_buffer.h"
#include "pe/ref/fast_trig.h"

namespace pe::python {
namespace {

// Runs `golden` and refuses values the reference could not decide a rounding of.
template <class Golden>
std::vector<double> decided(Golden&& golden) {
  return without_gil([&] {
    const std::uint64_t before = ref::undecided_roundings_in_this_thread();
    std::vector<double> v = golden();
    if (ref::undecided_roundings_in_this_thread() != before)
      throw std::runtime_error("the reference could not decide a rounding; no values returned");
    return v;
  });
}

// The keywords as RoPE parameters for `head_dim` (0: the config's), as export reads them: `rotary_dim`
// the rotated channels (0: all; a config's partial_rotary_factor when not given), no NoPE layer. `plan`:
// every parameter checked, under its keyword, by building the plan.
RopeParams rope_params(const RopeKeywords& k, std::int64_t head_dim,
                       const std::vector<std::int64_t>& positions, const std::string& function,
                       bool plan = true) {
  RopeSetup s = rope_setup(k, static_cast<std::size_t>(head_dim));
  check::RopeSpec& o = s.spec;
  return without_gil([&] {
    const check::HfUse use{.rotary_dim = false,
                           .head_dim = false,
                           .temperature = false,
                           .no_rope = false,
                           .positions = [&positions] { return positions; },
                           .command = function};
    const auto r = check::apply_hf_config(s.hf, o, use, s.names);
    if (head_dim == 0) head_dim = r->setting.head_dim();
    const RopeParams params = check::rope_params(o, head_dim, AttnTemperature{}, s.names);
    if (plan) check::rope_plan(params, s.names);
    return params;
  });
}

std::vector<std::int64_t> axis_positions(py::handle positions, const RopeParams& params) {
  const check::Positions p = positions_of(positions);
  const check::Names names = python_names();
  return without_gil([&] {
    check::validate_positions(p, names);
    return check::axis_positions(p, n_axes(params.form),
                                 params.form.vision != VisionRope::None ? "vision"
                                 : params.form.axes_dim.empty()         ? "mrope_section"
                                                                        : "axes_dim",
                                 names);
  });
}

py::array reference_sinusoidal(py::handle positions, py::handle dim, const TableKeywords& k,
                               py::handle dtype) {
  const TablePositions p = table_positions(positions);
  const check::Names names = python_names();
  const DType type = dtype_argument(dtype, "dtype").value_or(DType::F32);
  const check::SinusoidalSpec spec = table_spec(k, names);
  const std::int64_t width = integer(dim, "dim");
  const SinusoidalParams params = without_gil([&] { return check::sinusoidal_params(spec, width, names); });
  const std::vector<double> v = decided([&] {
    return check::golden_sinusoidal(check::sinusoidal_rows(spec, params, p.integer, p.real, names), type);
  });
  return to_numpy(v, {v.size() / static_cast<std::size_t>(params.dim), static_cast<std::size_t>(params.dim)},
                  type);
}

py::array reference_rope(py::handle x, py::handle positions, const RopeKeywords& k, py::handle dtype) {
  const auto declared = dtype_argument(dtype, "dtype");
  // dtype is the output's type; it also says how to read 16-bit integers (bfloat16 bits).
  const check::NpyArray xa = read_floats(x, "x", declared, false);
  for (std::size_t i = 0; i < xa.values.size(); ++i)
    if (std::isinf(xa.values[i]))
      throw py::value_error(
          fmt::format("x: holds {} at flat index {}; the reference rotates finite values", xa.values[i], i));
  if (xa.shape.empty())
    throw py::value_error("x: expected [tokens, heads, head_dim] or [tokens, head_dim], got a scalar");
  const DType type = declared.value_or(xa.dtype);
  const std::vector<std::int64_t> first = positions_of(positions).values;
  const RopeParams params =
      rope_params(k, static_cast<std::int64_t>(xa.shape.back()), first, "reference_rope");
  const std::vector<std::int64_t> p = axis_positions(positions, params);
  const std::vector<double> v = decided([&] {
    const RopeBatch batch =
        check::rope_batch_of(xa.shape, p, k.heads_first, "x", n_axes(params.form), "heads_first=True");
    // x already in the output type holds its values exactly: no rounded copy.
    if (xa.dtype == type && !xa.integer) return check::golden_rope(params, batch, xa.values, type);
    harness::TypedBuffer buf(type, xa.values.size());  // the input in the output type
    std::vector<double> in(xa.values.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
      buf.set(i, xa.values[i]);
      in[i] = buf.get(i);
    }
    return check::golden_rope(params, batch, in, type);
  });
  return to_numpy(v, xa.shape, type);
}

py::tuple rope_cos_sin(py::handle positions, const RopeKeywords& k, py::handle dtype) {
  if (k.rotary_dim.is_none() && k.hf_config.is_none())
    throw py::value_error("rotary_dim: required (or an hf_config that gives it)");
  std::int64_t dim = 0;
  if (!k.rotary_dim.is_none()) {
    dim = integer(k.rotary_dim, "rotary_dim");
    if (dim <= 0 || dim % 2 != 0)
      throw py::value_error(fmt::format("rotary_dim: expected an even positive integer, got {}", dim));
  }
  RopeKeywords table = k;
  table.rotary_dim = py::none();  // the table's width is the head dim here (export's --dim)
  const DType type = dtype_argument(dtype, "dtype").value_or(DType::F32);
  const RopeParams params = rope_params(table, dim, positions_of(positions).values, "rope_cos_sin");
  const std::vector<std::int64_t> p = axis_positions(positions, params);
  const std::vector<double> v = decided([&] { return check::golden_rope_table(params, p, type); });
  // [tokens, pairs, (cos, sin)] laid out as the rotation reads it: HF's cat(freqs, freqs) for halfsplit,
  // each frequency twice in a row for interleaved.
  const std::size_t pairs = RopePlan(params).n_pairs(), tokens = v.size() / (2 * pairs);
  const bool interleaved = params.layout == Layout::Interleaved;
  std::vector<double> c(tokens * 2 * pairs), s(tokens * 2 * pairs);
  for (std::size_t t = 0; t < tokens; ++t) {
    for (std::size_t j = 0; j < pairs; ++j) {
      const double cv = v[(t * pairs + j) * 2], sv = v[(t * pairs + j) * 2 + 1];
      const std::size_t a = t * 2 * pairs + (interleaved ? 2 * j : j);
      const std::size_t b = interleaved ? a + 1 : a + pairs;
      c[a] = c[b] = cv;
      s[a] = s[b] = sv;
    }
  }
  return py::make_tuple(to_numpy(c, {tokens, 2 * pairs}, type), to_numpy(s, {tokens, 2 * pairs}, type));
}

// Each length (HF's seq_len = max(position_ids) + 1 of a call) as the config's scaling reads it, so that
// calls whose values are equal have one plan and one reference: dynamic reads max(seq_len, L), LongRoPE
// with one list per sequence whether seq_len > L (pe/detail/rope_scaling_math.h: effective_base_of and
// longrope_uses_long, the only readers of seq_len); the other methods read no length (0 for every call).
py::list rope_plan_lengths(py::handle lengths, const RopeKeywords& k) {
  if (k.hf_config.is_none())
    throw py::value_error("hf_config: required (the config whose scaling reads the lengths)");
  // Only the scaling is read: no plan built (verify_rope asks once per case, then checks the data).
  const RopeScaling s = rope_params(k, 0, {0}, "verify_rope", false).scaling;
  const std::int64_t L = s.original_max_position;
  py::list out;
  for (const py::handle length : lengths) {
    const std::int64_t n = integer(length, "lengths");
    if (s.type == RopeScalingType::Dynamic && s.dynamic_semantics == DynamicSemantics::Live && !s.alpha)
      out.append(std::max(n, L));
    else if (s.type == RopeScalingType::LongRope && s.longrope_switch == LongRopeSwitch::PerSequence)
      out.append(n > 0 && n > L ? 1 : 0);
    else
      out.append(0);
  }
  return out;
}

py::array reference_alibi(py::handle heads, py::handle queries, py::handle keys, py::handle max_bias,
                          py::handle alibi_slopes, py::handle alibi_form, py::handle dtype) {
  const check::Names names = python_names();
  check::AlibiSpec o;
  o.max_bias = number(max_bias, "max_bias");
  const std::string slopes_text = text(alibi_slopes), form_text = text(alibi_form);
  const std::int64_t h = integer(heads, "heads");
  const bool slopes_only = queries.is_none() && keys.is_none();
  if (queries.is_none() != keys.is_none())
    throw py::value_error("queries and keys: give both (the bias) or neither (the slopes)");
  const std::vector<std::int64_t> q =
      slopes_only ? std::vector<std::int64_t>{} : positions_of(queries).values;
  const std::vector<std::int64_t> kk = slopes_only ? std::vector<std::int64_t>{} : positions_of(keys).values;
  const DType type = dtype_argument(dtype, "dtype").value_or(DType::F32);
  const std::vector<double> v = decided([&] {
    o.slopes = check::parse_slopes(slopes_text, names);
    o.form = check::parse_alibi_form(form_text, names);
    const AlibiParams params = check::to_alibi_params(o, h, names);
    return check::golden_alibi(params, q, kk, slopes_only, type);
  });
  const auto n = static_cast<std::size_t>(h);
  return slopes_only ? to_numpy(v, {n}, type) : to_numpy(v, {n, q.size(), kk.size()}, type);
}

auto rope_keyword_arguments() {
  return std::tuple{py::arg("base") = py::none(),          py::arg("layout") = py::none(),
                    py::arg("rotary_offset") = py::none(), py::arg("scaling") = py::none(),
                    py::arg("hf_config") = py::none(),     py::arg("layer") = py::none(),
                    py::arg("layer_type") = py::none(),    py::arg("mrope_section") = py::none(),
                    py::arg("mrope_layout") = py::none(),  py::arg("vision") = py::none(),
                    py::arg("axes_dim") = py::none(),      py::arg("heads_first") = false,
                    py::arg("dtype") = py::none()};
}

}  // namespace

void add_reference_functions(py::module_& m) {
  m.def(
      "reference_sinusoidal",
      [](py::handle positions, py::handle dim, py::object base, py::object layout, py::object flip_sin_to_cos,
         py::object downscale_freq_shift, py::object scale, py::object padding_idx, py::object grid,
         py::object base_size, py::object interpolation_scale, py::object temporal_interpolation_scale,
         py::object extra_tokens, py::object hf_config, py::handle dtype) {
        return reference_sinusoidal(
            positions, dim,
            {base, layout, flip_sin_to_cos, downscale_freq_shift, scale, padding_idx, grid, base_size,
             interpolation_scale, temporal_interpolation_scale, extra_tokens, hf_config},
            dtype);
      },
      "The sinusoidal table [rows, dim], correctly rounded to dtype (float32 by default; bfloat16 as uint16 "
      "bits): the same bits as `pe-suite export --family sinusoidal --reference`. positions: integers, a "
      "float array of real positions, or None with grid; the switches as check_sinusoidal takes them.",
      py::arg("positions"), py::arg("dim"), py::kw_only(), py::arg("base") = 10000.0,
      py::arg("layout") = py::none(), py::arg("flip_sin_to_cos") = py::none(),
      py::arg("downscale_freq_shift") = py::none(), py::arg("scale") = py::none(),
      py::arg("padding_idx") = py::none(), py::arg("grid") = py::none(), py::arg("base_size") = py::none(),
      py::arg("interpolation_scale") = py::none(), py::arg("temporal_interpolation_scale") = py::none(),
      py::arg("extra_tokens") = py::none(), py::arg("hf_config") = py::none(), py::arg("dtype") = "float32");
  std::apply(
      [&](auto&&... a) {
        m.def(
            "reference_rope",
            [](py::handle x, py::handle positions, py::object rotary_dim, py::object base, py::object layout,
               py::object rotary_offset, py::object scaling, py::object hf_config, py::object layer,
               py::object layer_type, py::object mrope_section, py::object mrope_layout, py::object vision,
               py::object axes_dim, bool heads_first, py::handle dtype) {
              const RopeKeywords k{base,      layout,   rotary_dim, rotary_offset, scaling,
                                   hf_config, layer,    layer_type, mrope_section, mrope_layout,
                                   vision,    axes_dim, heads_first};
              return reference_rope(x, positions, k, dtype);
            },
            "x rotated by the exact RoPE and correctly rounded to dtype (x's own type by default): the same "
            "bits as `pe-suite export --family rope --input x --reference`. Keywords as check_rope's.",
            py::arg("x"), py::arg("positions"), py::kw_only(), py::arg("rotary_dim") = py::none(), a...);
        m.def(
            "rope_cos_sin",
            [](py::handle positions, py::object rotary_dim, py::object base, py::object layout,
               py::object rotary_offset, py::object scaling, py::object hf_config, py::object layer,
               py::object layer_type, py::object mrope_section, py::object mrope_layout, py::object vision,
               py::object axes_dim, bool heads_first, py::handle dtype) {
              const RopeKeywords k{base,      layout,   rotary_dim, rotary_offset, scaling,
                                   hf_config, layer,    layer_type, mrope_section, mrope_layout,
                                   vision,    axes_dim, heads_first};
              return rope_cos_sin(positions, k, dtype);
            },
            "The exact (cos, sin) tables [positions, rotary_dim], attention factor included (as HF's), "
            "correctly "
            "rounded to dtype (float32 by default): halfsplit (default) repeats the frequencies as HF's "
            "cat(freqs, freqs), interleaved as each one twice in a row.",
            py::arg("positions"), py::arg("rotary_dim") = py::none(), py::kw_only(), a...);
        m.def(
            "_rope_plan_lengths",
            [](py::handle lengths, py::object base, py::object layout, py::object rotary_offset,
               py::object scaling, py::object hf_config, py::object layer, py::object layer_type,
               py::object mrope_section, py::object mrope_layout, py::object vision, py::object axes_dim,
               bool heads_first, py::handle) {
              const RopeKeywords k{base,      layout,   py::none(), rotary_offset, scaling,
                                   hf_config, layer,    layer_type, mrope_section, mrope_layout,
                                   vision,    axes_dim, heads_first};
              return rope_plan_lengths(lengths, k);
            },
            "Each call length (max(position_ids) + 1) as the config's scaling reads it: calls of equal "
            "values have one plan (dynamic: max(length, L); LongRoPE: whether length > L; else 0).",
            py::arg("lengths"), py::kw_only(), a...);
      },
      rope_keyword_arguments());
  m.def("reference_alibi", reference_alibi,
        "ALiBi's slopes [heads] (without queries and keys) or bias [heads, queries, keys], correctly rounded "
        "to dtype: the same bits as `pe-suite export --family alibi --reference`.",
        py::arg("heads"), py::arg("queries") = py::none(), py::arg("keys") = py::none(), py::kw_only(),
        py::arg("max_bias") = 8.0, py::arg("alibi_slopes") = "interpolated", py::arg("alibi_form") = "causal",
        py::arg("dtype") = "float32");
  m.def("reference_fallbacks", &ref::mpfr_fallbacks,
        "How many roundings the reference's fast path left to MPFR in this process (expected: a few in a "
        "million)");
}

}  // namespace pe::python

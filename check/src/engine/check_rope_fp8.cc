// check_rope_fp8 (pe/check/fp8.h): FP8 codes of a RoPE output against the exact rotation's correctly rounded
// quantization, with the float32 rotation's own error as the only slack, and the fused kernels' mistakes
// tried where codes differ.
#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "pe/check/fp8.h"
#include "pe/check/golden.h"
#include "pe/harness/typed_buffer.h"

namespace pe::check {
namespace {

constexpr double kFp8U32 = 0x1p-24;

// What fp8 kernels leave out: a NoPE layer, a temperature and xPos are gains no fused quantizer takes.
void refuse_gains(const RopeSpec& o, const Names& names) {
  if (o.nope()) names.fail("no_rope", "a NoPE layer has no rotation to quantize");
  if (o.temperature.type)
    names.fail("attn_temperature", "not with FP8 codes (no fused quantizer applies one)");
  if (o.xpos.scale_base) names.fail("xpos_scale_base", "not with FP8 codes (no fused quantizer applies one)");
}

// Per element of x's layout: the exact rotation (divided by nothing), the float32 rotation's error bound
// (A·(8 + 4|phi|)·2^-24·(|x_a| + |x_b|) on rotated channels, -1 on pass-through ones) and the head.
struct Fp8Exact {
  std::vector<double> exact, eps;
  std::vector<std::size_t> head;
};

Fp8Exact fp8_exact(const RopeParams& params, const RopePlan& plan, const RopeBatch& batch,
                   std::span<const double> x) {
  Fp8Exact e{golden_rope(params, batch, x, DType::F64), std::vector<double>(x.size(), -1.0),
             std::vector<std::size_t>(x.size(), 0)};
  const double a = plan.attention_factor();
  for (std::size_t t = 0; t < batch.tokens(); ++t) {
    for (std::size_t h = 0; h < batch.heads; ++h) {
      const std::size_t row = batch.row(t, h);
      for (std::size_t c = 0; c < plan.head_dim(); ++c) e.head[row + c] = h;
      for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
        const auto [i0, i1] = plan.input_channels(j);
        const auto [o0, o1] = plan.output_channels(j);
        const double phi =
            std::fabs(static_cast<double>(batch.position(t, plan.axis_of_pair(j))) * plan.inv_freq()[j]);
        const double eps = a * (8 + 4 * phi) * kFp8U32 * (std::fabs(x[row + i0]) + std::fabs(x[row + i1]));
        e.eps[row + o0] = e.eps[row + o1] = eps;
      }
    }
  }
  return e;
}

// Whether `code` is the rounding of some value within eps of v, as `value` (monotone increasing) maps it
// before the quantization: between RN(value(v - eps)) and RN(value(v + eps)) (RN is monotone), or
// RN(value(v)) itself where eps < 0 (pass-through); values compared, so -0 and +0 agree.
template <class Value>
bool fp8_accepts(Fp8Format f, std::uint8_t code, double v, double eps, const Value& value) {
  const double got = fp8_value(f, code);
  if (got == fp8_value(f, fp8_code(f, value(v)))) return true;
  if (eps < 0) return false;
  return fp8_value(f, fp8_code(f, value(v - eps))) <= got && got <= fp8_value(f, fp8_code(f, value(v + eps)));
}

// v as a 16-bit kernel holds its float32 rotation: through float32, then RN into the type.
double round16(DType type, double v) {
  harness::TypedBuffer b(type, 1);
  b.set(0, static_cast<double>(static_cast<float>(v)));
  return b.get(0);
}

// The fused kernels' mistakes that reproduce every code: (words, the value quantized from exact and scale,
// the format).
std::vector<std::string> fp8_mistakes(const Fp8RopeRequest& r, const Fp8Exact& e) {
  using Value = std::function<double(double, double)>;  // (exact, scale) -> the value quantized
  const Fp8Format other = r.format == Fp8Format::E4m3fn ? Fp8Format::E5m2 : Fp8Format::E4m3fn;
  const std::vector<std::tuple<std::string, Value, Fp8Format, bool>> mistakes = {
      {"the rotation rounded to bfloat16 before the quantization",
       [](double v, double s) { return round16(DType::BF16, v) / s; }, r.format, false},
      {"the rotation rounded to float16 before the quantization",
       [](double v, double s) { return round16(DType::F16, v) / s; }, r.format, false},
      {"the scale applied twice (divided by scale²)", [](double v, double s) { return v / (s * s); },
       r.format, true},
      {"the scale multiplied instead of divided", [](double v, double s) { return v * s; }, r.format, true},
      {"no scale", [](double v, double) { return v; }, r.format, true},
      {fmt::format("the {} format (given: {})", to_string(other), to_string(r.format)),
       [](double v, double s) { return v / s; }, other, false}};
  std::vector<std::string> fits;
  for (const auto& [words, value, format, needs_scale] : mistakes) {
    bool differs = false, all = true;
    for (std::size_t i = 0; i < e.exact.size() && all; ++i) {
      const double s = r.scale[r.scale.size() == 1 ? 0 : e.head[i]];
      if (needs_scale && s != 1) differs = true;
      const auto at = [&value, s](double v) { return value(v, s); };
      all = fp8_accepts(format, r.codes[i], e.exact[i], e.eps[i], at);
    }
    if (all && (differs || !needs_scale)) fits.push_back(words);
  }
  return fits;
}

}  // namespace

Report check_rope_fp8(const Fp8RopeRequest& r, const Names& names) {
  const RopeRequest& q = r.rope;
  if (r.codes_shape != q.x.shape)
    names.fail("y", fmt::format("expected x's shape [{}], got [{}]", fmt::join(q.x.shape, ", "),
                                fmt::join(r.codes_shape, ", ")));
  if (q.x.shape.empty()) names.fail("x", "expected [tokens, heads, head_dim] or [tokens, head_dim]");
  if (!q.positions.real.empty()) names.fail("positions", "FP8 codes are checked at integer positions");
  Report out;
  RopeSpec o = q.spec;
  refuse_gains(o, names);
  HfUse use;
  use.temperature = false;
  use.no_rope = false;
  use.positions = [&q] { return q.positions.values; };
  const std::optional<HfResolution> hf = apply_hf_config(q.hf, o, use, names);
  if (hf) out.text += hf->block;
  refuse_gains(o, names);
  const std::size_t hd = q.x.shape.back();
  const RopeParams params = rope_params(o, static_cast<std::int64_t>(hd), {}, names);
  const std::vector<std::int64_t> positions = axis_positions(q.positions, n_axes(params.form), "form", names);
  const RopeBatch batch =
      rope_batch_of(q.x.shape, positions, q.heads_first, q.x.name, n_axes(params.form), names("heads_first"));
  if (r.scale.size() != 1 && r.scale.size() != batch.heads)
    names.fail("scale",
               fmt::format("expected one value or one per head ({}), got {}", batch.heads, r.scale.size()));
  for (const double s : r.scale)
    if (!(std::isfinite(s) && s > 0))
      names.fail("scale", fmt::format("expected finite values > 0, got {}", s));
  std::vector<double> storage;
  const DataView x = as_doubles(q.x, storage);
  for (std::size_t i = 0; i < x.values.size(); ++i)
    if (!std::isfinite(x.values[i]))
      names.fail(
          "x", fmt::format("holds {} at flat index {}; the reference rotates finite values", x.values[i], i));
  const RopePlan plan = rope_plan(params, names);
  const Fp8Exact e = fp8_exact(params, plan, batch, x.values);
  std::size_t wrong = 0, neighbours = 0, first = e.exact.size();
  for (std::size_t i = 0; i < e.exact.size(); ++i) {
    const double s = r.scale[r.scale.size() == 1 ? 0 : e.head[i]];
    const double v = e.exact[i] / s;
    if (fp8_value(r.format, r.codes[i]) == fp8_value(r.format, fp8_code(r.format, v))) continue;
    if (fp8_accepts(r.format, r.codes[i], e.exact[i], e.eps[i], [s](double u) { return u / s; })) {
      ++neighbours;
    } else if (wrong++ == 0) {
      first = i;
    }
  }
  const std::string scale = r.scale.size() == 1 ? fmt::format("{:g}", r.scale[0]) : "per head";
  const std::string form = describe_form(params);
  out.say("FP8 RoPE: {}, {} tokens x {} heads x {}, scale {}; base {:g}, {}{}{}\n", to_string(r.format),
          batch.tokens(), batch.heads, hd, scale, params.base, to_string(params.layout),
          form.empty() ? "" : ", ", form);
  out.say(
      "contract: RN_{}(rope(x)/scale), or the rounding of a value within the float32 rotation's error of "
      "rope(x)/scale: {} element(s) so\n",
      to_string(r.format), neighbours);
  out.passed = wrong == 0;
  out.doc.family = "rope";
  out.doc.input = q.x.name;
  out.doc.output = r.codes_name;
  out.doc.parameters = {
      {"fp8", {{"format", to_string(r.format)}, {"scale", r.scale}, {"neighbours", neighbours}}}};
  out.doc.budget = "fp8";
  out.doc.dtype = q.x.dtype;  // the input's: the codes' format is parameters.fp8.format
  out.doc.elements = e.exact.size();
  out.doc.violations = wrong;
  out.doc.passed = out.passed;
  out.doc.verdict = out.passed ? harness::Verdict::Pass : harness::Verdict::Fail;
  if (wrong > 0) {
    const std::size_t c = first % hd, h = e.head[first];
    const std::size_t t = (first - c - h * batch.head_stride) / batch.token_stride;
    const double s = r.scale[r.scale.size() == 1 ? 0 : h];
    const std::uint8_t want = fp8_code(r.format, e.exact[first] / s);
    out.say(
        "{} of {} elements differ; first: token {} head {} channel {} at position {}: code 0x{:02x} ({:g}), "
        "expected 0x{:02x} ({:g}; rope(x)/scale = {:.9g})\n",
        wrong, e.exact.size(), t, h, c, batch.position(t), r.codes[first],
        fp8_value(r.format, r.codes[first]), want, fp8_value(r.format, want), e.exact[first] / s);
    out.doc.worst = {{{"row", t},
                      {"head", h},
                      {"channel", c},
                      {"position", batch.position(t)},
                      {"code", r.codes[first]},
                      {"expected", want}}};
    const std::vector<std::string> fits = fp8_mistakes(r, e);
    for (const std::string& f : fits) {
      out.say("the data fits: {} (every one of the {} codes reproduced)\n", f, e.exact.size());
      out.found({f, fmt::format("every one of the {} codes reproduced", e.exact.size()), std::nullopt,
                 std::nullopt});
    }
    if (fits.empty()) out.say("undetermined: none of the known mistakes reproduces the codes\n");
  }
  out.say("verdict: {}\n", out.passed ? "PASS" : "FAIL");
  return out;
}

}  // namespace pe::check

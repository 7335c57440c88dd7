// check_rope_fp8 (pe/check/fp8.h): FP8 codes of a RoPE output against the exact rotation's correctly rounded
// quantization, with the float32 rotation's own error as the only slack, and the fused kernels' mistakes
// tried where codes differ.
#include <fmt/format.h>

#include <cmath>
#include <functional>

#include "pe/check/fp8.h"
#include "pe/check/golden.h"
#include "rotation_allowance.h"

namespace pe::check {
namespace {

// What fp8 kernels leave out: a NoPE layer, a temperature and xPos are gains no fused quantizer takes.
void refuse_gains(const RopeSpec& o, const Names& names) {
  if (o.nope()) names.fail("no_rope", "a NoPE layer has no rotation to quantize");
  if (o.temperature.type)
    names.fail("attn_temperature", "not with FP8 codes (no fused quantizer applies one)");
  if (o.xpos.scale_base) names.fail("xpos_scale_base", "not with FP8 codes (no fused quantizer applies one)");
}

// Per element of x's layout: the exact rotation and the element's head (its scale's index).
struct Fp8Exact {
  std::vector<double> exact;
  std::vector<std::size_t> head;
};

Fp8Exact fp8_exact(const RopeParams& params, const RopePlan& plan, const RopeBatch& batch,
                   std::span<const double> x) {
  Fp8Exact e{golden_rope(params, batch, x, DType::F64), std::vector<std::size_t>(x.size(), 0)};
  for (std::size_t t = 0; t < batch.tokens(); ++t)
    for (std::size_t h = 0; h < batch.heads; ++h)
      for (std::size_t c = 0; c < plan.head_dim(); ++c) e.head[batch.row(t, h) + c] = h;
  return e;
}

// Whether `code` is the rounding of some value the quantizer may have met: the exact rotation within eps of
// v, as `value` (monotone increasing in it) maps it, either exactly or as a float32 quantizer computes it
// (the rotation held in float32, then divided by the float32 scale, or multiplied by its float32 reciprocal,
// rounded once). Between RN of the least and of the greatest of those (RN is monotone); values compared, so
// -0 and +0 agree. At an exact tie of a pass-through value every candidate is the tie: ties to even alone.
template <class Value>
bool fp8_accepts(Fp8Format f, std::uint8_t code, double v, double eps, double s, const Value& value) {
  const double got = fp8_value(f, code);
  if (got == fp8_value(f, fp8_code(f, value(v, s)))) return true;
  const auto f32 = [](double u) { return static_cast<double>(static_cast<float>(u)); };
  const double s32 = f32(s), reciprocal = 1.0 / f32(1.0 / s32);
  double lo = value(v - eps, s), hi = value(v + eps, s);
  for (const double u : {v - eps, v + eps})
    for (const double q : {f32(value(f32(u), s32)), f32(value(f32(u), reciprocal))}) {
      lo = std::min(lo, q);
      hi = std::max(hi, q);
    }
  return fp8_value(f, fp8_code(f, lo)) <= got && got <= fp8_value(f, fp8_code(f, hi));
}

// Whether every code is accepted under (value, format, allowance).
template <class Value>
bool fp8_all(const Fp8RopeRequest& r, const Fp8Exact& e, const std::vector<double>& eps, Fp8Format format,
             const Value& value) {
  for (std::size_t i = 0; i < e.exact.size(); ++i)
    if (!fp8_accepts(format, r.codes[i], e.exact[i], eps[i], r.scale[r.scale.size() == 1 ? 0 : e.head[i]],
                     value))
      return false;
  return true;
}

std::string sixteen_bit_reading(const char* type, DType rotation) {
  return fmt::format(
      "a {} rotation before the quantization: every code within HF's rotate_half in {} (the rope.torch_{} "
      "contract), as an unfused RoPE, then an fp8 cache, writes them (correct for such an engine: state the "
      "rotation's type); an error of that size in a float32 rotation is not told apart",
      type, type, to_string(rotation));
}

// The readings that reproduce every code where the given one does not: a 16-bit rotation before the
// quantization (the float16 budget first, the tighter; its codes fit within that rotation's budget: an
// unfused RoPE then an fp8 cache is correct so, and a mistake of that size is not told apart from it, as the
// words say), the scale applied twice, multiplied instead of divided, or not at all, the other format.
std::vector<std::string> fp8_mistakes(const Fp8RopeRequest& r, const Fp8Exact& e, const RopePlan& plan,
                                      const RopeBatch& batch, std::span<const double> x,
                                      const std::vector<double>& eps) {
  std::vector<std::string> fits;
  const auto divided = [](double v, double s) { return v / s; };
  for (const DType rotation : {DType::F16, DType::BF16})
    if (rotation != r.rotation &&
        fp8_all(r, e, rotation_allowance(plan, batch, x, rotation), r.format, divided)) {
      const char* type = rotation == DType::BF16 ? "bfloat16" : "float16";
      fits.push_back(sixteen_bit_reading(type, rotation));
      break;
    }
  bool scaled = false;
  for (const double s : r.scale) scaled = scaled || s != 1;
  using Value = std::function<double(double, double)>;
  const std::vector<std::pair<std::string, Value>> scalings = {
      {"the scale applied twice (divided by scale²)", [](double v, double s) { return v / (s * s); }},
      {"the scale multiplied instead of divided", [](double v, double s) { return v * s; }},
      {"no scale", [](double v, double) { return v; }}};
  if (scaled)
    for (const auto& [words, value] : scalings)
      if (fp8_all(r, e, eps, r.format, value)) fits.push_back(words);
  const Fp8Format other = r.format == Fp8Format::E4m3fn ? Fp8Format::E5m2 : Fp8Format::E4m3fn;
  if (fp8_all(r, e, eps, other, divided))
    fits.push_back(fmt::format("the {} format (given: {})", to_string(other), to_string(r.format)));
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
  if (x.values.empty()) names.fail("x", "holds no elements (no tokens, heads or channels)");
  const Fp8Exact e = fp8_exact(params, plan, batch, x.values);
  const std::vector<double> eps = rotation_allowance(plan, batch, x.values, r.rotation);
  std::size_t wrong = 0, neighbours = 0, first = e.exact.size();
  for (std::size_t i = 0; i < e.exact.size(); ++i) {
    const double s = r.scale[r.scale.size() == 1 ? 0 : e.head[i]];
    const double v = e.exact[i] / s;
    if (fp8_value(r.format, r.codes[i]) == fp8_value(r.format, fp8_code(r.format, v))) continue;
    if (fp8_accepts(r.format, r.codes[i], e.exact[i], eps[i], s, [](double u, double d) { return u / d; })) {
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
      "contract: RN_{}(rope(x)/scale), or the rounding of a value within the {} rotation's error (HF's "
      "rotate_half: rope.torch_{}'s contract) and the quantizer's float32 division: {} element(s) so\n",
      to_string(r.format), to_string(r.rotation), to_string(r.rotation), neighbours);
  out.passed = wrong == 0;
  out.doc.family = "rope";
  out.doc.input = q.x.name;
  out.doc.output = r.codes_name;
  out.doc.parameters = {{"fp8",
                         {{"format", to_string(r.format)},
                          {"scale", r.scale},
                          {"rotation", to_string(r.rotation)},
                          {"neighbours", neighbours}}}};
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
    const std::vector<std::string> fits = fp8_mistakes(r, e, plan, batch, x.values, eps);
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

// check_rope_fp8 (pe/check/fp8.h): FP8 codes of a RoPE output against the exact rotation's correctly rounded
// quantization, with the float32 rotation's own error as the only slack, and the fused kernels' mistakes
// tried where codes differ.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>

#include "engine/rope_pass.h"
#include "engine/thread_parts.h"
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

// A run of tokens' rows, tokens first whatever x's layout: x as doubles, the exact rotation, and where each
// element lies in x's layout (and the codes'). The check reads x a run at a time, so that nothing it holds
// grows with the tensor (x's 1-byte codes against 8-byte doubles).
struct Fp8Chunk {
  std::vector<std::int64_t> positions;  // [n_axes][tokens of the run]
  std::vector<double> x, exact;
  std::vector<std::size_t> flat;
  RopeBatch batch;
  std::size_t head_dim = 0;
  std::size_t head(std::size_t i) const { return i / head_dim % batch.heads; }
};

// About this many elements a run (whole tokens): the runs' buffers stay in the caches.
constexpr std::size_t kFp8ChunkElements = std::size_t{1} << 15;

// Tokens a run holds.
std::size_t chunk_tokens(const RopeBatch& batch, std::size_t head_dim) {
  return std::max<std::size_t>(1, kFp8ChunkElements / (batch.heads * head_dim));
}

// f(chunk) for each run of tokens of `batch` in [first, end) (every token by default), in token order; f
// returns false to stop.
template <class F>
void for_each_chunk(const RopeParams& params, const RopeBatch& batch, const harness::Values& x,
                    std::size_t head_dim, F&& f, std::size_t first = 0, std::size_t end = SIZE_MAX) {
  const std::size_t row = batch.heads * head_dim, per = chunk_tokens(batch, head_dim);
  end = std::min(end, batch.tokens());
  Fp8Chunk c;
  c.head_dim = head_dim;
  std::vector<std::size_t> channels(head_dim);  // a row's, from its first (gathered a row at a time)
  for (std::size_t ch = 0; ch < head_dim; ++ch) channels[ch] = ch;
  for (std::size_t t0 = first; t0 < end; t0 += per) {
    const std::size_t n = std::min(per, end - t0);
    c.positions.resize(batch.n_axes * n);
    for (std::size_t a = 0; a < batch.n_axes; ++a)
      for (std::size_t t = 0; t < n; ++t) c.positions[a * n + t] = batch.position(t0 + t, a);
    c.batch = RopeBatch{c.positions, batch.n_axes, batch.heads, row, head_dim};
    c.x.resize(n * row);
    c.flat.resize(n * row);
    for (std::size_t t = 0; t < n; ++t)
      for (std::size_t h = 0; h < batch.heads; ++h) {
        const std::size_t i = (t * batch.heads + h) * head_dim, from = batch.row(t0 + t, h);
        for (std::size_t ch = 0; ch < head_dim; ++ch) c.flat[i + ch] = from + ch;
        x.gather(from, channels, c.x.data() + i);
      }
    c.exact = golden_rope(params, c.batch, c.x, DType::F64);
    if (!f(c)) return;
  }
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

std::string sixteen_bit_reading(const char* type, DType rotation) {
  return fmt::format(
      "a {} rotation before the quantization: every code within HF's rotate_half in {} (the rope.torch_{} "
      "contract), as an unfused RoPE, then an fp8 cache, writes them (correct for such an engine: state the "
      "rotation's type); an error of that size in a float32 rotation is not told apart",
      type, type, to_string(rotation));
}

// One reading of the codes: the exact rotation, within `rotation`'s allowance, mapped by `value` and rounded
// to `format`.
struct Fp8Reading {
  std::string words;
  DType rotation;
  Fp8Format format;
  std::function<double(double, double)> value;
  bool fits = true;  // every code so far accepted
};

// The readings that reproduce every code where the given one does not: a 16-bit rotation before the
// quantization (the float16 budget first, the tighter; its codes fit within that rotation's budget: an
// unfused RoPE then an fp8 cache is correct so, and a mistake of that size is not told apart from it, as the
// words say), the scale applied twice, multiplied instead of divided, or not at all, the other format. One
// more pass over x's runs, all readings at once, until none fits.
std::vector<std::string> fp8_mistakes(const Fp8RopeRequest& r, const RopeParams& params, const RopePlan& plan,
                                      const RopeBatch& batch, const harness::Values& x,
                                      std::size_t head_dim) {
  const auto divided = [](double v, double s) { return v / s; };
  std::vector<Fp8Reading> readings;
  for (const DType rotation : {DType::F16, DType::BF16})
    if (rotation != r.rotation)
      readings.push_back({sixteen_bit_reading(rotation == DType::BF16 ? "bfloat16" : "float16", rotation),
                          rotation, r.format, divided});
  bool scaled = false;
  for (const double s : r.scale) scaled = scaled || s != 1;
  if (scaled) {
    readings.push_back({"the scale applied twice (divided by scale²)", r.rotation, r.format,
                        [](double v, double s) { return v / (s * s); }});
    readings.push_back({"the scale multiplied instead of divided", r.rotation, r.format,
                        [](double v, double s) { return v * s; }});
    readings.push_back({"no scale", r.rotation, r.format, [](double v, double) { return v; }});
  }
  const Fp8Format other = r.format == Fp8Format::E4m3fn ? Fp8Format::E5m2 : Fp8Format::E4m3fn;
  readings.push_back({fmt::format("the {} format (given: {})", to_string(other), to_string(r.format)),
                      r.rotation, other, divided});
  for_each_chunk(params, batch, x, head_dim, [&](const Fp8Chunk& c) {
    std::vector<std::pair<DType, std::vector<double>>> eps;  // per rotation type met, the run's allowances
    bool any = false;
    for (Fp8Reading& m : readings) {
      if (!m.fits) continue;
      auto e = std::find_if(eps.begin(), eps.end(), [&m](const auto& p) { return p.first == m.rotation; });
      if (e == eps.end())
        e = eps.insert(eps.end(), {m.rotation, rotation_allowance(plan, c.batch, c.x, m.rotation)});
      for (std::size_t i = 0; i < c.exact.size() && m.fits; ++i)
        m.fits = fp8_accepts(m.format, r.codes[c.flat[i]], c.exact[i], e->second[i],
                             r.scale[r.scale.size() == 1 ? 0 : c.head(i)], m.value);
      any = any || m.fits;
    }
    return any;
  });
  std::vector<std::string> fits;
  bool sixteen = false;  // the tighter 16-bit reading alone
  for (const Fp8Reading& m : readings) {
    const bool is16 = m.rotation != r.rotation;
    if (!m.fits || (is16 && sixteen)) continue;
    sixteen = sixteen || is16;
    fits.push_back(m.words);
  }
  return fits;
}

// The codes against the given reading: how many are neither its rounding nor an accepted neighbour, how many
// are neighbours, and the first wrong one in x's layout with its exact rotation.
struct Fp8Tally {
  std::size_t wrong = 0, neighbours = 0, first = 0;
  double first_exact = 0;
};

// The tally of tokens [first, end).
Fp8Tally fp8_tally_of(const Fp8RopeRequest& r, const RopeParams& params, const RopePlan& plan,
                      const RopeBatch& batch, const harness::Values& x, std::size_t hd, std::size_t first,
                      std::size_t end) {
  Fp8Tally out{0, 0, x.size(), 0};
  const auto tally = [&](const Fp8Chunk& c) {
    const std::vector<double> eps = rotation_allowance(plan, c.batch, c.x, r.rotation);
    for (std::size_t i = 0; i < c.exact.size(); ++i) {
      const std::uint8_t code = r.codes[c.flat[i]];
      const double s = r.scale[r.scale.size() == 1 ? 0 : c.head(i)];
      const double v = c.exact[i] / s;
      if (fp8_value(r.format, code) == fp8_value(r.format, fp8_code(r.format, v))) continue;
      if (fp8_accepts(r.format, code, c.exact[i], eps[i], s, [](double u, double d) { return u / d; })) {
        ++out.neighbours;
      } else if (out.wrong++ == 0 || c.flat[i] < out.first) {
        out.first = c.flat[i], out.first_exact = c.exact[i];
      }
    }
    return true;
  };
  for_each_chunk(params, batch, x, hd, tally, first, end);
  return out;
}

// The whole tally, over threads (check_rope's count: RopeRequest::threads, 0 for the machine's, each part
// whole runs of tokens), merged: the counts added, the first wrong element the least in x's layout.
Fp8Tally fp8_tally(const Fp8RopeRequest& r, const RopeParams& params, const RopePlan& plan,
                   const RopeBatch& batch, const harness::Values& x, std::size_t hd) {
  const std::size_t per = chunk_tokens(batch, hd), runs = (batch.tokens() + per - 1) / per;
  const std::size_t threads = rope_pass_threads(r.rope.threads, runs, x.size());
  std::vector<Fp8Tally> parts(threads);
  in_parts(threads, [&](std::size_t k) {
    parts[k] =
        fp8_tally_of(r, params, plan, batch, x, hd, runs * k / threads * per, runs * (k + 1) / threads * per);
  });
  Fp8Tally out = parts[0];
  for (std::size_t k = 1; k < threads; ++k) {
    const Fp8Tally& p = parts[k];
    if (p.wrong > 0 && (out.wrong == 0 || p.first < out.first))
      out.first = p.first, out.first_exact = p.first_exact;
    out.wrong += p.wrong, out.neighbours += p.neighbours;
  }
  return out;
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
  // x read in place (its own type), a run of tokens at a time; checked finite first, in its order.
  const harness::Values x = q.x.read();
  for (std::size_t i = 0; i < x.size(); ++i)
    if (!std::isfinite(x[i]))
      names.fail("x", fmt::format("holds {} at flat index {}; the reference rotates finite values", x[i], i));
  const RopePlan plan = rope_plan(params, names);
  if (x.size() == 0) names.fail("x", "holds no elements (no tokens, heads or channels)");
  const Fp8Tally tally = fp8_tally(r, params, plan, batch, x, hd);
  const std::size_t wrong = tally.wrong, neighbours = tally.neighbours, first = tally.first;
  const double first_exact = tally.first_exact;
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
  out.doc.elements = x.size();
  out.doc.violations = wrong;
  out.doc.passed = out.passed;
  out.doc.verdict = out.passed ? harness::Verdict::Pass : harness::Verdict::Fail;
  if (wrong > 0) {
    const std::size_t c = first % hd, h = batch.heads == 1 ? 0 : first / batch.head_stride % batch.heads;
    const std::size_t t = (first - c - h * batch.head_stride) / batch.token_stride;
    const double s = r.scale[r.scale.size() == 1 ? 0 : h];
    const std::uint8_t want = fp8_code(r.format, first_exact / s);
    out.say(
        "{} of {} elements differ; first: token {} head {} channel {} at position {}: code 0x{:02x} ({:g}), "
        "expected 0x{:02x} ({:g}; rope(x)/scale = {:.9g})\n",
        wrong, x.size(), t, h, c, batch.position(t), r.codes[first], fp8_value(r.format, r.codes[first]),
        want, fp8_value(r.format, want), first_exact / s);
    out.doc.worst = {{{"row", t},
                      {"head", h},
                      {"channel", c},
                      {"position", batch.position(t)},
                      {"code", r.codes[first]},
                      {"expected", want}}};
    const std::vector<std::string> fits = fp8_mistakes(r, params, plan, batch, x, hd);
    for (const std::string& f : fits) {
      out.say("the data fits: {} (every one of the {} codes reproduced)\n", f, x.size());
      out.found(
          {f, fmt::format("every one of the {} codes reproduced", x.size()), std::nullopt, std::nullopt});
    }
    if (fits.empty()) out.say("undetermined: none of the known mistakes reproduces the codes\n");
  }
  out.say("verdict: {}\n", out.passed ? "PASS" : "FAIL");
  return out;
}

}  // namespace pe::check

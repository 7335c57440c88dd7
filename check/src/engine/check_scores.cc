// check_scores (pe/check/scores.h): pre-softmax attention scores against the exact ones of the q and k given,
// under one hypothesis of the encoding (the caller's) and, where they differ, under the mistakes engines
// make.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <span>

#include "pe/check/golden.h"
#include "pe/check/scores.h"
#include "rotation_allowance.h"

namespace pe::check {
namespace {

constexpr double kScoreU32 = 0x1p-24;

struct ScoreShape {
  std::size_t heads = 0, kv_heads = 0, nq = 0, nk = 0, d = 0;
};

// One reading of the scores: the caller's, or a mistake's.
struct ScoreHypothesis {
  std::string words;
  std::vector<std::int64_t> queries;
  double scale = 1;
  ScoreEncoding encoding = ScoreEncoding::None;
  AlibiParams alibi;
  bool scale_bias = false;
  std::optional<RopeParams> rope;
  bool rotate_q = true, rotate_k = true;
};

// x rotated exactly at `positions` ([tokens, heads, d]) and each element's error bound in an engine's
// rotation stored in q's and k's type (rotation_allowance); x itself and no error where not rotated. q's and
// k's size, not the scores': the scores are modelled a query row at a time (ScoreModel::query).
struct Rotated {
  std::vector<double> value, error;
};

Rotated rotated_with_error(const std::optional<RopeParams>& rope, bool rotate, std::span<const double> x,
                           const std::vector<std::int64_t>& positions, std::size_t heads, DType type) {
  if (!rope || !rotate) return {std::vector<double>(x.begin(), x.end()), std::vector<double>(x.size(), 0.0)};
  const RopePlan plan(*rope);
  const RopeBatch batch = RopeBatch::tokens_first(positions, heads, plan.head_dim());
  return {golden_rope(*rope, batch, x, DType::F64), rotation_allowance(plan, batch, x, type)};
}

// One hypothesis's exact scores and budgets, a query's row at a time ([heads, keys] each): nothing the size
// of the scores is held.
class ScoreModel {
 public:
  ScoreModel(const ScoreHypothesis& h, std::span<const double> q, std::span<const double> k,
             const std::vector<std::int64_t>& keys, const ScoreShape& s, DType qk_type, double u_out,
             double tiny)
      : h_(h),
        keys_(keys),
        s_(s),
        u_out_(u_out),
        tiny_(tiny),
        q_(rotated_with_error(h.rope, h.rotate_q, q, h.queries, s.heads, qk_type)),
        k_(rotated_with_error(h.rope, h.rotate_k, k, keys, s.kv_heads, qk_type)),
        exact_(s.heads * s.nk),
        budget_(s.heads * s.nk),
        bias_(h.encoding == ScoreEncoding::Alibi ? 0 : s.heads * s.nk, 0.0) {}

  // Query i's exact scores and budgets, [head][key] (exact(), budget()).
  void query(std::size_t i) {
    if (h_.encoding == ScoreEncoding::Alibi)
      bias_ = golden_alibi(h_.alibi, std::span(h_.queries).subspan(i, 1), keys_, false, DType::F64);
    const std::size_t group = s_.heads / s_.kv_heads;
    const auto& [rq, eq] = q_;
    const auto& [rk, ek] = k_;
    for (std::size_t hd = 0; hd < s_.heads; ++hd)
      for (std::size_t j = 0; j < s_.nk; ++j) {
        const std::size_t qi = (i * s_.heads + hd) * s_.d, kj = (j * s_.kv_heads + hd / group) * s_.d;
        double dot = 0, wide = 0, rotation = 0;
        for (std::size_t c = 0; c < s_.d; ++c) {
          dot += rq[qi + c] * rk[kj + c];
          wide += (std::fabs(rq[qi + c]) + eq[qi + c]) * (std::fabs(rk[kj + c]) + ek[kj + c]);
          rotation += eq[qi + c] * (std::fabs(rk[kj + c]) + ek[kj + c]) + std::fabs(rq[qi + c]) * ek[kj + c];
        }
        const std::size_t at = hd * s_.nk + j;
        const double b = bias_[at];
        exact_[at] = h_.scale_bias ? h_.scale * (dot + b) : h_.scale * dot + b;
        budget_[at] = std::fabs(h_.scale) * ((static_cast<double>(s_.d) + 2) * kScoreU32 * wide + rotation) +
                      3 * kScoreU32 * std::fabs(b) * (h_.scale_bias ? std::fabs(h_.scale) : 1.0) +
                      (kScoreU32 + u_out_) * std::fabs(exact_[at]) + tiny_;
      }
  }
  double exact(std::size_t head, std::size_t key) const { return exact_[head * s_.nk + key]; }
  double budget(std::size_t head, std::size_t key) const { return budget_[head * s_.nk + key]; }

 private:
  const ScoreHypothesis& h_;
  const std::vector<std::int64_t>& keys_;
  ScoreShape s_;
  double u_out_, tiny_;
  Rotated q_, k_;
  std::vector<double> exact_, budget_, bias_;
};

// Elements outside the model's budget (a -inf accepted where the key lies after the query), and the worst:
// the first in the scores' order of those with the largest ratio, with its exact value and budget.
struct ScoreJudgement {
  std::size_t wrong = 0, worst = 0;
  double worst_ratio = -1, worst_exact = 0, worst_budget = 0;
};

// A masked score's ceiling: -inf (flash-attention, FlashInfer), or HF eager's torch.finfo(dtype).min plus the
// score, in any type the scores were computed in (float16's is the least, −65504) and saved in (a float16
// mask saved as float32 keeps −65504): at most half of float16's lowest.
constexpr double kMaskedScore = -65504.0 / 2;

// The scores read in place (their own type), a query row at a time; `first_only`: stop at the first score
// over budget (a mistake's reading either reproduces every score or it does not).
ScoreJudgement judge_scores(const harness::Values& s, ScoreModel& m, const ScoreHypothesis& h,
                            const std::vector<std::int64_t>& keys, const ScoreShape& shape, bool first_only) {
  ScoreJudgement out;
  for (std::size_t i = 0; i < shape.nq; ++i) {
    m.query(i);
    for (std::size_t hd = 0; hd < shape.heads; ++hd)
      for (std::size_t j = 0; j < shape.nk; ++j) {
        const std::size_t at = (hd * shape.nq + i) * shape.nk + j;
        const double v = s[at];
        // A masked score: -inf (flash-attention, FlashInfer) or finfo.min plus the score (HF's eager
        // attention).
        if (keys[j] > h.queries[i] && v <= kMaskedScore) continue;
        const double exact = m.exact(hd, j), budget = m.budget(hd, j);
        const double err = std::fabs(v - exact);
        if (std::isfinite(v) && err <= budget) continue;
        const double ratio = std::isfinite(err) ? err / budget : std::numeric_limits<double>::infinity();
        if (out.wrong++ == 0 || ratio > out.worst_ratio || (ratio == out.worst_ratio && at < out.worst))
          out.worst = at, out.worst_ratio = ratio, out.worst_exact = exact, out.worst_budget = budget;
        if (first_only) return out;
      }
  }
  return out;
}

std::vector<ScoreHypothesis> score_mistakes(const ScoreHypothesis& given) {
  std::vector<ScoreHypothesis> out;
  const auto with = [&given](std::string words, auto change) {
    ScoreHypothesis h = given;
    h.words = std::move(words);
    change(h);
    return h;
  };
  std::vector<std::int64_t> from_zero(given.queries.size());
  for (std::size_t i = 0; i < from_zero.size(); ++i) from_zero[i] = static_cast<std::int64_t>(i);
  if (from_zero != given.queries)
    out.push_back(with(fmt::format("the query offset dropped: queries numbered from 0, not from {} (keys − "
                                   "queries: top-left, where bottom-right was meant)",
                                   given.queries.front()),
                       [&](ScoreHypothesis& h) { h.queries = from_zero; }));
  if (given.scale != 1)
    out.push_back(with("no softmax scale (1, not 1/sqrt(d))", [](ScoreHypothesis& h) { h.scale = 1; }));
  if (given.encoding == ScoreEncoding::Alibi) {
    out.push_back(with(given.scale_bias
                           ? "the bias left unscaled: scale*q.k + bias (given: scale_bias, Falcon's)"
                           : "the scale applied to the bias too: scale*(q.k + bias)",
                       [](ScoreHypothesis& h) { h.scale_bias = !h.scale_bias; }));
    out.push_back(with("no bias", [](ScoreHypothesis& h) { h.encoding = ScoreEncoding::None; }));
    for (const AlibiForm f : {AlibiForm::Causal, AlibiForm::Symmetric, AlibiForm::Bloom})
      if (f != given.alibi.form)
        out.push_back(
            with(fmt::format("alibi_form {} (given: {})", to_string(f), to_string(given.alibi.form)),
                 [f](ScoreHypothesis& h) { h.alibi.form = f; }));
    const AlibiSlopes other =
        given.alibi.slopes == AlibiSlopes::Interpolated ? AlibiSlopes::Direct : AlibiSlopes::Interpolated;
    out.push_back(
        with(fmt::format("alibi_slopes {} (given: {})", to_string(other), to_string(given.alibi.slopes)),
             [other](ScoreHypothesis& h) { h.alibi.slopes = other; }));
  } else if (given.encoding == ScoreEncoding::Rope) {
    out.push_back(with("keys not rotated (a cache of unrotated keys, or k's rotation skipped)",
                       [](ScoreHypothesis& h) { h.rotate_k = false; }));
    out.push_back(with("queries not rotated", [](ScoreHypothesis& h) { h.rotate_q = false; }));
    out.push_back(
        with("neither rotated: no RoPE inside", [](ScoreHypothesis& h) { h.rotate_q = h.rotate_k = false; }));
    const Layout other = given.rope->layout == Layout::HalfSplit ? Layout::Interleaved : Layout::HalfSplit;
    out.push_back(with(fmt::format("layout {} (given: {})", to_string(other), to_string(given.rope->layout)),
                       [other](ScoreHypothesis& h) { h.rope->layout = other; }));
  } else {
    out.push_back(with("an ALiBi bias (causal, interpolated slopes, max_bias 8)", [](ScoreHypothesis& h) {
      h.encoding = ScoreEncoding::Alibi;
      h.alibi.max_bias = 8;
      h.alibi.slopes = AlibiSlopes::Interpolated;
      h.alibi.form = AlibiForm::Causal;
    }));
  }
  return out;
}

}  // namespace

std::string_view to_string(ScoreEncoding e) noexcept {
  return e == ScoreEncoding::None ? "none" : e == ScoreEncoding::Alibi ? "alibi" : "rope";
}

std::optional<ScoreEncoding> parse_score_encoding(std::string_view s) noexcept {
  if (s == "none") return ScoreEncoding::None;
  if (s == "alibi") return ScoreEncoding::Alibi;
  if (s == "rope") return ScoreEncoding::Rope;
  return std::nullopt;
}

namespace {

// q, k and the scores' shapes: BadRequest naming the array at fault.
ScoreShape score_shape(const ScoresRequest& r, const Names& names) {
  const auto& q = r.q.shape;
  const auto& k = r.k.shape;
  if (q.size() != 3 || q[0] * q[1] * q[2] == 0)
    names.fail("q", fmt::format("expected [queries, heads, d], none empty; got [{}]", fmt::join(q, ", ")));
  if (k.size() != 3 || k[0] * k[1] * k[2] == 0 || k[2] != q[2] || q[1] % k[1] != 0)
    names.fail("k",
               fmt::format("expected [keys, kv_heads, d] beside q's [{}] (kv_heads dividing heads); got [{}]",
                           fmt::join(q, ", "), fmt::join(k, ", ")));
  const ScoreShape s{q[1], k[1], q[0], k[0], q[2]};
  if (r.scores.shape != std::vector<std::size_t>{s.heads, s.nq, s.nk})
    names.fail("scores", fmt::format("expected [heads, queries, keys] = [{}, {}, {}], got [{}]", s.heads,
                                     s.nq, s.nk, fmt::join(r.scores.shape, ", ")));
  return s;
}

// The keys' positions (0..K-1 by default) and the queries' (the last Q of the keys: bottom-right).
std::pair<std::vector<std::int64_t>, std::vector<std::int64_t>> score_positions(const ScoresRequest& r,
                                                                                const ScoreShape& s,
                                                                                const Names& names) {
  std::vector<std::int64_t> keys(s.nk);
  for (std::size_t j = 0; j < s.nk; ++j) keys[j] = static_cast<std::int64_t>(j);
  if (r.key_positions) keys = *r.key_positions;
  if (keys.size() != s.nk)
    names.fail("keys", fmt::format("expected {} positions, got {}", s.nk, keys.size()));
  if (!r.query_positions && s.nq > s.nk)
    names.fail("queries",
               fmt::format("{} queries over {} keys have no bottom-right positions; give them", s.nq, s.nk));
  std::vector<std::int64_t> queries =
      r.query_positions
          ? *r.query_positions
          : std::vector<std::int64_t>(keys.end() - static_cast<std::ptrdiff_t>(s.nq), keys.end());
  if (queries.size() != s.nq)
    names.fail("queries", fmt::format("expected {} positions, got {}", s.nq, queries.size()));
  for (const auto* p : {&keys, &queries})
    for (const std::int64_t v : *p)
      if (v < 0 || v > kMaxPosition)
        names.fail(p == &keys ? "keys" : "queries",
                   fmt::format("positions must lie in [0, 2^53], got {}", v));
  return {std::move(keys), std::move(queries)};
}

// The caller's hypothesis: its scale, encoding and, with RoPE, the rotation's parameters (a config's).
ScoreHypothesis given_hypothesis(const ScoresRequest& r, const ScoreShape& s,
                                 std::vector<std::int64_t> queries, const std::vector<std::int64_t>& keys,
                                 Report& out, const Names& names) {
  ScoreHypothesis h;
  h.queries = std::move(queries);
  h.scale = r.scale.value_or(1.0 / std::sqrt(static_cast<double>(s.d)));
  if (!std::isfinite(h.scale) || h.scale == 0)
    names.fail("scale", fmt::format("expected a finite nonzero softmax scale, got {}", h.scale));
  h.encoding = r.encoding;
  h.scale_bias = r.scale_bias;
  if (r.encoding == ScoreEncoding::Alibi)
    h.alibi = to_alibi_params(r.alibi, static_cast<std::int64_t>(s.heads), names);
  h.alibi.n_heads = static_cast<std::int64_t>(s.heads);  // the "an ALiBi bias" mistake's, where none is given
  if (r.encoding != ScoreEncoding::Rope) return h;
  if (s.d % 2 != 0)
    names.fail("q", fmt::format("RoPE rotates pairs: q's and k's d must be even, got {}", s.d));
  RopeSpec o = r.rope;
  HfUse use;
  use.temperature = false;
  use.no_rope = false;
  use.positions = [&keys] { return keys; };
  if (const std::optional<HfResolution> hf = apply_hf_config(r.hf, o, use, names)) out.text += hf->block;
  if (o.nope() || o.temperature.type || o.xpos.scale_base)
    names.fail("encoding", "rope inside the scores takes the rotation alone (no NoPE, temperature or xPos)");
  h.rope = rope_params(o, static_cast<std::int64_t>(s.d), {}, names);
  if (n_axes(h.rope->form) != 1)
    names.fail("encoding", "rope inside the scores takes text positions (one axis)");
  (void)rope_plan(*h.rope, names);
  return h;
}

std::string describe_hypothesis(const ScoreHypothesis& h) {
  if (h.encoding == ScoreEncoding::Alibi)
    return fmt::format("alibi {}, {} slopes, max_bias {:g}{}", to_string(h.alibi.form),
                       to_string(h.alibi.slopes), h.alibi.max_bias,
                       h.scale_bias ? ", the bias scaled too" : "");
  if (h.encoding == ScoreEncoding::Rope)
    return fmt::format("rope (base {:g}, {}{})", h.rope->base, to_string(h.rope->layout),
                       h.rope->rotary_dim != 0 && h.rope->rotary_dim != h.rope->head_dim
                           ? fmt::format(", rotary_dim {}", h.rope->rotary_dim)
                           : "");
  return "no positional encoding";
}

}  // namespace

Report check_scores(const ScoresRequest& r, const Names& names) {
  const ScoreShape s = score_shape(r, names);
  auto [keys, queries] = score_positions(r, s, names);
  Report out;
  const ScoreHypothesis given = given_hypothesis(r, s, std::move(queries), keys, out, names);
  // q and k as doubles (their size); the scores, the O(queries·keys) array, read in place.
  std::vector<double> qv, kv;
  const DataView q = as_doubles(r.q, qv), k = as_doubles(r.k, kv);
  const harness::Values scores = r.scores.read();
  for (const DataView* v : {&q, &k})
    for (std::size_t i = 0; i < v->values.size(); ++i)
      if (!std::isfinite(v->values[i]))
        names.fail(
            v == &q ? "q" : "k",
            fmt::format("holds {} at flat index {}; scores of finite inputs are checked", v->values[i], i));
  // The coarser of q's and k's types: the one an engine stores the rotation in.
  const DType qk_type = unit_roundoff(r.q.dtype) >= unit_roundoff(r.k.dtype) ? r.q.dtype : r.k.dtype;
  const double u_out = unit_roundoff(r.scores.dtype), tiny = denorm_min(r.scores.dtype);
  const auto judge = [&](const ScoreHypothesis& h, bool first_only) {
    ScoreModel model(h, q.values, k.values, keys, s, qk_type, u_out, tiny);
    return judge_scores(scores, model, h, keys, s, first_only);
  };
  const ScoreJudgement j = judge(given, false);
  out.say(
      "attention scores: {} heads x {} queries (positions {}..{}) x {} keys ({}..{}), kv_heads {}, d {}, "
      "scale "
      "{:g}; {}; {}\n",
      s.heads, s.nq, given.queries.front(), given.queries.back(), s.nk, keys.front(), keys.back(), s.kv_heads,
      s.d, given.scale, describe_hypothesis(given), to_string(r.scores.dtype));
  out.say(
      "budget: scale*(d + 2)*2^-24*sum|q'_c k'_c| + 3*2^-24*|bias| + (2^-24 + u_{})*|S|: float32 "
      "accumulation, a "
      "float32 bias{}\n",
      to_string(r.scores.dtype),
      given.rope
          ? fmt::format(", and each rotated element within A(|x_a| + |x_b|)((8 + 4|phi|)2^-24 + 4u_{})",
                        to_string(r.q.dtype))
          : "");
  out.passed = j.wrong == 0;
  out.doc.family = "scores";
  out.doc.input = r.q.name + ", " + r.k.name;
  out.doc.output = r.scores.name;
  out.doc.dtype = r.scores.dtype;
  out.doc.budget = "float32 accumulation";
  out.doc.elements = scores.size();
  out.doc.violations = j.wrong;
  out.doc.passed = out.passed;
  out.doc.verdict = out.passed ? harness::Verdict::Pass : harness::Verdict::Fail;
  out.doc.parameters = {{"encoding", to_string(given.encoding)},
                        {"scale", given.scale},
                        {"queries", given.queries},
                        {"keys", keys},
                        {"hypothesis", describe_hypothesis(given)}};
  if (j.wrong > 0) {
    const std::size_t at = j.worst, h = at / (s.nq * s.nk), i = (at / s.nk) % s.nq, kj = at % s.nk;
    out.say(
        "{} of {} scores over budget; worst: head {} query {} key {}: got {:.9g}, exact {:.9g}, budget "
        "{:.3g}\n",
        j.wrong, scores.size(), h, i, kj, scores[at], j.worst_exact, j.worst_budget);
    out.doc.worst = {{{"head", h},
                      {"query", i},
                      {"key", kj},
                      {"value", scores[at]},
                      {"exact", j.worst_exact},
                      {"budget", j.worst_budget}}};
    std::size_t fits = 0;
    for (const ScoreHypothesis& m : score_mistakes(given)) {
      if (judge(m, true).wrong > 0) continue;
      ++fits;
      out.say("the data fits: {} (every one of the {} scores within its budget)\n", m.words, scores.size());
      out.found({m.words, fmt::format("every one of the {} scores within its budget", scores.size()),
                 std::nullopt, std::nullopt});
    }
    if (fits == 0)
      out.say("undetermined: none of the known mistakes reproduces the scores within the budget\n");
  }
  out.say("verdict: {}\n", out.passed ? "PASS" : "FAIL");
  return out;
}

}  // namespace pe::check

// RoPE's comparison with the exact reference (measure.h), a (token, head) row at a time: a token's angles,
// sines and cosines and each budget's slope serve all its heads; the rows' elements are computed in a
// loop built with FMA where the CPU has it (the double-double products), the same bits either way.
#include <algorithm>
#include <cmath>
#include <optional>
#include <stdexcept>
#include <utility>

#include "pe/harness/measure.h"
#include "pe/harness/rope_rows_vector.h"
#include "pe/ref/fast_trig.h"
#include "pe/ref/fma_clones.h"
#include "pe/ref/reference.h"
#include "pe/ref/temperature.h"
#include "pe/ref/xpos.h"
#include "rope_row_fill.h"

namespace pe::harness {

ElementRecord RopeRow::record(std::size_t i) const {
  return ElementRecord(row, head, position[i], channel[i], dim, base, y[i], exact[i], abs_error[i], ulp[i],
                       budget[i], abs_phi[i], scale[i], gain[i], gain_extra[i], pair[i], unchanged[i] != 0,
                       reach[i]);
}

void RopeRow::resize(std::size_t n) {
  for (auto* v : {&position, &channel}) v->resize(n);
  pair.resize(n);
  for (auto* v : {&y, &exact, &abs_error, &ulp, &budget, &abs_phi, &scale, &gain, &gain_extra, &reach})
    v->resize(n);
  unchanged.resize(n);
}

namespace detail {

// The reach of a pair's two outputs (ElementRecord::reach): the exact pair's norm (the input's, times the
// gains) plus each one's |exact|; a pair of zeros carries nothing to judge beyond its floor.
void pair_reach(double exact0, double exact1, double& reach0, double& reach1) {
  const double norm = std::sqrt(exact0 * exact0 + exact1 * exact1);  // not std::hypot: 20 ns a call
  reach0 = norm > 0 ? norm + std::fabs(exact0) : INFINITY;
  reach1 = norm > 0 ? norm + std::fabs(exact1) : INFINITY;
}

void fill_through(const Token& tk, const OutputGain& gain, DType dtype, std::size_t base_row, const Values& x,
                  const Values& y, std::size_t i, RopeRow& out) {
  for (std::size_t ch : tk.through) {  // must pass through unchanged
    const std::size_t at = base_row + ch;
    const double xv = x[at], yv = y[at];
    out.position[i] = tk.first_axis_position;
    out.reach[i] = INFINITY;
    out.pair[i] = 0;
    out.abs_phi[i] = out.scale[i] = 0;
    out.channel[i] = static_cast<std::int64_t>(ch);
    out.y[i] = yv;
    if (tk.t_exact) {
      const ref::Real exact = tk.t_exact->value * ref::Real(xv);
      out.exact[i] = exact.convert_to<double>();
      out.budget[i] = out.gain_extra[i] = gain.relative_error * tk.tp * std::fabs(xv) + gain.floor;
      out.gain[i] = 0;  // no contract term: only the gain's own rounding
      out.unchanged[i] = 0;
      out.abs_error[i] = ref::abs_error(yv, exact);
      out.ulp[i] = out.abs_error[i] / ref::ulp_of(exact, dtype);
    } else {
      out.exact[i] = xv;
      out.budget[i] = out.gain_extra[i] = 0;
      out.gain[i] = 1;
      out.unchanged[i] = 1;
      out.abs_error[i] = xv == yv ? 0.0 : std::isnan(yv) ? NAN : std::fabs(yv - xv);
      // ref::ulp_error of an exact value that is a double, without building it at MPFR's precision.
      out.ulp[i] = std::isfinite(xv) ? ref::in_ulps(out.abs_error[i], ref::dd::DD{xv, 0}, dtype)
                                     : ref::ulp_error(yv, ref::Real(xv), dtype);
    }
    ++i;
  }
}

PE_FMA_CLONES void fill_pair(const RopePlan& plan, const ref::Rope& reference, const Token& tk, std::size_t k,
                             const Budget& rule, const RopeSlopes& slopes, const OutputGain& gain,
                             DType dtype, RopeDirection direction, std::size_t base_row, const Values& x,
                             const Values& y, std::size_t i, RopeRow& out) {
  const bool inverse = direction == RopeDirection::Inverse;
  {
    const std::size_t j = tk.pairs[k];
    // Deinterleave reads and writes different channels (the inverse the other way round).
    const auto [in0, in1] = inverse ? plan.output_channels(j) : plan.input_channels(j);
    const auto [out0, out1] = inverse ? plan.input_channels(j) : plan.output_channels(j);
    const double xa = x[base_row + in0], xb = x[base_row + in1];
    const double abs_pair = std::fabs(xa) + std::fabs(xb);
    const double budget = rule.combine([&](std::size_t m) { return slopes(k, m, abs_pair); });
    const std::size_t outs[2] = {out0, out1};
    for (std::size_t o = 0; o < 2; ++o) {
      out.position[i + o] = tk.positions[k];
      out.pair[i + o] = j;
      out.abs_phi[i + o] = tk.abs_phi[k];
      out.scale[i + o] = abs_pair;
      out.channel[i + o] = static_cast<std::int64_t>(outs[o]);
      out.y[i + o] = y[base_row + outs[o]];
      out.gain[i + o] = 1;
      out.gain_extra[i + o] = 0;
      out.unchanged[i + o] = 0;
      out.budget[i + o] = budget;
    }
    // Without a gain, the fast path's double-double where it reaches; MPFR's enclosure otherwise.
    const auto fast =
        tk.sincos[k] ? reference.fast_rotate_by(*tk.sincos[k], xa, xb, direction) : std::nullopt;
    if (fast) {
      const ref::FastValue* exact[2] = {&fast->first, &fast->second};
      for (std::size_t o = 0; o < 2; ++o) {
        out.exact[i + o] = exact[o]->value.hi;
        out.abs_error[i + o] = ref::abs_error(out.y[i + o], exact[o]->value);
        out.ulp[i + o] = ref::in_ulps(out.abs_error[i + o], exact[o]->value, dtype);
      }
      pair_reach(out.exact[i], out.exact[i + 1], out.reach[i], out.reach[i + 1]);
      return;
    }
    auto [e0, e1] = tk.real_positions.empty()
                        ? reference.rotate(tk.positions[k], j, xa, xb, direction)
                        : reference.rotate(ref::RealPosition{tk.real_positions[k]}, j, xa, xb, direction);
    if (tk.gained) {
      const bool xpos = !tk.pair_gain.empty();
      const ref::Enclosure& g = xpos ? tk.pair_gain[k] : *tk.t_exact;
      const double gp = xpos ? tk.pair_gain_value[k] : tk.tp;
      e0 = ref::times(g, e0);
      e1 = ref::times(g, e1);
      const double extra =
          (xpos ? tk.pair_gain_error[k] * gp + gain.table_floor : gain.relative_error * gp) * abs_pair +
          gain.floor;
      for (std::size_t o = 0; o < 2; ++o) {
        out.gain[i + o] = gp;
        out.gain_extra[i + o] = extra;
        out.budget[i + o] = gp * budget + extra;
      }
    }
    const ref::Enclosure* exact[2] = {&e0, &e1};
    for (std::size_t o = 0; o < 2; ++o) {
      out.exact[i + o] = exact[o]->value.convert_to<double>();
      out.abs_error[i + o] = ref::abs_error(out.y[i + o], exact[o]->value);
      out.ulp[i + o] = out.abs_error[i + o] / ref::ulp_of(exact[o]->value, dtype);
    }
    pair_reach(out.exact[i], out.exact[i + 1], out.reach[i], out.reach[i + 1]);
  }
}

void fill_row(const RopePlan& plan, const ref::Rope& reference, const Token& tk, const Budget& rule,
              const RopeSlopes& slopes, const OutputGain& gain, DType dtype, RopeDirection direction,
              std::size_t base_row, const Values& x, const Values& y, RopeRow& out) {
  for (std::size_t k = 0; k < tk.pairs.size(); ++k)
    fill_pair(plan, reference, tk, k, rule, slopes, gain, dtype, direction, base_row, x, y, 2 * k, out);
  fill_through(tk, gain, dtype, base_row, x, y, 2 * tk.pairs.size(), out);
}

}  // namespace detail

namespace {
using detail::fill_row;
using detail::fill_through;
using detail::pair_reach;
using detail::Token;
using detail::VectorRows;

// std::invalid_argument for what measure_rope_rows does not take together.
void require_measurable(const RopeParams& params, const RopeBatch& batch, const OutputGain& gain,
                        std::span<const double> real) {
  if (!real.empty() &&
      (switches_per_token(params.scaling) || gain.any() || real.size() != batch.positions.size()))
    throw std::invalid_argument(
        "measure_rope_rows: real positions without a gain or a per-token scaling, one per "
        "integer key");
  if (gain.xpos.enabled() && gain.temperature.type != AttnTemperatureType::None)
    throw std::invalid_argument("measure_rope_rows: xPos or an attention temperature, not both");
}

// xPos's gain per sampled pair of the token at hand (Token::pair_gain and its companions); empty without.
struct XPosPairs {
  std::optional<ref::XPosGain> reference;
  std::vector<ref::Enclosure> exact;
  std::vector<double> value, error;

  XPosPairs(const OutputGain& gain, const RopePlan& plan, std::size_t pairs) {
    if (!gain.xpos.enabled()) return;
    reference.emplace(gain.xpos, static_cast<std::int64_t>(plan.rotary_dim()));
    exact.resize(pairs), value.resize(pairs), error.resize(pairs);
  }
  void at(std::size_t k, std::int64_t position, std::size_t j, const OutputGain& gain) {
    if (!reference) return;
    exact[k] = reference->exact(position, static_cast<std::int64_t>(j));
    value[k] = exact[k].value.convert_to<double>();
    error[k] = gain.relative_error + gain.per_exponent * std::fabs(xpos_exponent(gain.xpos, position));
  }
};

}  // namespace

PerTokenRows per_token_rows(const RopeScaling& scaling, const RopeBatch& batch,
                            const std::vector<std::size_t>& sample_rows) {
  PerTokenRows out;
  for (std::size_t t : chosen_or_all(sample_rows, batch.tokens()))
    (batch.position(t) < scaling.original_max_position ? out.below : out.from).push_back(t);
  return out;
}

void measure_rope_rows(const RopeParams& params, const RopeBatch& batch, Values x, Values y,
                       const Budget& budget, const RowSink& sink, const Sample& sample,
                       RopeDirection direction, const OutputGain& gain, std::span<const double> real) {
  if (batch.positions.empty()) return;
  require_measurable(params, batch, gain, real);
  if (switches_per_token(params.scaling)) {  // each token's list by its position: two plans, rows split
    const PerTokenRows split = per_token_rows(params.scaling, batch, sample.rows);
    const PerTokenSides sides = per_token_sides(params.scaling);
    for (const auto& [rows, scaling] :
         {std::pair{&split.below, &sides.below}, std::pair{&split.from, &sides.from}}) {
      if (rows->empty()) continue;
      RopeParams one = params;
      one.scaling = *scaling;
      measure_rope_rows(one, batch, x, y, budget, sink, Sample{*rows, sample.pairs}, direction, gain);
    }
    return;
  }
  const RopePlan plan(params);
  const ref::Rope reference(params, *std::max_element(batch.positions.begin(), batch.positions.end()));
  const ref::Temperature temperature(gain.temperature);
  const std::vector<std::size_t> rows = chosen_or_all(sample.rows, batch.tokens());
  const std::vector<std::size_t> pairs = chosen_or_all(sample.pairs, plan.n_pairs());
  std::vector<std::size_t> through;
  if (sample.pairs.empty()) {
    for (std::size_t ch = 0; ch < plan.head_dim(); ++ch)
      if (plan.passes_through(ch)) through.push_back(ch);
  }
  std::vector<std::int64_t> positions(pairs.size());
  std::vector<double> reals(real.empty() ? 0 : pairs.size());
  std::vector<double> abs_phi(pairs.size());
  std::vector<std::optional<ref::FastSinCos>> sincos(pairs.size());
  XPosPairs xpos(gain, plan, pairs.size());
  RopeSlopes slopes(budget.members(), plan, budget.dtype, pairs.size());
  Token tk{.pairs = pairs,
           .positions = positions,
           .abs_phi = abs_phi,
           .sincos = sincos,
           .through = through,
           .first_axis_position = 0,
           .gained = gain.any(),
           .t_exact = std::nullopt,
           .tp = 1,
           .real_positions = reals,
           .pair_gain = xpos.exact,
           .pair_gain_value = xpos.value,
           .pair_gain_error = xpos.error};
  // The vector rotation where it gives the scalar loop's bits: a fused multiply-add, a type whose ULPs it
  // covers, no gain (with one, the scalar loop takes MPFR's enclosures).
  std::optional<VectorRows> vector;
  if (!tk.gained && vector_rows_enabled() && !rotation_targets().empty() &&
      rotation_lanes_cover(budget.dtype))
    vector.emplace(plan, pairs, direction == RopeDirection::Inverse);
  const ref::dd::DD* attention = reference.fast_attention();
  RopeRow out;
  out.dim = params.head_dim;
  out.base = params.base;
  out.resize(2 * pairs.size() + through.size());
  for (std::size_t t : rows) {
    if (gain.temperature.type != AttnTemperatureType::None) {
      tk.t_exact = temperature.exact(batch.position(t));
      tk.tp = tk.t_exact->value.convert_to<double>();
    }
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      const std::size_t j = pairs[k];
      positions[k] = batch.position(t, plan.axis_of_pair(j));
      if (real.empty()) {
        abs_phi[k] = std::fabs(reference.angle(positions[k], j));
        sincos[k] = tk.gained ? std::nullopt : reference.fast_sincos(positions[k], j);
      } else {
        const ref::RealPosition p{reals[k] = real[plan.axis_of_pair(j) * batch.tokens() + t]};
        abs_phi[k] = std::fabs(reference.angle(p, j));
        sincos[k] = reference.fast_sincos(p, j);
      }
      slopes.at(k, j, abs_phi[k]);
      xpos.at(k, positions[k], j, gain);
    }
    tk.first_axis_position = batch.position(t);
    const bool vector_token = vector && vector->load_token(sincos);
    if (vector_token) vector->token_fields(tk, out);
    out.row = static_cast<std::int64_t>(t);
    for (std::size_t h = 0; h < batch.heads; ++h) {
      out.head = static_cast<std::int64_t>(h);
      // The row kAhead rows on, on its way from memory while this one is compared (the hardware's
      // prefetcher stops at page boundaries, which a row of a large batch crosses every few rows).
      constexpr std::size_t kAhead = 8;
      if (const std::size_t next = t * batch.heads + h + kAhead; next < batch.tokens() * batch.heads) {
        const std::size_t ahead = batch.row(next / batch.heads, next % batch.heads);
        x.prefetch(ahead, plan.head_dim());
        y.prefetch(ahead, plan.head_dim());
      }
      if (vector_token && vector->fill(x, y, batch.row(t, h), budget, slopes, attention, budget.dtype, out)) {
        fill_through(tk, gain, budget.dtype, batch.row(t, h), x, y, 2 * pairs.size(), out);
      } else {
        fill_row(plan, reference, tk, budget, slopes, gain, budget.dtype, direction, batch.row(t, h), x, y,
                 out);
      }
      sink(out);
    }
  }
}

void measure_rope(const RopeParams& params, const RopeBatch& batch, Values x, Values y, const Budget& budget,
                  const Sink& sink, const Sample& sample, RopeDirection direction, const OutputGain& gain,
                  std::span<const double> real) {
  measure_rope_rows(
      params, batch, x, y, budget,
      [&](const RopeRow& row) {
        for (std::size_t i = 0; i < row.size(); ++i) sink(row.record(i));
      },
      sample, direction, gain, real);
}

void measure_rope(const RopeParams& params, std::span<const std::int64_t> positions, std::size_t heads,
                  Values x, Values y, const Budget& budget, const Sink& sink, const Sample& sample,
                  RopeDirection direction) {
  RopeBatch batch = RopeBatch::tokens_first(positions, heads, static_cast<std::size_t>(params.head_dim));
  batch.n_axes = n_axes(params.form);  // positions are [n_axes][tokens]
  measure_rope(params, batch, x, y, budget, sink, sample, direction);
}

// The identity, or the gain alone: each element's exact value t(p)·x at the reference's precision.
void measure_nope(const RopeBatch& batch, std::size_t head_dim, Values x, Values y, const Budget& budget,
                  const Sink& sink, const OutputGain& gain) {
  if (gain.xpos.enabled())
    throw std::invalid_argument("measure_nope: xPos gains rotated pairs, a NoPE layer has none");
  const ref::Temperature temperature(gain.temperature);
  for (std::size_t t = 0; t < batch.tokens(); ++t) {
    const ref::Real tp = temperature.exact(batch.position(t)).value;
    const double tpd = tp.convert_to<double>();
    for (std::size_t h = 0; h < batch.heads; ++h) {
      const std::size_t row = batch.row(t, h);
      ElementRecord e{.row = static_cast<std::int64_t>(t),
                      .head = static_cast<std::int64_t>(h),
                      .position = batch.position(t),
                      .dim = static_cast<std::int64_t>(head_dim)};
      for (std::size_t ch = 0; ch < head_dim; ++ch) {
        const std::size_t i = row + ch;
        const ref::Real exact = tp * ref::Real(x[i]);
        e.channel = static_cast<std::int64_t>(ch);
        e.y = y[i];
        e.exact = exact.convert_to<double>();
        e.abs_error = ref::abs_error(y[i], exact);
        e.ulp = e.abs_error / ref::ulp_of(exact, budget.dtype);
        e.budget = budget.max_abs + gain.relative_error * tpd * std::fabs(x[i]) + gain.floor;
        sink(e);
      }
    }
  }
}

}  // namespace pe::harness

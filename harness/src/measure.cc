#include "pe/harness/measure.h"

#include <algorithm>
#include <cmath>

#include "pe/ref/fast_trig.h"
#include "pe/ref/reference.h"
#include "pe/ref/temperature.h"

namespace pe::harness {
namespace {

constexpr std::int64_t kEdges[] = {
    0, 1'000, 10'000, 100'000, 1'000'000, 10'000'000, 100'000'000, 1'000'000'000, std::int64_t{1} << 31};

double percentile99(std::vector<double> v) {
  if (v.empty()) return 0;
  const auto at =
      v.begin() + static_cast<std::ptrdiff_t>(std::ceil(0.99 * static_cast<double>(v.size())) - 1);
  std::nth_element(v.begin(), at, v.end());
  return *at;
}

// A NaN is worse than any number; among numbers the first of equals is kept.
void keep_larger(Extreme& x, double v, const ElementRecord& e, bool first) {
  if (first || v > x.value || std::isnan(v)) x = {v, e};
}

std::vector<std::size_t> all_of(std::size_t n) {
  std::vector<std::size_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = i;
  return v;
}

}  // namespace

double Budget::operator()(const RopePlan* plan, double abs_phi, std::size_t pair, double scale) const {
  const auto one = [&](const Contract& c) {
    return plan != nullptr ? rope_element_budget(c, *plan, dtype, abs_phi, pair, scale)
                           : element_budget(c, dtype, abs_phi, pair, scale);
  };
  if (contract != nullptr) return one(*contract) + extra;
  if (any_of.empty()) return max_abs;
  double b = 0;
  for (const Contract* c : any_of) b = std::max(b, one(*c));
  return b + extra;
}

double Budget::add_term(double abs_embedding) const {
  if (contract != nullptr) return add_budget(*contract, dtype, abs_embedding);
  double b = 0;
  for (const Contract* c : any_of) b = std::max(b, add_budget(*c, dtype, abs_embedding));
  return b;
}

std::span<const std::int64_t> band_edges() { return kEdges; }

Measurement::Measurement(std::int64_t limit, std::size_t keep_worst) : keep_(keep_worst) {
  for (std::size_t k = 0; k + 1 < std::size(kEdges) && kEdges[k] <= limit; ++k) {
    Acc a;
    a.stats.lo = kEdges[k];
    a.stats.hi = std::min(kEdges[k + 1] - 1, limit);
    bands_.push_back(a);
  }
  // The last band takes 2^31 itself and, without a smaller limit, every larger position.
  if (!bands_.empty() && bands_.back().stats.lo == kEdges[std::size(kEdges) - 2])
    bands_.back().stats.hi = limit;
}

void Measurement::add(const ElementRecord& e) {
  if (bands_.empty()) return;
  if (stats_) stats_.reset();
  ++count_;
  auto it =
      std::find_if(bands_.begin(), bands_.end(), [&](const Acc& a) { return e.position <= a.stats.hi; });
  Acc& a = it != bands_.end() ? *it : bands_.back();
  BandStats& s = a.stats;
  ++s.samples;
  const double r = e.ratio();
  a.abs.push_back(std::isnan(e.abs_error) ? INFINITY : e.abs_error);
  a.ulp.push_back(std::isnan(e.ulp) ? INFINITY : e.ulp);
  const bool first = s.samples == 1;  // a band of exact results still names an element and its budget
  if (first || e.abs_error > s.max_abs.value || std::isnan(e.abs_error)) s.budget_at_max_abs = e.budget;
  keep_larger(s.max_abs, e.abs_error, e, first);
  keep_larger(s.max_ulp, e.ulp, e, first);
  keep_larger(s.max_ratio, r, e, first);
  if (r > 1) {
    ++violations_;
    ++s.violations;
  }
  if (keep_ == 0) return;
  if (worst_.size() < keep_ || r > worst_.back().ratio()) {
    const auto at = std::upper_bound(worst_.begin(), worst_.end(), r,
                                     [](double v, const ElementRecord& w) { return v > w.ratio(); });
    worst_.insert(at, e);
    if (worst_.size() > keep_) worst_.pop_back();
  }
}

const std::vector<BandStats>& Measurement::bands() const {
  if (stats_) return *stats_;
  std::vector<BandStats> out;
  for (const Acc& a : bands_) {
    BandStats s = a.stats;
    s.p99_abs = percentile99(a.abs);
    s.p99_ulp = percentile99(a.ulp);
    out.push_back(s);
  }
  return stats_.emplace(std::move(out));
}

double Measurement::max_abs() const {
  double m = 0;
  for (const Acc& a : bands_)
    m = std::max(m, std::isnan(a.stats.max_abs.value) ? INFINITY : a.stats.max_abs.value);
  return m;
}

namespace {

struct FusedAdd {
  Values embeddings;
  std::span<const std::uint8_t> padding;
};

// A table, or with `add` the fused add onto its embeddings (a padded row must keep them: budget 0).
void measure_table(const SinusoidalParams& params, std::span<const std::int64_t> positions, Values y,
                   const Budget& budget, const Sink& sink, const Sample& sample, const FusedAdd* add) {
  if (positions.empty()) return;
  const SinusoidalPlan plan(params);
  const ref::Sinusoidal reference(params, *std::max_element(positions.begin(), positions.end()));
  const std::vector<std::size_t> rows = sample.rows.empty() ? all_of(positions.size()) : sample.rows;
  std::vector<std::size_t> channels;
  if (sample.pairs.empty()) {
    channels = all_of(plan.dim());
  } else {
    for (std::size_t j : sample.pairs) {
      channels.push_back(plan.sin_index(j));
      channels.push_back(plan.cos_index(j));
    }
  }
  for (std::size_t r : rows) {
    const bool padded = add != nullptr && !add->padding.empty() && add->padding[r] != 0;
    for (std::size_t ch : channels) {
      const std::size_t i = r * plan.dim() + ch;
      ElementRecord e;
      e.row = static_cast<std::int64_t>(r);
      e.position = positions[r];
      e.channel = static_cast<std::int64_t>(ch);
      e.dim = params.dim;
      e.base = params.base;
      e.y = y[i];
      // The fast path's double-double where it reaches (its radius, ~2^-98·|φ|, is far below any
      // budget), MPFR beyond.
      const auto fast =
          padded ? std::optional<ref::FastValue>(ref::FastValue{}) : reference.fast_exact(positions[r], ch);
      if (fast) {
        const ref::dd::DD exact =
            add != nullptr ? ref::dd::add(fast->value, {add->embeddings[i], 0}) : fast->value;
        e.exact = exact.hi;
        e.abs_error = ref::abs_error(e.y, exact);
        e.ulp = e.abs_error / ref::ulp_of(exact, budget.dtype);
      } else {
        ref::Real exact = padded ? ref::Real(0) : reference.exact(positions[r], ch).value;
        if (add != nullptr) exact += ref::Real(add->embeddings[i]);
        e.exact = exact.convert_to<double>();
        e.abs_error = ref::abs_error(e.y, exact);
        e.ulp = e.abs_error / ref::ulp_of(exact, budget.dtype);  // SLEEF's ULP, without a second subtraction
      }
      e.abs_phi = std::fabs(reference.angle(positions[r], ch));
      e.pair = reference.pair_of(ch);
      e.scale = 1.0;
      e.unchanged = padded;
      e.budget = padded ? 0.0 : budget(nullptr, e.abs_phi, e.pair, 1.0);
      if (add != nullptr && !padded) {
        e.gain_extra = budget.add_term(std::fabs(add->embeddings[i]));
        e.budget += e.gain_extra;
      }
      sink(e);
    }
  }
}

}  // namespace

void measure_sinusoidal(const SinusoidalParams& params, std::span<const std::int64_t> positions, Values y,
                        const Budget& budget, const Sink& sink, const Sample& sample) {
  measure_table(params, positions, y, budget, sink, sample, nullptr);
}

void measure_sinusoidal_add(const SinusoidalParams& params, std::span<const std::int64_t> positions,
                            Values embeddings, std::span<const std::uint8_t> padding, Values y,
                            const Budget& budget, const Sink& sink) {
  const FusedAdd add{embeddings, padding};
  measure_table(params, positions, y, budget, sink, {}, &add);
}

void measure_rope(const RopeParams& params, std::span<const std::int64_t> positions, std::size_t heads,
                  Values x, Values y, const Budget& budget, const Sink& sink, const Sample& sample,
                  RopeDirection direction) {
  RopeBatch batch = RopeBatch::tokens_first(positions, heads, static_cast<std::size_t>(params.head_dim));
  batch.n_axes = n_axes(params.form);  // positions are [n_axes][tokens]
  measure_rope(params, batch, x, y, budget, sink, sample, direction);
}

void measure_rope(const RopeParams& params, const RopeBatch& batch, Values x, Values y, const Budget& budget,
                  const Sink& sink, const Sample& sample, RopeDirection direction, const OutputGain& gain) {
  if (batch.positions.empty()) return;
  const RopePlan plan(params);
  const ref::Rope reference(params, *std::max_element(batch.positions.begin(), batch.positions.end()));
  const ref::Temperature temperature(gain.temperature);
  const bool gained = gain.temperature.type != AttnTemperatureType::None;
  const std::size_t hd = plan.head_dim();
  const std::vector<std::size_t> rows = sample.rows.empty() ? all_of(batch.tokens()) : sample.rows;
  const std::vector<std::size_t> pairs = sample.pairs.empty() ? all_of(plan.n_pairs()) : sample.pairs;
  // A token's angles and (fast path) sines and cosines serve every head: computed once per token.
  std::vector<double> abs_phi(pairs.size());
  std::vector<std::optional<ref::FastSinCos>> sincos(pairs.size());
  for (std::size_t t : rows) {
    const ref::Enclosure t_exact = temperature.exact(batch.position(t));
    const double tp = t_exact.value.convert_to<double>();
    for (std::size_t k = 0; k < pairs.size(); ++k) {
      const std::int64_t p = batch.position(t, plan.axis_of_pair(pairs[k]));
      abs_phi[k] = std::fabs(reference.angle(p, pairs[k]));
      sincos[k] = gained ? std::nullopt : reference.fast_sincos(p, pairs[k]);
    }
    for (std::size_t h = 0; h < batch.heads; ++h) {
      const std::size_t row = batch.row(t, h);
      ElementRecord e;
      e.row = static_cast<std::int64_t>(t);
      e.head = static_cast<std::int64_t>(h);
      e.dim = params.head_dim;
      e.base = params.base;
      for (std::size_t k = 0; k < pairs.size(); ++k) {
        const std::size_t j = pairs[k];
        // Each pair reads its own axis's position; deinterleave reads and writes different channels
        // (the inverse the other way round).
        const std::int64_t p = batch.position(t, plan.axis_of_pair(j));
        const bool inverse = direction == RopeDirection::Inverse;
        const auto [in0, in1] = inverse ? plan.output_channels(j) : plan.input_channels(j);
        const auto [out0, out1] = inverse ? plan.input_channels(j) : plan.output_channels(j);
        // Without a gain, the fast path's double-double where it reaches; MPFR's enclosure otherwise.
        const auto fast = sincos[k]
                              ? reference.fast_rotate_by(*sincos[k], x[row + in0], x[row + in1], direction)
                              : std::nullopt;
        const double abs_pair = std::fabs(x[row + in0]) + std::fabs(x[row + in1]);
        e.position = p;
        e.abs_phi = abs_phi[k];
        e.pair = j;
        e.scale = abs_pair;
        e.budget = budget(&plan, e.abs_phi, j, abs_pair);
        if (fast) {
          for (const auto& [ch, exact] : {std::pair{out0, &fast->first}, std::pair{out1, &fast->second}}) {
            const std::size_t i = row + ch;
            e.channel = static_cast<std::int64_t>(ch);
            e.y = y[i];
            e.exact = exact->value.hi;
            e.abs_error = ref::abs_error(y[i], exact->value);
            e.ulp = e.abs_error / ref::ulp_of(exact->value, budget.dtype);
            sink(e);
          }
          continue;
        }
        auto [e0, e1] = reference.rotate(p, j, x[row + in0], x[row + in1], direction);
        if (gained) {
          e0 = ref::times(t_exact, e0);
          e1 = ref::times(t_exact, e1);
          e.gain = tp;
          e.gain_extra = gain.relative_error * tp * abs_pair + gain.floor;
          e.budget = tp * e.budget + e.gain_extra;
        }
        for (const auto& [ch, exact] : {std::pair{out0, &e0}, std::pair{out1, &e1}}) {
          const std::size_t i = row + ch;
          e.channel = static_cast<std::int64_t>(ch);
          e.y = y[i];
          e.exact = exact->value.convert_to<double>();
          e.abs_error = ref::abs_error(y[i], exact->value);
          e.ulp = e.abs_error / ref::ulp_of(exact->value, budget.dtype);
          sink(e);
        }
      }
      if (!sample.pairs.empty()) continue;
      e.position = batch.position(t);
      e.abs_phi = e.scale = 0;
      e.gain = 1;
      e.unchanged = !gained;
      for (std::size_t ch = 0; ch < hd; ++ch) {  // must pass through unchanged
        if (!plan.passes_through(ch)) continue;
        const std::size_t i = row + ch;
        e.channel = static_cast<std::int64_t>(ch);
        e.y = y[i];
        if (gained) {
          const ref::Real exact = t_exact.value * ref::Real(x[i]);
          e.exact = exact.convert_to<double>();
          e.budget = e.gain_extra = gain.relative_error * tp * std::fabs(x[i]) + gain.floor;
          e.gain = 0;  // no contract term: only the gain's own rounding
          e.abs_error = ref::abs_error(y[i], exact);
          e.ulp = e.abs_error / ref::ulp_of(exact, budget.dtype);
        } else {
          e.exact = x[i];
          e.budget = 0;
          e.abs_error = x[i] == y[i] ? 0.0 : std::isnan(y[i]) ? NAN : std::fabs(y[i] - x[i]);
          e.ulp = ref::ulp_error(y[i], ref::Real(x[i]), budget.dtype);
        }
        sink(e);
      }
    }
  }
}

// The identity, or the gain alone: each element's exact value t(p)·x at the reference's precision.
void measure_nope(const RopeBatch& batch, std::size_t head_dim, Values x, Values y, const Budget& budget,
                  const Sink& sink, const OutputGain& gain) {
  const ref::Temperature temperature(gain.temperature);
  for (std::size_t t = 0; t < batch.tokens(); ++t) {
    const ref::Real tp = temperature.exact(batch.position(t)).value;
    const double tpd = tp.convert_to<double>();
    for (std::size_t h = 0; h < batch.heads; ++h) {
      const std::size_t row = batch.row(t, h);
      ElementRecord e;
      e.row = static_cast<std::int64_t>(t);
      e.head = static_cast<std::int64_t>(h);
      e.position = batch.position(t);
      e.dim = static_cast<std::int64_t>(head_dim);
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

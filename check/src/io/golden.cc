#include "pe/check/golden.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "pe/check/errors.h"
#include "pe/check/npy.h"
#include "pe/ref/alibi.h"
#include "pe/ref/fma_clones.h"
#include "pe/ref/real.h"
#include "pe/ref/reference.h"
#include "pe/ref/temperature.h"

namespace pe::check {
namespace {

// n values of `bytes_per_value` each (a double while built and the output type's), refused past memory.
void fits_in_memory(std::size_t n, std::size_t bytes_per_value) {
  std::size_t bytes = 0;
  const auto memory =
      static_cast<double>(sysconf(_SC_PHYS_PAGES)) * static_cast<double>(sysconf(_SC_PAGESIZE));
  if (__builtin_mul_overflow(n, bytes_per_value, &bytes) || static_cast<double>(bytes) > memory)
    throw BadRequest(
        fmt::format("{} values ({:.3g} GB to build): more than this machine's {:.3g} GB of memory", n,
                    static_cast<double>(n) * static_cast<double>(bytes_per_value) / 1e9, memory / 1e9));
}

std::int64_t largest(std::span<const std::int64_t> p) {
  return p.empty() ? 0 : *std::max_element(p.begin(), p.end());
}

// Ziv's rounding of an enclosure (~2^-100 relative: an undecided one is not expected, and refused).
double rounded(const ref::Enclosure& e, DType dtype) {
  if (auto r = ref::decided_rounding(e, dtype)) return *r;
  throw std::runtime_error("the reference could not decide a rounding of t(p)*R(p)*x; nothing written");
}

// Token t of every head, rounded into y: its sines and cosines once for all its heads.
PE_FMA_CLONES void rotate_token(const ref::Rope& r, const RopePlan& plan, const RopeBatch& batch,
                                std::size_t t, std::span<const double> x, DType dtype,
                                std::vector<std::optional<ref::FastSinCos>>& sincos, std::span<double> y) {
  for (std::size_t j = 0; j < plan.n_pairs(); ++j)
    sincos[j] = r.fast_sincos(batch.position(t, plan.axis_of_pair(j)), j);
  for (std::size_t h = 0; h < batch.heads; ++h) {
    const std::size_t row = batch.row(t, h);
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      const auto [i0, i1] = plan.input_channels(j);
      const auto [o0, o1] = plan.output_channels(j);
      std::tie(y[row + o0], y[row + o1]) = r.rounded_by(sincos[j], batch.position(t, plan.axis_of_pair(j)), j,
                                                        x[row + i0], x[row + i1], dtype);
    }
  }
}

}  // namespace

std::vector<double> golden_sinusoidal(const SinusoidalParams& params, std::span<const std::int64_t> positions,
                                      DType dtype) {
  const ref::Sinusoidal r(params, largest(positions));  // validates every switch (odd dims, any scale)
  const auto dim = static_cast<std::size_t>(params.dim);
  fits_in_memory(positions.size() * dim, sizeof(double) + size_of(dtype));
  std::vector<double> v(positions.size() * dim);
  for (std::size_t i = 0; i < positions.size(); ++i) {
    for (std::size_t ch = 0; ch < dim; ++ch) v[i * dim + ch] = r.rounded(positions[i], ch, dtype);
  }
  return v;
}

std::vector<double> golden_sinusoidal(const harness::SinusoidalRows& rows, DType dtype) {
  const std::size_t n = rows.rows();
  fits_in_memory(n * rows.dim, sizeof(double) + size_of(dtype));
  std::vector<double> v(n * rows.dim, 0.0);  // zero rows stay 0
  for (const harness::SinusoidalBlock& b : rows.blocks) {
    const ref::Sinusoidal r(b.params, ref::RealPosition{harness::axis_reach(rows, b)});
    for (std::size_t i = 0; i < n; ++i) {
      if (rows.zero_row(i)) continue;
      for (std::size_t c = 0; c < static_cast<std::size_t>(b.params.dim); ++c)
        v[i * rows.dim + b.offset + c] = r.rounded(ref::RealPosition{rows.positions[b.axis][i]}, c, dtype);
    }
  }
  return v;
}

std::vector<double> golden_rope_table(const RopeParams& params, std::span<const std::int64_t> positions,
                                      DType dtype) {
  const RopePlan plan(params);
  const std::size_t tokens = positions.size() / plan.n_axes(), h = plan.n_pairs();
  fits_in_memory(tokens * h * 2, sizeof(double) + size_of(dtype));
  RopeBatch batch = RopeBatch::tokens_first(positions.first(tokens), 1, plan.head_dim());
  batch.positions = positions;
  batch.n_axes = plan.n_axes();
  std::vector<double> v(tokens * h * 2);
  const std::int64_t L = params.scaling.original_max_position;
  RopeParams below = params, from = params;  // LongRoPE per token: each position's list (else one table)
  const PerTokenSides sides = per_token_sides(params.scaling);
  below.scaling = sides.below;
  from.scaling = sides.from;
  const ref::Rope r_below(below, largest(positions)), r_from(from, largest(positions));
  for (std::size_t i = 0; i < tokens; ++i) {
    const ref::Rope& r = switches_per_token(params.scaling) && batch.position(i) >= L ? r_from : r_below;
    for (std::size_t j = 0; j < h; ++j) {
      const auto [c, s] = r.cos_sin(batch.position(i, plan.axis_of_pair(j)), j, dtype);
      v[(i * h + j) * 2] = c;
      v[(i * h + j) * 2 + 1] = s;
    }
  }
  return v;
}

namespace {

// The tokens whose (first-axis) position lies in [lo, hi): LongRoPE's per-token switch rotates each side
// with its own list.
void golden_rope_between(const RopeParams& params, const RopeBatch& batch, std::span<const double> x,
                         DType dtype, std::span<double> y, const AttnTemperature& temperature,
                         std::int64_t lo, std::int64_t hi) {
  const RopePlan plan(params);
  const ref::Rope r(params, largest(batch.positions));
  std::vector<std::size_t> through;  // the pass-through channels
  for (std::size_t ch = 0; ch < plan.head_dim(); ++ch)
    if (plan.passes_through(ch)) through.push_back(ch);
  if (temperature.type == AttnTemperatureType::None) {
    std::vector<std::optional<ref::FastSinCos>> sincos(plan.n_pairs());
    for (std::size_t t = 0; t < batch.tokens(); ++t) {
      if (batch.position(t) < lo || batch.position(t) >= hi) continue;
      for (std::size_t h = 0; h < batch.heads; ++h)
        for (std::size_t ch : through) y[batch.row(t, h) + ch] = x[batch.row(t, h) + ch];
      rotate_token(r, plan, batch, t, x, dtype, sincos, y);
    }
    return;
  }
  const ref::Temperature tr(temperature);
  for (std::size_t t = 0; t < batch.tokens(); ++t) {
    if (batch.position(t) < lo || batch.position(t) >= hi) continue;
    const ref::Enclosure g = tr.exact(batch.position(t));
    for (std::size_t h = 0; h < batch.heads; ++h) {
      const std::size_t row = batch.row(t, h);
      for (std::size_t ch : through)
        y[row + ch] = rounded(ref::times(g, {ref::Real(x[row + ch]), ref::Real(0)}), dtype);
      for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
        const auto [i0, i1] = plan.input_channels(j);
        const auto [o0, o1] = plan.output_channels(j);
        const auto [e0, e1] = r.rotate(batch.position(t), j, x[row + i0], x[row + i1]);
        y[row + o0] = rounded(ref::times(g, e0), dtype);
        y[row + o1] = rounded(ref::times(g, e1), dtype);
      }
    }
  }
}

}  // namespace

void golden_rope(const RopeParams& params, const RopeBatch& batch, std::span<const double> x, DType dtype,
                 std::span<double> y, const AttnTemperature& temperature) {
  if (y.size() != x.size())
    throw std::invalid_argument(fmt::format("golden_rope: {} outputs for {} inputs", y.size(), x.size()));
  constexpr std::int64_t kAll = std::numeric_limits<std::int64_t>::max();
  if (!switches_per_token(params.scaling))
    return golden_rope_between(params, batch, x, dtype, y, temperature, -kAll, kAll);
  const std::int64_t L = params.scaling.original_max_position;
  RopeParams below = params, from = params;
  const PerTokenSides sides = per_token_sides(params.scaling);
  below.scaling = sides.below;
  from.scaling = sides.from;
  golden_rope_between(below, batch, x, dtype, y, temperature, -kAll, L);
  golden_rope_between(from, batch, x, dtype, y, temperature, L, kAll);
}

std::vector<double> golden_rope(const RopeParams& params, const RopeBatch& batch, std::span<const double> x,
                                DType dtype, const AttnTemperature& temperature) {
  std::vector<double> y;
  resize_large(y, x.size());
  golden_rope(params, batch, x, dtype, y, temperature);
  return y;
}

std::vector<double> golden_rope_at(const RopeParams& params, const RopeBatch& batch,
                                   std::span<const double> reals, std::span<const double> x, DType dtype) {
  const RopePlan plan(params);
  double top = 0;
  for (const double t : reals) top = std::max(top, std::fabs(t));
  const ref::Rope r(params, ref::RealPosition{top});
  std::vector<double> y(x.begin(), x.end());  // the pass-through channels as given; the rotated ones below
  for (std::size_t t = 0; t < batch.tokens(); ++t) {
    for (std::size_t h = 0; h < batch.heads; ++h) {
      const std::size_t row = batch.row(t, h);
      for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
        const auto [i0, i1] = plan.input_channels(j);
        const auto [o0, o1] = plan.output_channels(j);
        const ref::RealPosition p{reals[plan.axis_of_pair(j) * batch.tokens() + t]};
        const auto [e0, e1] = r.rotate(p, j, x[row + i0], x[row + i1]);
        y[row + o0] = rounded(e0, dtype);
        y[row + o1] = rounded(e1, dtype);
      }
    }
  }
  return y;
}

std::vector<double> golden_alibi(const AlibiParams& params, std::span<const std::int64_t> queries,
                                 std::span<const std::int64_t> keys, bool slopes_only, DType dtype) {
  const AlibiPlan plan(params);
  const std::size_t per_head = slopes_only ? 1 : queries.size() * keys.size();
  fits_in_memory(plan.n_heads() * per_head, sizeof(double) + size_of(dtype));
  std::vector<double> v;
  v.reserve(plan.n_heads() * per_head);
  const ref::Alibi r(params);
  for (std::size_t h = 0; h < plan.n_heads(); ++h) {
    if (slopes_only) {
      v.push_back(r.rounded_slope(h, dtype));
      continue;
    }
    for (std::int64_t q : queries) {
      for (std::int64_t k : keys) v.push_back(r.rounded_bias(h, q, k, dtype));
    }
  }
  return v;
}

}  // namespace pe::check

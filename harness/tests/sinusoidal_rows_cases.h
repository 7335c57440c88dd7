// Test support: the forms of SinusoidalRows the rows' measurements are compared on (grids 2-D with extra
// tokens and 3-D, timestep tables with flip, shift, scale 1000, repeated positions, padding rows, an odd
// dim's pad channel), check's default class budget, and the data each is measured on (correct, one ulp off, a
// switch flipped, NaN and infinities, nonzero in a zero row). Shared by sinusoidal_rows_cached_test.cc and
// sinusoidal_rows_screened_test.cc.
#pragma once

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pe/check/golden.h"
#include "pe/contract.h"
#include "pe/harness/sinusoidal_rows.h"
#include "pe/variant.h"

namespace pe::harness::rows_cases {

inline SinusoidalParams cached_params(std::int64_t dim) { return {dim, 10000.0, Layout::Concatenated}; }

struct CachedCase {
  std::string name;
  SinusoidalRows rows;
  std::function<SinusoidalRows(const SinusoidalParams&)> with;  // the same rows under other params
  SinusoidalParams params;
};

inline std::vector<CachedCase> cached_cases() {
  std::vector<CachedCase> out;
  const auto grid = [&](std::string name, SinusoidalParams p, GridSpec g) {
    out.push_back(
        {std::move(name), grid_rows(p, g), [g](const SinusoidalParams& q) { return grid_rows(q, g); }, p});
  };
  const auto axis = [&](std::string name, SinusoidalParams p, std::vector<double> t,
                        std::optional<std::int64_t> pad) {
    out.push_back({std::move(name), one_axis_rows(p, t, pad),
                   [t, pad](const SinusoidalParams& q) { return one_axis_rows(q, t, pad); }, p});
  };
  GridSpec g2;
  g2.sizes = {12, 20};
  g2.base_size = 16;
  g2.extra_tokens = 2;
  grid("2-D 12x20 base_size 16, 2 extra tokens", cached_params(64), g2);
  GridSpec g2s;
  g2s.sizes = {7, 9};
  g2s.interpolation_scale = 3;
  SinusoidalParams inter{32, 10000.0, Layout::Interleaved};
  grid("2-D 7x9 interleaved, interpolation_scale 3", inter, g2s);
  GridSpec g3;
  g3.sizes = {3, 4, 5};
  g3.temporal_interpolation_scale = 1.5;
  grid("3-D 3x4x5", cached_params(32), g3);
  SinusoidalParams sd =
      cached_params(320);  // diffusers' get_timestep_embedding, scale 1000 (DDPM's t in [0, 1])
  sd.flip_sin_to_cos = true;
  sd.downscale_freq_shift = 1;
  sd.scale = 1000;
  std::vector<double> unit;
  for (int k = 0; k < 40; ++k) unit.push_back(static_cast<float>((k + 0.37) / 40.0));
  axis("timesteps x scale 1000, flip, shift 1", sd, unit, std::nullopt);
  // Timesteps so small that every sine lies far within the screen's radius of 0: the ulp estimates' binade
  // must stay e's own (the exact value's but across a power of two), not that of |e| − 2r, the least.
  axis("tiny timesteps", cached_params(64), {0x1p-60, 0x1p-52, 3 * 0x1p-47, 0x1p-40, 0x1.8p-33, 0x1p-30},
       std::nullopt);
  SinusoidalParams odd = cached_params(33);
  odd.downscale_freq_shift = 1;
  odd.scale = 2.5;
  // Repeats far apart (held across rows) and padding rows at 3.
  axis("odd dim, repeats, padding_idx 3", odd, {0, 0.5, 17.25, 3, 999.875, 0.5, 3.0, 250.125, 17.25, 0.5}, 3);
  std::vector<double> big;
  for (int k = 0; k < 24; ++k) big.push_back(999.0 * (k + 0.37) / 24.0);
  axis(
      "999 timesteps, -0 and 0", cached_params(256),
      [&] {
        big.push_back(-0.0), big.push_back(0.0), big.push_back(-12.5);
        return big;
      }(),
      std::nullopt);
  return out;
}

// check's default class: every registered sinusoidal formulation in float32 (mutants left out).
inline Budget cached_class_budget(DType dtype) {
  Budget b{nullptr, dtype};
  for (const Variant* v : registry())
    if (v->family() == Family::Sinusoidal && v->supports(dtype) && v->name().find('@') == std::string::npos &&
        v->name().find("mutant") == std::string::npos && v->contract().compute_type == DType::F32)
      b.any_of.push_back(&v->contract());
  return b;
}

// The data forms each case is measured on: the correctly rounded table and ways of getting it wrong.
inline std::vector<std::pair<std::string, std::vector<double>>> cached_data(const CachedCase& c) {
  const std::vector<double> golden = check::golden_sinusoidal(c.rows, DType::F32);
  std::vector<std::pair<std::string, std::vector<double>>> out{{"correct", golden}};
  std::vector<double> ulp = golden;  // every 7th element one float32 ulp up
  for (std::size_t i = 0; i < ulp.size(); i += 7)
    ulp[i] = std::nextafter(static_cast<float>(ulp[i]), std::numeric_limits<float>::infinity());
  out.emplace_back("one ulp off", ulp);
  SinusoidalParams flipped = c.params;
  flipped.flip_sin_to_cos = !flipped.flip_sin_to_cos;
  out.emplace_back("flipped switch", check::golden_sinusoidal(c.with(flipped), DType::F32));
  std::vector<double> bad = golden;
  bad[bad.size() / 2] = NAN;
  bad[bad.size() / 3] = INFINITY;
  bad[bad.size() - 1] = -INFINITY;
  out.emplace_back("NaN and inf", bad);
  std::vector<double> zero = golden;
  for (std::size_t r = 0; r < c.rows.rows(); ++r)
    if (c.rows.zero_row(r)) zero[r * c.rows.dim + r % c.rows.dim] = 0x1p-149;
  out.emplace_back("nonzero zero rows", zero);
  return out;
}

}  // namespace pe::harness::rows_cases

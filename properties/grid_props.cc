// Properties of the 2-D grids diffusion and vision models build (issue 49: MAE's util/pos_embed.py,
// diffusers' get_2d_sincos_pos_embed) through a variant, over every sinusoidal instance whose contract reads
// the table's forms (every Highway target is an instance of its own):
//   (a) a grid is the concatenation of each axis's 1-D table: row r = cell m = r - extra_tokens (h = m div W,
//       w = m mod W, row-major) holds the variant's table_at of its w coordinate in the first half of the
//       channels and of its h coordinate in the second, the coordinates as numpy forms them in float32,
//       extra-token rows zero — bit for bit;
//   (b) swapping the axes of a non-square grid changes it.

#include <cstring>
#include <optional>

#include "pe/harness/sinusoidal_rows.h"
#include "pe/harness/variant_rows.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

// get_2d_sincos_pos_embed's drawn settings: base_size (none: MAE's i), interpolation_scale, extra tokens.
harness::GridSpec gen_grid(std::int64_t h, std::int64_t w) {
  harness::GridSpec g;
  g.sizes = {h, w};
  const int base = *rc::gen::inRange(0, 3).as("base_size none, 16, 8");
  if (base != 0) g.base_size = base == 1 ? 16.0 : 8.0;
  g.interpolation_scale = *rc::gen::element(1.0, 2.0, 0.5, 1.875).as("interpolation_scale");
  g.extra_tokens = *rc::gen::element<std::int64_t>(0, 1, 4).as("extra_tokens");
  return g;
}

// np.arange(n, dtype=np.float32) / (n / base_size) / interpolation_scale: each Python float meets a float32
// array and is rounded to float32 first, each division one float32 rounding.
std::vector<double> numpy_coordinates(std::int64_t n, const harness::GridSpec& g) {
  std::vector<double> c(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    float v = static_cast<float>(i);
    if (g.base_size) v = v / static_cast<float>(static_cast<double>(n) / *g.base_size);
    c[static_cast<std::size_t>(i)] = static_cast<double>(v / static_cast<float>(g.interpolation_scale));
  }
  return c;
}

SinusoidalParams gen_grid_params(const Instance& in) {
  SinusoidalParams p{4 * *rc::gen::inRange<std::int64_t>(2, 33).as("dim / 4"), 10000.0, in.layout};
  draw_table_switches(p, in.contract());
  return p;
}

class GridProps : public InstanceTest {
 protected:
  TypedBuffer grid(const SinusoidalParams& p, const harness::GridSpec& g) const {
    return harness::variant_rows(*in().variant, harness::grid_rows(p, g), in().dtype);
  }
};

TEST_P(GridProps, GridIsEachAxisTableConcatenated) {
  PE_RC_CHECK("row (h, w) = [table_at(w coordinate) | table_at(h coordinate)], extra tokens zero", [&] {
    const SinusoidalParams p = gen_grid_params(in());
    const std::int64_t h = *rc::gen::inRange<std::int64_t>(1, 13).as("H");
    const std::int64_t w = *rc::gen::inRange<std::int64_t>(1, 13).as("W");
    const harness::GridSpec g = gen_grid(h, w);
    const TypedBuffer got = grid(p, g);
    SinusoidalParams half = p;
    half.dim = p.dim / 2;
    const SinusoidalPlan plan(half);
    const std::vector<double> wc = numpy_coordinates(w, g), hc = numpy_coordinates(h, g);
    TypedBuffer tw(in().dtype, wc.size() * plan.dim()), th(in().dtype, hc.size() * plan.dim());
    sinusoidal_table_at(*in().variant, plan, wc, tw.view());
    sinusoidal_table_at(*in().variant, plan, hc, th.view());
    const auto d = static_cast<std::size_t>(p.dim), e = static_cast<std::size_t>(g.extra_tokens);
    RC_ASSERT(got.size() == (e + static_cast<std::size_t>(h * w)) * d);
    for (std::size_t r = 0; r < got.size() / d; ++r) {
      for (std::size_t c = 0; c < d; ++c) {
        const std::size_t m = r - e, half_d = d / 2;
        const double want = r < e        ? 0.0
                            : c < half_d ? tw.get((m % static_cast<std::size_t>(w)) * half_d + c)
                                         : th.get((m / static_cast<std::size_t>(w)) * half_d + c - half_d);
        const double have = got.get(r * d + c);
        if (std::memcmp(&want, &have, sizeof(double)) != 0) {
          RC_FAIL(fmt::format("row {} channel {}: grid {:.9g}, the axis's table {:.9g}", r, c, have, want));
        }
      }
    }
  });
}

// Under the same settings the exact tables of H x W and W x H differ by O(1): with n = min(H, W) < N = max,
// the cell numbered n has w = n in the grid N wide and w = 0 in the grid n wide, so w's first pair (ω_0 = 1
// for every shift) reads an angle of at least n·8/(N·2) >= 1/3 (base_size 8, interpolation 2; MAE's n/1.875
// without one) against 0: |sin| >= 0.327. Every instance's budget here is below 1e-2 (bfloat16's 2^-8 plus
// diffusers' 51.4·2^-24·|φ| at |φ| <= 12·16/0.5), so a difference over 0.05 is the grids', not rounding.
TEST_P(GridProps, SwappingTheAxesOfANonSquareGridChangesIt) {
  PE_RC_CHECK("grid (H, W) != grid (W, H) for H != W", [&] {
    const SinusoidalParams p = gen_grid_params(in());
    const std::int64_t h = *rc::gen::inRange<std::int64_t>(1, 13).as("H");
    const std::int64_t w = *rc::gen::inRange<std::int64_t>(1, 13).as("W");
    RC_PRE(h != w);
    const harness::GridSpec given = gen_grid(h, w);
    harness::GridSpec swapped = given;
    swapped.sizes = {w, h};
    const TypedBuffer a = grid(p, given), b = grid(p, swapped);
    double most = 0;
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
      most = std::max(most, std::fabs(a.get(i) - b.get(i)));
    RC_ASSERT(most > 0.05);
  });
}

PE_INSTANTIATE(GridProps, table_form_instances());

}  // namespace
}  // namespace pe::testing

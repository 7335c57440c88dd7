// The table pass's rotated rows (measure_sinusoidal_screened.cc's sincos(), sinusoidal_screen.h's
// kTableMaxRotations): each kernel target, given the double tier's row at p0 and kTableMaxRotations rows
// after it, leaves the last row's e within the tier's radius at p0 plus kTableRotationRadius of sin and cos
// p·ω in 100-digit MPFR, at positions up to 2^32 and frequencies up to 1.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "pe/harness/exhaustive_screen.h"
#include "pe/harness/sinusoidal_screen.h"
#include "pe/plan.h"
#include "pe/ref/fast_trig.h"
#include "pe/ref/real.h"
#include "pe/ref/reference.h"

namespace pe::harness {
namespace {

TEST(SinusoidalScreen, RotatedRowsStayWithinTheirRadius) {
  if (table_screen_targets().empty()) GTEST_SKIP() << "no vector target with a fused multiply-add";
  const std::size_t rows = kTableMaxRotations + 1;
  for (const auto& [dim, base] : {std::pair{128, 1e4}, {256, 5e5}, {38, 2.0}}) {
    const SinusoidalParams params{dim, base, Layout::Interleaved};
    const SinusoidalPlan plan(params);
    const std::int64_t last = (std::int64_t{1} << 32) - 1;
    const ref::Sinusoidal reference(params, last);
    const std::size_t n = plan.n_pairs(), padded = ScreenToken::padded(n);
    std::vector<ref::dd::DD> omegas(n);
    for (std::size_t j = 0; j < n; ++j) omegas[j] = reference.omega(j);
    const exhaustive::ScreenPlan tier(
        omegas, [](double, std::size_t) { return 0.0; }, 1.0, DType::F32);
    std::vector<double> step_sin(padded), step_cos(padded), line(padded, INFINITY);
    exhaustive::double_tier_row(tier, 1, step_sin.data(), step_cos.data());
    // y = 0 everywhere, every bar open: every element quiet, nothing kept; the kernel only rotates.
    const std::vector<float> y(rows * plan.dim() + 2 * padded, 0.0f);
    TableScreenBars bars;
    bars.max_ulp = INFINITY, bars.abs_floor = INFINITY, bars.ulp_floor = INFINITY;
    for (const std::int64_t p0 :
         {std::int64_t{0}, std::int64_t{977}, std::int64_t{65436}, std::int64_t{1000003},
          std::int64_t{2147482647}, last - static_cast<std::int64_t>(rows)}) {
      const std::int64_t p = p0 + static_cast<std::int64_t>(kTableMaxRotations);
      for (const TableScreenTarget& target : table_screen_targets()) {
        SCOPED_TRACE(testing::Message() << target.name << " dim " << dim << " base " << base << " p0 " << p0);
        std::vector<double> sin(padded), cos(padded), flags(rows * padded, 0.0);
        std::vector<double> abs_tail(2 * padded * rows + ScreenToken::kLanes),
            ulp_tail(2 * padded * rows + ScreenToken::kLanes);
        exhaustive::double_tier_row(tier, p0, sin.data(), cos.data());
        TableScreenRow row{sin.data(), cos.data(), step_sin.data(), step_cos.data(), line.data(),
                           0x1p-48,    false};
        row.rows = rows, row.y_stride = plan.dim() * sizeof(float), row.table_rows = rows;
        TableScreenResult res{flags.data(), abs_tail.data(), ulp_tail.data()};
        target.run(ScreenType::F32, y.data(), n, ScreenChannels{0, 1, true}, row, bars, res);
        ASSERT_EQ(res.rows, rows);
        ASSERT_EQ(res.loud, 0u);
        // sin and cos now hold row p's e, rotated kTableMaxRotations times from the tier's at p0.
        for (std::size_t j = 0; j < n; ++j) {
          if (omegas[j].hi > 1) continue;  // no tier there: the pass never screens such a pair
          const double radius =
              ref::double_tier_radius(static_cast<double>(p0) * omegas[j].hi * (1 + 0x1p-40)) +
              kTableRotationRadius;
          const ref::Real s = reference.exact(p, plan.sin_index(j)).value;
          const ref::Real c = reference.exact(p, plan.cos_index(j)).value;
          EXPECT_LE(abs(ref::Real(sin[j]) - s), ref::Real(radius)) << "pair " << j;
          EXPECT_LE(abs(ref::Real(cos[j]) - c), ref::Real(radius)) << "pair " << j;
        }
      }
    }
  }
}

// exhaustive::rotate_row, the RoPE pass's rotation of a token's row to the next position's: from the tier's
// row at p0, k steps leave each pair within the tier's radius at p0 plus exhaustive::rotation_radius(k) of
// sin and cos of p·ω in 100-digit MPFR (k = 1, 2, 16, 17, 100 and kTableMaxRotations): Llama's ladder (base
// 500000, 64 pairs), and random ω in (0, 1], at positions up to 2^32.
TEST(SinusoidalScreen, RotatedRopeRowsStayWithinTheirRadius) {
  std::mt19937_64 rng(88);
  std::vector<ref::dd::DD> omegas;
  const ref::Sinusoidal llama(SinusoidalParams{128, 500000.0, Layout::Interleaved}, 1);
  for (std::size_t j = 0; j < 64; ++j) omegas.push_back(llama.omega(j));
  for (int i = 0; i < 64; ++i)
    omegas.push_back({std::ldexp(std::uniform_real_distribution<double>(0.5, 1.0)(rng), -(i % 30)), 0.0});
  const std::size_t n = omegas.size();
  const exhaustive::ScreenPlan tier(
      omegas, [](double, std::size_t) { return 0.0; }, 1.0, DType::F32);
  std::vector<double> step_sin(n + 8), step_cos(n + 8);
  exhaustive::double_tier_row(tier, 1, step_sin.data(), step_cos.data());
  const std::int64_t last = (std::int64_t{1} << 32) - 1;
  for (const std::int64_t p0 : {std::int64_t{0}, std::int64_t{4095}, std::int64_t{1000003},
                                last - static_cast<std::int64_t>(kTableMaxRotations)}) {
    SCOPED_TRACE(p0);
    std::vector<double> sin(n + 8), cos(n + 8);
    exhaustive::double_tier_row(tier, p0, sin.data(), cos.data());
    std::size_t steps = 0;
    for (const std::size_t k : {std::size_t{1}, std::size_t{2}, std::size_t{16}, std::size_t{17},
                                std::size_t{100}, kTableMaxRotations}) {
      for (; steps < k; ++steps)
        exhaustive::rotate_row(sin.data(), cos.data(), step_sin.data(), step_cos.data(), n);
      const std::int64_t p = p0 + static_cast<std::int64_t>(k);
      for (std::size_t j = 0; j < n; ++j) {
        const double radius =
            ref::double_tier_radius(static_cast<double>(p0) * omegas[j].hi * (1 + 0x1p-40)) +
            exhaustive::rotation_radius(k);
        const ref::Real phi = ref::Real(p) * (ref::Real(omegas[j].hi) + ref::Real(omegas[j].lo));
        EXPECT_LE(abs(ref::Real(sin[j]) - boost::multiprecision::sin(phi)), ref::Real(radius))
            << k << " " << j;
        EXPECT_LE(abs(ref::Real(cos[j]) - boost::multiprecision::cos(phi)), ref::Real(radius))
            << k << " " << j;
      }
    }
  }
}

}  // namespace
}  // namespace pe::harness

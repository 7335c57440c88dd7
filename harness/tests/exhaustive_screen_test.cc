// The exhaustive census's screen on every Highway target the CPU has: its vector double tier is
// ref::double_tier_sincos bit for bit, and every element it settles is, by MPFR, within its budget and
// strictly below the limits it was given (the screen may only be conservative). It must also settle
// nearly every element of a correct output, else the census would be no faster than without it.
#include "pe/harness/exhaustive_screen.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "pe/contract.h"
#include "pe/harness/instance.h"
#include "pe/plan.h"
#include "pe/ref/fast_trig.h"
#include "pe/ref/real.h"
#include "pe/ref/reference.h"

namespace pe::exhaustive {
namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// Positions below 2^32, each bit length as likely.
std::int64_t draw_position(std::mt19937_64& g) {
  const int bits = std::uniform_int_distribution<int>(0, 32)(g);
  return std::uniform_int_distribution<std::int64_t>(0, (std::int64_t{1} << bits) - 1)(g);
}

std::vector<ref::dd::DD> omegas_of(const ref::Sinusoidal& r, std::size_t pairs) {
  std::vector<ref::dd::DD> w(pairs);
  for (std::size_t j = 0; j < pairs; ++j) w[j] = r.omega(j);
  return w;
}

const Contract& contract_of(const std::string& instance) {
  const auto found = harness::instances_matching(instance);
  if (found.empty()) throw std::runtime_error("no instance " + instance);
  return found.front().contract();
}

TEST(ExhaustiveScreen, EveryTargetIsRegistered) {
  EXPECT_FALSE(screen_targets().empty());
  for (const ScreenTarget& t : screen_targets()) std::printf("screen target %s\n", t.name.c_str());
}

TEST(ExhaustiveScreen, VectorDoubleTierIsTheScalarOneBitForBit) {
  std::mt19937_64 g(20261201);
  for (const auto& [dim, base] : {std::pair{128, 1e4}, {128, 5e5}, {38, 2.0}, {2048, 1e7}}) {
    const SinusoidalParams params{dim, base, Layout::Interleaved};
    const ref::Sinusoidal r(params, std::int64_t{1} << 32);
    const auto pairs = static_cast<std::size_t>(dim / 2);
    const ScreenPlan plan(
        omegas_of(r, pairs), [](double, std::size_t) { return 1.0; }, 0x1p32, DType::F32);
    std::vector<double> s(plan.padded()), c(plan.padded());
    for (const ScreenTarget& t : screen_targets()) {
      for (int i = 0; i < 300; ++i) {
        const std::int64_t p = draw_position(g);
        t.sincos(plan, p, s.data(), c.data());
        for (std::size_t j = 0; j < pairs; ++j) {
          double es = 0, ec = 0;
          ASSERT_TRUE(ref::double_tier_sincos(p, ref::split_omega(r.omega(j)), es, ec));
          ASSERT_TRUE(same_bits(s[j], es) && same_bits(c[j], ec))
              << t.name << ": p = " << p << ", pair " << j << " of d = " << dim << ", base " << base;
        }
      }
    }
  }
}

// One row of a d = 128 table under `contract`, y = the correctly rounded value, half of them moved by
// up to `spread` budgets (then rounded), screened with `limits`; every settled element is checked against
// MPFR. Returns the settled share.
double check_row_settles_only_what_it_may(const ScreenTarget& t, const Contract& contract, DType type,
                                          std::mt19937_64& g, double spread, const ScreenLimits& limits,
                                          const std::function<double(double, std::size_t)>* budget_override) {
  const SinusoidalParams params{128, 1e4, Layout::Interleaved};
  const SinusoidalPlan splan(params);
  const ref::Sinusoidal r(params, std::int64_t{1} << 32);
  const std::size_t pairs = 64;
  const std::function<double(double, std::size_t)> budget =
      budget_override != nullptr ? *budget_override : [&](double abs_phi, std::size_t j) {
        return element_budget(contract, type, abs_phi, j);
      };
  const ScreenPlan plan(omegas_of(r, pairs), budget, 0x1p32, type);
  const std::int64_t p = draw_position(g);
  std::vector<double> ys(plan.padded()), yc(plan.padded()), unsettled(plan.padded());
  std::vector<ref::Real> exact(2 * pairs);
  std::uniform_real_distribution<double> move(-spread, spread);
  for (std::size_t j = 0; j < pairs; ++j) {
    for (const bool is_sin : {true, false}) {
      const std::size_t ch = is_sin ? splan.sin_index(j) : splan.cos_index(j);
      exact[2 * j + (is_sin ? 0 : 1)] = r.exact(p, ch).value;
      const double b = budget(std::fabs(r.angle(p, ch)), j);
      // Half the elements rounded in the output type (what a correct kernel writes), half moved.
      double y = r.rounded(p, ch, type);
      if (spread > 0 && g() % 2 == 0)
        y = ref::round_double_to(exact[2 * j + (is_sin ? 0 : 1)].convert_to<double>() + move(g) * b, type);
      (is_sin ? ys : yc)[j] = y;
    }
  }
  t.screen(plan, p, ys.data(), yc.data(), limits, unsettled.data());
  int settled = 0;
  for (std::size_t j = 0; j < pairs; ++j) {
    const auto flags = static_cast<int>(unsettled[j]);
    for (const bool is_sin : {true, false}) {
      if ((flags & (is_sin ? 1 : 2)) != 0) continue;
      ++settled;
      const std::size_t ch = is_sin ? splan.sin_index(j) : splan.cos_index(j);
      const ref::Real& e = exact[2 * j + (is_sin ? 0 : 1)];
      const double y = (is_sin ? ys : yc)[j];
      const double err = ref::abs_error(y, e), b = budget(std::fabs(r.angle(p, ch)), j);
      const std::string where = t.name + ": p = " + std::to_string(p) + ", channel " + std::to_string(ch);
      EXPECT_LT(err, b) << where;
      EXPECT_LT(err, limits.max_abs) << where;
      EXPECT_LT(err / ref::ulp_of(e, type), limits.max_ulp) << where;
      EXPECT_LT(err / b, limits.max_ratio) << where;
    }
  }
  return settled / (2.0 * pairs);
}

TEST(ExhaustiveScreen, SettlesOnlyElementsWithinTheBudgetAndBelowTheLimits) {
  std::mt19937_64 g(7);
  std::uniform_real_distribution<double> u(0.0, 1.5);
  for (const char* instance : {"sinusoidal.interleaved.exact/f32", "sinusoidal.interleaved.scalar_f32/f32",
                               "sinusoidal.interleaved.scalar_f32/bf16"}) {
    const harness::Instance in = harness::instances_matching(instance).front();
    for (const ScreenTarget& t : screen_targets()) {
      for (int i = 0; i < 40; ++i) {
        // Limits near the elements' own errors, so that the screen's decisions are close calls.
        const double b = element_budget(in.contract(), in.dtype, 1e3, 0);
        const ScreenLimits limits{u(g) * b, u(g) * 2, u(g)};
        check_row_settles_only_what_it_may(t, in.contract(), in.dtype, g, 1.5, limits, nullptr);
      }
    }
  }
}

TEST(ExhaustiveScreen, SettlesNearlyEveryElementOfACorrectTable) {
  std::mt19937_64 g(11);
  const Contract& c = contract_of("sinusoidal.interleaved.exact/f32");
  for (const ScreenTarget& t : screen_targets()) {
    double least = 1;
    for (int i = 0; i < 20; ++i)
      least = std::min(least, check_row_settles_only_what_it_may(
                                  t, c, DType::F32, g, 0, ScreenLimits{1, INFINITY, INFINITY}, nullptr));
    // Correctly rounded: 3.3e-9 inside the budget, far beyond the tier's radius (2^-48); no ULP
    // limit (an exact value near 0 has an ulp far below the radius).
    EXPECT_EQ(least, 1.0) << t.name;
  }
}

TEST(ExhaustiveScreen, NeverSettlesWithoutLimitsOrAnAffineBudgetOrAFiniteOutput) {
  std::mt19937_64 g(13);
  const Contract& c = contract_of("sinusoidal.interleaved.exact/f32");
  // Convex: the chord from 0 to the largest |φ| is above it, so it bounds nothing from below.
  const std::function<double(double, std::size_t)> curved = [](double abs_phi, std::size_t) {
    return 1e-8 + 1e-30 * abs_phi * abs_phi;
  };
  for (const ScreenTarget& t : screen_targets()) {
    EXPECT_EQ(check_row_settles_only_what_it_may(t, c, DType::F32, g, 0.5, ScreenLimits{}, nullptr), 0.0);
    EXPECT_EQ(check_row_settles_only_what_it_may(t, c, DType::F32, g, 0.5, {1, 1e9, 1e9}, &curved), 0.0);
    const SinusoidalParams params{16, 1e4, Layout::Interleaved};
    const ref::Sinusoidal r(params, 1 << 20);
    const ScreenPlan plan(
        omegas_of(r, 8), [](double, std::size_t) { return 1.0; }, 0x1p20, DType::F32);
    std::vector<double> ys(plan.padded(), NAN), yc(plan.padded(), INFINITY), unsettled(plan.padded());
    EXPECT_TRUE(t.screen(plan, 12345, ys.data(), yc.data(), {1, 1e9, 1e9}, unsettled.data()));
    for (std::size_t j = 0; j < 8; ++j) EXPECT_EQ(unsettled[j], 3.0) << t.name;
  }
}

}  // namespace
}  // namespace pe::exhaustive

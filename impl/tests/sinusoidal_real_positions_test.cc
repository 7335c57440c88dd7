// sinusoidal_table_at and the table forms diffusion code uses (issue 49): the API's checks at real positions
// name their parameter and leave the caller's buffer as it was; a shift past a contract's max_freq_shift is
// refused naming the variant; every registered variant, at real timesteps with a scale, an odd dim, flip and
// shift, lies within its contract of the exact reference (pe::ref::Sinusoidal at RealPosition, correctly
// rounded to double: within 2^-53 of the exact value, added to the budget), its pad channel exactly 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <vector>

#include "pe/api.h"
#include "pe/contract.h"
#include "pe/errors.h"
#include "pe/harness/typed_buffer.h"
#include "pe/ref/reference.h"
#include "pe/thread_pool.h"
#include "pe/variant.h"

namespace pe {
namespace {

SinusoidalParams timestep_params(std::int64_t dim, double scale, bool flip, double shift) {
  SinusoidalParams p{dim, 10000.0, Layout::Concatenated};
  p.flip_sin_to_cos = flip, p.downscale_freq_shift = shift, p.scale = scale;
  return p;
}

const Variant& variant_named(const char* name) {
  const Variant* v = find_variant(name);
  if (v == nullptr) throw std::runtime_error(std::string("no variant ") + name);
  return *v;
}

// The call is refused naming `parameter` (and, where given, with `words` in its message), out unchanged.
void expect_refused(const Variant& v, const SinusoidalPlan& plan, const std::vector<double>& positions,
                    const std::string& parameter, const std::string& words = "") {
  std::vector<float> out(positions.size() * plan.dim(), 7.0f);
  try {
    sinusoidal_table_at(v, plan, positions, std::span<float>(out));
    ADD_FAILURE() << v.name() << ": accepted; expected a refusal naming " << parameter;
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.parameter(), parameter) << e.what();
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
  EXPECT_EQ(out, std::vector<float>(out.size(), 7.0f)) << v.name() << ": written before the refusal";
}

TEST(SinusoidalRealPositions, BadPositionsAndScalesAreNamedAndWriteNothing) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = HUGE_VAL;
  for (const char* name : {"sinusoidal.scalar_f64", "sinusoidal.diffusers_f32", "sinusoidal.exact"}) {
    const Variant& v = variant_named(name);
    const SinusoidalPlan plain(timestep_params(9, 1.0, false, 0)),
        scaled(timestep_params(9, 1000.0, true, 1));
    expect_refused(v, plain, {0.5, nan}, "positions", "positions[1]");
    expect_refused(v, plain, {inf}, "positions", "positions[0]");
    expect_refused(v, plain, {1.0, -inf, 2.0}, "positions", "positions[1]");
    expect_refused(v, plain, {0x1p53 * 2}, "positions", "positions[0]");
    // |scale·t| past 2^53 with t itself inside: the scale is named.
    expect_refused(v, scaled, {0.25, 0x1p52}, "scale", "positions[1]");
  }
  // Integer positions under a scale: |scale·p| past 2^53 is the scale's doing.
  const Variant& f64 = variant_named("sinusoidal.scalar_f64");
  const SinusoidalPlan big(timestep_params(8, 4.0, false, 0));
  const std::vector<std::int64_t> positions = {1, std::int64_t{1} << 52};
  std::vector<double> out(2 * 8, 7.0);
  try {
    sinusoidal_table(f64, big, positions, std::span<double>(out));
    ADD_FAILURE() << "accepted scale 4 at position 2^52";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.parameter(), "scale") << e.what();
  }
  EXPECT_EQ(out, std::vector<double>(out.size(), 7.0));
}

TEST(SinusoidalRealPositions, AFloat32AngleRefusesWhatFloat32CannotRoundRelatively) {
  const Variant& f32 = variant_named("sinusoidal.scalar_f32");
  const Variant& f64 = variant_named("sinusoidal.scalar_f64");
  const SinusoidalPlan plain(timestep_params(8, 1.0, false, 0)), tiny(timestep_params(8, 1e-300, false, 0));
  // A subnormal float32 timestep: fl(t) is not a relative rounding.
  expect_refused(f32, plain, {1e-40}, "positions", "normal float32");
  expect_refused(f32, tiny, {1.0}, "scale", "normal float32");
  // A double angle takes both.
  std::vector<double> out(8);
  EXPECT_NO_THROW(sinusoidal_table_at(f64, plain, std::vector<double>{1e-40}, std::span<double>(out)));
  EXPECT_NO_THROW(sinusoidal_table_at(f64, tiny, std::vector<double>{1.0}, std::span<double>(out)));
}

TEST(SinusoidalRealPositions, AShiftPastTheContractIsRefusedNamingTheVariant) {
  for (const Variant* v : registry()) {
    if (v->family() != Family::Sinusoidal || !v->contract().table_switches) continue;
    const SinusoidalPlan shifted(timestep_params(16, 1.0, false, v->contract().max_freq_shift + 0.5));
    expect_refused(*v, shifted, {1.0}, "downscale_freq_shift", v->name());
  }
}

// Positions: float32 timesteps t·1000 (t in [0, 1)) and integers, each exactly as given.
const std::vector<double> kTimesteps = {0.0, 0.25, 1.0, 17.25f, 499.5, 731.125f, 999.875f, 0.001f * 1000};

TEST(SinusoidalRealPositions, EveryVariantIsWithinItsContractAtRealTimesteps) {
  std::size_t checked = 0;
  for (const Variant* v : registry()) {
    if (v->family() != Family::Sinusoidal || !v->contract().table_switches) continue;
    const Contract& c = v->contract();
    double worst = 0;  // the largest error / budget, printed: how much of its contract the variant uses
    for (const Layout layout : c.layouts)
      for (const DType type : c.outputs)
        for (const double scale : {1.0, 1000.0, 0.37})
          for (const std::int64_t dim : {33, 64}) {
            SinusoidalParams p = timestep_params(dim, scale, dim % 2 == 1, dim % 2 == 1 ? 1.0 : 0.0);
            p.layout = layout;
            const SinusoidalPlan plan(p);
            // Angles within the contract's promise: |scale·t| <= max_position.
            std::vector<double> positions;
            for (const double t : kTimesteps) {
              const double x = scale == 1000.0 ? t / 1000 : t;  // a scale of 1000 reads t in [0, 1)
              if (std::fabs(scale * x) <= static_cast<double>(c.max_position)) positions.push_back(x);
            }
            harness::TypedBuffer y(type, positions.size() * plan.dim());
            sinusoidal_table_at(*v, plan, positions, y.view());
            const ref::Sinusoidal reference(p, ref::RealPosition{1000.0});
            for (std::size_t r = 0; r < positions.size(); ++r)
              for (std::size_t ch = 0; ch < plan.dim(); ++ch) {
                const double got = y.get(r * plan.dim() + ch);
                if (reference.is_pad(ch)) {
                  ASSERT_EQ(got, 0.0) << v->name() << " pad channel at row " << r;
                  continue;
                }
                const ref::RealPosition at{positions[r]};
                const double exact = reference.rounded(at, ch, DType::F64);
                const double phi = std::fabs(reference.angle(at, ch));
                const double budget =
                    table_element_budget(c, type, phi, reference.pair_of(ch), std::fabs(scale)) +
                    0x1p-53 * std::fabs(exact);
                ASSERT_LE(std::fabs(got - exact), budget)
                    << v->name() << " " << to_string(layout) << " " << to_string(type) << " scale " << scale
                    << " dim " << dim << " t " << positions[r] << " channel " << ch << ": got " << got
                    << ", exact " << exact;
                worst = std::max(worst, std::fabs(got - exact) / budget);
                ++checked;
              }
          }
    std::printf("%-32s worst error / budget at real timesteps: %.3f\n", v->name().c_str(), worst);
  }
  EXPECT_GT(checked, 10000u);
}

// A scale or real positions the variant ignored would be caught above; this pins that they change the table:
// scale 1000 at t = 0.5 is the unscaled table at t = 500 within both budgets, and not the one at t = 0.5.
TEST(SinusoidalRealPositions, TheScaleMovesTheAngle) {
  for (const Variant* v : registry()) {
    if (v->family() != Family::Sinusoidal || !v->contract().table_switches) continue;
    const DType type = v->contract().outputs.front();
    const SinusoidalPlan scaled(timestep_params(16, 1000.0, false, 0)),
        plain(timestep_params(16, 1.0, false, 0));
    harness::TypedBuffer a(type, 16), b(type, 16);
    sinusoidal_table_at(*v, scaled, std::vector<double>{0.5}, a.view());
    sinusoidal_table_at(*v, plain, std::vector<double>{0.5}, b.view());
    double apart = 0;
    for (std::size_t i = 0; i < 16; ++i) apart = std::max(apart, std::fabs(a.get(i) - b.get(i)));
    EXPECT_GT(apart, 0.5) << v->name() << ": the scale changed nothing";
  }
}

// Rows at real positions depend on their position alone: the pool's pieces give the single call's bits, for
// every variant (the exact phase's included: it never advances these rows). 4096 timesteps x 320 channels is
// large enough to be split (over 32768 elements a thread).
TEST(SinusoidalRealPositions, ThePoolGivesTheSingleCallsBits) {
  ThreadPool pool(4);
  std::vector<double> t(4096);
  for (std::size_t i = 0; i < t.size(); ++i) t[i] = static_cast<float>(static_cast<double>(i) * 0.2441);
  for (const Variant* v : registry()) {
    if (v->family() != Family::Sinusoidal || !v->contract().table_switches) continue;
    const DType type = v->contract().outputs.front();
    const SinusoidalPlan plan(timestep_params(321, 1.0, true, 1));
    harness::TypedBuffer one(type, t.size() * plan.dim()), many(type, t.size() * plan.dim());
    sinusoidal_table_at(*v, plan, t, one.view());
    sinusoidal_table_at(*v, plan, t, many.view(), pool);
    EXPECT_EQ(one.bytes(), many.bytes()) << v->name();
  }
}

}  // namespace
}  // namespace pe

// Small helpers shared by the property files, and what every one of them uses: GoogleTest, RapidCheck,
// fmt, pe/pe.h, the harness's runs and buffers, the generators.
#pragma once

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "pe/harness/family_traits.h"
#include "pe/harness/instance.h"
#include "pe/harness/measure.h"
#include "pe/harness/run.h"
#include "pe/harness/typed_buffer.h"
#include "pe/pe.h"
#include "support/case_report.h"
#include "support/generators.h"

namespace pe::testing {

// The harness's names, read unqualified by the property files.
using harness::buffer_of;
using harness::Instance;
using harness::instances;
using harness::run_table;
using harness::selected;
using harness::TypedBuffer;

// ⟨R(m)q, R(n)k⟩ = A·⟨R(m-n)q, k⟩, element by element: for computed a, b, r within e_a, e_b, e_r of exact
// vectors, |⟨a,b⟩ - ⟨a*,b*⟩| <= Σ e_a(|b| + e_b) + |a|·e_b, the other side A·e_r·|k|; sums in double add
// 2·n·2^-53·Σ|terms| (RopeProps.InnerProductDependsOnlyOnRelativePosition and its per-axis form).
struct InnerProductCheck {
  double attention = 1, lhs = 0, rhs = 0, tol = 0, mag = 0;
  void add(double a, double b, double r, double k, double ea, double eb, double er) {
    lhs += a * b;
    rhs += r * k;
    mag += std::fabs(a * b) + attention * std::fabs(r * k);
    tol += ea * (std::fabs(b) + eb) + std::fabs(a) * eb + attention * er * std::fabs(k);
  }
  // Fails the RapidCheck case when the two sides differ by more than the tolerance.
  void check(std::size_t head_dim) const {
    const double right = attention * rhs;
    const double bound = tol + 2 * static_cast<double>(head_dim + 1) * 0x1p-53 * mag;
    if (!(std::fabs(lhs - right) <= bound)) {
      RC_FAIL("<R(m)q,R(n)k> = " + std::to_string(lhs) + ", A<R(m-n)q,k> = " + std::to_string(right) +
              ", diff " + std::to_string(std::fabs(lhs - right)) + " > " + std::to_string(bound));
    }
  }
};

// The interleaved instances of variants that also pair half-split: where a property relates the two.
inline std::vector<Instance> interleaved_of_both_pairings() {
  std::vector<Instance> out;
  for (const Instance& i : selected(Family::Rope)) {
    if (i.layout == Layout::Interleaved && i.variant->supports(Layout::HalfSplit)) out.push_back(i);
  }
  return out;
}

// The sinusoidal instances whose contract reads the table's forms (Contract::table_switches: flip, shift,
// scale, odd dims, real positions); the others (a C plugin's) are refused each.
inline std::vector<Instance> table_form_instances() {
  std::vector<Instance> out;
  for (const Instance& i : selected(Family::Sinusoidal)) {
    if (i.variant->contract().table_switches) out.push_back(i);
  }
  return out;
}

// Unit roundoff of double, for the tolerances of identities evaluated in double.
inline constexpr double kU64 = 0x1p-53;

// Every channel when there are at most `most`, else both ends and an even stride between.
inline std::vector<std::size_t> sample_channels(std::size_t dim, std::size_t most = 96) {
  std::vector<std::size_t> out;
  const std::size_t stride = dim <= most ? 1 : dim / most;
  for (std::size_t c = 0; c < dim; c += stride) out.push_back(c);
  if (out.back() != dim - 1) out.push_back(dim - 1);
  return out;
}

// The pairs an edge case compares: the first four and the last eight (where a vector loop's tail is),
// every pair when there are at most twelve.
inline std::vector<std::size_t> edge_pairs(std::size_t pairs) {
  std::vector<std::size_t> out;
  for (std::size_t j = 0; j < pairs; ++j) {
    if (j < 4 || j + 8 >= pairs) out.push_back(j);
  }
  return out;
}

// An upper bound on the exact |φ| = p·ω from the plan's double ω (within 1.02·2^-53 of the exact
// one) and one rounding of the product: the factor 1 + 2^-50 covers both.
inline double angle_bound(std::int64_t p, double omega) {
  return std::fabs(static_cast<double>(p) * omega) * (1 + 0x1p-50);
}

// A measure() sink that fails the RapidCheck case at the first element over its budget, naming it.
inline harness::Sink fail_over_budget() {
  return [](const harness::ElementRecord& e) {
    if (e.ratio() <= 1) return;
    RC_FAIL(
        fmt::format("row {} head {} position {} channel {}: got {:.9g} (exact {:.9g}), error {:.3g} > budget "
                    "{:.3g}",
                    e.row, e.head, e.position, e.channel, e.y, e.exact, e.abs_error, e.budget));
  };
}

// `count` inputs representable in `type` from a seed (RapidCheck draws the seed, not the values: a
// run of hundreds of rows is cheap to draw and its counterexample short): |v| in [2^-4, 2^4), either sign.
inline std::vector<double> seeded_inputs(DType type, std::size_t count, std::uint64_t seed) {
  std::uint64_t state = seed | 1;
  TypedBuffer b(type, count);
  for (std::size_t i = 0; i < count; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    const double unit = static_cast<double>(state >> 11) * 0x1p-53;  // [0, 1)
    const int exponent = static_cast<int>((state >> 3) % 8) - 4;
    b.set(i, std::ldexp((state & 1) ? -1.0 - unit : 1.0 + unit, exponent));
  }
  return b.values();
}

// RapidCheck's result inside GoogleTest: the counterexample and its reproduce string are printed
// by rc::check itself.
#define PE_RC_CHECK(description, ...) ::pe::testing::check_reporting(description, __VA_ARGS__)

inline std::string instance_test_name(const ::testing::TestParamInfo<Instance>& info) {
  return info.param.test_name();
}

// The fixture of a property over registry instances: the instance, its contract's reach, its family.
class InstanceTest : public ::testing::TestWithParam<Instance> {
 protected:
  const Instance& in() const { return GetParam(); }
  std::int64_t max_position() const { return in().contract().max_position; }
  const harness::FamilyTraits& family() const { return harness::traits_of(in().variant->family()); }
};

// A suite run over `instances` (Registry/<suite>.<property>/<instance>); empty when $PE_VARIANT selects
// none of them: allowed, not a failure.
#define PE_INSTANTIATE(suite, instances)                \
  GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(suite); \
  INSTANTIATE_TEST_SUITE_P(Registry, suite, ::testing::ValuesIn(instances), ::pe::testing::instance_test_name)

}  // namespace pe::testing

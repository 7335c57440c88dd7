// The exact-phase variants' headline promise, beyond what the registry-wide properties sample:
// float32 within 6e-8 of the exact value for every position below 2^31, every dim up to 8192 and
// base in [10, 1e7], along runs of consecutive positions long enough to cross the 256-row refresh of
// the rotation recurrence and at scattered positions (the direct path).

#include "pe/ref/reference.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

constexpr double kTarget = 6e-8;  // ≈ 2^-24, the target the variant was built for

rc::Gen<double> gen_base_10_to_1e7() {
  return rc::gen::map(rc::gen::inRange(0, 1 << 20),
                      [](int u) { return 10 * std::pow(1e6, u / double(1 << 20)); });
}

// Consecutive positions from a start anywhere below 2^31, or scattered ones.
rc::Gen<std::vector<std::int64_t>> gen_runs() {
  return rc::gen::oneOf(
      rc::gen::map(rc::gen::pair(rc::gen::inRange<std::int64_t>(0, (std::int64_t{1} << 31) - 600),
                                 rc::gen::inRange<std::int64_t>(1, 600)),
                   [](const std::pair<std::int64_t, std::int64_t>& s) {
                     std::vector<std::int64_t> p(static_cast<std::size_t>(s.second));
                     for (std::size_t k = 0; k < p.size(); ++k) p[k] = s.first + static_cast<std::int64_t>(k);
                     return p;
                   }),
      gen_positions(std::int64_t{1} << 31, 16));
}

// Whether $PE_VARIANT (pe-suite verify --variant) selects the variant.
bool chosen(const Variant& v) {
  for (const Instance& i : selected(v.family())) {
    if (i.variant == &v) return true;
  }
  return false;
}

TEST(ExactPhase, SinusoidalWithinTargetAtAnyPositionDimAndBase) {
  const Variant* v = find_variant("sinusoidal.exact");
  ASSERT_NE(v, nullptr);
  if (!chosen(*v)) GTEST_SKIP() << "not selected by $PE_VARIANT";
  PE_RC_CHECK("|PE - exact| <= 6e-8 in float32", [&] {
    const SinusoidalParams params{*gen_dim(8192).as("dim"), *gen_base_10_to_1e7().as("base"),
                                  *rc::gen::element(Layout::Interleaved, Layout::Concatenated).as("layout")};
    const auto positions = *gen_runs().as("positions");
    const SinusoidalPlan plan(params);
    const TypedBuffer y = run_table({v, params.layout, DType::F32}, plan, positions);
    const ref::Sinusoidal exact(params, *std::max_element(positions.begin(), positions.end()));
    for (std::size_t r = 0; r<positions.size(); r += positions.size()> 40 ? 13 : 1) {
      for (std::size_t ch : sample_channels(plan.dim())) {
        const double got = y.get(r * plan.dim() + ch);
        const double err = ref::abs_error(got, exact.exact(positions[r], ch).value);
        if (!(err <= kTarget)) {
          RC_FAIL(fmt::format("row {} position {} channel {}: got {:.9g}, error {:.3g}", r, positions[r], ch,
                              got, err));
        }
      }
    }
  });
}

TEST(ExactPhase, RopeWithinTargetTimesNorm) {
  const Variant* v = find_variant("rope.exact");
  ASSERT_NE(v, nullptr);
  if (!chosen(*v)) GTEST_SKIP() << "not selected by $PE_VARIANT";
  PE_RC_CHECK("|rotated - exact| <= (|a| + |b|)·6e-8 in float32", [&] {
    const RopeParams params{*gen_dim(512).as("head_dim"), 0, *gen_base_10_to_1e7().as("base"),
                            *rc::gen::element(Layout::Interleaved, Layout::HalfSplit).as("layout")};
    const auto positions = *gen_runs().as("positions");
    const RopePlan plan(params);
    const std::int64_t heads = 2;
    TypedBuffer x(DType::F32, positions.size() * static_cast<std::size_t>(heads) * plan.head_dim());
    for (std::size_t i = 0; i < x.size(); ++i) x.set(i, std::sin(0.37 * static_cast<double>(i)) * 3);
    TypedBuffer y = x;
    run_rope({v, params.layout, DType::F32}, plan, positions, heads, y);
    const ref::Rope exact(params, *std::max_element(positions.begin(), positions.end()));
    for (std::size_t t = 0; t<positions.size(); t += positions.size()> 40 ? 11 : 1) {
      const std::size_t row = t * static_cast<std::size_t>(heads) * plan.head_dim();
      for (std::size_t j = 0; j < plan.n_pairs(); j += 1 + plan.n_pairs() / 32) {
        const std::size_t i0 = row + plan.pair_first(j), i1 = i0 + plan.pair_offset();
        const auto [e0, e1] = exact.rotate(positions[t], j, x.get(i0), x.get(i1));
        const double norm = std::fabs(x.get(i0)) + std::fabs(x.get(i1));
        for (const auto& [i, e] : {std::pair{i0, &e0}, std::pair{i1, &e1}}) {
          const double err = ref::abs_error(y.get(i), e->value);
          if (!(err <= kTarget * norm + 1e-45)) {
            RC_FAIL(fmt::format("token {} position {} pair {}: error {:.3g} > 6e-8·{:.3g}", t, positions[t],
                                j, err, norm));
          }
        }
      }
    }
  });
}

}  // namespace
}  // namespace pe::testing

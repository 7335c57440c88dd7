// ALiBi over every ALiBi instance: agreement with the exact reference for any head count, max_bias,
// slope rule and form at any query and key positions; the slopes' structure; the bias's exact
// symmetries (translation, doubling, the diagonal); and the slopes of n = 1..64, 80, 96, 100 heads
// against an independent evaluation of the paper's rule.

#include "pe/harness/measure_alibi.h"
#include "pe/ref/alibi.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

// 1..64 heads, and the counts of models beyond (Falcon-40B's 128 q heads, BLOOM-176B's 112, MPT's 80).
rc::Gen<std::int64_t> gen_heads() {
  return rc::gen::oneOf(rc::gen::inRange<std::int64_t>(1, 65),
                        rc::gen::element<std::int64_t>(80, 96, 100, 112, 128));
}

// The paper's 8, powers of two, and any value in (0, 16] (the contracts' max_base 2^16).
rc::Gen<double> gen_max_bias() {
  return rc::gen::oneOf(rc::gen::element(8.0, 16.0, 4.0, 1.0, 0.5),
                        rc::gen::map(rc::gen::inRange(1, 1601), [](int c) { return c / 100.0; }));
}

rc::Gen<AlibiParams> gen_params() {
  return rc::gen::apply(
      [](std::int64_t n, double b, AlibiSlopes s, AlibiForm f) {
        return AlibiParams{.n_heads = n, .max_bias = b, .slopes = s, .form = f};
      },
      gen_heads(), gen_max_bias(), rc::gen::element(AlibiSlopes::Interpolated, AlibiSlopes::Direct),
      rc::gen::element(AlibiForm::Causal, AlibiForm::Symmetric, AlibiForm::Bloom));
}

class AlibiProps : public InstanceTest {
 protected:
  TypedBuffer bias(const AlibiParams& p, std::span<const std::int64_t> queries,
                   std::span<const std::int64_t> keys) const {
    const AlibiPlan plan(p);
    TypedBuffer y(in().dtype, plan.n_heads() * queries.size() * keys.size());
    alibi_bias(*in().variant, plan, queries, keys, y.view());
    return y;
  }
  TypedBuffer slopes(const AlibiParams& p) const {
    const AlibiPlan plan(p);
    TypedBuffer y(in().dtype, plan.n_heads());
    alibi_slopes(*in().variant, plan, y.view());
    return y;
  }
  harness::Budget budget() const { return {&in().contract(), in().dtype}; }
  // Positions no larger than the contract's, and small enough that c can be added.
  std::int64_t max_position() const { return in().contract().max_position / 2; }
};

TEST_P(AlibiProps, EveryRowIsTheSlopeTimesTheDistanceWithinTheContract) {
  PE_RC_CHECK(
      "|bias - m_h·s| and |slope - m_h| <= budget, any heads, max_bias, rule, form and positions", [&] {
        const AlibiParams p = *gen_params().as("params");
        RC_CLASSIFY(true, std::string(to_string(p.slopes)) + ", " + std::string(to_string(p.form)));
        const auto queries = *gen_positions(max_position(), 3).as("queries");
        const auto keys = *gen_positions(max_position(), 5).as("keys");
        harness::measure_alibi(p, queries, keys, bias(p, queries, keys), budget(), fail_over_budget());
        harness::measure_alibi_slopes(p, slopes(p), budget(), fail_over_budget());
      });
}

// Each geometric run (heads below n', heads from n' on; every head under the direct rule) strictly
// decreases where the exact slopes are further apart than the two budgets, and never leaves (0, 1].
TEST_P(AlibiProps, SlopesDecreaseAlongEachRunAndLieInTheUnitInterval) {
  PE_RC_CHECK("0 < m_h <= 1, m_h > m_h+1 within a run", [&] {
    const AlibiParams p = *gen_params().as("params");
    const ref::Alibi exact(p);
    const AlibiPlan& plan = exact.plan();
    const TypedBuffer y = slopes(p);
    for (std::size_t h = 0; h < plan.n_heads(); ++h) {
      if (!(y.get(h) > 0 && y.get(h) <= 1)) RC_FAIL(fmt::format("slope of head {} is {}", h, y.get(h)));
      if (h + 1 == plan.n_heads() || plan.denominator(h) != plan.denominator(h + 1)) continue;
      const double gap = (exact.slope(h) - exact.slope(h + 1)).convert_to<double>();
      const double room = budget()(nullptr, 1, plan.power(h), y.get(h)) +
                          budget()(nullptr, 1, plan.power(h + 1), y.get(h + 1));
      if (gap > room && !(y.get(h) > y.get(h + 1)))
        RC_FAIL(fmt::format("heads {} and {}: {} then {}", h, h + 1, y.get(h), y.get(h + 1)));
    }
  });
}

// For n a power of two and an integer b·(h+1)/n the slope is a power of two. A variant whose error
// before its final rounding is under half the spacing below it (pe/contract.h: the budget without
// its c0 term) must return it exactly.
TEST_P(AlibiProps, PowerOfTwoSlopesAreExactWhereTheContractDecidesThem) {
  PE_RC_CHECK("m_h = 2^-(b(h+1)/n) exactly", [&] {
    const std::int64_t n = std::int64_t{1} << *rc::gen::inRange(0, 8).as("log2 heads");
    const double b = *rc::gen::inRange(1, 17).as("max_bias");
    const AlibiParams p{.n_heads = n, .max_bias = b};
    const TypedBuffer y = slopes(p);
    const Contract& c = in().contract();
    for (std::int64_t h = 0; h < n; ++h) {
      if (std::fmod(b * static_cast<double>(h + 1), static_cast<double>(n)) != 0) continue;
      const double power = std::exp2(-b * static_cast<double>(h + 1) / static_cast<double>(n));
      const double before_rounding =
          element_budget(c, in().dtype, 1, static_cast<std::size_t>(h + 1), power) -
          (in().dtype == c.compute_type ? 0 : c.c0 * unit_roundoff(in().dtype) * power);
      RC_CLASSIFY(before_rounding < 0.5 * unit_roundoff(in().dtype) * power, "decided");
      if (before_rounding >= 0.5 * unit_roundoff(in().dtype) * power) continue;
      const double got = y.get(static_cast<std::size_t>(h));
      if (got != power)
        RC_FAIL(fmt::format("head {} of {} at b = {}: {:.17g}, not {:.17g}", h, n, b, got, power));
    }
  });
}

TEST_P(AlibiProps, BiasIsTranslationInvariantAndZeroOnTheDiagonal) {
  PE_RC_CHECK("bias(i + c, j + c) = bias(i, j) bit for bit; bias(i, i) = 0", [&] {
    AlibiParams p = *gen_params().as("params");
    if (p.form == AlibiForm::Bloom) p.form = AlibiForm::Causal;  // m·j is not a function of i - j
    const auto queries = *gen_positions(max_position(), 3).as("queries");
    auto keys = *gen_positions(max_position(), 4).as("keys");
    keys.push_back(queries[0]);
    const std::int64_t c = *rc::gen::inRange<std::int64_t>(0, max_position()).as("c");
    auto moved = [c](std::vector<std::int64_t> v) {
      for (auto& x : v) x += c;
      return v;
    };
    const TypedBuffer y = bias(p, queries, keys), shifted = bias(p, moved(queries), moved(keys));
    const std::vector<std::size_t> differing = harness::differing_elements(y, shifted);
    if (!differing.empty())
      RC_FAIL(fmt::format("element {}: {} moved by {}, {} before", differing[0], shifted.get(differing[0]), c,
                          y.get(differing[0])));
    const std::size_t K = keys.size(), Q = queries.size();
    for (std::size_t h = 0; h < static_cast<std::size_t>(p.n_heads); ++h) {
      const double diagonal = y.get((h * Q) * K + K - 1);
      if (diagonal != 0) RC_FAIL(fmt::format("head {}: bias at i = j = {} is {}", h, queries[0], diagonal));
    }
  });
}

// Linear in the distance: with every position doubled the bias doubles exactly (scaling by two
// commutes with rounding) wherever both values are normal and finite in the output type.
TEST_P(AlibiProps, DoublingThePositionsDoublesTheBias) {
  PE_RC_CHECK("bias(2i, 2j) = 2·bias(i, j)", [&] {
    const AlibiParams p = *gen_params().as("params");
    const auto queries = *gen_positions(max_position(), 3).as("queries");
    const auto keys = *gen_positions(max_position(), 4).as("keys");
    auto twice = [](std::vector<std::int64_t> v) {
      for (auto& x : v) x *= 2;
      return v;
    };
    const TypedBuffer y = bias(p, queries, keys), doubled = bias(p, twice(queries), twice(keys));
    // The smallest normal of the type: 2^-14 (float16), else far below any bias drawn here.
    const double normal = in().dtype == DType::F16 ? 0x1p-14 : 0x1p-126;
    for (std::size_t i = 0; i < y.size(); ++i) {
      const double a = y.get(i), b = doubled.get(i);
      if (std::fabs(a) < normal || !std::isfinite(b)) continue;
      if (b != 2 * a)
        RC_FAIL(fmt::format("element {}: {:.17g} at twice the positions, {:.17g} before", i, b, a));
    }
  });
}

PE_INSTANTIATE(AlibiProps, selected(Family::Alibi));

// The paper's rule evaluated from its statement, independently of AlibiPlan: n' by doubling, and
// each slope as a power of m0 or m1 at 334 bits.
ref::Real paper_slope(int n, int h, double b) {
  int n2 = 1;
  while (n2 * 2 <= n) n2 *= 2;
  const ref::Real m0 = pow(ref::Real(2), ref::Real(-b) / n2),
                  m1 = pow(ref::Real(2), ref::Real(-b) / (2 * n2));
  return h < n2 ? pow(m0, ref::Real(h + 1)) : pow(m1, ref::Real(2 * (h - n2) + 1));
}

TEST(AlibiSlopes, PaperRuleForEveryHeadCountToSixtyFourAndBeyond) {
  std::vector<int> counts;
  for (int n = 1; n <= 64; ++n) counts.push_back(n);
  for (int n : {80, 96, 100}) counts.push_back(n);
  const Variant* exact = find_variant("alibi.exact");
  ASSERT_NE(exact, nullptr);
  for (int n : counts) {
    const AlibiParams p{.n_heads = n};
    const ref::Alibi reference(p);
    std::vector<double> f64(static_cast<std::size_t>(n));
    std::vector<float> f32(static_cast<std::size_t>(n));
    alibi_slopes(*exact, AlibiPlan(p), buffer(std::span<double>(f64)));
    alibi_slopes(*exact, AlibiPlan(p), buffer(std::span<float>(f32)));
    for (int h = 0; h < n; ++h) {
      const ref::Real want = paper_slope(n, h, 8.0);
      const auto k = static_cast<std::size_t>(h);
      // pow's chain of roundings at 334 bits: 2^-320 relative covers it.
      EXPECT_LE(static_cast<double>(abs(reference.slope(k) - want) / want), 0x1p-320)
          << n << " heads, head " << h;
      EXPECT_LE(std::fabs(f64[k] - want.convert_to<double>()),
                element_budget(exact->contract(), DType::F64, 1,
                               static_cast<std::size_t>(AlibiPlan(p).power(k)), want.convert_to<double>()))
          << n << " heads, head " << h;
      // float32: the correctly rounded slope (exp2 in double is 0.51 ULP, far inside float's half ULP).
      EXPECT_EQ(f32[k], static_cast<float>(ref::round_to(want, DType::F32))) << n << " heads, head " << h;
    }
  }
}

// alibi.exact rounds once: wherever the exact bias is not within its double slope's error of a
// rounding boundary of the output type, its value is the correctly rounded one.
TEST(AlibiSlopes, ExactIsCorrectlyRoundedAwayFromTies) {
  const Variant* exact = find_variant("alibi.exact");
  ASSERT_NE(exact, nullptr);
  PE_RC_CHECK("alibi.exact = the correctly rounded bias, away from ties", [&] {
    const AlibiParams p = *gen_params().as("params");
    const DType type = *rc::gen::element(DType::F32, DType::BF16, DType::F16).as("type");
    const auto queries = *gen_positions(std::int64_t{1} << 40, 3).as("queries");
    const auto keys = *gen_positions(std::int64_t{1} << 40, 5).as("keys");
    const AlibiPlan plan(p);
    TypedBuffer y(type, plan.n_heads() * queries.size() * keys.size());
    alibi_bias(*exact, plan, queries, keys, y.view());
    const ref::Alibi reference(p);
    std::size_t i = 0;
    for (std::size_t h = 0; h < plan.n_heads(); ++h) {
      for (std::int64_t q : queries) {
        for (std::int64_t k : keys) {
          const ref::Enclosure e = reference.bias(h, q, k);
          const double got = y.get(i++), want = ref::round_to(e.value, type);
          if (got == want || std::isinf(want)) continue;
          // A tie within the double slope's error (1.02u + the exponent's 22.2u): not decided.
          const double tolerance = 24 * kU64 * std::fabs(e.value.convert_to<double>());
          const ref::Real halfway = (ref::Real(got) + ref::Real(want)) / 2;
          if (static_cast<double>(abs(e.value - halfway)) > tolerance)
            RC_FAIL(fmt::format("head {} ({}, {}): {:.9g}, correctly rounded {:.9g}", h, q, k, got, want));
        }
      }
    }
  });
}

}  // namespace
}  // namespace pe::testing

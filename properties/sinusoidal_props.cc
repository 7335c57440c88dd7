// Properties of every sinusoidal instance in the registry, each written once.

#include <limits>
#include <numeric>

#include "pe/ref/reference.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

class SinusoidalProps : public InstanceTest {
 protected:
  // dim, base and the layout, and the switches where the variant reads them.
  SinusoidalParams gen_params(std::int64_t max_dim = 4096, const std::string& tag = "") const {
    SinusoidalParams params{*gen_dim(max_dim).as(tag + "dim"), *gen_base().as(tag + "base"), in().layout};
    draw_table_switches(params, in().contract(), tag);
    return params;
  }
  // A dim whose pair count leaves a tail for every vector width, at positions that are not monotone.
  std::pair<SinusoidalParams, std::vector<std::int64_t>> gen_edge_case() const {
    const std::int64_t dim = *gen_tail_dim(3).as("edge dim");
    RC_CLASSIFY(true, tail_class(static_cast<std::size_t>(dim / 2)));
    SinusoidalParams params{dim, *gen_base().as("edge base"), in().layout};
    draw_table_switches(params, in().contract(), "edge ");
    return {params, *gen_non_monotone(max_position()).as("edge positions")};
  }
  double budget(const SinusoidalPlan& plan, std::int64_t p, std::size_t ch) const {
    const std::size_t pair = plan.layout() == Layout::Interleaved ? ch / 2 : ch % plan.n_pairs();
    return element_budget(in().contract(), in().dtype, angle_bound(p, plan.inv_freq()[pair]), pair);
  }
};

TEST_P(SinusoidalProps, AgreesWithReferenceWithinBudget) {
  PE_RC_CHECK("|PE - exact| <= budget at every sampled (position, channel)", [&] {
    // The drawn case, and the edges by construction: a tail for every vector width, not monotone.
    const std::pair<SinusoidalParams, std::vector<std::int64_t>> cases[] = {
        {gen_params(), *gen_positions(max_position(), 4).as("positions")}, gen_edge_case()};
    for (const auto& [params, positions] : cases) {
      const SinusoidalPlan plan(params);
      const TypedBuffer y = run_table(in(), plan, positions);
      RC_CLASSIFY(
          std::any_of(positions.begin(), positions.end(), [](std::int64_t p) { return p > (1 << 20); }),
          "a position > 2^20");
      harness::measure_sinusoidal(
          params, positions, y, {&in().contract(), in().dtype}, fail_over_budget(),
          {{},
           &params == &cases[0].first ? sample_channels(plan.n_pairs(), 48) : edge_pairs(plan.n_pairs())});
    }
  });
}

TEST_P(SinusoidalProps, ValuesAreFiniteAndBoundedByOne) {
  PE_RC_CHECK("every value is finite and |PE| <= 1", [&] {
    const SinusoidalPlan plan(gen_params());
    const auto positions = *gen_positions(max_position(), 8).as("positions");
    const TypedBuffer y = run_table(in(), plan, positions);
    for (std::size_t i = 0; i < y.size(); ++i) {
      RC_ASSERT(std::isfinite(y.get(i)));
      RC_ASSERT(std::fabs(y.get(i)) <= 1.0);
    }
  });
}

TEST_P(SinusoidalProps, DistinctPositionsGiveDistinctEncodings) {
  PE_RC_CHECK("p != q gives PE(p) != PE(q)", [&] {
    const SinusoidalPlan plan(gen_params());
    const std::int64_t p = *gen_position(max_position() - 1).as("p");
    const std::int64_t q =
        *rc::gen::weightedOneOf<std::int64_t>(
             {{2, rc::gen::just(p + 1)},
              {1, rc::gen::suchThat(gen_position(max_position()), [p](std::int64_t v) { return v != p; })}})
             .as("q");
    const std::vector<std::int64_t> positions = {p, q};
    const std::vector<double> y = run_table(in(), plan, positions).values();
    RC_ASSERT(!std::equal(y.begin(), y.begin() + plan.dim(), y.begin() + plan.dim()));
  });
}

// PE(p + k) = M(k)·PE(p), M(k) the block rotation by k·ω_i. Each side is within the budget of
// the exact value; a rotation keeps the 2-norm of an error, so the right side's per-component error
// is at most √2 times the worst of its pair. M(k) itself is formed in double from the reference's
// angle: <= 4·2^-53 more.
TEST_P(SinusoidalProps, OffsetActsAsBlockRotation) {
  PE_RC_CHECK("PE(p + k) = M(k)·PE(p) within the contract", [&] {
    const SinusoidalParams params = gen_params();
    const SinusoidalPlan plan(params);
    const std::int64_t k = *gen_position(max_position() / 2).as("k");
    const std::int64_t p = *gen_position(max_position() - k).as("p");
    const std::vector<std::int64_t> positions = {p, p + k};
    const std::vector<double> y = run_table(in(), plan, positions).values();
    const std::size_t d = plan.dim(), h = plan.n_pairs();
    for (std::size_t i = 0; i < h; ++i) {
      const std::size_t cs = plan.sin_index(i), cc = plan.cos_index(i);
      const double kappa = static_cast<double>(k) * plan.inv_freq()[i];
      const double ck = std::cos(kappa), sk = std::sin(kappa);
      // Rotating (sin φ, cos φ) by κ: sin(φ+κ) = sin φ cos κ + cos φ sin κ, cos(φ+κ) = cos φ cos κ - sin φ
      // sin κ.
      const double rs = y[cs] * ck + y[cc] * sk, rc = y[cc] * ck - y[cs] * sk;
      const double bp = std::max(budget(plan, p, cs), budget(plan, p, cc));
      for (const auto& [got, want, ch] : {std::tuple{y[d + cs], rs, cs}, std::tuple{y[d + cc], rc, cc}}) {
        const double tol = budget(plan, p + k, ch) + std::sqrt(2.0) * bp + 4 * kU64 * (1 + std::fabs(kappa));
        if (!(std::fabs(got - want) <= tol)) {
          RC_FAIL(fmt::format("pair {}: PE(p+k)={:.17g}, M(k)PE(p)={:.17g}, |diff| {:.3g} > {:.3g}", i, got,
                              want, std::fabs(got - want), tol));
        }
      }
    }
  });
}

// PE(p)·PE(q) = Σ_i cos((p - q)·ω_i): a function of p - q only. Each product a·b of values within
// e_a, e_b of exact values bounded by 1 moves by at most e_a + e_b (to first order, + e_a·e_b);
// the double-precision sums add d·2^-53·Σ|a·b|.
TEST_P(SinusoidalProps, InnerProductDependsOnlyOnOffset) {
  PE_RC_CHECK("PE(p)·PE(q) = sum_i cos((p - q)·w_i) within the contract", [&] {
    const SinusoidalParams params = gen_params();
    const SinusoidalPlan plan(params);
    const std::int64_t p = *gen_position(max_position()).as("p");
    const std::int64_t q = *gen_position(max_position()).as("q");
    const std::vector<std::int64_t> positions = {p, q};
    const std::vector<double> y = run_table(in(), plan, positions).values();
    const std::int64_t offset = std::max(p, q) - std::min(p, q);
    const std::size_t d = plan.dim();
    double dot = 0, abs_dot = 0, tol = 0, want = 0;
    for (std::size_t ch = 0; ch < d; ++ch) {
      dot += y[ch] * y[d + ch];
      abs_dot += std::fabs(y[ch] * y[d + ch]);
      const double ep = budget(plan, p, ch), eq = budget(plan, q, ch);
      tol += ep + eq + ep * eq;
    }
    for (std::size_t i = 0; i < plan.n_pairs(); ++i) {
      // cos of the offset's angle in double: the angle within 2.03·2^-53·|φ|, cos within 1 ULP.
      const double phi = static_cast<double>(offset) * plan.inv_freq()[i];
      want += std::cos(phi);
      tol += kU64 * (1 + 2.03 * std::fabs(phi));
    }
    tol += 2 * static_cast<double>(d) * kU64 * (abs_dot + static_cast<double>(d));
    if (!(std::fabs(dot - want) <= tol)) {
      RC_FAIL(fmt::format("PE(p)·PE(q) = {:.17g}, sum cos = {:.17g}, |diff| {:.3g} > {:.3g}", dot, want,
                          std::fabs(dot - want), tol));
    }
  });
}

TEST_P(SinusoidalProps, FusedAddMatchesReferenceAndLeavesPaddingUntouched) {
  PE_RC_CHECK("emb + PE within the contract; padded rows bit-for-bit unchanged", [&] {
    // The drawn case, and the edge case with a padded and an unpadded row at least.
    const std::pair<SinusoidalParams, std::vector<std::int64_t>> cases[] = {
        {gen_params(512), *gen_positions(max_position(), 4).as("positions")}, gen_edge_case()};
    for (const auto& [params, positions] : cases) {
      const bool edge = &params == &cases[1].first;
      const SinusoidalPlan plan(params);
      const auto emb = *gen_values(in().dtype, in().contract().max_input_abs, positions.size() * plan.dim())
                            .as("embeddings");
      auto padding = *rc::gen::container<std::vector<std::uint8_t>>(positions.size(),
                                                                    rc::gen::element<std::uint8_t>(0, 0, 1))
                          .as("padding");
      if (edge) padding[0] = 1, padding[1] = 0;
      TypedBuffer y = buffer_of(in().dtype, emb);
      const TypedBuffer before = y;
      sinusoidal_add(*in().variant, plan, positions, y.view(), padding);
      const ref::Sinusoidal exact(params, *std::max_element(positions.begin(), positions.end()));
      const std::size_t d = plan.dim(), width = size_of(in().dtype) * d;
      for (std::size_t r = 0; r < positions.size(); ++r) {
        if (padding[r]) {
          const auto was = before.bytes(), now = y.bytes();
          const auto from = static_cast<std::ptrdiff_t>(r * width),
                     to = static_cast<std::ptrdiff_t>((r + 1) * width);
          RC_ASSERT(std::equal(was.begin() + from, was.begin() + to, now.begin() + from));
          continue;
        }
        std::vector<std::size_t> channels = sample_channels(d);
        if (edge) {
          channels.clear();
          for (std::size_t j : edge_pairs(plan.n_pairs())) {
            channels.push_back(plan.sin_index(j));
            channels.push_back(plan.cos_index(j));
          }
        }
        for (std::size_t ch : channels) {
          const std::size_t i = r * d + ch;
          const ref::Real want = ref::Real(emb[i]) + exact.exact(positions[r], ch).value;
          const double err = ref::abs_error(y.get(i), want);
          const double tol =
              budget(plan, positions[r], ch) + add_budget(in().contract(), in().dtype, std::fabs(emb[i]));
          if (!(err <= tol)) {
            RC_FAIL(fmt::format("row {} channel {}: emb {:.17g} + PE -> {:.17g}, error {:.3g} > {:.3g}", r,
                                ch, emb[i], y.get(i), err, tol));
          }
        }
      }
    }
  });
}

TEST_P(SinusoidalProps, PositionZeroIsExactlySinZeroCosOne) {
  for (std::int64_t dim : {2, 48, 128, 4096}) {
    const SinusoidalPlan plan({dim, 10000.0, in().layout});
    const std::vector<std::int64_t> zero = {0};
    const std::vector<double> y = run_table(in(), plan, zero).values();
    for (std::size_t ch = 0; ch < plan.dim(); ++ch) {
      const bool is_cos = in().layout == Layout::Interleaved ? ch % 2 == 1 : ch >= plan.n_pairs();
      ASSERT_EQ(y[ch], is_cos ? 1.0 : 0.0) << "dim " << dim << " channel " << ch;
    }
  }
}

PE_INSTANTIATE(SinusoidalProps, selected(Family::Sinusoidal));

}  // namespace
}  // namespace pe::testing

// Properties of the table at real positions (sinusoidal_table_at: diffusion timesteps, a scale, an odd dim,
// flip and shift) over every sinusoidal instance whose contract reads the forms (every Highway target is an
// instance of its own):
//   (a) at integer positions table_at gives table's bits;
//   (b) within the contract of the exact reference at float32 timesteps;
//   (c) the timestep embedding is continuous (close timesteps, close rows) and periodic in each pair (a
//       whole number of the pair's periods apart, the same pair) within the budgets.

#include <cstring>
#include <limits>

#include "pe/ref/reference.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

TypedBuffer run_table_at(const Instance& in, const SinusoidalPlan& plan, const std::vector<double>& t) {
  TypedBuffer y(in.dtype, t.size() * plan.dim());
  sinusoidal_table_at(*in.variant, plan, t, y.view());
  return y;
}

// A float32 timestep t·1000 with t in [0, 1) on a 2^-24 grid (a sampler's draw as a float32 tensor holds it).
rc::Gen<double> gen_timestep() {
  return rc::gen::map(rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 24), [](std::int64_t k) {
    return static_cast<double>(static_cast<float>(static_cast<double>(k) * 0x1p-24 * 1000.0));
  });
}

// 1 (the paper's), 1000 (diffusers' scale on t in [0, 1)) or a drawn finite value, |scale| in [2^-8, 2^4),
// either sign.
rc::Gen<double> gen_scale() {
  const auto drawn = rc::gen::map(
      rc::gen::tuple(rc::gen::inRange<std::int64_t>(std::int64_t{1} << 52, std::int64_t{1} << 53),
                     rc::gen::inRange(-8, 4), rc::gen::arbitrary<bool>()),
      [](const std::tuple<std::int64_t, int, bool>& m) {
        const double v = std::ldexp(static_cast<double>(std::get<0>(m)), std::get<1>(m) - 52);
        return std::get<2>(m) ? -v : v;
      });
  return rc::gen::weightedOneOf<double>({{2, rc::gen::just(1.0)}, {2, rc::gen::just(1000.0)}, {3, drawn}});
}

// The drawn table: dim even or odd (its last channel a pad), the base, flip and shift, the scale.
SinusoidalParams gen_params(const Instance& in) {
  SinusoidalParams p{*gen_dim(256).as("even dim") + (*rc::gen::arbitrary<bool>().as("odd") ? 1 : 0),
                     *gen_base().as("base"), in.layout};
  draw_table_switches(p, in.contract());
  p.scale = *gen_scale().as("scale");
  RC_CLASSIFY(p.dim % 2 == 1, "odd dim");
  RC_CLASSIFY(p.scale != 1, "scaled");
  return p;
}

// Timesteps on the scale's convention: t in [0, 1) under scale 1000 (|scale·t| < 1000 either way).
std::vector<double> gen_timesteps(double scale, std::size_t most) {
  std::vector<double> t = *rc::gen::container<std::vector<double>>(
                               *rc::gen::inRange<std::size_t>(1, most + 1).as("rows"), gen_timestep())
                               .as("timesteps");
  if (scale == 1000.0) {
    for (double& x : t) x = static_cast<double>(static_cast<float>(x / 1000));
  }
  return t;
}

// An upper bound on the exact |φ| = |scale·t·ω| from the plan's ω (1.02·2^-53) and two roundings.
double real_angle_bound(double scale, double t, double omega) {
  return std::fabs(scale * t * omega) * (1 + 0x1p-49);
}

class RealPositionProps : public InstanceTest {
 protected:
  double budget(const SinusoidalPlan& plan, double t, std::size_t i) const {
    // Real positions (table_at): the contract's c1_scale is charged.
    return table_element_budget(in().contract(), in().dtype,
                                real_angle_bound(plan.scale(), t, plan.inv_freq()[i]), i,
                                std::fabs(plan.scale()));
  }
};

// (a) Every variant computes a row from its position as a double (an integer one converted exactly), so table
// and table_at at the same integer positions give the same bits: the pairwise rules, Highway's and Eigen's
// angle are the same function of that double. The exact phase advances consecutive rows instead (state_rows):
// there only rows computed directly compare, so no two drawn positions here are consecutive (its table_at
// takes the integer path's DirectSinCos for an integral scale·t). A scale changes neither claim.
TEST_P(RealPositionProps, TableAtIntegerPositionsIsTableBitForBit) {
  PE_RC_CHECK("table_at(double(p)) == table(p), bit for bit", [&] {
    const SinusoidalParams p = gen_params(in());
    const SinusoidalPlan plan(p);
    const std::int64_t reach = std::min<std::int64_t>(
        max_position(), static_cast<std::int64_t>(static_cast<double>(max_position()) / std::fabs(p.scale)));
    std::vector<std::int64_t> drawn = *gen_positions(std::max<std::int64_t>(reach, 1), 12).as("positions");
    std::vector<std::int64_t> positions;
    for (const std::int64_t x : drawn) {
      if (positions.empty() || x != positions.back() + 1) positions.push_back(x);
    }
    const std::vector<double> real(positions.begin(), positions.end());
    const TypedBuffer a = run_table(in(), plan, positions), b = run_table_at(in(), plan, real);
    const std::vector<unsigned char> ab = a.bytes(), bb = b.bytes();
    const std::size_t w = size_of(in().dtype), d = plan.dim();
    for (std::size_t e = 0; e < positions.size() * d; ++e) {
      if (std::memcmp(ab.data() + e * w, bb.data() + e * w, w) != 0) {
        RC_FAIL(fmt::format("row {} (position {}) channel {}: table {:.9g}, table_at {:.9g}", e / d,
                            positions[e / d], e % d, a.get(e), b.get(e)));
      }
    }
  });
}

// (b) Each element within the contract's budget of the exact value at |φ| = |scale·t·ω_i| (the reference
// correctly rounded to double: 2^-53·|exact| more), the pad channel exactly 0.
TEST_P(RealPositionProps, WithinContractAtRealTimesteps) {
  PE_RC_CHECK("|table_at(t) - exact| <= budget(|scale·t·ω|)", [&] {
    const SinusoidalParams p = gen_params(in());
    const SinusoidalPlan plan(p);
    const std::vector<double> t = gen_timesteps(p.scale, 6);
    const TypedBuffer y = run_table_at(in(), plan, t);
    const ref::Sinusoidal reference(p, ref::RealPosition{1000.0});
    for (std::size_t r = 0; r < t.size(); ++r) {
      for (const std::size_t ch : sample_channels(plan.dim())) {
        const double got = y.get(r * plan.dim() + ch);
        if (reference.is_pad(ch)) {
          if (got != 0.0) RC_FAIL(fmt::format("row {} pad channel {}: {:.9g}, not 0", r, ch, got));
          continue;
        }
        const double exact = reference.rounded(ref::RealPosition{t[r]}, ch, DType::F64);
        const double tol = budget(plan, t[r], reference.pair_of(ch)) + 0x1p-53 * std::fabs(exact);
        if (!(std::fabs(got - exact) <= tol)) {
          RC_FAIL(fmt::format(
              "t {} (scale {}) channel {}: got {:.9g}, exact {:.9g}, error {:.3g} > budget {:.3g}", t[r],
              p.scale, ch, got, exact, std::fabs(got - exact), tol));
        }
      }
    }
  });
}

// (c) Continuity: sin and cos are 1-Lipschitz, so at t and t' each exact element moves by at most
// |scale|·ω_i·|t - t'|; the computed ones add their two budgets. The bound's own arithmetic (ω's 1.02·2^-53,
// |t - t'| and the products rounded) is covered by the factor 1 + 2^-48.
TEST_P(RealPositionProps, ContinuousInTheTimestep) {
  PE_RC_CHECK("|y(t) - y(t')| <= |scale|·ω_i·|t - t'| + budget(t) + budget(t')", [&] {
    const SinusoidalParams p = gen_params(in());
    const SinusoidalPlan plan(p);
    const double t = *gen_timestep().as("t") / (p.scale == 1000.0 ? 1000 : 1);
    const double step = static_cast<double>(*rc::gen::inRange(1, 65).as("step / 2^-12")) * 0x1p-12;
    const std::vector<double> at = {t, t + step};
    const TypedBuffer y = run_table_at(in(), plan, at);
    const double apart = std::fabs(at[1] - at[0]);
    for (std::size_t i = 0; i < plan.n_pairs(); ++i) {
      const double moves = std::fabs(p.scale) * plan.inv_freq()[i] * apart * (1 + 0x1p-48);
      const double tol = moves + budget(plan, at[0], i) + budget(plan, at[1], i);
      for (const std::size_t ch : {plan.sin_index(i), plan.cos_index(i)}) {
        const double a = y.get(ch), b = y.get(plan.dim() + ch);
        if (!(std::fabs(a - b) <= tol)) {
          RC_FAIL(fmt::format("pair {} channel {}: y({}) {:.9g}, y({}) {:.9g}, |diff| {:.3g} > {:.3g}", i, ch,
                              at[0], a, at[1], b, std::fabs(a - b), tol));
        }
      }
    }
  });
}

// (c) Periodicity: pair i at t and at t2 = t + k·2π/(|scale|·ω_i) rounded to double has the same exact value
// but for the rounding: the angles differ by 2πk + scale·ω_i·ρ, ρ = t2 - t - k·2π/(|scale|·ω_i) formed in
// long double (t2 - t exact there; the period's long-double rounding, 2^-63 relative, and ω_i's 1.02·2^-53
// move the angle by < 2πk·2^-51, added). So |y(t) - y(t2)| <= |scale|·ω_i·|ρ| + 2πk·2^-51 + both budgets.
// Pairs whose t2 leaves the contract's reach (|scale·t2| <= max_position) are skipped.
TEST_P(RealPositionProps, PeriodicInEachPair) {
  PE_RC_CHECK("pair i at t and t + k·2π/(scale·ω_i) agree within both budgets", [&] {
    const SinusoidalParams p = gen_params(in());
    const SinusoidalPlan plan(p);
    const double t = *gen_timestep().as("t") / (p.scale == 1000.0 ? 1000 : 1);
    const int k = *rc::gen::inRange(1, 4).as("periods");
    constexpr long double kTwoPi = 6.283185307179586476925286766559L;
    for (const std::size_t i : edge_pairs(plan.n_pairs())) {
      const long double omega = plan.inv_freq()[i];
      const long double period = k * kTwoPi / (std::fabs(static_cast<long double>(p.scale)) * omega);
      const double t2 = static_cast<double>(static_cast<long double>(t) + period);
      if (!(std::fabs(p.scale * t2) <= static_cast<double>(max_position()))) continue;
      const long double rho = (static_cast<long double>(t2) - t) - period;
      const double drift =
          static_cast<double>(std::fabs(static_cast<long double>(p.scale) * omega * rho)) * (1 + 0x1p-48) +
          k * 6.2832 * 0x1p-51;
      const TypedBuffer y = run_table_at(in(), plan, {t, t2});
      const double tol = drift + budget(plan, t, i) + budget(plan, t2, i);
      for (const std::size_t ch : {plan.sin_index(i), plan.cos_index(i)}) {
        const double a = y.get(ch), b = y.get(plan.dim() + ch);
        if (!(std::fabs(a - b) <= tol)) {
          RC_FAIL(fmt::format(
              "pair {} channel {}: y({}) {:.9g}, y({}) {:.9g} ({} periods), |diff| {:.3g} > {:.3g}", i, ch, t,
              a, t2, b, k, std::fabs(a - b), tol));
        }
      }
    }
  });
}

PE_INSTANTIATE(RealPositionProps, table_form_instances());

}  // namespace
}  // namespace pe::testing

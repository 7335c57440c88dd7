// Properties of the table switches (flip_sin_to_cos, downscale_freq_shift) over every sinusoidal instance
// whose contract reads them, and of the plan's frequencies under a shift.

#include <cstring>

#include "pe/ref/reference.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

class TableSwitchProps : public InstanceTest {};

// flip_sin_to_cos only moves values: the flipped table holds, bit for bit, the unflipped one's sin of each
// pair where that one holds its cos and the reverse. A variant that ignores the flip (or computes the
// flipped pair by another path that rounds differently) fails at the first pair.
TEST_P(TableSwitchProps, FlipSwapsEachPairsChannelsBitForBit) {
  PE_RC_CHECK("table(flip)[sin_index'(i)] == table[sin_index(i)] and the same for cos, bit for bit", [&] {
    SinusoidalParams params{*gen_dim(1024).as("dim"), *gen_base().as("base"), in().layout};
    draw_table_switches(params, in().contract());
    params.flip_sin_to_cos = false;
    SinusoidalParams flipped = params;
    flipped.flip_sin_to_cos = true;
    const SinusoidalPlan plan(params), flipped_plan(flipped);
    // A run of consecutive positions (past a refresh interval at times) and what follows it: stateful
    // variants store advanced rows, in vectors, as well as direct ones.
    const PositionKind then = *gen_position_kind().as("then");
    const auto positions = *gen_run_then(then, max_position(), 2, 300).as("positions");
    const TypedBuffer a = run_table(in(), plan, positions), b = run_table(in(), flipped_plan, positions);
    const std::vector<unsigned char> ab = a.bytes(), bb = b.bytes();
    const std::size_t width = size_of(in().dtype), d = plan.dim();
    const auto same = [&](std::size_t r, std::size_t ch_a, std::size_t ch_b) {
      return std::memcmp(ab.data() + (r * d + ch_a) * width, bb.data() + (r * d + ch_b) * width, width) == 0;
    };
    for (std::size_t r = 0; r < positions.size(); ++r) {
      for (std::size_t i = 0; i < plan.n_pairs(); ++i) {
        if (!same(r, plan.sin_index(i), flipped_plan.sin_index(i)) ||
            !same(r, plan.cos_index(i), flipped_plan.cos_index(i))) {
          RC_FAIL(fmt::format(
              "row {} (position {}) pair {}: unflipped (sin {:.9g}, cos {:.9g}), flipped "
              "(sin {:.9g}, cos {:.9g}) at its channels",
              r, positions[r], i, a.get(r * d + plan.sin_index(i)), a.get(r * d + plan.cos_index(i)),
              b.get(r * d + flipped_plan.sin_index(i)), b.get(r * d + flipped_plan.cos_index(i))));
        }
      }
    }
  });
}

// downscale_freq_shift s changes only the frequencies: pair i of the table at (d, s) and pair i of the table
// at (d - 2s, 0) (integer s) have the same exact value sin/cos(p·base^(-2i/(d - 2s))), so each lies within
// its own budget of it and the two within the sum. A variant that ignores the shift computes
// base^(-2i/d) instead: a relative change of 2i·s·ln(base)/(d·(d - 2s)) in ω, far beyond the budgets
// at the large positions drawn.
TEST_P(TableSwitchProps, ShiftChangesOnlyTheFrequencies) {
  PE_RC_CHECK("pair i at (d, s) == pair i at (d - 2s, 0) within both budgets", [&] {
    // Shifts the contract covers (Contract::max_freq_shift; the API refuses the others).
    const auto most = std::min<std::int64_t>(3, static_cast<std::int64_t>(in().contract().max_freq_shift));
    const std::int64_t s =
        *rc::gen::inRange<std::int64_t>(1, std::max<std::int64_t>(most, 1) + 1).as("shift");
    const std::int64_t dim = 2 * s + *gen_dim(1024).as("dim - 2s");
    SinusoidalParams shifted{dim, *gen_base().as("base"), in().layout};
    shifted.flip_sin_to_cos = *rc::gen::arbitrary<bool>().as("flip_sin_to_cos");
    shifted.downscale_freq_shift = static_cast<double>(s);
    SinusoidalParams narrow = shifted;
    narrow.dim = dim - 2 * s;
    narrow.downscale_freq_shift = 0;
    const SinusoidalPlan plan(shifted), narrow_plan(narrow);
    const auto positions = *gen_positions(max_position(), 4).as("positions");
    const std::vector<double> a = run_table(in(), plan, positions).values();
    const std::vector<double> b = run_table(in(), narrow_plan, positions).values();
    const auto budget = [&](const SinusoidalPlan& pl, std::int64_t p, std::size_t i) {
      return element_budget(in().contract(), in().dtype, angle_bound(p, pl.inv_freq()[i]), i);
    };
    for (std::size_t r = 0; r < positions.size(); ++r) {
      for (std::size_t i = 0; i < narrow_plan.n_pairs(); ++i) {
        const double tol = budget(plan, positions[r], i) + budget(narrow_plan, positions[r], i);
        for (const auto& [ca, cb] : {std::pair{plan.sin_index(i), narrow_plan.sin_index(i)},
                                     std::pair{plan.cos_index(i), narrow_plan.cos_index(i)}}) {
          const double ya = a[r * plan.dim() + ca], yb = b[r * narrow_plan.dim() + cb];
          if (!(std::fabs(ya - yb) <= tol)) {
            RC_FAIL(fmt::format(
                "position {} pair {}: (d {}, s {}) {:.9g}, (d {}, s 0) {:.9g}, |diff| {:.3g} > {:.3g}",
                positions[r], i, dim, s, ya, dim - 2 * s, yb, std::fabs(ya - yb), tol));
          }
        }
      }
    }
  });
}

PE_INSTANTIATE(TableSwitchProps, table_form_instances());

// The plan's frequencies under an integer shift s are the unshifted plan's of dim d - 2s, bit for bit (ω_i
// and its turn step depend on i and d' only), for every pair that plan has; the pairs beyond continue the
// ladder (ω_i decreasing, below 1). The exact ω_i = base^(-2i/d') is checked against MPFR by the reference's
// own tests; here the identity of the two plans.
TEST(TableSwitchPlan, ShiftedPlanHasTheNarrowPlansFrequencies) {
  PE_RC_CHECK("plan(d, s).inv_freq()[i] == plan(d - 2s, 0).inv_freq()[i], i < d/2 - s", [] {
    const std::int64_t s = *rc::gen::inRange<std::int64_t>(1, 5).as("shift");
    const std::int64_t narrow_dim = *gen_dim(4096).as("d - 2s");
    const double base = *gen_base().as("base");
    SinusoidalParams shifted{narrow_dim + 2 * s, base, Layout::Concatenated};
    shifted.downscale_freq_shift = static_cast<double>(s);
    const SinusoidalPlan plan(shifted), narrow({narrow_dim, base, Layout::Concatenated});
    RC_ASSERT(plan.frequency_dim() == static_cast<std::size_t>(narrow_dim));
    RC_ASSERT(plan.n_pairs() == narrow.n_pairs() + static_cast<std::size_t>(s));
    for (std::size_t i = 0; i < narrow.n_pairs(); ++i) {
      RC_ASSERT(plan.inv_freq()[i] == narrow.inv_freq()[i]);
      RC_ASSERT(plan.turn_steps().step[i] == narrow.turn_steps().step[i]);
    }
    for (std::size_t i = 1; i < plan.n_pairs(); ++i) RC_ASSERT(plan.inv_freq()[i] < plan.inv_freq()[i - 1]);
  });
}

}  // namespace
}  // namespace pe::testing

// The engines' readings of HF's rope types (pe/rope_scaling.h): Gemma 4's proportional, whose pairs past
// int(F·d // 2) turn by 0 and so pass through every variant bit for bit; dynamic NTK's static table (vLLM,
// SGLang), which is the live one (HF) where the sequence is the table's length; Hunyuan's alpha, which is
// NTK-aware's base at factor alpha.

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <utility>

#include "pe/ref/reference.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

using T = RopeScalingType;

// A whole-head plan at the instance's layout (proportional turns the whole head).
RopeParams types_whole_head(Layout layout, std::int64_t min_dim) {
  const std::int64_t head_dim = std::max(*gen_dim(256).as("head_dim"), min_dim);
  return {head_dim, head_dim, *gen_base().as("base"), layout};
}

class RopeTypesProps : public InstanceTest {};

// Proportional: a pair past the rotating ones has frequency 0 exactly, so whatever the variant computes
// (cos 0 = 1, sin 0 = 0, a turn step of 0, a recurrence that never moves) leaves its two channels as given,
// bit for bit at any position, but for a zero's sign: x·1 - y·0 is +0 for x = -0 and y < 0, in HF's own
// formula as in every variant; the rotating pairs stay within the contract (the census's business).
TEST_P(RopeTypesProps, ProportionalStillPairsPassThroughBitForBit) {
  PE_RC_CHECK("proportional: every channel of a pair at or past int(F·d // 2) is the input's bits", [&] {
    RopeParams params = types_whole_head(in().layout, 4);
    params.scaling.type = T::Proportional;
    params.scaling.partial_rotary_factor = *rc::gen::element(0.25, 0.5, 0.3, 0.75, 0.1).as("F");
    params.scaling.factor = *rc::gen::element(1.0, 1.0, 4.0, 0.5).as("factor");
    const std::int64_t rotating = proportional_pairs(params.scaling, params.head_dim);
    RC_PRE(rotating >= 1);
    const RopePlan plan(params);
    const auto positions = *gen_positions(in().contract().max_position, 3).as("positions");
    const auto x = *gen_values(in().dtype, 1e6, positions.size() * plan.head_dim()).as("x");
    TypedBuffer y = buffer_of(in().dtype, x);
    const std::vector<double> given = y.values();  // x as the dtype holds it
    run_rope(in(), plan, positions, 1, y);
    const std::vector<double> out = y.values();
    for (std::size_t t = 0; t < positions.size(); ++t) {
      const std::size_t row = t * plan.head_dim();
      for (auto j = static_cast<std::size_t>(rotating); j < plan.n_pairs(); ++j) {
        RC_ASSERT(plan.inv_freq()[j] == 0.0);
        const auto [i0, i1] = plan.input_channels(j);
        const auto [o0, o1] = plan.output_channels(j);
        for (const auto& [o, i] : {std::pair{o0, i0}, std::pair{o1, i1}}) {
          const double a = out[row + o], b = given[row + i];
          const bool same =
              b == 0 ? a == 0 : std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
          RC_ASSERT(same);
        }
      }
    }
  });
}

PE_INSTANTIATE(RopeTypesProps, selected(Family::Rope));

// HF's _compute_proportional_rope_parameters: pair j < int(F·d // 2) at base^(-2j/d) / factor (the unscaled
// plan's frequency over the same d, divided by the factor), every other pair at 0; the reference agrees.
TEST(RopeTypes, ProportionalIsTheUnscaledHeadCutAfterItsRotatingPairs) {
  PE_RC_CHECK("proportional θ_j = θ_j(d)/s for j < int(F·d // 2), 0 past", [] {
    RopeParams params = types_whole_head(Layout::HalfSplit, 4);
    const RopePlan plain(params);
    params.scaling.type = T::Proportional;
    params.scaling.partial_rotary_factor = *rc::gen::element(0.25, 0.5, 1.0, 0.4).as("F");
    params.scaling.factor = *rc::gen::element(1.0, 2.0, 8.0).as("factor");
    const auto rotating = static_cast<std::size_t>(proportional_pairs(params.scaling, params.head_dim));
    RC_PRE(rotating >= 1);
    const RopePlan plan(params);
    const ref::Rope exact(params, 1000);
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      if (j >= rotating) {
        RC_ASSERT(plan.inv_freq()[j] == 0.0);
        RC_ASSERT(exact.angle(1000, j) == 0.0);
        continue;
      }
      // One division of the unscaled ω (itself within 2^-52 relative of the exact one) by s.
      const double w = plain.inv_freq()[j] / params.scaling.factor;
      RC_ASSERT(std::fabs(plan.inv_freq()[j] - w) <= 0x1p-51 * w);
      RC_ASSERT(std::fabs(exact.angle(1000, j) - 1000 * w) <= 0x1p-49 * 1000 * w);
    }
  });
}

// vLLM's static table is built at n = factor·L; HF's live length gives the same base where seq_len is that
// n. With L a power of two and s a multiple of 1/16, (n - L)/L = s - 1 exactly, so both inner terms
// (1 + s·(n - L)/L and 1 + s·(s - 1)) are the same number: plans and reference bit for bit.
TEST(RopeTypes, StaticAndLiveDynamicAgreeWhereTheSequenceIsTheTablesLength) {
  PE_RC_CHECK("dynamic static == live at seq_len = factor·L", [] {
    RopeParams live = types_whole_head(Layout::HalfSplit, 4);
    const std::int64_t L = std::int64_t{1} << *rc::gen::inRange(8, 17).as("log2 L");
    const double s = *rc::gen::inRange(16, 129).as("16·factor") / 16.0;
    live.scaling.type = T::Dynamic;
    live.scaling.factor = s;
    live.scaling.original_max_position = L;
    live.scaling.seq_len = static_cast<std::int64_t>(s * static_cast<double>(L));
    RopeParams fixed = live;
    fixed.scaling.dynamic_semantics = DynamicSemantics::Static;
    fixed.scaling.seq_len = *rc::gen::inRange<std::int64_t>(0, 4 * L).as("seq_len (unread)");
    const RopePlan a(live), b(fixed);
    RC_ASSERT(a.effective_base() == b.effective_base());
    for (std::size_t j = 0; j < a.n_pairs(); ++j) RC_ASSERT(a.inv_freq()[j] == b.inv_freq()[j]);
    const ref::Rope ra(live, L), rb(fixed, L);
    for (std::size_t j = 0; j < a.n_pairs(); ++j) RC_ASSERT(ra.angle(L, j) == rb.angle(L, j));
    // Below factor·L the live base is smaller (n = max(seq_len, L) < s·L): the readings differ there.
    if (s > 1) {
      RopeParams shorter = live;
      shorter.scaling.seq_len = live.scaling.seq_len - 1;
      RC_ASSERT(RopePlan(shorter).effective_base() < b.effective_base());
    }
  });
}

// vLLM's DynamicNTKAlphaRotaryEmbedding: base·alpha^(d/(d-2)), NTK-aware's base at factor alpha, whatever
// the length.
TEST(RopeTypes, DynamicAlphaIsNtkBaseAtAlphaForAnyLength) {
  PE_RC_CHECK("dynamic alpha a == ntk factor a", [] {
    RopeParams alpha = types_whole_head(Layout::HalfSplit, 4);
    const double a = *rc::gen::element(2.0, 8.0, 32.0, 1.5).as("alpha");
    RopeParams ntk = alpha;
    ntk.scaling.type = T::Ntk;
    ntk.scaling.factor = a;
    alpha.scaling.type = T::Dynamic;
    alpha.scaling.alpha = a;
    alpha.scaling.seq_len = *rc::gen::inRange<std::int64_t>(0, 1 << 20).as("seq_len (unread)");
    alpha.scaling.dynamic_semantics = *rc::gen::element(DynamicSemantics::Live, DynamicSemantics::Static);
    const RopePlan p(alpha), q(ntk);
    RC_ASSERT(p.effective_base() == q.effective_base());
    for (std::size_t j = 0; j < p.n_pairs(); ++j) RC_ASSERT(p.inv_freq()[j] == q.inv_freq()[j]);
  });
}

// Validation names the parameter: F outside (0, 1] or leaving no pair, alpha <= 0.
TEST(RopeTypes, InvalidValuesAreRejectedByName) {
  const auto rejects = [](const RopeScaling& s, const char* name) {
    RopeParams p{64, 64, 10000.0, Layout::HalfSplit, s};
    try {
      const RopePlan plan(p);
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(e.parameter(), name) << e.what();
      return;
    }
    ADD_FAILURE() << name << " accepted";
  };
  for (const double f : {0.0, -0.5, 1.5, 0.01}) {
    RopeScaling s;
    s.type = T::Proportional;
    s.partial_rotary_factor = f;
    rejects(s, "partial_rotary_factor");
  }
  for (const double a : {0.0, -2.0}) {
    RopeScaling s;
    s.type = T::Dynamic;
    s.alpha = a;
    rejects(s, "alpha");
  }
}

}  // namespace
}  // namespace pe::testing

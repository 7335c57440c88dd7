// The kept RopePlans (src/plan_cache.h): a plan copied from the cache has the bits of one built afresh, for
// every scaling method and rotary form; parameters that differ in any field are different keys; invalid
// parameters throw on every call; threads building the same plan at once all get it; a plan built on a ladder
// another plan kept is the one built afresh, and the ladders' key holds all that a ladder depends on.
#include "plan_cache.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <thread>

#include "pe/errors.h"

namespace pe {
namespace {

std::vector<RopeParams> plan_cache_cases() {
  std::vector<RopeParams> out;
  out.push_back({128, 0, 10000.0, Layout::HalfSplit});
  out.push_back({64, 32, 500000.0, Layout::Interleaved, {}, 16});
  RopeParams yarn{128, 0, 10000.0, Layout::HalfSplit};
  yarn.scaling.type = RopeScalingType::Yarn;
  yarn.scaling.factor = 4;
  yarn.scaling.original_max_position = 4096;
  yarn.scaling.truncate = false;
  yarn.scaling.mscale = 0.707;
  out.push_back(yarn);
  RopeParams llama3{128, 0, 500000.0, Layout::HalfSplit};
  llama3.scaling.type = RopeScalingType::Llama3;
  llama3.scaling.factor = 8;
  llama3.scaling.original_max_position = 8192;
  out.push_back(llama3);
  RopeParams longrope{8, 0, 10000.0, Layout::HalfSplit};
  longrope.scaling.type = RopeScalingType::LongRope;
  longrope.scaling.factor = 32;
  longrope.scaling.original_max_position = 4096;
  longrope.scaling.seq_len = 8192;
  longrope.scaling.short_factor = {1, 1.5, 2, 3};
  longrope.scaling.long_factor = {1, 2, 4, 8};
  out.push_back(longrope);
  RopeParams dynamic{64, 0, 10000.0, Layout::HalfSplit};
  dynamic.scaling.type = RopeScalingType::Dynamic;
  dynamic.scaling.factor = 2;
  dynamic.scaling.original_max_position = 2048;
  dynamic.scaling.seq_len = 5000;
  out.push_back(dynamic);
  RopeParams mrope{128, 0, 1000000.0, Layout::HalfSplit};
  mrope.form.mrope_section = {16, 24, 24};
  out.push_back(mrope);
  RopeParams vision{64, 0, 10000.0, Layout::Interleaved};
  vision.form.vision = VisionRope::Qwen2vl;
  out.push_back(vision);
  RopeParams axial{128, 0, 10000.0, Layout::Interleaved};  // Flux's EmbedND
  axial.form.axes_dim = {16, 56, 56};
  out.push_back(axial);
  return out;
}

template <class T>
bool same_bits(std::span<const T> a, std::span<const T> b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size_bytes()) == 0);
}

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_same_plan(const RopePlan& a, const RopePlan& b) {
  EXPECT_EQ(detail::rope_plan_key(a.params()), detail::rope_plan_key(b.params()));
  EXPECT_TRUE(same_bits(a.inv_freq(), b.inv_freq()));
  EXPECT_TRUE(same_bits(a.gain(), b.gain()));
  EXPECT_TRUE(same_bits<std::uint64_t>(a.turn_steps().step, b.turn_steps().step));
  EXPECT_TRUE(same_bits<double>(a.turn_steps().cos_step, b.turn_steps().cos_step));
  EXPECT_TRUE(same_bits<double>(a.turn_steps().sin_step, b.turn_steps().sin_step));
  EXPECT_TRUE(same_bits(a.effective_base(), b.effective_base()));
  EXPECT_TRUE(same_bits(a.attention_factor(), b.attention_factor()));
  EXPECT_TRUE(same_bits(a.frequency_error(), b.frequency_error()));
  ASSERT_EQ(a.n_axes(), b.n_axes());
  ASSERT_EQ(a.n_pairs(), b.n_pairs());
  for (std::size_t j = 0; j < a.n_pairs(); ++j) {
    EXPECT_EQ(a.axis_of_pair(j), b.axis_of_pair(j)) << "pair " << j;
    EXPECT_EQ(a.axis_run(j), b.axis_run(j)) << "pair " << j;
  }
}

TEST(PlanCache, KeptPlanHasTheBitsOfAFreshOne) {
  for (const RopeParams& p : plan_cache_cases()) {
    const RopePlan first(p), kept(p);
    ASSERT_NE(detail::kept_rope_plan(detail::rope_plan_key(p)), nullptr);
    detail::forget_rope_plans();
    ASSERT_EQ(detail::kept_rope_plan(detail::rope_plan_key(p)), nullptr);
    const RopePlan fresh(p);
    expect_same_plan(kept, fresh);
    expect_same_plan(first, fresh);
  }
}

TEST(PlanCache, EveryFieldIsInTheKey) {
  const RopeParams base = plan_cache_cases()[2];  // YaRN, with an mscale
  std::vector<RopeParams> changed(20, base);
  changed[0].head_dim = 64;
  changed[1].rotary_dim = 64;
  changed[2].base = 10000.000000000002;
  changed[3].layout = Layout::Interleaved;
  changed[4].rotary_offset = 2;
  changed[5].scaling.type = RopeScalingType::Linear;
  changed[6].scaling.factor = 4.5;
  changed[7].scaling.original_max_position = 2048;
  changed[8].scaling.seq_len = 1;
  changed[9].scaling.beta_fast = 16;
  changed[10].scaling.beta_slow = 2;
  changed[11].scaling.truncate = true;
  changed[12].scaling.mscale.reset();
  changed[13].scaling.mscale_all_dim = 1.0;
  changed[14].scaling.attention_factor = 1.0;
  changed[15].scaling.position_scale = 2;
  changed[16].scaling.low_freq_factor = 2;
  changed[17].scaling.high_freq_factor = 8;
  changed[18].scaling.short_factor = {1.0};
  changed[19].form.mrope_section = {1, 1, 1};
  RopeParams long_factor = base, per_token = base, layout = base, vision = base, axial = base;
  long_factor.scaling.long_factor = {1.0};
  per_token.scaling.longrope_switch = LongRopeSwitch::PerToken;
  layout.form.mrope_layout = MropeLayout::Interleaved;
  vision.form.vision = VisionRope::Pixtral;
  axial.form.axes_dim = {2};
  changed.insert(changed.end(), {long_factor, per_token, layout, vision, axial});
  const std::string key = detail::rope_plan_key(base);
  for (std::size_t k = 0; k < changed.size(); ++k)
    EXPECT_NE(detail::rope_plan_key(changed[k]), key) << "change " << k;
}

TEST(PlanCache, InvalidParametersThrowEveryTime) {
  RopeParams bad{64, 0, 10000.0, Layout::HalfSplit};
  bad.rotary_dim = 3;
  const RopePlan valid(RopeParams{64, 0, 10000.0, Layout::HalfSplit});
  for (int k = 0; k < 2; ++k) EXPECT_THROW(RopePlan{bad}, InvalidArgument);
  EXPECT_EQ(detail::kept_rope_plan(detail::rope_plan_key(bad)), nullptr);
}

TEST(PlanCache, ThreadsBuildingOnePlanAgree) {
  detail::forget_rope_plans();
  const RopeParams p = plan_cache_cases()[3];
  std::vector<std::optional<RopePlan>> plans(8);
  std::vector<std::thread> threads;
  for (auto& plan : plans) threads.emplace_back([&plan, &p] { plan.emplace(p); });
  for (auto& t : threads) t.join();
  detail::forget_rope_plans();
  const RopePlan fresh(p);
  for (const auto& plan : plans) expect_same_plan(*plan, fresh);
}

// A plan whose ladder another plan of its base and form kept (only the layout differs, so the plans' keys
// differ and the ladder's does not) has the bits of one built with nothing kept.
TEST(PlanCache, APlanOnAKeptLadderHasTheBitsOfAFreshOne) {
  for (RopeParams p : plan_cache_cases()) {
    detail::forget_rope_plans();
    const RopePlan first(p);
    p.layout = p.layout == Layout::HalfSplit ? Layout::Interleaved : Layout::HalfSplit;
    ASSERT_EQ(detail::kept_rope_plan(detail::rope_plan_key(p)), nullptr);
    const RopePlan on_kept(p);
    detail::forget_rope_plans();
    expect_same_plan(on_kept, RopePlan(p));
  }
}

TEST(PlanCache, TheLaddersKeyHoldsTheBaseTheFormAndThePairs) {
  const RopeParams mrope = plan_cache_cases()[6], axial = plan_cache_cases()[8];
  const long double base = 10000.0L;
  const std::string key = detail::powers_key(mrope.form, 64, base);
  EXPECT_EQ(detail::powers_key(mrope.form, 64, base), key);
  EXPECT_NE(detail::powers_key(mrope.form, 64, std::nextafter(base, 2 * base)), key);  // one ulp of 64 bits
  EXPECT_NE(detail::powers_key(mrope.form, 32, base), key);
  EXPECT_NE(detail::powers_key(RopeForm{}, 64, base), key);
  EXPECT_NE(detail::powers_key(axial.form, 64, base), key);
  RopeForm layout = mrope.form, vision;
  layout.mrope_layout = MropeLayout::Interleaved;
  vision.vision = VisionRope::Pixtral;
  EXPECT_NE(detail::powers_key(layout, 64, base), key);
  EXPECT_NE(detail::powers_key(vision, 64, base), detail::powers_key(RopeForm{}, 64, base));
}

}  // namespace
}  // namespace pe

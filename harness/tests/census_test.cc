// The quick census over the whole registry: every instance within its contract in every band, and
// JSON that carries what reports need.
#include "pe/harness/census.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "pe/errors.h"

namespace pe::census {
namespace {

TEST(CensusGrid, EveryInstanceIsWithinItsContractInEveryBand) {
  const auto results = run({});
  ASSERT_FALSE(results.empty());
  for (const InstanceResult& r : results) {
    ASSERT_FALSE(r.bands.empty()) << r.instance.name();
    // The census's bands end at 2^31: beyond, contracts are the properties' to check (to 2^53).
    EXPECT_EQ(r.bands.back().hi, std::min(r.instance.contract().max_position, std::int64_t{1} << 31))
        << r.instance.name();
    for (const harness::BandStats& b : r.bands) {
      EXPECT_LE(b.max_ratio.value, 1.0)
          << r.instance.name() << " band [" << b.lo << ", " << b.hi << "] at position "
          << b.max_ratio.at.position << " channel " << b.max_ratio.at.channel;
      EXPECT_GT(b.samples, 0u);
      // Every contract decides its own positions: a band its budget cannot judge would promise nothing.
      EXPECT_FALSE(b.undecidable_band()) << r.instance.name() << " band [" << b.lo << ", " << b.hi << "]";
    }
    // A run in every other band (the second, fourth, ...), each crossing two refreshes of a stateful variant.
    const auto state = static_cast<std::size_t>(r.instance.contract().state_rows);
    EXPECT_EQ(r.runs.rows, r.bands.size() / 2 * std::max<std::size_t>(600, 2 * state + 3))
        << r.instance.name();
    EXPECT_EQ(r.runs.differing, 0u) << r.instance.name() << " at position " << r.runs.first_position;
  }
  const nlohmann::json j = to_json(results);
  ASSERT_EQ(j.size(), results.size());
  // A band no element of which can be judged breaks the contract (an outside kernel declaring a position
  // range its budget cannot judge), named in the JSON.
  InstanceResult vacuous = results.front();
  vacuous.bands.back().encoding = 10;
  vacuous.bands.back().undecidable = 10;
  EXPECT_FALSE(vacuous.within_contract());
  EXPECT_EQ(to_json({vacuous})[0]["bands"].back()["verdict"], "undecidable");
  for (const char* key : {"instance", "variant", "family", "layout", "dtype", "contract", "bands", "runs"}) {
    EXPECT_TRUE(j[0].contains(key)) << key;
  }
  for (const char* key :
       {"lo", "hi", "max_abs", "max_ulp", "max_budget_ratio", "p99_abs", "p99_ulp", "verdict"}) {
    EXPECT_TRUE(j[0]["bands"][0].contains(key)) << key;
  }
}

TEST(Census, AnInstanceWhoseRunDiffersInPiecesIsOutsideItsContract) {
  InstanceResult r{{find_variant("rope.scalar_f64"), Layout::Interleaved, DType::F32}, {}, {}, {}};
  EXPECT_TRUE(r.within_contract());
  r.runs = {600, 1, 12345};
  EXPECT_FALSE(r.within_contract());
  EXPECT_EQ(to_json({r})[0]["runs"]["first_position"], 12345);
}

TEST(Census, SelectsInstancesByGlobAndStopsAtMaxPosition) {
  Options o;
  o.glob = "rope.scalar_f64";
  o.max_position = 5000;
  const auto results = run(o);
  const Contract& c = find_variant("rope.scalar_f64")->contract();
  ASSERT_EQ(results.size(), c.layouts.size() * c.outputs.size());
  for (const InstanceResult& r : results) {
    EXPECT_EQ(r.instance.variant->name(), "rope.scalar_f64");
    EXPECT_EQ(r.bands.back().hi, 5000);
  }
}

TEST(Census, ScalingRunsRopeInstancesOnlyAndIsRecorded) {
  Options o;
  o.glob = "*.scalar_f64";
  o.max_position = 2000;
  o.scaling.type = RopeScalingType::Yarn;
  o.scaling.factor = 4;
  o.scaling.original_max_position = 512;
  const auto results = run(o);
  const Contract& c = find_variant("rope.scalar_f64")->contract();
  ASSERT_EQ(results.size(), c.layouts.size() * c.outputs.size());  // no sinusoidal instance
  for (const InstanceResult& r : results) EXPECT_TRUE(r.within_contract()) << r.instance.name();
  const nlohmann::json doc = to_document(results, o);
  EXPECT_EQ(doc["rope_scaling"]["type"], "yarn");
  EXPECT_EQ(doc["rope_scaling"]["original_max_position"], 512);
  EXPECT_EQ(doc["rope_scaling"]["beta_fast"], 32.0);
  EXPECT_EQ(to_document(results, Options{})["rope_scaling"], (nlohmann::json{{"type", "none"}}));
}

TEST(Census, LongRopeSweepsOnlyTheHeadDimsItsListsFit) {
  Options o;
  o.effort = Effort::Full;
  o.scaling.type = RopeScalingType::LongRope;
  o.scaling.factor = 4;
  o.scaling.original_max_position = 512;
  o.scaling.short_factor.assign(32, 1.0);
  o.scaling.long_factor.assign(32, 2.0);
  EXPECT_EQ(rope_head_dims(o), (std::vector<std::int64_t>{64}));
  o.partial_rotary_factor = 0.5;  // rotary_dim = head_dim / 2: 32 pairs at head dim 128
  EXPECT_EQ(rope_head_dims(o), (std::vector<std::int64_t>{128}));
  o.effort = Effort::Quick;
  o.partial_rotary_factor = 0;
  try {
    rope_head_dims(o);
    ADD_FAILURE() << "no head dim of the quick grid has 32 pairs";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(e.parameter(), "short_factor");
  }
}

}  // namespace
TEST(Census, ShardsAreDisjointAndCoverTheSelection) {
  Options o;
  o.glob = "sinusoidal.scalar_f64";
  o.max_position = 1000;
  std::multiset<std::string> seen;
  for (std::size_t i = 0; i < 3; ++i) {
    o.shard_index = i;
    o.shard_count = 3;
    for (const InstanceResult& r : run(o)) seen.insert(r.instance.name());
  }
  const auto all = harness::instances_matching(o.glob);
  EXPECT_EQ(seen.size(), all.size());
  for (const auto& in : all) EXPECT_EQ(seen.count(in.name()), 1u) << in.name();
}

// Nodes whose CPUs register different Highway targets see different instance lists: an instance's
// shard must not depend on which other instances exist or are selected.
TEST(Census, AnInstancesShardDoesNotDependOnTheRestOfTheSelection) {
  Options narrow, wide;
  narrow.glob = "sinusoidal.scalar_f64";
  wide.glob = "sinusoidal.scalar_*";
  narrow.max_position = wide.max_position = 1000;
  narrow.shard_count = wide.shard_count = 4;
  std::size_t narrow_total = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    narrow.shard_index = wide.shard_index = i;
    std::set<std::string> in_wide;
    for (const InstanceResult& r : run(wide)) in_wide.insert(r.instance.name());
    for (const InstanceResult& r : run(narrow)) {
      ++narrow_total;
      EXPECT_TRUE(in_wide.count(r.instance.name())) << r.instance.name() << " moved shard";
      EXPECT_EQ(shard_of(r.instance.name(), 4), i);
    }
  }
  EXPECT_EQ(narrow_total, harness::instances_matching(narrow.glob).size());
}

TEST(Census, MergeRefusesShardsOfDifferentScalings) {
  const auto doc = [](nlohmann::json scaling, const char* instance) {
    nlohmann::json d = {{"schema", "pe-suite/census/1"},
                        {"instances", nlohmann::json::array({{{"instance", instance}}})}};
    if (!scaling.is_null()) d["rope_scaling"] = std::move(scaling);
    return d;
  };
  const nlohmann::json yarn = {{"type", "yarn"}, {"factor", 4.0}};
  EXPECT_EQ(rope_scaling_of({doc(yarn, "a"), doc(yarn, "b")}), yarn);
  EXPECT_EQ(merge_instances({doc(yarn, "a"), doc(yarn, "b")}).size(), 2u);
  EXPECT_EQ(rope_scaling_of({doc(nullptr, "a")})["type"], "none");
  EXPECT_THROW(merge_instances({doc(yarn, "a"), doc(nullptr, "b")}), std::runtime_error);
  nlohmann::json yarn8 = yarn;
  yarn8["factor"] = 8.0;
  EXPECT_THROW(merge_instances({doc(yarn, "a"), doc(yarn8, "b")}), std::runtime_error);
}

}  // namespace pe::census

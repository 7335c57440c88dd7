// A sweep's documents (pe/harness/sweep.h): the tasks' documents merge into the unsharded run's, and what
// is not one whole run is refused by name. The census's own shards: a missing or repeated one refused.
#include "pe/harness/sweep.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <stdexcept>
#include <string>

#include "pe/harness/census.h"
#include "pe/harness/instance.h"

namespace pe::sweep {
namespace {

nlohmann::json census_doc(const std::string& config, std::initializer_list<const char*> instances,
                          bool within) {
  nlohmann::json list = nlohmann::json::array();
  for (const char* i : instances) list.push_back({{"instance", i}, {"within_contract", within}});
  return {{"schema", "pe-suite/census/1"}, {"config", config}, {"shard", "0/1"}, {"instances", list}};
}

Header header(std::size_t index, std::size_t count) {
  Header h;
  h.variant = "rope.*";
  h.effort = "quick";
  h.configs = {"a.json", "b.json"};
  h.plugins = {"libmine.so"};
  h.properties = true;
  h.seed = 7;
  h.shard_index = index;
  h.shard_count = count;
  return h;
}

// Two tasks of one run: instances split across them per config, a library test run by both.
std::vector<nlohmann::json> two_tasks() {
  return {
      document(
          header(0, 2), {census_doc("a.json", {"x/f32"}, true), census_doc("b.json", {"y/f32"}, false)},
          {{"Lib.Test", "passed", ""}, {"P.T/x_f32", "failed", "failure: x"}, {"Lib.Skip", "skipped", ""}}),
      document(header(1, 2), {census_doc("a.json", {"y/f32"}, true), census_doc("b.json", {"x/f32"}, true)},
               {{"Lib.Test", "passed", ""}, {"P.T/y_f32", "passed", ""}, {"Lib.Skip", "passed", ""}})};
}

TEST(Sweep, DocumentIsPinned) {
  const nlohmann::json d = two_tasks()[0];
  for (const char* key : {"schema", "variant", "effort", "max_position", "configs", "plugins", "seed",
                          "properties", "shard", "census"})
    EXPECT_TRUE(d.contains(key)) << key;
  EXPECT_EQ(d["schema"], "pe-suite/sweep/1");
  EXPECT_EQ(d["shard"], "0/2");
  EXPECT_EQ(d["properties"]["P.T/x_f32"], (nlohmann::json{{"result", "failed"}, {"message", "failure: x"}}));
  EXPECT_EQ(d["properties"]["Lib.Test"], (nlohmann::json{{"result", "passed"}}));
  Header census_only = header(0, 1);
  census_only.properties = false;
  const nlohmann::json c =
      document(census_only, {census_doc("a.json", {}, true), census_doc("b.json", {}, true)}, {});
  EXPECT_FALSE(c.contains("properties"));
  EXPECT_FALSE(c.contains("seed"));
}

TEST(Sweep, MergeJoinsEachConfigsInstancesSortedAndKeepsEachTestsWorstResult) {
  const nlohmann::json m = merge(two_tasks());
  EXPECT_EQ(m["shard"], "merged");
  EXPECT_EQ(m["merged_from"], 2);
  ASSERT_EQ(m["census"].size(), 2u);
  EXPECT_EQ(m["census"][0]["config"], "a.json");
  EXPECT_EQ(m["census"][0]["instances"][0]["instance"], "x/f32");
  EXPECT_EQ(m["census"][0]["instances"][1]["instance"], "y/f32");
  EXPECT_EQ(m["census"][1]["instances"][0]["instance"], "x/f32");
  const nlohmann::json v = verdicts(m);
  EXPECT_EQ(v["census"]["b.json"]["y/f32"], "outside");
  EXPECT_EQ(v["census"]["b.json"]["x/f32"], "within");
  EXPECT_EQ(v["properties"]["P.T/x_f32"], "failed");
  EXPECT_EQ(v["properties"]["Lib.Skip"], "passed");  // skipped where it had no instance, passed elsewhere
  EXPECT_EQ(v["properties"].size(), 4u);
  // The tasks in any order, and one unsharded document, merge alike.
  auto reversed = two_tasks();
  std::swap(reversed[0], reversed[1]);
  EXPECT_EQ(merge(reversed)["census"], m["census"]);
  const std::string md = markdown(m);
  EXPECT_NE(md.find("| `b.json` | 2 | 1 | 1 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("- `P.T/x_f32`: failed: failure: x"), std::string::npos) << md;
}

std::string refusal(const std::vector<nlohmann::json>& shards) {
  try {
    merge(shards);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(merged)";
}

TEST(Sweep, MergeRefusesWhatIsNotOneWholeRun) {
  const auto tasks = two_tasks();
  EXPECT_EQ(refusal({tasks[0]}), "shard 1/2 is missing: no file given holds it (resubmit that array task)");
  EXPECT_EQ(refusal({tasks[0], tasks[0], tasks[1]}), "shard 0/2 is given twice");
  auto other = tasks[1];
  other["configs"] = {"a.json"};
  EXPECT_NE(refusal({tasks[0], other}).find("their configs differ"), std::string::npos);
  other = tasks[1];
  other["seed"] = 8;
  EXPECT_NE(refusal({tasks[0], other}).find("their seed differ"), std::string::npos);
  other = tasks[1];
  other["shard"] = "1/3";
  EXPECT_NE(refusal({tasks[0], other}).find("shards of 2 and of 3"), std::string::npos);
  other = tasks[1];
  other["census"][0]["instances"][0]["instance"] = "x/f32";  // the same pair in both tasks
  EXPECT_NE(refusal({tasks[0], other}).find("instance x/f32 under config a.json appears in two shards"),
            std::string::npos);
  EXPECT_NE(refusal({census_doc("a.json", {}, true)}).find("not a pe-suite sweep document"),
            std::string::npos);
}

TEST(CensusShards, MergeRefusesAMissingOrRepeatedShardNamingIt) {
  const auto shard = [](const char* s, const char* instance) {
    return nlohmann::json{{"schema", "pe-suite/census/1"},
                          {"variant", "*"},
                          {"shard", s},
                          {"instances", nlohmann::json::array({{{"instance", instance}}})}};
  };
  EXPECT_EQ(census::merge_instances({shard("0/3", "a"), shard("1/3", "b"), shard("2/3", "c")}).size(), 3u);
  try {
    census::merge_instances({shard("0/3", "a"), shard("2/3", "c")});
    ADD_FAILURE() << "a missing shard merged";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "shard 1/3 of --variant '*' is missing: no file given holds it (resubmit that array task)");
  }
  EXPECT_THROW(census::merge_instances({shard("0/2", "a"), shard("0/2", "b"), shard("1/2", "c")}),
               std::runtime_error);
  // Censuses that are not shards of one (0/1 each) merge as before.
  EXPECT_EQ(census::merge_instances({shard("0/1", "a"), shard("0/1", "b")}).size(), 2u);
  auto other = shard("0/1", "b");
  other["config"] = "b.json";
  EXPECT_THROW(census::merge_instances({shard("0/1", "a"), other}), std::runtime_error);
}

// The property binary's selection under $PE_SHARD: the instances of that shard, the shards disjoint and
// covering the selection; a malformed value refused, never read as "every instance".
TEST(PropertyShards, PeShardSelectsTheInstancesOfThatShard) {
  const auto all = harness::selected();
  std::size_t total = 0;
  for (int i = 0; i < 3; ++i) {
    setenv("PE_SHARD", (std::to_string(i) + "/3").c_str(), 1);
    for (const harness::Instance& in : harness::selected()) {
      EXPECT_EQ(census::shard_of(in.name(), 3), static_cast<std::size_t>(i)) << in.name();
      ++total;
    }
  }
  EXPECT_EQ(total, all.size());
  for (const char* bad : {"3/3", "1/0", "x", "1/3junk", "-1/3"}) {
    setenv("PE_SHARD", bad, 1);
    EXPECT_THROW(harness::selected(), std::invalid_argument) << bad;
  }
  unsetenv("PE_SHARD");
  EXPECT_EQ(harness::selected().size(), all.size());
}

}  // namespace
}  // namespace pe::sweep

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

nlohmann::json census_doc(const std::string& config, const std::vector<std::string>& instances, bool within) {
  nlohmann::json list = nlohmann::json::array();
  for (const std::string& i : instances) list.push_back({{"instance", i}, {"within_contract", within}});
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

// The instances of `names` that the hash gives shard `index` of 2 under `config`.
std::vector<std::string> mine(const std::string& config, std::size_t index) {
  std::vector<std::string> out;
  for (const char* n : {"x/f32", "y/f32", "z/f32", "w/f32"})
    if (census::shard_of(census::shard_key(config, n), 2) == index) out.push_back(n);
  return out;
}

// Two tasks of one run: each config's instances split by the hash, a library test run by both. Under b.json
// every instance is outside its contract.
std::vector<nlohmann::json> two_tasks() {
  std::vector<nlohmann::json> out;
  for (std::size_t k = 0; k < 2; ++k) {
    std::vector<nlohmann::json> docs = {census_doc("a.json", mine("a.json", k), true),
                                        census_doc("b.json", mine("b.json", k), false)};
    for (auto& d : docs) d["selected"] = 4;
    out.push_back(document(
        header(k, 2), docs,
        k == 0 ? std::vector<PropertyVerdict>{{"Lib.Test", "passed", ""},
                                              {"P.T/x_f32", "failed", "failure: x"},
                                              {"Lib.Skip", "skipped", ""}}
               : std::vector<PropertyVerdict>{
                     {"Lib.Test", "passed", ""}, {"P.T/y_f32", "passed", ""}, {"Lib.Skip", "passed", ""}}));
  }
  return out;
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
  ASSERT_FALSE(mine("a.json", 0).empty());  // the names spread over both shards under each config
  ASSERT_FALSE(mine("a.json", 1).empty());
  const nlohmann::json m = merge(two_tasks());
  EXPECT_EQ(m["shard"], "merged");
  EXPECT_EQ(m["merged_from"], 2);
  ASSERT_EQ(m["census"].size(), 2u);
  EXPECT_EQ(m["census"][0]["config"], "a.json");
  std::vector<std::string> names;
  for (const auto& i : m["census"][0]["instances"]) names.push_back(i["instance"]);
  EXPECT_EQ(names, (std::vector<std::string>{"w/f32", "x/f32", "y/f32", "z/f32"}));
  const nlohmann::json v = verdicts(m);
  EXPECT_EQ(v["census"]["b.json"]["y/f32"], "outside");
  EXPECT_EQ(v["census"]["a.json"]["x/f32"], "within");
  EXPECT_EQ(v["properties"]["P.T/x_f32"], "failed");
  EXPECT_EQ(v["properties"]["Lib.Skip"], "passed");  // skipped where it had no instance, passed elsewhere
  EXPECT_EQ(v["properties"].size(), 4u);
  // The tasks in any order merge alike.
  auto reversed = two_tasks();
  std::swap(reversed[0], reversed[1]);
  EXPECT_EQ(merge(reversed), m);
  const std::string md = markdown(m);
  EXPECT_NE(md.find("| `b.json` | 4 | 0 | 4 | 0 |"), std::string::npos) << md;
  EXPECT_NE(md.find("- `P.T/x_f32`: failed: failure: x"), std::string::npos) << md;
  EXPECT_NE(md.find("merged from 2 shards"), std::string::npos) << md;
}

// NaN is written as null: the report reads it as the worst ratio, never a JSON type error.
TEST(Sweep, AnInstanceWithANanRatioIsShownNotThrown) {
  auto tasks = two_tasks();
  tasks[0]["census"][1]["instances"][0]["bands"] = {{{"max_budget_ratio", {{"value", nullptr}}}}};
  EXPECT_NE(markdown(merge(tasks)).find("| nan |"), std::string::npos);
}

std::string refusal(const std::vector<nlohmann::json>& shards, const std::vector<std::string>& files = {}) {
  try {
    merge(shards, files);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(merged)";
}

TEST(Sweep, MergeRefusesWhatIsNotOneWholeRun) {
  const auto tasks = two_tasks();
  const std::vector<std::string> files = {"t0.json", "t1.json", "t2.json"};
  EXPECT_EQ(refusal({tasks[0]}), "shard 1/2 is missing: no file given holds it (resubmit that array task)");
  EXPECT_EQ(refusal({tasks[0], tasks[0], tasks[1]}, files), "shard 0/2 is given twice (t0.json and t1.json)");
  const auto refused = [&](const char* key, nlohmann::json value, const char* want) {
    auto other = tasks[1];
    other[key] = std::move(value);
    const std::string why = refusal({tasks[0], other}, files);
    EXPECT_NE(why.find(want), std::string::npos) << key << ": " << why << " (want: " << want << ")";
  };
  refused("configs", {"a.json"}, "t1.json: \"census\" is not one census document per config");
  refused("seed", 8, "t0.json and t1.json are of different runs: their seed differ");
  refused("selection", {{"layer", 3}}, "their selection differ");
  refused("shard", "1/3", "different splits: shards of 2 and of 3");
  refused("shard", "1/2junk", "t1.json: shard '1/2junk' is not I/N");
  refused("plugins", nullptr, "t1.json: \"plugins\" is not a list of strings");
  refused("max_position", "4096", "t1.json: \"max_position\" is not an integer");
  // A task measured under another scaling, or holding another task's instance, or missing one.
  auto other = tasks[1];
  other["census"][0]["rope_scaling"] = {{"type", "linear"}, {"factor", 2.0}};
  EXPECT_NE(refusal({tasks[0], other}).find("their census under a.json differs"), std::string::npos);
  other = tasks[1];
  other["census"][0]["instances"].push_back(tasks[0]["census"][0]["instances"][0]);
  EXPECT_NE(refusal({tasks[0], other}).find("which belongs to shard 0"), std::string::npos);
  other = tasks[1];
  other["census"][0]["instances"].erase(0);
  EXPECT_NE(refusal({tasks[0], other}).find("the run selected 4 instances but the tasks hold 3"),
            std::string::npos);
  EXPECT_NE(refusal({census_doc("a.json", {}, true)}).find("not a pe-suite sweep document"),
            std::string::npos);
  // A shard count beyond kMaxShards is refused before anything is allocated for it.
  other = tasks[1];
  other["shard"] = "0/99999999999";
  EXPECT_NE(refusal({other}).find("is not I/N"), std::string::npos);
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
  for (const char* bad : {"3/3", "1/0", "x", "1/3junk", "-1/3", " 1/3", "1/ 3", "+1/3"}) {
    setenv("PE_SHARD", bad, 1);
    EXPECT_THROW(harness::selected(), std::invalid_argument) << bad;
  }
  unsetenv("PE_SHARD");
  EXPECT_EQ(harness::selected().size(), all.size());
}

}  // namespace
}  // namespace pe::sweep

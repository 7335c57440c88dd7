// The exhaustive census's own logic: shards tile the range, merged shards equal one run, gaps and
// overlaps are refused, and the fast path and MPFR alone give the same JSON.
#include "pe/harness/exhaustive.h"

#include <gtest/gtest.h>

#include <functional>
#include <tuple>

#include "pe/errors.h"
#include "pe/ref/fast_trig.h"

namespace pe::exhaustive {
namespace {

Options small(std::size_t shard = 0, std::size_t count = 1) {
  Options o;
  o.glob = "sinusoidal.interleaved.exact/f32";
  o.begin = 900;
  o.end = 12'345;
  o.dim = 16;
  o.shard_index = shard;
  o.shard_count = count;
  return o;
}

nlohmann::json without_time(nlohmann::json j) {
  j.erase("seconds");
  j.erase("merged_from");
  return j;
}

nlohmann::json without_fallbacks(nlohmann::json j) {
  for (auto& in : j["instances"]) in.erase("mpfr_fallbacks");
  return without_time(j);
}

TEST(Exhaustive, ShardsTileTheRange) {
  for (const auto& [b, e, n] : {std::tuple{0LL, 10LL, 3ULL},
                                {5LL, 6LL, 4ULL},
                                {0LL, 1LL << 31, 7ULL},
                                {(1LL << 53) - 100, 1LL << 53, 9ULL}}) {
    std::int64_t at = b;
    for (std::size_t i = 0; i < n; ++i) {
      const auto [lo, hi] = shard_range(b, e, i, n);
      EXPECT_EQ(lo, at);
      EXPECT_LE(lo, hi);
      at = hi;
    }
    EXPECT_EQ(at, e);
  }
}

TEST(Exhaustive, MergedShardsAreTheWholeRunAndGapsOrOverlapsAreRefused) {
  const nlohmann::json whole = to_json(run(small()));
  std::vector<nlohmann::json> shards;
  for (std::size_t i = 0; i < 3; ++i) shards.push_back(to_json(run(small(i, 3))));
  EXPECT_EQ(without_time(merge({shards[2], shards[0], shards[1]})), without_time(whole));
  ASSERT_EQ(whole["instances"][0]["bands"].size(), 3u);  // 900..999, 1000..9999, 10000..12344
  EXPECT_EQ(whole["instances"][0]["bands"][1]["elements"].get<std::uint64_t>(), 9'000u * 16u);
  try {
    merge({shards[0], shards[2]});
    ADD_FAILURE() << "a gap was merged";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("gap"), std::string::npos) << e.what();
  }
  try {
    merge({shards[0], shards[1], shards[1], shards[2]});
    ADD_FAILURE() << "an overlap was merged";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("overlap"), std::string::npos) << e.what();
  }
}

TEST(Exhaustive, FastPathAndMpfrAloneGiveTheSameResult) {
  Options o = small();
  o.end = 2'000;
  const nlohmann::json fast = to_json(run(o));
  ref::set_fast_path(false);
  const nlohmann::json mpfr = to_json(run(o));
  ref::set_fast_path(true);
  EXPECT_EQ(without_fallbacks(fast), without_fallbacks(mpfr));
  EXPECT_EQ(fast["instances"][0]["mpfr_fallbacks"], 0);
  EXPECT_EQ(mpfr["instances"][0]["mpfr_fallbacks"].get<std::uint64_t>(), (2'000u - 900u) * 16u);
}

// The screen (exhaustive_screen.h) settles elements without the precise path: results with it must
// be those of MPFR alone, also for variants with real errors (scalar float32), rotations and bf16,
// near the top of their contracts' ranges, and for any thread count.
TEST(Exhaustive, ScreenedRunsAreMpfrAlonesForAnyVariantAndThreadCount) {
  // d = 38: 19 pairs, so that the screen's padding lanes are in play.
  for (const auto& [glob, base, top, dim] : {std::tuple{"sinusoidal.*scalar_f32/*", 1e4, 1LL << 24, 38LL},
                                             {"rope.*scalar_f32/f32", 5e5, 1LL << 24, 16LL},
                                             {"rope.*exact/bf16", 5e5, 1LL << 31, 38LL}}) {
    Options o;
    o.glob = glob;
    o.base = base;
    o.dim = dim;
    o.begin = top - 400;
    o.end = top;
    o.threads = 2;
    const nlohmann::json fast = to_json(run(o));
    o.threads = 1;
    EXPECT_EQ(without_time(to_json(run(o))), without_time(fast)) << glob;
    ref::set_fast_path(false);
    const nlohmann::json mpfr = to_json(run(o));
    ref::set_fast_path(true);
    EXPECT_EQ(without_fallbacks(fast), without_fallbacks(mpfr)) << glob;
  }
}

TEST(Exhaustive, BadOptionsAreNamed) {
  Options o = small();
  o.end = o.begin;
  EXPECT_THROW(run(o), pe::InvalidArgument);
  o = small(3, 3);
  EXPECT_THROW(run(o), pe::InvalidArgument);
  o = small();
  o.glob = "alibi.*";
  EXPECT_THROW(run(o), pe::InvalidArgument);
}

// A shard killed after its second checkpoint and resumed from it gives the uninterrupted run's document
// (but for the seconds), whatever the checkpoint interval of the resumed run; a checkpoint never passes
// for a finished shard, and one of another run is refused.
TEST(Exhaustive, AKilledAndResumedShardIsTheUninterruptedRun) {
  const nlohmann::json whole = to_json(run(small()));
  struct Killed {};
  std::vector<nlohmann::json> checkpoints;
  Options o = small();
  o.checkpoint_every = 4000;  // rounded up to the chunk: 4096
  o.on_checkpoint = [&](const nlohmann::json& doc) {
    checkpoints.push_back(doc);
    if (checkpoints.size() == 2) throw Killed{};
  };
  EXPECT_THROW(run(o), Killed);
  ASSERT_EQ(checkpoints.size(), 2u);
  EXPECT_EQ(checkpoints[0]["checkpoint"]["done_until"].get<std::int64_t>(), 4096);
  EXPECT_EQ(checkpoints[1]["checkpoint"]["done_until"].get<std::int64_t>(), 8192);
  for (const std::int64_t every : {std::int64_t{4096}, std::int64_t{0}, std::int64_t{2048}}) {
    Options resumed = small();
    resumed.checkpoint_every = every;
    resumed.resume = checkpoints[1];
    EXPECT_EQ(without_time(to_json(run(resumed))), without_time(whole)) << "checkpoint every " << every;
  }
  // The checkpoint's counts are carried, not recomputed: one element more in it is one more in the result.
  Options tampered = small();
  tampered.resume = checkpoints[1];
  auto& elements = tampered.resume["instances"][0]["bands"][0]["elements"];
  elements = elements.get<std::uint64_t>() + 1;
  EXPECT_EQ(to_json(run(tampered))["instances"][0]["bands"][0]["elements"].get<std::uint64_t>(),
            whole["instances"][0]["bands"][0]["elements"].get<std::uint64_t>() + 1);
  try {
    merge({checkpoints[1]});
    ADD_FAILURE() << "a checkpoint merged";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(),
                 "shard 0/1 is a checkpoint, not a finished shard: positions [900, 8192) of its [900, 12345) "
                 "are done (census --exhaustive --resume finishes it)");
  }
  // A checkpoint that cannot be resumed is refused naming --resume, with why.
  const auto refusal = [&](const std::function<void(Options&)>& change) {
    Options resumed = small();
    resumed.resume = checkpoints[1];
    change(resumed);
    try {
      run(resumed);
    } catch (const InvalidArgument& e) {
      return e.parameter() + ": " + e.what();
    }
    return std::string("resumed");
  };
  for (const auto& [change, why] : std::vector<std::pair<std::function<void(Options&)>, std::string>>{
           {[](Options& r) { r.resume.erase("instances"); }, "malformed"},
           {[](Options& r) { r.dim = 32; }, "its dim is 16, this run's 32"}}) {
    const std::string refused = refusal(change);
    EXPECT_EQ(refused.rfind("resume: ", 0), 0u) << refused;
    EXPECT_NE(refused.find(why), std::string::npos) << refused;
  }
}

}  // namespace
}  // namespace pe::exhaustive

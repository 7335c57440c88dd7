// Unit tests of the CLI's pieces that a wrong answer would hide behind a plausible report: the argument
// parsers, the compare statistics, the Pareto front and the RoPE scaling flags (the engine's own pieces,
// the .npy reader and the diagnosis, are tested in check/tests). Expected values come from the formats'
// specifications and closed forms, not from running the code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <numbers>

#include "args.h"
#include "common.h"
#include "names.h"
#include "pe/check/npy.h"
#include "pe/reports/compare.h"
#include "pe/reports/plots.h"
#include "scaling_options.h"

namespace pe::cli {
namespace {

TEST(Args, ParsersNameTheArgument) {
  EXPECT_EQ(parse_range("3:7", "--positions"), (std::pair<std::int64_t, std::int64_t>{3, 7}));
  EXPECT_DOUBLE_EQ(parse_fraction("5%", "--threshold"), 0.05);
  EXPECT_DOUBLE_EQ(parse_fraction("0.2", "--threshold"), 0.2);
  EXPECT_EQ(parse_shard("1/4", "--shard"), (std::pair<std::size_t, std::size_t>{1, 4}));
  for (const char* bad : {"7:3", "-1:2", "a:b", "3", "0:9007199254740994"}) {
    EXPECT_THROW(parse_range(bad, "--positions"), UsageError) << bad;
  }
  for (const char* bad : {"", "%", "x%", "-1%", "nan", "1e400"})
    EXPECT_THROW(parse_fraction(bad, "--t"), UsageError) << bad;
  for (const char* bad : {"4/4", "1/0", "/", "1/", "a/b", "-1/2"})
    EXPECT_THROW(parse_shard(bad, "--s"), UsageError) << bad;
}

// The scaling flags as a command line gives them: parsed by CLI11, the spec read from the parse.
ScalingFlags parse_scaling(std::vector<std::string> args) {
  CLI::App app;
  ScalingFlags f;
  add_scaling_options(app, f);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  app.parse(args);
  read_scaling_flags(app, f);
  return f;
}

// The method those flags give, HF's defaults filled in.
RopeScaling scaling_of(std::vector<std::string> args) {
  return to_rope_scaling(parse_scaling(std::move(args)).spec);
}

// check's rotary dim under its flag names.
std::int64_t rotary_dim_for(const ScalingFlags& f, std::int64_t head_dim, std::int64_t rotary_dim) {
  check::RopeSpec spec;
  spec.rotary_dim = rotary_dim;
  spec.scaling = f.spec;
  return check::rotary_dim_for(spec, head_dim, flag_names({{"rotary_dim", "--rotary-dim"}}));
}

// The message of the UsageError `fn` throws ("" when it throws none).
template <class F>
std::string usage_error(F fn) {
  try {
    fn();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(Scaling, FlagsBecomeTheMethodWithHfDefaults) {
  EXPECT_EQ(scaling_of({}).type, RopeScalingType::None);
  const RopeScaling linear = scaling_of({"--scaling", "linear", "--factor", "2.5"});
  EXPECT_EQ(linear.type, RopeScalingType::Linear);
  EXPECT_EQ(linear.factor, 2.5);
  const RopeScaling yarn =
      scaling_of({"--scaling", "yarn", "--factor", "4", "--original-max-position", "4096"});
  EXPECT_EQ(yarn.type, RopeScalingType::Yarn);
  EXPECT_EQ(yarn.original_max_position, 4096);
  EXPECT_EQ(yarn.beta_fast, 32);  // HF's defaults
  EXPECT_EQ(yarn.beta_slow, 1);
  EXPECT_TRUE(yarn.truncate);
  EXPECT_FALSE(yarn.mscale.has_value());
  EXPECT_FALSE(yarn.attention_factor.has_value());
  const RopeScaling yarn2 =
      scaling_of({"--scaling", "yarn", "--factor", "40", "--original-max-position", "4096", "--mscale",
                  "0.707", "--mscale-all-dim", "0.707", "--truncate", "false", "--beta-fast", "16"});
  EXPECT_EQ(yarn2.mscale, 0.707);
  EXPECT_EQ(yarn2.mscale_all_dim, 0.707);
  EXPECT_FALSE(yarn2.truncate);
  EXPECT_EQ(yarn2.beta_fast, 16);
  const RopeScaling llama3 = scaling_of(
      {"--scaling", "llama3", "--factor", "8", "--original-max-position", "8192", "--high-freq-factor", "2"});
  EXPECT_EQ(llama3.low_freq_factor, 1);
  EXPECT_EQ(llama3.high_freq_factor, 2);
  const RopeScaling dynamic = scaling_of(
      {"--scaling", "dynamic", "--factor", "2", "--original-max-position", "2048", "--seq-len", "5000"});
  EXPECT_EQ(dynamic.seq_len, 5000);
}

TEST(Scaling, LongRopeReadsOneDimensionalFloatLists) {
  const std::string dir = ::testing::TempDir();
  check::write_npy(dir + "/short.npy", {1, 1.5, 2, 3}, {4}, DType::F64);
  check::write_npy(dir + "/long.npy", {2, 4, 8, 16}, {4}, DType::F32);
  check::write_npy(dir + "/square.npy", {1, 2, 3, 4}, {2, 2}, DType::F64);
  const std::vector<std::string> base = {
      "--scaling", "longrope",       "--factor",       "8", "--original-max-position",
      "4096",      "--long-factors", dir + "/long.npy"};
  auto args = base;
  args.insert(args.end(), {"--short-factors", dir + "/short.npy"});
  const RopeScaling s = scaling_of(args);
  EXPECT_EQ(s.short_factor, (std::vector<double>{1, 1.5, 2, 3}));
  EXPECT_EQ(s.long_factor, (std::vector<double>{2, 4, 8, 16}));
  EXPECT_NE(usage_error([&] { scaling_of(base); }).find("--short-factors: required"), std::string::npos);
  args = base;
  args.insert(args.end(), {"--short-factors", dir + "/square.npy"});
  EXPECT_NE(usage_error([&] { scaling_of(args); }).find("--short-factors: "), std::string::npos);
  args = base;
  args.insert(args.end(), {"--short-factors", dir + "/missing.npy"});
  EXPECT_NE(usage_error([&] { scaling_of(args); }).find("--short-factors: "), std::string::npos);
}

TEST(Scaling, RejectsWhatTheMethodWouldIgnore) {
  const auto message = [](std::vector<std::string> args) {
    return usage_error([&] { scaling_of(std::move(args)); });
  };
  EXPECT_EQ(message({"--scaling", "linear", "--factor", "2", "--beta-fast", "8"})
                .rfind("--beta-fast: not used by "
                       "--scaling linear",
                       0),
            0u);
  EXPECT_EQ(message({"--factor", "2"}).rfind("--factor: not used by --scaling none", 0), 0u);
  EXPECT_EQ(message({"--scaling", "ntk", "--factor", "2", "--original-max-position", "9"})
                .rfind("--original-max-position: not used", 0),
            0u);
  EXPECT_EQ(message({"--scaling", "linear"}), "--factor: required with --scaling linear");
  EXPECT_EQ(message({"--scaling", "yarn", "--factor", "2"}),
            "--original-max-position: required with --scaling yarn");
  EXPECT_EQ(message({"--scaling", "rope"}).rfind("--scaling: unknown method 'rope'", 0), 0u);
  EXPECT_EQ(
      message({"--scaling", "yarn", "--factor", "2", "--original-max-position", "9", "--truncate", "yes"}),
      "--truncate: expected true or false, got 'yes'");
  EXPECT_EQ(message({"--scaling", "yarn", "--factor", "2", "--original-max-position", "9", "--mscale", "1"})
                .rfind("--mscale: HF ignores it without --mscale-all-dim", 0),
            0u);
  EXPECT_EQ(message({"--scaling", "yarn", "--factor", "2", "--original-max-position", "9", "--mscale", "1",
                     "--mscale-all-dim", "1", "--attention-factor", "1.2"})
                .rfind("--attention-factor: ", 0),
            0u);
  // Scaling flags with a sinusoidal table; --scaling none alone is no scaling.
  EXPECT_EQ(usage_error([] { reject_scaling_flags(parse_scaling({"--scaling", "none"}), "RoPE only"); }), "");
  EXPECT_EQ(usage_error([] {
              reject_scaling_flags(parse_scaling({"--seq-len", "9"}), "RoPE only");
            }),
            "--seq-len: RoPE only");
}

TEST(Scaling, PlanErrorsNameTheFlagAndPartialRotaryDimIsHfs) {
  RopeParams p{64, 0, 10000.0, Layout::HalfSplit, {}};
  p.scaling.type = RopeScalingType::Linear;
  p.scaling.factor = 0;
  EXPECT_EQ(usage_error([&] { rope_plan(p); }), "--factor: factor must be finite and > 0, got 0");
  p.scaling = {};
  p.scaling.type = RopeScalingType::Yarn;
  p.scaling.factor = 4;
  p.scaling.original_max_position = 4096;
  p.scaling.beta_fast = 0;
  EXPECT_EQ(usage_error([&] { rope_plan(p); }).rfind("--beta-fast: beta_fast must be", 0), 0u);
  p.base = 1;  // every parameter with a flag is named by it
  EXPECT_EQ(usage_error([&] { rope_plan(p); }), "--base: base must be finite and > 1, got 1");
  p.base = 10000;
  p.head_dim = 7;  // no command takes a head dim flag here: the core's own error
  EXPECT_THROW(rope_plan(p), InvalidArgument);
  EXPECT_EQ(flag_for_parameter("short_factor"), "--short-factors");
  EXPECT_EQ(flag_for_parameter("head_dim"), "");
  for (const ScalingField& field : scaling_fields())  // every field a method reads can be given
    EXPECT_NE(flag_for_parameter(std::string(field.name)), "") << field.name;

  const ScalingFlags none = parse_scaling({});
  EXPECT_EQ(rotary_dim_for(none, 64, 16), 16);
  const ScalingFlags partial = parse_scaling({"--partial-rotary-factor", "0.25"});
  EXPECT_EQ(rotary_dim_for(partial, 80, 0), 20);  // int(80 · 0.25)
  EXPECT_EQ(usage_error([&] {
              rotary_dim_for(partial, 80, 16);
            }).rfind("--rotary-dim and --partial-rotary-factor: give one", 0),
            0u);
  EXPECT_EQ(usage_error([&] { rotary_dim_for(partial, 12, 0); }).rfind("--partial-rotary-factor: ", 0),
            0u);  // int(12 · 0.25) = 3 is odd
}

double two_sided(double z) { return std::erfc(z / std::numbers::sqrt2); }

// Outputs are renamed into place whole (a killed run leaves the old file or none, never a part), but a
// device is written as it is: renaming over /dev/null would replace it.
TEST(WriteText, ReplacesAFileWholeAndWritesADeviceInPlace) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "pe-cli-write-text";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::string file = (dir / "out.json").string();
  pe::cli::write_text(file, "first, longer\n", true);
  pe::cli::write_text(file, "second\n", true);
  std::ifstream in(file);
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "second\n");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1)
      << "no temporary file left beside the output";
  pe::cli::write_text("/dev/null", "nothing\n", true);
  EXPECT_TRUE(std::filesystem::is_character_file("/dev/null"));
  EXPECT_THROW(pe::cli::write_text((dir / "missing" / "x.json").string(), "x", true), pe::cli::UsageError);
  std::filesystem::remove_all(dir);
}

TEST(Compare, MannWhitneyMatchesTheClosedForm) {
  // No ties: U = 0 for completely separated samples of 9; mean 81/2, variance 9·9·19/12.
  std::vector<double> a, b;
  for (int i = 1; i <= 9; ++i) a.push_back(i), b.push_back(i + 9);
  EXPECT_NEAR(reports::mann_whitney_p(a, b), two_sided((40.5 - 0.5) / std::sqrt(81.0 * 19 / 12)), 1e-12);
  // Ties: {1..5} against {3..7}: midranks give U = 4.5; three tied pairs shrink the variance to
  // 25/12·(11 - 3·6/90) = 22.5 (R: wilcox.test(exact = FALSE) reports W = 4.5, p = 0.1138).
  EXPECT_NEAR(reports::mann_whitney_p({1, 2, 3, 4, 5}, {3, 4, 5, 6, 7}),
              two_sided((12.5 - 4.5 - 0.5) / std::sqrt(22.5)), 1e-12);
  EXPECT_EQ(reports::mann_whitney_p(a, a), 1.0);
  EXPECT_EQ(reports::mann_whitney_p({2, 2, 2}, {2, 2, 2}), 1.0);
}

TEST(Compare, BenjaminiHochbergByHand) {
  // m = 4, sorted p = .01 .02 .03 .5: raw p·m/k = .04 .04 .04 .5, then the running minimum from the top.
  EXPECT_EQ(reports::benjamini_hochberg({0.5, 0.01, 0.03, 0.02}),
            (std::vector<double>{0.5, 0.04, 0.04, 0.04}));
}

nlohmann::json run_of(const std::map<std::string, std::vector<double>>& times) {
  nlohmann::json j = {{"benchmarks", nlohmann::json::array()}};
  for (const auto& [name, ts] : times) {
    for (double t : ts) {
      j["benchmarks"].push_back({{"name", name},
                                 {"run_name", name},
                                 {"run_type", "iteration"},
                                 {"real_time", t},
                                 {"time_unit", "ns"}});
    }
    j["benchmarks"].push_back({{"name", name + "_median"},
                               {"run_name", name},
                               {"run_type", "aggregate"},
                               {"real_time", 0.0},
                               {"time_unit", "ns"}});
  }
  return j;
}

TEST(Compare, SelfIsSameAndSlowedIsRegression) {
  std::map<std::string, std::vector<double>> base, slowed;
  for (int k = 0; k < 20; ++k) {
    const std::string name = "sinusoidal/v" + std::to_string(k);
    for (int r = 0; r < 9; ++r) {
      const double t = 100 + (r * 7 % 9) - 4;  // ±4% spread
      base[name].push_back(t);
      slowed[name].push_back(k < 3 ? 1.2 * t : t + 0.5 * ((r % 3) - 1));
    }
  }
  const reports::CompareOptions o;
  EXPECT_FALSE(reports::has_regression(reports::compare_runs(run_of(base), run_of(base), o)));
  const auto rows = reports::compare_runs(run_of(base), run_of(slowed), o);
  EXPECT_TRUE(reports::has_regression(rows));
  for (const auto& r : rows) {
    const bool slowed_one =
        r.name == "sinusoidal/v0" || r.name == "sinusoidal/v1" || r.name == "sinusoidal/v2";
    EXPECT_EQ(r.verdict == reports::Verdict::Regression, slowed_one)
        << r.name << " " << r.change << " " << r.p_adjusted;
  }
}

// Each repetition's pace_ns set to `pace` times a small spread of its own (as measured, the pace
// varies a little from repetition to repetition).
nlohmann::json with_pace(nlohmann::json run, double pace) {
  int r = 0;
  for (auto& b : run["benchmarks"]) {
    if (b["run_type"] == "iteration") b["pace_ns"] = pace * (1 + 0.01 * ((r++ * 5 % 7) - 3));
  }
  return run;
}

TEST(Compare, AShiftOfTheWholeMachineIsNotARegression) {
  std::map<std::string, std::vector<double>> base, machine_slower, build_slower, both_slower, hidden;
  for (int r = 0; r < 9; ++r) {
    const double t = 100 + (r * 7 % 9) - 4;
    base["sinusoidal/v"].push_back(t);
    machine_slower["sinusoidal/v"].push_back(1.4 * t);
    build_slower["sinusoidal/v"].push_back(1.2 * t);
    both_slower["sinusoidal/v"].push_back(1.4 * 1.2 * t);
    hidden["sinusoidal/v"].push_back(0.8 * 1.2 * t);
  }
  const reports::CompareOptions o;
  // The whole machine 1.4x slower in the new run, its pace with it: not the build's.
  auto rows =
      reports::compare_runs(with_pace(run_of(base), 1000), with_pace(run_of(machine_slower), 1400), o);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].verdict, reports::Verdict::Same) << rows[0].note;
  EXPECT_TRUE(rows[0].paced);
  EXPECT_NEAR(rows[0].paced_change, 0, 0.03);
  EXPECT_NE(rows[0].note.find("pace"), std::string::npos);
  // Without the pace on one side the times alone decide, as before.
  EXPECT_EQ(reports::compare_runs(run_of(base), with_pace(run_of(machine_slower), 1400), o)[0].verdict,
            reports::Verdict::Regression);
  // A slower build is slower against the pace too, on a steady machine and on a slowed one.
  EXPECT_EQ(reports::compare_runs(with_pace(run_of(base), 1000), with_pace(run_of(build_slower), 1000), o)[0]
                .verdict,
            reports::Verdict::Regression);
  rows = reports::compare_runs(with_pace(run_of(base), 1000), with_pace(run_of(both_slower), 1400), o);
  EXPECT_EQ(rows[0].verdict, reports::Verdict::Regression);
  EXPECT_NEAR(rows[0].paced_change, 0.2, 0.03);
  // The comparison's JSON reads back as the same rows (the report's input).
  const auto back = reports::rows_from_json(reports::to_json(rows, o));
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(reports::to_json(back, o), reports::to_json(rows, o));
  // The price of needing both: a machine faster by as much as the build got slower hides it.
  rows = reports::compare_runs(with_pace(run_of(base), 1000), with_pace(run_of(hidden), 800), o);
  EXPECT_EQ(rows[0].verdict, reports::Verdict::Same);
  EXPECT_NEAR(rows[0].paced_change, 0.2, 0.03);
}

TEST(Compare, ErroredBenchmarkFailsTheGate) {
  auto base = run_of({{"rope/x", {1, 2, 3}}});
  auto next = base;
  next["benchmarks"] = {{{"name", "rope/x"},
                         {"run_name", "rope/x"},
                         {"error_occurred", true},
                         {"error_message", "outside its contract"}}};
  EXPECT_TRUE(reports::has_regression(reports::compare_runs(base, next, {})));
}

TEST(Pareto, FrontKeepsTheUndominated) {
  // (ns, error): c is dominated by a (slower and less accurate); b is more accurate, d faster.
  const auto front =
      reports::pareto_front({{"a", {1.0, 1e-3}}, {"b", {2.0, 1e-7}}, {"c", {3.0, 1e-2}}, {"d", {0.5, 1.0}}});
  EXPECT_EQ(front, (std::vector<std::string>{"a", "b", "d"}));
}

}  // namespace
}  // namespace pe::cli

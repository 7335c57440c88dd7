// Unit tests of the CLI's pieces that a wrong answer would hide behind a plausible report: the .npy
// reader, the compare statistics, the Pareto front, the convention diagnosis and the RoPE scaling
// flags. Expected values
// come from the formats' specifications and closed forms, not from running the code.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numbers>

#include "args.h"
#include "diagnose.h"
#include "npy.h"
#include "pe/reports/compare.h"
#include "pe/reports/plots.h"
#include "scaling_options.h"

namespace pe::cli {
namespace {

// A .npy file as numpy writes it (format 1.0 unless version 2): magic, version, header length,
// the header dictionary padded with spaces to a multiple of 64 bytes, then the data.
std::string npy_bytes(const std::string& dict, const std::string& data, int version = 1) {
  const std::size_t prefix = version == 1 ? 10 : 12;
  std::string h = dict;
  h.append((64 - (prefix + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  for (std::size_t k = 0; k < prefix - 8; ++k) out += static_cast<char>((h.size() >> (8 * k)) & 0xff);
  return out + h + data;
}

template <class T>
std::string raw(std::initializer_list<T> v) {
  std::string s(v.size() * sizeof(T), '\0');
  std::memcpy(s.data(), std::data(v), s.size());
  return s;
}

TEST(Npy, ReadsCOrderFloat32) {
  const auto a = parse_npy(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                                     raw<float>({0, 1, 2, 3, 4, 5})),
                           "t");
  EXPECT_EQ(a.shape, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(a.values, (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(a.dtype, DType::F32);
}

TEST(Npy, FortranOrderIsTransposedToRowMajor) {
  // Fortran order stores column by column: [[1, 2, 3], [4, 5, 6]] is 1 4 2 5 3 6 in the file.
  const auto a = parse_npy(npy_bytes("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }",
                                     raw<double>({1, 4, 2, 5, 3, 6})),
                           "t");
  EXPECT_EQ(a.values, (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(Npy, HalfBfloat16BigEndianAndVersion2) {
  // IEEE binary16 0x3c00 = 1, 0xc000 = -2; bfloat16 0x3f80 = 1, 0x4049 = 3.140625 (float 0x40490000).
  const auto h = parse_npy(npy_bytes("{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }",
                                     std::string("\x00\x3c\x00\xc0", 4)),
                           "t");
  EXPECT_EQ(h.values, (std::vector<double>{1, -2}));
  const auto b = parse_npy(npy_bytes("{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }",
                                     std::string("\x80\x3f\x49\x40", 4), 2),
                           "t", DType::BF16);
  EXPECT_EQ(b.values, (std::vector<double>{1, 3.140625}));
  EXPECT_EQ(b.dtype, DType::BF16);
  const auto be = parse_npy(npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
                                      std::string("\x3f\x80\x00\x00", 4)),
                            "t");
  EXPECT_EQ(be.values, (std::vector<double>{1}));
}

TEST(Npy, IntegersReadExactly) {
  const auto a = parse_npy(npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                                     raw<std::int64_t>({-3, std::int64_t{1} << 40})),
                           "t");
  EXPECT_TRUE(a.integer);
  EXPECT_EQ(a.values, (std::vector<double>{-3, 1099511627776.0}));
}

TEST(Npy, RejectsMalformedFilesWithAMessage) {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string good = npy_bytes(dict, raw<float>({0, 1, 2, 3, 4, 5}));
  const auto fails_with = [](const std::string& bytes, const std::string& needle, DType u2 = DType::F32) {
    try {
      parse_npy(bytes, "x.npy", u2);
    } catch (const NpyError& e) {
      return std::string(e.what()).find(needle) != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(fails_with(good.substr(0, good.size() - 1), "truncated"));
  EXPECT_TRUE(fails_with(good + "x", "trailing"));
  EXPECT_TRUE(fails_with("GIF89a", "not a .npy"));
  EXPECT_TRUE(fails_with(good.substr(0, 20), "truncated header"));
  EXPECT_TRUE(fails_with(npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", "12345678"),
                         "element type"));
  // Undeclared 16-bit integers are integers (positions); `check` then asks for --dtype bf16.
  EXPECT_TRUE(
      parse_npy(npy_bytes("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", "12"), "t").integer);
  EXPECT_TRUE(fails_with(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (a,), }", "1234"),
                         "non-integer"));
  EXPECT_TRUE(fails_with(npy_bytes("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }", "1234"),
                         "fortran_order"));
  EXPECT_TRUE(fails_with(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': "
                                   "(4294967296, 4294967296, 4294967296), }",
                                   ""),
                         "too large"));
}

TEST(Npy, WriterRoundTripsEveryType) {
  const std::vector<double> v = {1.0, -0.5, 0.099609375};  // exact in all four types
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    const std::string path = ::testing::TempDir() + "/rt.npy";
    write_npy(path, v, {3}, t);
    const auto a = read_npy(path, DType::BF16);
    EXPECT_EQ(a.values, v) << to_string(t);
    EXPECT_EQ(a.dtype, t);
  }
}

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

// The scaling flags as a command line gives them: parsed by CLI11, `given` from the parse.
ScalingFlags parse_scaling(std::vector<std::string> args) {
  CLI::App app;
  ScalingFlags f;
  add_scaling_options(app, f);
  std::reverse(args.begin(), args.end());  // CLI11 takes them last first
  app.parse(args);
  f.given = given_scaling_flags(app);
  return f;
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
  EXPECT_EQ(to_rope_scaling(parse_scaling({})).type, RopeScalingType::None);
  const RopeScaling linear = to_rope_scaling(parse_scaling({"--scaling", "linear", "--factor", "2.5"}));
  EXPECT_EQ(linear.type, RopeScalingType::Linear);
  EXPECT_EQ(linear.factor, 2.5);
  const RopeScaling yarn = to_rope_scaling(
      parse_scaling({"--scaling", "yarn", "--factor", "4", "--original-max-position", "4096"}));
  EXPECT_EQ(yarn.type, RopeScalingType::Yarn);
  EXPECT_EQ(yarn.original_max_position, 4096);
  EXPECT_EQ(yarn.beta_fast, 32);  // HF's defaults
  EXPECT_EQ(yarn.beta_slow, 1);
  EXPECT_TRUE(yarn.truncate);
  EXPECT_FALSE(yarn.mscale.has_value());
  EXPECT_FALSE(yarn.attention_factor.has_value());
  const RopeScaling yarn2 = to_rope_scaling(
      parse_scaling({"--scaling", "yarn", "--factor", "40", "--original-max-position", "4096", "--mscale",
                     "0.707", "--mscale-all-dim", "0.707", "--truncate", "false", "--beta-fast", "16"}));
  EXPECT_EQ(yarn2.mscale, 0.707);
  EXPECT_EQ(yarn2.mscale_all_dim, 0.707);
  EXPECT_FALSE(yarn2.truncate);
  EXPECT_EQ(yarn2.beta_fast, 16);
  const RopeScaling llama3 =
      to_rope_scaling(parse_scaling({"--scaling", "llama3", "--factor", "8", "--original-max-position",
                                     "8192", "--high-freq-factor", "2"}));
  EXPECT_EQ(llama3.low_freq_factor, 1);
  EXPECT_EQ(llama3.high_freq_factor, 2);
  const RopeScaling dynamic = to_rope_scaling(parse_scaling(
      {"--scaling", "dynamic", "--factor", "2", "--original-max-position", "2048", "--seq-len", "5000"}));
  EXPECT_EQ(dynamic.seq_len, 5000);
}

TEST(Scaling, LongRopeReadsOneDimensionalFloatLists) {
  const std::string dir = ::testing::TempDir();
  write_npy(dir + "/short.npy", {1, 1.5, 2, 3}, {4}, DType::F64);
  write_npy(dir + "/long.npy", {2, 4, 8, 16}, {4}, DType::F32);
  write_npy(dir + "/square.npy", {1, 2, 3, 4}, {2, 2}, DType::F64);
  const std::vector<std::string> base = {
      "--scaling", "longrope",       "--factor",       "8", "--original-max-position",
      "4096",      "--long-factors", dir + "/long.npy"};
  auto args = base;
  args.insert(args.end(), {"--short-factors", dir + "/short.npy"});
  const RopeScaling s = to_rope_scaling(parse_scaling(args));
  EXPECT_EQ(s.short_factor, (std::vector<double>{1, 1.5, 2, 3}));
  EXPECT_EQ(s.long_factor, (std::vector<double>{2, 4, 8, 16}));
  EXPECT_NE(usage_error([&] { to_rope_scaling(parse_scaling(base)); }).find("--short-factors: required"),
            std::string::npos);
  args = base;
  args.insert(args.end(), {"--short-factors", dir + "/square.npy"});
  EXPECT_NE(usage_error([&] { to_rope_scaling(parse_scaling(args)); }).find("--short-factors: "),
            std::string::npos);
  args = base;
  args.insert(args.end(), {"--short-factors", dir + "/missing.npy"});
  EXPECT_NE(usage_error([&] { to_rope_scaling(parse_scaling(args)); }).find("--short-factors: "),
            std::string::npos);
}

TEST(Scaling, RejectsWhatTheMethodWouldIgnore) {
  const auto message = [](std::vector<std::string> args) {
    return usage_error([&] { to_rope_scaling(parse_scaling(std::move(args))); });
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
  p.scaling.beta_fast = 0.5;
  EXPECT_EQ(usage_error([&] { rope_plan(p); }).rfind("--beta-fast: beta_fast must be >= beta_slow", 0), 0u);
  p.base = 1;  // not a scaling parameter: the core's own error
  EXPECT_THROW(rope_plan(p), InvalidArgument);
  EXPECT_EQ(flag_for_parameter("short_factor"), "--short-factors");
  EXPECT_EQ(flag_for_parameter("head_dim"), "");
  for (const ScalingField& field : scaling_fields())  // every field a method reads can be given
    EXPECT_NE(flag_for_parameter(std::string(field.name)), "") << field.name;

  const ScalingFlags none = parse_scaling({});
  EXPECT_EQ(rotary_dim_for(none, 64, 16, "--rotary-dim"), 16);
  const ScalingFlags partial = parse_scaling({"--partial-rotary-factor", "0.25"});
  EXPECT_EQ(rotary_dim_for(partial, 80, 0, "--rotary-dim"), 20);  // int(80 · 0.25)
  EXPECT_EQ(usage_error([&] {
              rotary_dim_for(partial, 80, 16, "--rotary-dim");
            }).rfind("--rotary-dim and --partial-rotary-factor: give one", 0),
            0u);
  EXPECT_EQ(usage_error([&] {
              rotary_dim_for(partial, 12, 0, "--rotary-dim");
            }).rfind("--partial-rotary-factor: ", 0),
            0u);  // int(12 · 0.25) = 3 is odd
}

double two_sided(double z) { return std::erfc(z / std::numbers::sqrt2); }

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

TEST(Diagnose, NamesTheLayoutOfAConcatenatedTable) {
  const std::size_t dim = 16;
  std::vector<std::int64_t> positions;
  for (std::int64_t p = 0; p < 40; ++p) positions.push_back(p);
  std::vector<double> table(positions.size() * dim);
  for (std::size_t r = 0; r < positions.size(); ++r) {
    for (std::size_t i = 0; i < dim / 2; ++i) {
      const double phi =
          static_cast<double>(positions[r]) * std::pow(10000.0, -2.0 * static_cast<double>(i) / dim);
      table[r * dim + i] = std::sin(phi);  // concatenated: sines first, then cosines
      table[r * dim + dim / 2 + i] = std::cos(phi);
    }
  }
  const Convention given{Layout::Interleaved, 10000.0};
  const auto fits = diagnose_sinusoidal(table, dim, positions, given);
  EXPECT_EQ(fits.front().convention.layout, Layout::Concatenated);
  EXPECT_LT(fits.front().residual, 1e-12);
  EXPECT_EQ(describe(fits.front().convention, given), "layout concatenated (given: interleaved)");
}

TEST(Diagnose, NamesAShiftAndTheT2tExponent) {
  const std::size_t dim = 8;
  std::vector<std::int64_t> positions = {0, 1, 2, 3, 4, 5, 6, 7, 100, 1000};
  std::vector<double> table(positions.size() * dim);
  for (std::size_t r = 0; r < positions.size(); ++r) {
    for (std::size_t i = 0; i < dim / 2; ++i) {
      // tensor2tensor: exponent i/(d/2 - 1), and an off-by-one position.
      const double phi =
          static_cast<double>(positions[r] + 1) * std::pow(10000.0, -static_cast<double>(i) / 3);
      table[r * dim + 2 * i] = std::sin(phi);
      table[r * dim + 2 * i + 1] = std::cos(phi);
    }
  }
  const auto fits = diagnose_sinusoidal(table, dim, positions, {Layout::Interleaved, 10000.0});
  EXPECT_TRUE(fits.front().convention.t2t_exponent);
  EXPECT_EQ(fits.front().convention.shift, 1);
}

}  // namespace
}  // namespace pe::cli

// Unit tests of the CLI's pieces that a wrong answer would hide behind a plausible report: the .npy
// reader, the compare statistics, the Pareto front and the convention diagnosis. Expected values
// come from the formats' specifications and closed forms, not from running the code.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <numbers>

#include "args.h"
#include "compare.h"
#include "diagnose.h"
#include "npy.h"
#include "plots.h"

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

// Two-sided p of the normal approximation with continuity correction: 2·Q(z) = erfc(z/√2).
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

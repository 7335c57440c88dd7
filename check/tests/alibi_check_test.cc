// check_alibi on a float32 bias read in place (one screened pass, measure_alibi_screened, the tally through
// TallyScreen) gives the report of the same values handed over as doubles (element by element,
// measure_alibi): the same verdict, violations, band maxima, worst elements, contracts met, diagnosis and
// JSON, the 99th percentiles within the screen's stated radius, on passing, failing and spoiled tensors in
// every form.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "engine/tally_screen.h"
#include "pe/check/check.h"
#include "pe/pe.h"

namespace pe::check {
namespace alibi_check_test {
namespace {

struct Bias {
  std::size_t heads, queries, keys;
  std::vector<float> f32;
  std::vector<double> f64;  // the same values
};

// A [heads, Q, K] bias of alibi.scalar_f32 given `kernel_max_bias` at queries K - Q .. K - 1, keys 0..K-1.
Bias make_bias(std::size_t heads, std::size_t queries, std::size_t keys, AlibiForm form,
               double kernel_max_bias) {
  Bias b{heads, queries, keys, std::vector<float>(heads * queries * keys), {}};
  std::vector<std::int64_t> q(queries), k(keys);
  for (std::size_t i = 0; i < queries; ++i) q[i] = static_cast<std::int64_t>(keys - queries + i);
  for (std::size_t j = 0; j < keys; ++j) k[j] = static_cast<std::int64_t>(j);
  AlibiParams params{static_cast<std::int64_t>(heads), kernel_max_bias};
  params.form = form;
  alibi_bias(*find_variant("alibi.scalar_f32"), AlibiPlan(params), q, k, std::span<float>(b.f32));
  return b;
}

// The band table's p99 columns blanked (the screened pass's percentiles are its estimates').
std::string without_p99(const std::string& text) {
  std::istringstream in(text);
  std::string out, line;
  std::size_t abs_end = 0, ulp_end = 0;
  while (std::getline(in, line)) {
    if (const std::size_t a = line.find("p99 |err|"); a != std::string::npos) {
      abs_end = a + 9, ulp_end = line.find("p99 ulp") + 7;
    } else if (line.empty()) {
      abs_end = ulp_end = 0;
    } else if (abs_end != 0 && line.size() >= ulp_end) {
      line.replace(abs_end - 10, 10, 10, '#');
      line.replace(ulp_end - 9, 9, 9, '#');
    }
    out += line + "\n";
  }
  return out;
}

// Returns whether the check passed. The screened pass's report is the element path's but for the bands'
// 99th percentiles, within measure_alibi_screened's radius (|exact| <= keys: slopes at most 1, distances
// below `keys`).
bool expect_same_reports(Bias& b, AlibiForm form) {
  b.f64.assign(b.f32.begin(), b.f32.end());
  AlibiRequest typed, doubles;
  typed.table = {{}, {b.heads, b.queries, b.keys}, DType::F32, "bias", b.f32.data()};
  doubles.table = {b.f64, {b.heads, b.queries, b.keys}, DType::F32, "bias", nullptr};
  typed.spec.form = doubles.spec.form = form;
  const Report rows = check_alibi(typed, Names()), elements = check_alibi(doubles, Names());
  EXPECT_EQ(rows.passed, elements.passed);
  EXPECT_EQ(without_p99(rows.text), without_p99(elements.text));
  nlohmann::json got = rows.json(), want = elements.json();
  EXPECT_EQ(got["bands"].size(), want["bands"].size());
  const auto largest = static_cast<double>(b.keys);
  for (std::size_t i = 0; i < std::min(got["bands"].size(), want["bands"].size()); ++i) {
    nlohmann::json &g = got["bands"][i], &w = want["bands"][i];
    const double ga = g["p99_abs"], wa = w["p99_abs"], gu = g["p99_ulp"], wu = w["p99_ulp"];
    if (ga != wa) {
      EXPECT_LE(std::fabs(ga - wa), 0x1p-49 * (wa + largest)) << "band " << i;
    }
    if (gu != wu) {
      EXPECT_LE(std::fabs(gu - wu), 0x1p-49 * wu + 0x1p-25) << "band " << i;
    }
    for (nlohmann::json* j : {&g, &w}) j->erase("p99_abs"), j->erase("p99_ulp");
  }
  EXPECT_EQ(got.dump(), want.dump());
  return rows.passed;
}

TEST(CheckAlibi, InPlaceFloat32GivesTheElementPathsReport) {
  for (const AlibiForm form : {AlibiForm::Causal, AlibiForm::Symmetric, AlibiForm::Bloom}) {
    SCOPED_TRACE(to_string(form));
    // A correct kernel (passes), positions across the 999|1000 band edge.
    Bias pass = make_bias(8, 12, 1010, form, 8);
    EXPECT_TRUE(expect_same_reports(pass, form));
    // Another max_bias (fails and is diagnosed).
    Bias wrong = make_bias(8, 12, 1010, form, 4);
    EXPECT_FALSE(expect_same_reports(wrong, form));
  }
}

TEST(CheckAlibi, SpoiledElementsGiveTheElementPathsReport) {
  Bias b = make_bias(12, 9, 300, AlibiForm::Symmetric, 8);
  // One ULP off, a sign flipped, a NaN, an infinity, a zero off the diagonal: each a worst element.
  b.f32[17] = std::nextafter(b.f32[17], INFINITY);
  b.f32[900] = -b.f32[900];
  b.f32[2000] = std::numeric_limits<float>::quiet_NaN();
  b.f32[5000] = INFINITY;
  b.f32[7001] = 0.0f;
  EXPECT_FALSE(expect_same_reports(b, AlibiForm::Symmetric));
  // One-ULP errors alone: within the class's budget (a pass whose worst elements are those).
  Bias one = make_bias(12, 9, 300, AlibiForm::Symmetric, 8);
  for (std::size_t i = 3; i < one.f32.size(); i += 997) one.f32[i] = std::nextafter(one.f32[i], -INFINITY);
  EXPECT_TRUE(expect_same_reports(one, AlibiForm::Symmetric));
}

TEST(CheckAlibi, TallyScreensLineRisesWithTheWorstItHolds) {
  // The line is kept between calls: an element that raises a contract's worst must raise it.
  ContractTally tally(Family::Alibi, DType::F32);
  TallyScreen screen(tally, DType::F32);
  constexpr std::size_t pair = 3;
  EXPECT_EQ(screen.bar(pair), 0.0);  // no element yet: every error is loud
  EXPECT_EQ(screen.bar(pair), 0.0);
  const auto element = [&](double exact, double error) {
    harness::ElementRecord e{.row = 0, .position = 5, .channel = 5};
    e.head = 2, e.dim = 8, e.base = 8, e.pair = pair, e.abs_phi = 1;
    e.exact = exact, e.y = exact + error, e.scale = std::fabs(exact), e.reach = 2 * std::fabs(exact);
    e.budget = harness::Budget{&find_variant("alibi.scalar_f32")->contract(), DType::F32}(nullptr, 1.0, pair,
                                                                                          e.scale);
    e.abs_error = std::fabs(error), e.ulp = e.abs_error / 0x1p-22;
    return e;
  };
  screen.add(element(-1.25, 0x1p-24));
  const double first = screen.bar(pair);
  EXPECT_GT(first, 0.0);
  EXPECT_EQ(screen.bar(pair), first);
  screen.add(element(-1.25, 0x1p-22));  // four times the error: four times the worst ratio
  const double second = screen.bar(pair);
  EXPECT_GT(second, 3 * first);
  screen.add(element(-1.25, 0x1p-25));  // less: the line stays
  EXPECT_EQ(screen.bar(pair), second);
}

}  // namespace
}  // namespace alibi_check_test
}  // namespace pe::check

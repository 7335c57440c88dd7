// check's screened pass over a RoPE batch (rope_screen.h, measure_rope_screened): its Measurement is the
// exact path's (measure_rope_rows row by row) in everything but the 99th percentiles, which lie within the
// screen's radius of the exact ones: the verdict, the counts, every band's maxima with their elements and
// the worst list, and every element over budget reaches the caller as a loud record. Over layouts, partial
// and offset rotary, M-RoPE, YaRN's attention factor, LongRoPE's two lists, every type the screen reads,
// correct and wrong kernels (unrotated rows, a wrong base, a moved pass-through channel, NaN and infinite
// outputs), and with the verdict alone kept (Measurement::verdict_only) the same verdict and counts. And
// every Highway target's row is the best one's, bit for bit.
#include "pe/harness/rope_screen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>

#include "pe/harness/measure.h"
#include "pe/harness/typed_buffer.h"
#include "pe/ref/reference.h"
#include "pe/variant.h"
#include "same_measurement.h"

namespace pe::harness {
namespace {

TEST(RopeScreen, EveryTargetIsRegistered) {
  EXPECT_FALSE(screen_row_targets().empty()) << "no Highway target with a fused multiply-add on this CPU";
  for (const ScreenRowTarget& t : screen_row_targets()) std::printf("screen target %s\n", t.name.c_str());
}

TEST(RopeScreen, EveryTargetGivesTheBestOnesRow) {
  std::mt19937_64 g(20261205);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (const std::size_t n : {std::size_t{3}, std::size_t{8}, std::size_t{37}, std::size_t{64}}) {
    const std::size_t padded = ScreenToken::padded(n);
    std::vector<double> sin(padded), cos(padded), radius(padded, 0x1p-47), slope(padded), tally(padded),
        tally_floor(padded, 1e-30), reach(padded);
    for (std::size_t k = 0; k < n; ++k) {
      const double phi = unit(g) * 100;
      sin[k] = std::sin(phi), cos[k] = std::cos(phi);
      slope[k] = 1e-7 * (1 + std::fabs(unit(g))), tally[k] = slope[k] * 0.5, reach[k] = slope[k] * 2;
    }
    // A row of 2·padded + 8 floats in each pattern; outputs near the rotation, some far, one NaN.
    std::vector<float> x(4 * padded + 16), y(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(unit(g));
    for (const bool interleaved : {false, true}) {
      const ScreenChannels c = interleaved ? ScreenChannels{0, 1, true} : ScreenChannels{0, padded, false};
      for (std::size_t k = 0; k < n; ++k) {
        const std::size_t ia = interleaved ? 2 * k : k, ib = interleaved ? 2 * k + 1 : padded + k;
        const double a = x[ia], b = x[ib];
        const double noise = k % 7 == 3 ? 1e-3 : 1e-8 * unit(g);
        y[ia] = static_cast<float>(a * cos[k] - b * sin[k] + noise);
        y[ib] = k % 11 == 5 ? NAN : static_cast<float>(a * sin[k] + b * cos[k]);
      }
      const ScreenToken token{sin.data(),   cos.data(),         radius.data(), slope.data(),
                              tally.data(), tally_floor.data(), reach.data()};
      for (const bool reach_checked : {false, true}) {
        ScreenBars bars;
        bars.budget_floor = 1e-40, bars.ratio_bar = 0.9, bars.max_abs = 5e-8, bars.max_ulp = 0.6;
        bars.check_reach = reach_checked, bars.reach_floor = 1e-40, bars.reach_factor = 0.7;
        bars.abs_floor = 2e-8, bars.ulp_floor = 0.3;
        std::vector<std::vector<double>> flags, abs_tail, ulp_tail;
        std::vector<ScreenResult> results;
        for (const ScreenRowTarget& t : screen_row_targets()) {
          flags.emplace_back(padded, -1.0);
          abs_tail.emplace_back(2 * padded + 8, -1.0);
          ulp_tail.emplace_back(2 * padded + 8, -1.0);
          ScreenResult r{flags.back().data(), abs_tail.back().data(), ulp_tail.back().data()};
          t.run(ScreenType::F32, x.data(), y.data(), n, c, c, token, bars, ScreenRows{}, r);
          results.push_back(r);
        }
        const std::string what = "n " + std::to_string(n) + (interleaved ? " interleaved" : " half-split");
        EXPECT_GT(results[0].loud, 0U) << what;  // the far and NaN elements
        EXPECT_LT(results[0].loud, 2 * n) << what;
        for (std::size_t t = 1; t < results.size(); ++t) {
          const std::string where = what + " " + screen_row_targets()[t].name;
          EXPECT_EQ(results[t].loud, results[0].loud) << where;
          EXPECT_EQ(results[t].quiet_encoding, results[0].quiet_encoding) << where;
          ASSERT_EQ(results[t].abs_kept, results[0].abs_kept) << where;
          ASSERT_EQ(results[t].ulp_kept, results[0].ulp_kept) << where;
          for (std::size_t k = 0; k < n; ++k) EXPECT_EQ(flags[t][k], flags[0][k]) << where << " pair " << k;
          // The tails are multisets: a target of other width writes them in another order.
          for (auto* tails : {&abs_tail, &ulp_tail}) {
            const std::size_t kept = tails == &abs_tail ? results[0].abs_kept : results[0].ulp_kept;
            std::vector<double> mine((*tails)[t].begin(),
                                     (*tails)[t].begin() + static_cast<std::ptrdiff_t>(kept));
            std::vector<double> best((*tails)[0].begin(),
                                     (*tails)[0].begin() + static_cast<std::ptrdiff_t>(kept));
            std::sort(mine.begin(), mine.end());
            std::sort(best.begin(), best.end());
            for (std::size_t i = 0; i < kept; ++i)
              EXPECT_TRUE(bits_equal(mine[i], best[i])) << where << " kept " << i;
          }
        }
      }
    }
  }
}

// A row of pairs each rounded from its rotation in float32 (under both tails' floors), but for pair 9 (3 ulps
// of 0.01: over the ulp floor alone), pair 17 (1 ulp of 1.5: over the abs floor alone), pair 25 (off by 1e-3:
// loud) and three zero pairs: 5 in a wholly quiet group, 26 beside the loud one, 58 in the last group (8
// lanes) or a whole one (4). The screen's pre-test (a vector of pairs under both floors needs no judge) must
// leave each estimate over its floor kept, |y − e| and its ulps replicated here in double (e as the screen
// forms it: one fused multiply-add and a product), and count the zero pairs' elements as quiet without the
// encoding. Without the abs floor in the pre-test's bar pair 17's estimate is lost; with max_ulp alone in its
// ulp bar, pair 9's; without the zero pairs counted, or with a loud group's counted twice, the encoding's
// count is off.
TEST(RopeScreen, ThePreTestKeepsEveryEstimateOverItsFloors) {
  std::mt19937_64 g(20261206);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const std::size_t n = 61, padded = ScreenToken::padded(n);
  const double radius_per_s = 0x1p-47;
  std::vector<double> sin(padded), cos(padded), radius(padded, radius_per_s), slope(padded, 4e-6),
      tally(padded, 1.0), tally_floor(padded, 1.0), reach(padded, 0.0);
  std::vector<float> x(2 * padded + 8), y(x.size());
  std::vector<double> abs_expected, ulp_expected;
  const ScreenBars bars = [] {
    ScreenBars b;
    b.budget_floor = 1e-40, b.ratio_bar = 1, b.max_abs = 1, b.max_ulp = 50;
    b.abs_floor = 1e-7, b.ulp_floor = 2.5;
    return b;
  }();
  for (std::size_t k = 0; k < n; ++k) {
    const bool zero = k == 5 || k == 26 || k == 58, planted = k == 9 || k == 17;
    const double phi = planted ? 0.0 : unit(g) * 100;
    sin[k] = std::sin(phi), cos[k] = std::cos(phi);
    const double a = x[k] = zero ? 0.0f : k == 9 ? 0.01f : k == 17 ? 1.5f : static_cast<float>(unit(g));
    // (A planted pair's b is not 0: an exact 0 within a radius is loud, its ulp unbounded below.)
    const double b = x[padded + k] = zero ? 0.0f : planted ? 0.25f : static_cast<float>(unit(g));
    const double e[2] = {std::fma(cos[k], a, -(sin[k] * b)), std::fma(sin[k], a, cos[k] * b)};
    const double r = (std::fabs(a) + std::fabs(b)) * radius_per_s;
    float out[2] = {static_cast<float>(e[0]), static_cast<float>(e[1])};  // within 2^-24·|e|, an ulp
    if (k == 9) out[0] = 0.01f + 3 * 0x1p-30f;                            // 0.01's ulp is 2^-30
    if (k == 17) out[0] = 1.5f + 0x1p-23f;
    if (k == 25) out[0] += 1e-3f;
    for (int o = 0; o < 2; ++o) {
      y[o == 0 ? k : padded + k] = out[o];
      const double err = std::fabs(out[o] - e[o]);
      int exponent = 0;
      std::frexp(std::max(std::fabs(e[o]) - 2 * r, 0x1p-126), &exponent);  // binade 2^(exponent − 1)
      if (err > bars.abs_floor) abs_expected.push_back(err);
      const double ulps = std::ldexp(err, 24 - exponent);
      if (ulps > bars.ulp_floor) ulp_expected.push_back(ulps);
    }
  }
  // The planted estimates and the loud element's, nothing else, over the floors.
  ASSERT_EQ(abs_expected.size(), 2U);
  ASSERT_EQ(ulp_expected.size(), 2U);
  std::sort(abs_expected.begin(), abs_expected.end()), std::sort(ulp_expected.begin(), ulp_expected.end());
  const ScreenToken token{sin.data(),   cos.data(),         radius.data(), slope.data(),
                          tally.data(), tally_floor.data(), reach.data()};
  for (const ScreenRowTarget& t : screen_row_targets()) {
    std::vector<double> flags(padded, -1.0), abs_tail(2 * padded + 8), ulp_tail(2 * padded + 8);
    ScreenResult r{flags.data(), abs_tail.data(), ulp_tail.data()};
    t.run(ScreenType::F32, x.data(), y.data(), n, {0, padded, false}, {0, padded, false}, token, bars,
          ScreenRows{}, r);
    EXPECT_EQ(r.loud, 1U) << t.name;
    EXPECT_EQ(r.quiet_encoding, 2 * n - 1 - 6) << t.name;
    for (std::size_t k = 0; k < n; ++k) EXPECT_EQ(flags[k], k == 25 ? 1.0 : 0.0) << t.name << " pair " << k;
    ASSERT_EQ(r.abs_kept, abs_expected.size()) << t.name;
    ASSERT_EQ(r.ulp_kept, ulp_expected.size()) << t.name;
    std::sort(abs_tail.begin(), abs_tail.begin() + static_cast<std::ptrdiff_t>(r.abs_kept));
    std::sort(ulp_tail.begin(), ulp_tail.begin() + static_cast<std::ptrdiff_t>(r.ulp_kept));
    for (std::size_t i = 0; i < r.abs_kept; ++i)
      EXPECT_EQ(abs_tail[i], abs_expected[i]) << t.name << " " << i;
    for (std::size_t i = 0; i < r.ulp_kept; ++i)
      EXPECT_EQ(ulp_tail[i], ulp_expected[i]) << t.name << " " << i;
  }
}

// A run of rows (ScreenRows: a token's heads) is each row screened alone: five rows at a stride longer than a
// row, each with estimates over the floors, row 2 with a loud element. The run from row 0 stops after row 2:
// rows 0 and 1 counted in `before` (their sums), their estimates then row 2's in order in the tails, the
// counts and flags row 2's; the run from row 3 ends at row 4, quiet. Without the stop, or with the tails
// not advanced past a row's estimates, or the counts of the last row folded into `before`, it fails. Rows of
// float32 in halves, and of doubles (an output handed over as doubles) with interleaved pairs: the row's step
// in bytes and the channels' pattern both differ.
template <class T>
void ExpectRunsOfRowsAreRowsAlone(ScreenType type, bool interleaved) {
  std::mt19937_64 g(20261207);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  const std::size_t n = 37, padded = ScreenToken::padded(n), stride = 2 * padded + 11, rows = 5;
  std::vector<double> sin(padded), cos(padded), radius(padded, 0x1p-47), slope(padded, 4e-6),
      tally(padded, 1.0), tally_floor(padded, 1.0), reach(padded, 0.0);
  for (std::size_t k = 0; k < n; ++k) {
    const double phi = unit(g) * 100;
    sin[k] = std::sin(phi), cos[k] = std::cos(phi);
  }
  const ScreenChannels c = interleaved ? ScreenChannels{0, 1, true} : ScreenChannels{0, padded, false};
  std::vector<T> x(rows * stride + 2 * padded + 8), y(x.size());
  for (std::size_t r = 0; r < rows; ++r) {
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t ia = r * stride + (interleaved ? 2 * k : k), ib = interleaved ? ia + 1 : ia + padded;
      // |a|, |b| >= 0.5: the budget 4e-6·s stays over the planted errors. Values of float32 in either type.
      const double a = x[ia] = static_cast<float>(0.5 + 0.5 * unit(g));
      const double b = x[ib] = static_cast<float>(-0.5 - 0.5 * unit(g));
      y[ia] = static_cast<float>(std::fma(cos[k], a, -(sin[k] * b)) + (k % 9 == r ? 3e-7 : 0.0));
      y[ib] =
          static_cast<float>(std::fma(sin[k], a, cos[k] * b));  // 3e-7: over the abs floor, under the line
      if (r == 2 && k == 20) y[ia] += 1e-3f;                    // row 2's loud element
    }
  }
  ScreenBars bars;
  bars.budget_floor = 1e-40, bars.ratio_bar = 1, bars.max_abs = 1e-5, bars.max_ulp = 1e7;
  bars.abs_floor = 1e-7, bars.ulp_floor = 2.5;
  const ScreenToken token{sin.data(),   cos.data(),         radius.data(), slope.data(),
                          tally.data(), tally_floor.data(), reach.data()};
  const std::size_t room = rows * (2 * padded + 8);
  for (const ScreenRowTarget& t : screen_row_targets()) {
    const std::string name = t.name + (interleaved ? " interleaved" : " half-split");
    // Each row alone.
    std::vector<ScreenResult> alone;
    std::vector<std::vector<double>> flags(rows), abs_tails(rows), ulp_tails(rows);
    for (std::size_t r = 0; r < rows; ++r) {
      flags[r].assign(padded, -1.0), abs_tails[r].assign(2 * padded + 8, 0.0);
      ulp_tails[r].assign(2 * padded + 8, 0.0);
      ScreenResult one{flags[r].data(), abs_tails[r].data(), ulp_tails[r].data()};
      t.run(type, &x[r * stride], &y[r * stride], n, c, c, token, bars, ScreenRows{}, one);
      alone.push_back(one);
      EXPECT_EQ(one.loud, r == 2 ? 1U : 0U) << name << " row " << r;
      EXPECT_GT(one.abs_kept, 0U) << name << " row " << r;
    }
    for (const std::size_t first : {std::size_t{0}, std::size_t{3}}) {
      const std::size_t last = first == 0 ? 2 : 4;
      std::vector<double> run_flags(padded, -1.0), abs_tail(room, 0.0), ulp_tail(room, 0.0);
      ScreenResult run{run_flags.data(), abs_tail.data(), ulp_tail.data()};
      ScreenRows span;
      span.rows = rows - first, span.stride = stride;
      span.ahead = stride, span.ahead_bytes = 2 * padded * sizeof(T);  // the next row's, in bounds
      span.ahead_rows = rows - first;
      t.run(type, &x[first * stride], &y[first * stride], n, c, c, token, bars, span, run);
      const std::string what = name + " from row " + std::to_string(first);
      EXPECT_EQ(run.before.rows, last - first) << what;
      std::size_t encoding = 0, abs_kept = 0, ulp_kept = 0;
      std::vector<double> abs_expected, ulp_expected;
      for (std::size_t r = first; r <= last; ++r) {
        if (r < last) encoding += alone[r].quiet_encoding, abs_kept += alone[r].abs_kept;
        if (r < last) ulp_kept += alone[r].ulp_kept;
        abs_expected.insert(abs_expected.end(), abs_tails[r].begin(),
                            abs_tails[r].begin() + static_cast<std::ptrdiff_t>(alone[r].abs_kept));
        ulp_expected.insert(ulp_expected.end(), ulp_tails[r].begin(),
                            ulp_tails[r].begin() + static_cast<std::ptrdiff_t>(alone[r].ulp_kept));
      }
      EXPECT_EQ(run.before.quiet_encoding, encoding) << what;
      EXPECT_EQ(run.before.abs_kept, abs_kept) << what;
      EXPECT_EQ(run.before.ulp_kept, ulp_kept) << what;
      EXPECT_EQ(run.loud, alone[last].loud) << what;
      EXPECT_EQ(run.quiet_encoding, alone[last].quiet_encoding) << what;
      ASSERT_EQ(run.abs_kept, alone[last].abs_kept) << what;
      ASSERT_EQ(run.ulp_kept, alone[last].ulp_kept) << what;
      EXPECT_EQ(run.abs_tail, abs_tail.data()) << what;  // handed back as given
      for (std::size_t k = 0; k < n; ++k) EXPECT_EQ(run_flags[k], flags[last][k]) << what << " pair " << k;
      for (std::size_t i = 0; i < abs_expected.size(); ++i)
        EXPECT_TRUE(bits_equal(abs_tail[i], abs_expected[i])) << what << " abs " << i;
      for (std::size_t i = 0; i < ulp_expected.size(); ++i)
        EXPECT_TRUE(bits_equal(ulp_tail[i], ulp_expected[i])) << what << " ulp " << i;
    }
  }
}

TEST(RopeScreen, ARunOfRowsIsEachRowAlone) {
  ExpectRunsOfRowsAreRowsAlone<float>(ScreenType::F32, false);
  ExpectRunsOfRowsAreRowsAlone<double>(ScreenType::F64, true);
}

// The exact value lies within r = s·radius of e, so below e's binade where |e| is within 2r above a power of
// two: its ulp there is half e's, and the ulp bar must be met at that ulp. A wide radius (2^-20) makes such
// an e easy to write: at a = 1 + 2^-22 the ulp bound is (|y − e| + r)·2^24 ≈ 18 (9 at e's own ulp), at 1.5
// (the control) (2^-23 + 1.5·2^-20)·2^23 = 13; under a ulp bar of 15 the first is loud, the second quiet.
TEST(RopeScreen, AnExactValueThatMayLieBelowItsBinadeIsJudgedByTheLowerUlp) {
  const std::size_t padded = ScreenToken::padded(2);
  std::vector<double> sin(padded, 0.0), cos(padded, 1.0), radius(padded, 0x1p-20), slope(padded, 1.0),
      tally(padded, 1.0), tally_floor(padded, 1.0), reach(padded, 0.0);
  // Half-split pairs (a, b) = (x[k], x[padded + k]) with b = 0: e = a, s = |a|.
  std::vector<float> x(2 * padded + 8, 0.0f), y(x.size(), 0.0f);
  x[0] = 1.0f + 0x1p-22f, x[1] = 1.5f;
  y[0] = x[0] + 0x1p-23f, y[1] = x[1] + 0x1p-23f;  // a small error: the bound is r's
  const ScreenToken token{sin.data(),   cos.data(),         radius.data(), slope.data(),
                          tally.data(), tally_floor.data(), reach.data()};
  ScreenBars bars;
  bars.ratio_bar = 1, bars.max_abs = 1;
  bars.abs_floor = bars.ulp_floor = INFINITY;
  // Under a bar of 20 the first is quiet at the lower ulp too (a test of e's own binade would make it loud).
  for (const double bar : {15.0, 20.0}) {
    bars.max_ulp = bar;
    for (const ScreenRowTarget& t : screen_row_targets()) {
      std::vector<double> flags(padded, -1.0), abs_tail(2 * padded + 8), ulp_tail(2 * padded + 8);
      ScreenResult r{flags.data(), abs_tail.data(), ulp_tail.data()};
      t.run(ScreenType::F32, x.data(), y.data(), 2, {0, padded, false}, {0, padded, false}, token, bars,
            ScreenRows{}, r);
      // Bit 1: element a (element b, exactly 0, is loud at any radius: its exact value may be subnormal).
      const std::string what = t.name + ", ulp bar " + std::to_string(bar);
      EXPECT_EQ(static_cast<int>(flags[0]) & 1, bar < 18 ? 1 : 0) << what << ": a = 1 + 2^-22";
      EXPECT_EQ(static_cast<int>(flags[1]) & 1, 0) << what << ": a = 1.5";
    }
  }
}

// A batch [tokens, heads, hd] in `type`: x drawn, y the exact rotation rounded (plus, per `wrong`, a kernel's
// mistake).
enum class Wrong { None, Unrotated, Base, Moved, NonFinite, ZeroPairs, InfiniteX };
struct Data {
  std::vector<std::int64_t> positions;
  TypedBuffer x, y;
  // `runs`: positions in runs of one (the pass rotates a token's row from the last one's): 0 to 39, 39 again,
  // then 1041 on, every axis alike (M-RoPE's text); else spread 37 apart.
  Data(const RopeParams& params, std::size_t tokens, std::size_t heads, DType type, Wrong wrong,
       std::mt19937_64& g, bool runs = false)
      : x(type, tokens * heads * static_cast<std::size_t>(params.head_dim)), y(x.dtype(), x.size()) {
    const std::size_t axes = n_axes(params.form), hd = static_cast<std::size_t>(params.head_dim);
    positions.resize(axes * tokens);
    for (std::size_t i = 0; i < positions.size(); ++i) {
      const auto t = static_cast<std::int64_t>(i % tokens);
      positions[i] = !runs     ? t * 37 + static_cast<std::int64_t>(g() % 5)
                     : t < 40  ? t
                     : t == 40 ? 39
                               : 1000 + t;
    }
    std::uniform_real_distribution<double> unit(-2.0, 2.0);
    for (std::size_t i = 0; i < x.size(); ++i) x.set(i, unit(g));
    RopeParams kernel = params;
    if (wrong == Wrong::Base) kernel.base *= 1.001;
    const RopePlan plan(kernel);
    const ref::Rope reference(kernel, 1 << 20);
    for (std::size_t i = 0; i < y.size(); ++i) y.set(i, x.get(i));
    for (std::size_t t = 0; t < tokens; ++t) {
      for (std::size_t h = 0; h < heads; ++h) {
        const std::size_t row = (t * heads + h) * hd;
        if (wrong == Wrong::Unrotated && t % 5 == 2) continue;
        for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
          const auto [i0, i1] = plan.input_channels(j);
          const auto [o0, o1] = plan.output_channels(j);
          const std::int64_t p = positions[plan.axis_of_pair(j) * tokens + t];
          const auto [v0, v1] = reference.rounded(p, j, x.get(row + i0), x.get(row + i1), type);
          y.set(row + o0, v0), y.set(row + o1, v1);
        }
      }
    }
    if (wrong == Wrong::Moved && plan.rotary_dim() < hd)
      y.set(3 * hd + hd - 1, y.get(3 * hd + hd - 1) + 0.25);
    if (wrong == Wrong::NonFinite) y.set(2 * hd + 1, NAN), y.set(5 * hd + 2, -INFINITY);
    // An infinite input under a finite output (its error infinite or NaN: over any budget).
    if (wrong == Wrong::InfiniteX) x.set(2 * hd + 1, INFINITY), x.set(5 * hd + 2, -INFINITY);
    // Unrotated rows first (the band's largest errors and ulps huge), then pairs of zeros written as 2^-20:
    // over their budget (its floor alone), under those maxima: the screen must still call them loud.
    if (wrong == Wrong::ZeroPairs) {
      for (std::size_t t = 0; t < tokens; ++t) {
        const std::size_t row = t * heads * hd;
        if (t % 5 == 2) {
          for (std::size_t i = 0; i < heads * hd; ++i) y.set(row + i, x.get(row + i));
        } else if (t % 4 == 1) {
          const auto [i0, i1] = plan.input_channels(0);
          const auto [o0, o1] = plan.output_channels(0);
          x.set(row + i0, 0.0), x.set(row + i1, 0.0), y.set(row + o0, 0x1p-20), y.set(row + o1, 0.0);
        }
      }
    }
  }
};

// The screened pass's measurement against the exact path's: the same but the percentiles, the screen's
// estimates' within s·2^-46 of the exact errors (|x| < 2 here: s < 4), and `rotated` more (s·A·2^-42 where
// a token's row was rotated from the last one's: A, YaRN's attention factor, under 1.2 here).
void expect_same_measurement(const Measurement& a, const Measurement& b, const std::string& what,
                             double rotated = 0) {
  expect_same_but_percentiles(a, b, what);
  for (std::size_t k = 0; k < a.bands().size() && k < b.bands().size(); ++k) {
    const BandStats &x = a.bands()[k], &y = b.bands()[k];
    const std::string where = what + " band " + std::to_string(k);
    EXPECT_NEAR(x.p99_abs, y.p99_abs, 4 * 0x1p-46 + rotated + 0x1p-50 * x.p99_abs) << where;
    EXPECT_NEAR(x.p99_ulp, y.p99_ulp, 1e-6 * (1 + x.p99_ulp)) << where;
  }
}

// Percentiles over a sample of the tokens (Measurement::sample_percentiles): the screen keeps the estimates
// of the sampled tokens' rows alone, the exact path their values; the same measurement within the screen's
// radius.
void expect_sampled_percentiles_of_the_exact_path(const RopeParams& params, const RopeBatch& batch, Data& d,
                                                  const Budget& budget, const std::string& what) {
  const auto make = [&] {
    Measurement m;
    m.promise(1 << 24);
    m.expect(d.x.size());
    m.sample_percentiles(1, 0, 0);
    return m;
  };
  Measurement exact = make(), sampled = make();
  measure_rope_rows(params, batch, d.x, d.y, budget, [&](const RopeRow& row) { exact.add_row(row); });
  const Values x(d.x.view().data, d.x.dtype(), d.x.size()), y(d.y.view().data, d.y.dtype(), d.y.size());
  ASSERT_TRUE(measure_rope_screened(params, batch, x, y, budget, sampled, {})) << what;
  expect_same_measurement(exact, sampled, what + " (sampled)");
  // Over the batch's 60 tokens (a band's 28-32 could sample none: (7/8)^28, 2%), some in and most out.
  std::size_t in = 0, all = 0;
  for (const BandStats& b : sampled.bands()) in += b.percentile_samples, all += b.samples;
  EXPECT_GT(in, 0U) << what;
  EXPECT_LT(in, all / 4) << what;
}

// The batch of d's [tokens, heads, head_dim] rows; a Measurement for all of d's elements; sinks that count
// the records over budget the screened pass hands on (loud elements and rows measured exactly).
RopeBatch batch_of(const RopeParams& params, const Data& d, std::size_t heads) {
  RopeBatch batch = RopeBatch::tokens_first(d.positions, heads, static_cast<std::size_t>(params.head_dim));
  batch.n_axes = n_axes(params.form);
  return batch;
}
Measurement fresh(const Data& d) {
  Measurement m;
  m.promise(1 << 24);
  m.expect(d.x.size());
  return m;
}
Measurement exact_of(const RopeParams& params, const RopeBatch& batch, Data& d, const Budget& budget) {
  Measurement m = fresh(d);
  measure_rope_rows(params, batch, d.x, d.y, budget, [&](const RopeRow& row) { m.add_row(row); });
  return m;
}
Values values_of(TypedBuffer& b) { return Values(b.view().data, b.dtype(), b.size()); }
// YaRN at factor 4 over 512 positions.
RopeScaling yarn_4() {
  RopeScaling yarn;
  yarn.type = RopeScalingType::Yarn;
  yarn.factor = 4;
  yarn.original_max_position = 512;
  return yarn;
}
ScreenedSinks counting_over(std::size_t& loud_over) {
  ScreenedSinks sinks;
  sinks.loud = [&loud_over](const ElementRecord& e) { loud_over += e.ratio() > 1 ? 1 : 0; };
  sinks.row = [&loud_over](const RopeRow& row) {
    for (std::size_t i = 0; i < row.size(); ++i) loud_over += row.record(i).ratio() > 1 ? 1 : 0;
  };
  return sinks;
}

// Tokens at consecutive positions, whose rows the pass rotates from the last token's (16 in a row at most,
// then the tier's again; the repeated position and the gap take the tier's too): the exact path's
// measurement, the percentiles within the rotation's radius more.
TEST(RopeScreen, ScreenedPassIsTheExactPathAtConsecutivePositions) {
  const RopeScaling yarn = yarn_4();
  RopeParams mrope{128, 0, 1e6, Layout::HalfSplit};
  mrope.form.mrope_section = {16, 24, 24};
  const std::vector<std::pair<RopeParams, std::string>> cases = {
      {{64, 0, 1e4, Layout::HalfSplit}, "halfsplit"},
      {{64, 48, 1e4, Layout::Interleaved}, "interleaved, partial"},
      {{64, 0, 1e4, Layout::HalfSplit, yarn}, "yarn"},
      {mrope, "M-RoPE"}};
  std::mt19937_64 g(20261208);
  for (const auto& [params, name] : cases) {
    for (const DType type : {DType::F32, DType::BF16}) {
      std::vector<const Contract*> members;
      for (const char* v : {"rope.scalar_f32", "rope.torch_f32", "rope.ggml_f32"})
        members.push_back(&find_variant(v)->contract());
      for (const Wrong wrong : {Wrong::None, Wrong::Base, Wrong::Unrotated}) {
        const std::string what =
            name + " " + std::string(to_string(type)) + " wrong " + std::to_string(static_cast<int>(wrong));
        Data d(params, 90, 2, type, wrong, g, true);
        const RopeBatch batch = batch_of(params, d, 2);
        Budget budget{nullptr, type, 0};
        budget.any_of = members;
        Measurement exact = exact_of(params, batch, d, budget), screened = fresh(d);
        std::size_t loud_over = 0;
        const ScreenedSinks sinks = counting_over(loud_over);
        ASSERT_TRUE(
            measure_rope_screened(params, batch, values_of(d.x), values_of(d.y), budget, screened, sinks))
            << what;
        expect_same_measurement(exact, screened, what, 4 * 1.2 * 0x1p-42);
        EXPECT_EQ(loud_over, exact.violations()) << what << ": every element over budget comes as a record";
      }
    }
  }
}

TEST(RopeScreen, ScreenedPassIsTheExactPath) {
  const RopeScaling yarn = yarn_4();
  RopeScaling longrope;
  longrope.type = RopeScalingType::LongRope;
  longrope.original_max_position = 300;
  longrope.factor = 4;
  longrope.short_factor.assign(16, 1.0);
  longrope.long_factor.assign(16, 1.5);
  RopeScaling linear;
  linear.type = RopeScalingType::Linear;
  linear.factor = 0.9;
  RopeParams mrope{128, 0, 1e6, Layout::HalfSplit};
  mrope.form.mrope_section = {16, 24, 24};
  RopeParams offset{96, 32, 1e4, Layout::Interleaved};
  offset.rotary_offset = 64;
  const std::vector<std::pair<RopeParams, std::string>> cases = {
      {{64, 0, 1e4, Layout::HalfSplit}, "halfsplit"},
      {{64, 48, 1e4, Layout::Interleaved}, "interleaved, partial"},
      {{64, 0, 1e4, Layout::Deinterleave}, "deinterleave"},
      {{64, 0, 1e4, Layout::HalfSplit, yarn}, "yarn"},
      {{32, 0, 1e4, Layout::HalfSplit, longrope}, "longrope"},
      {{6, 0, 1e4, Layout::HalfSplit}, "head_dim 6"},
      {offset, "rotary offset"},
      {mrope, "M-RoPE"},
      {{64, 0, 1e4, Layout::HalfSplit, linear}, "linear 0.9 (pair 0's frequency above 1)"}};
  std::mt19937_64 g(20261205);
  for (const auto& [params, name] : cases) {
    for (const DType type : {DType::F32, DType::BF16, DType::F16}) {
      std::vector<const Contract*> members;
      for (const char* v : {"rope.scalar_f32", "rope.torch_f32", "rope.ggml_f32"})
        members.push_back(&find_variant(v)->contract());
      for (const Wrong wrong : {Wrong::None, Wrong::Unrotated, Wrong::Base, Wrong::Moved, Wrong::NonFinite,
                                Wrong::ZeroPairs, Wrong::InfiniteX}) {
        Data d(params, 60, 3, type, wrong, g);
        const RopeBatch batch = batch_of(params, d, 3);
        Budget budget{nullptr, type, 0};
        budget.any_of = members;
        const auto make = [&] { return fresh(d); };
        Measurement exact = exact_of(params, batch, d, budget), screened = make();
        std::size_t loud_over = 0;
        const ScreenedSinks sinks = counting_over(loud_over);
        const Values x = values_of(d.x), y = values_of(d.y);
        ASSERT_TRUE(measure_rope_screened(params, batch, x, y, budget, screened, sinks)) << name;
        const std::string what =
            name + " " + std::string(to_string(type)) + " wrong " + std::to_string(static_cast<int>(wrong));
        expect_same_measurement(exact, screened, what);
        EXPECT_EQ(loud_over, exact.violations()) << what << ": every element over budget comes as a record";
        if (wrong == Wrong::None || wrong == Wrong::Base)
          expect_sampled_percentiles_of_the_exact_path(params, batch, d, budget, what);
        // The verdict alone (Measurement::verdict_only): the exact path's verdict and counts, every element
        // over budget still a record.
        Measurement verdict = make();
        verdict.verdict_only();
        loud_over = 0;
        ASSERT_TRUE(measure_rope_screened(params, batch, x, y, budget, verdict, sinks)) << what;
        EXPECT_EQ(verdict.verdict(), exact.verdict()) << what << " (verdict only)";
        EXPECT_EQ(verdict.violations(), exact.violations()) << what << " (verdict only)";
        EXPECT_EQ(verdict.count(), exact.count()) << what << " (verdict only)";
        EXPECT_EQ(verdict.undecidable(), exact.undecidable()) << what << " (verdict only)";
        EXPECT_EQ(loud_over, exact.violations()) << what << " (verdict only)";
        if (wrong == Wrong::InfiniteX) {
          // An infinite input reaches the caller (check's rescan without its token), with the verdict alone
          // too, under a contract's tally line as finite as its slope and floor of 1 make it.
          for (const bool alone : {false, true}) {
            Measurement m = make();
            if (alone) m.verdict_only();
            bool met = false;
            ScreenedSinks stop;
            stop.nonfinite_input = [&met] { return met = true; };
            stop.line = [](std::span<const double> phi, double* slope, double* floor) {
              std::fill_n(slope, phi.size(), 1.0), std::fill_n(floor, phi.size(), 1.0);
            };
            ASSERT_TRUE(measure_rope_screened(params, batch, x, y, budget, m, stop)) << what;
            EXPECT_TRUE(met) << what << (alone ? " (verdict only)" : "");
          }
        } else if (wrong == Wrong::None) {
          EXPECT_TRUE(exact.pass()) << what;
        } else if (!(wrong == Wrong::Moved && params.rotary_dim == 0)) {
          EXPECT_FALSE(exact.pass()) << what;
        }
      }
    }
  }
}

// The verdict alone where some elements cannot be judged: a flat bound of 1 and no promise, so that an
// element with |x_a| + |x_b| below about 1.4 has a budget reaching any output's error. The undecidable
// elements and bands are the exact path's, and so is the verdict, for a correct kernel and a wrong base.
TEST(RopeScreen, TheVerdictAloneCountsTheUndecidableElements) {
  std::mt19937_64 g(20261206);
  const RopeParams params{64, 0, 1e4, Layout::HalfSplit};
  for (const DType type : {DType::F32, DType::BF16}) {
    for (const Wrong wrong : {Wrong::None, Wrong::Base}) {
      Data d(params, 60, 3, type, wrong, g);
      const RopeBatch batch = RopeBatch::tokens_first(d.positions, 3, 64);
      const Budget budget{nullptr, type, 1.0};
      const auto make = [&] {
        Measurement m;
        m.expect(d.x.size());
        return m;
      };
      Measurement exact = make(), verdict = make();
      verdict.verdict_only();
      measure_rope_rows(params, batch, d.x, d.y, budget, [&](const RopeRow& row) { exact.add_row(row); });
      const Values x(d.x.view().data, type, d.x.size()), y(d.y.view().data, type, d.y.size());
      ASSERT_TRUE(measure_rope_screened(params, batch, x, y, budget, verdict, {}));
      const std::string what =
          std::string(to_string(type)) + " wrong " + std::to_string(static_cast<int>(wrong));
      EXPECT_GT(exact.undecidable(), 0u) << what;
      EXPECT_LT(exact.undecidable(), exact.count()) << what;
      EXPECT_EQ(verdict.undecidable(), exact.undecidable()) << what;
      EXPECT_EQ(verdict.undecidable_bands(), exact.undecidable_bands()) << what;
      EXPECT_EQ(verdict.violations(), exact.violations()) << what;
      EXPECT_EQ(verdict.verdict(), exact.verdict()) << what;
      EXPECT_EQ(verdict.count(), exact.count()) << what;
    }
  }
}

// Presumed floors (presumed_rope_floors, Measurement::presume_floors) from the screen's own estimates on 512
// of the batch's 1800 rows: at share 0.02 they hold (at least 1% of each band's values lie above them) and
// the measurement is the one without them, percentiles included, bit for bit; at 0.001 (a tenth of the 1%
// a 99th percentile needs) they do not, and the measurement says so. Positions over three bands.
TEST(RopeScreen, PresumedFloorsKeepThePercentilesOrSayTheyDidNot) {
  RopeParams mrope{64, 0, 1e4, Layout::HalfSplit};
  mrope.form.mrope_section = {8, 12, 12};
  std::mt19937_64 g(20261206);
  for (const auto& [params, name] : std::vector<std::pair<RopeParams, std::string>>{
           {{64, 0, 1e4, Layout::HalfSplit}, "halfsplit"},
           {{64, 48, 1e4, Layout::Interleaved}, "interleaved, partial"},
           {mrope, "M-RoPE"}}) {
    for (const DType type : {DType::F32, DType::BF16, DType::F16}) {
      const std::string what = name + " " + std::string(to_string(type));
      Data d(params, 600, 3, type, Wrong::None, g);
      RopeBatch batch = RopeBatch::tokens_first(d.positions, 3, static_cast<std::size_t>(params.head_dim));
      batch.n_axes = n_axes(params.form);
      Budget budget{&find_variant("rope.scalar_f32")->contract(), type};
      const Values x(d.x.view().data, type, d.x.size()), y(d.y.view().data, type, d.y.size());
      for (const bool sampled : {false, true}) {
        SCOPED_TRACE(sampled ? "percentiles over a sample" : "percentiles over every element");
        const auto measured = [&](std::span<const PresumedFloors> floors) {
          Measurement m;
          m.promise(1 << 24);
          m.expect(d.x.size());
          if (sampled) m.sample_percentiles(1, 0, 0);  // the floors' proof counts the sample's values alone
          presume(m, floors);
          EXPECT_TRUE(measure_rope_screened(params, batch, x, y, budget, m, {})) << what;
          return m;
        };
        const Measurement plain = measured({});
        // As check guesses them: from the tokens whose values the percentiles take (rope_pass.cc).
        Measurement probe;
        probe.sample_percentiles(1, 0, 0);
        Sample taken;
        for (std::size_t t = 0; t < batch.tokens(); ++t)
          if (!sampled || probe.sampled_row(static_cast<std::int64_t>(t))) taken.rows.push_back(t);
        const std::vector<PresumedFloors> held =
            presumed_rope_floors(params, batch, x, y, budget, 0.02, taken);
        EXPECT_GE(held.size(), 2u) << what;
        const Measurement with = measured(held);
        EXPECT_TRUE(with.presumptions_held()) << what;
        expect_same_but_percentiles(with, plain, what);
        for (std::size_t k = 0; k < plain.bands().size(); ++k) {
          EXPECT_EQ(with.bands()[k].p99_abs, plain.bands()[k].p99_abs) << what << " band " << k;
          EXPECT_EQ(with.bands()[k].p99_ulp, plain.bands()[k].p99_ulp) << what << " band " << k;
        }
        const Measurement wrong = measured(presumed_rope_floors(params, batch, x, y, budget, 0.001, taken));
        EXPECT_FALSE(wrong.presumptions_held()) << what;
      }
      // Where the screened pass does not apply, no guess either.
      EXPECT_TRUE(presumed_rope_floors(params, batch, x, y, budget, 0.02, Sample{{}, {0}}).empty()) << what;
    }
  }
}

}  // namespace
}  // namespace pe::harness

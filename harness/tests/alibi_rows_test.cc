// ALiBi's rows in vectors: measure_alibi_rows gives, on every target, the records measure_alibi gives
// (the MPFR path) bit for bit and in its order, each run within one position band, over head counts,
// slope rules, forms, positions across band edges and far from 0, budgets of one contract, of a class and
// flat, and outputs the vectors must leave to MPFR (NaN, infinities, zeros, subnormal and huge values).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <span>
#include <tuple>
#include <vector>

#include "pe/harness/alibi_rows_vector.h"
#include "pe/harness/measure_alibi.h"
#include "pe/pe.h"

namespace pe::harness::alibi_rows_test {
namespace {

bool same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

void expect_same(const ElementRecord& a, const ElementRecord& b, std::size_t i) {
  SCOPED_TRACE(::testing::Message() << "element " << i << " (head " << b.head << ", query " << b.row
                                    << ", key " << b.channel << ", y " << b.y << ")");
  EXPECT_EQ(a.row, b.row);
  EXPECT_EQ(a.head, b.head);
  EXPECT_EQ(a.position, b.position);
  EXPECT_EQ(a.channel, b.channel);
  EXPECT_EQ(a.dim, b.dim);
  EXPECT_EQ(a.pair, b.pair);
  EXPECT_EQ(a.unchanged, b.unchanged);
  const double fa[] = {a.base,    a.y,     a.exact, a.abs_error,  a.ulp,  a.budget,
                       a.abs_phi, a.scale, a.gain,  a.gain_extra, a.reach};
  const double fb[] = {b.base,    b.y,     b.exact, b.abs_error,  b.ulp,  b.budget,
                       b.abs_phi, b.scale, b.gain,  b.gain_extra, b.reach};
  const char* names[] = {"base",    "y",     "exact", "abs_error",  "ulp",  "budget",
                         "abs_phi", "scale", "gain",  "gain_extra", "reach"};
  for (std::size_t f = 0; f < std::size(fa); ++f)
    EXPECT_TRUE(same_bits(fa[f], fb[f])) << names[f] << ": rows " << fa[f] << ", MPFR " << fb[f];
}

struct Case {
  AlibiParams params;
  std::vector<std::int64_t> queries, keys;
  std::vector<float> y;
};

// A float32 bias of `kernel` (given its own max_bias: another than the check's makes it fail), with
// `spoiled` elements replaced by values of every kind the vectors branch on.
Case make_case(AlibiParams params, std::vector<std::int64_t> queries, std::vector<std::int64_t> keys,
               const char* kernel, double kernel_max_bias, std::size_t spoiled, std::uint64_t seed) {
  Case c{params, std::move(queries), std::move(keys), {}};
  c.y.resize(static_cast<std::size_t>(params.n_heads) * c.queries.size() * c.keys.size());
  AlibiParams k = params;
  k.max_bias = kernel_max_bias;
  alibi_bias(*find_variant(kernel), AlibiPlan(k), c.queries, c.keys, std::span<float>(c.y));
  std::mt19937_64 g(seed);
  const float specials[] = {std::numeric_limits<float>::quiet_NaN(),
                            INFINITY,
                            -INFINITY,
                            0.0f,
                            -0.0f,
                            1e-40f,
                            3e38f,
                            -1.0f,
                            0.5f,
                            1e30f};
  for (std::size_t n = 0; n < spoiled; ++n) {
    float& v = c.y[g() % c.y.size()];
    switch (g() % 3) {
      case 0:
        v = specials[g() % std::size(specials)];
        break;
      case 1:
        v = std::nextafter(v, g() % 2 == 0 ? INFINITY : -INFINITY);
        break;
      default:
        v = -v;
    }
  }
  return c;
}

std::vector<ElementRecord> by_rows(const Case& c, const Budget& budget, bool unmasked_only) {
  std::vector<ElementRecord> out;
  const auto edges = band_edges();
  measure_alibi_rows(
      c.params, c.queries, c.keys, c.y, budget,
      [&](const RopeRow& row) {
        EXPECT_GT(row.size(), 0u);
        // One band per row: Measurement::add_row takes it whole.
        const auto band = [&](std::int64_t p) {
          return std::upper_bound(edges.begin() + 1, edges.end() - 1, p);
        };
        for (std::size_t i = 0; i < row.size(); ++i) {
          EXPECT_EQ(band(row.position[i]), band(row.position[0]));
          out.push_back(row.record(i));
        }
      },
      unmasked_only);
  return out;
}

std::vector<ElementRecord> by_elements(const Case& c, const Budget& budget, bool unmasked_only) {
  std::vector<ElementRecord> out;
  const Values y(c.y.data(), DType::F32, c.y.size());
  measure_alibi(c.params, c.queries, c.keys, y, budget, [&](const ElementRecord& e) {
    if (unmasked_only &&
        c.keys[static_cast<std::size_t>(e.channel)] > c.queries[static_cast<std::size_t>(e.row)])
      return;
    out.push_back(e);
  });
  return out;
}

void expect_rows_equal_elements(const Case& c, const Budget& budget, bool unmasked_only = false) {
  const std::vector<ElementRecord> want = by_elements(c, budget, unmasked_only);
  ASSERT_FALSE(alibi_targets().empty()) << "no Highway target with FMA on this CPU";
  for (std::size_t t = 0; t < alibi_targets().size(); ++t) {
    SCOPED_TRACE(alibi_targets()[t].name);
    use_alibi_target(t);
    const std::vector<ElementRecord> got = by_rows(c, budget, unmasked_only);
    ASSERT_EQ(got.size(), want.size());
    for (std::size_t i = 0; i < got.size(); ++i) expect_same(got[i], want[i], i);
  }
  use_alibi_target(0);
}

std::vector<std::int64_t> range(std::int64_t from, std::int64_t n) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = from + i;
  return v;
}

const Contract& contract_of(const char* name) { return find_variant(name)->contract(); }

// measure_alibi_screened into a Measurement equals measure_alibi_rows into another (every statistic and
// record but the 99th percentiles, which lie within the screen's stated radius), and each record it hands
// its sinks is that element's record from the exact path, bit for bit. `line`: the sinks' tally line.
// `handed`: how many records the sinks met (the exact path's share of the elements), on the last target.
void expect_screened_equals_rows(const Case& c, const Budget& budget, bool unmasked_only, double line,
                                 std::int64_t promise = -1, std::size_t* handed_out = nullptr) {
  const std::size_t all = c.y.size();
  Measurement want;
  want.promise(promise);
  want.expect(all);
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, ElementRecord> exact;
  const auto edges = band_edges();
  const auto band = [&](std::int64_t p) {
    return static_cast<std::size_t>(std::upper_bound(edges.begin() + 1, edges.end() - 1, p) - edges.begin() -
                                    1);
  };
  std::vector<double> largest(edges.size(), 0.0);  // per band, the largest |exact|
  std::size_t handed = 0;
  measure_alibi_rows(
      c.params, c.queries, c.keys, c.y, budget,
      [&](const RopeRow& row) {
        want.add_row(row);
        for (std::size_t i = 0; i < row.size(); ++i) {
          exact[{row.head, row.row, row.channel[i]}] = row.record(i);
          double& l = largest[band(row.position[i])];
          l = std::max(l, std::fabs(row.exact[i]));
        }
      },
      unmasked_only);
  for (std::size_t t = 0; t < alibi_targets().size(); ++t) {
    SCOPED_TRACE(alibi_targets()[t].name);
    use_alibi_target(t);
    Measurement got;
    got.promise(promise);
    got.expect(all);
    std::size_t loud = 0;
    handed = 0;
    const auto check = [&](const ElementRecord& e) {
      const auto it = exact.find({e.head, e.row, e.channel});
      ASSERT_NE(it, exact.end());
      expect_same(e, it->second, handed++);
    };
    AlibiScreenedSinks sinks;
    sinks.row = [&](const RopeRow& row) {
      for (std::size_t i = 0; i < row.size(); ++i) check(row.record(i));
    };
    sinks.loud = [&](const ElementRecord& e) { check(e), ++loud; };
    sinks.line = [&](std::size_t) { return line; };
    ASSERT_TRUE(measure_alibi_screened(c.params, c.queries, c.keys, c.y, budget, got, sinks, unmasked_only));
    ::testing::Test::RecordProperty("loud", static_cast<int>(loud));
    EXPECT_EQ(got.count(), want.count());
    EXPECT_EQ(got.violations(), want.violations());
    EXPECT_EQ(got.verdict(), want.verdict());
    ASSERT_EQ(got.worst().size(), want.worst().size());
    for (std::size_t i = 0; i < got.worst().size(); ++i) expect_same(got.worst()[i], want.worst()[i], i);
    ASSERT_EQ(got.bands().size(), want.bands().size());
    for (std::size_t b = 0; b < got.bands().size(); ++b) {
      const BandStats &g = got.bands()[b], &w = want.bands()[b];
      SCOPED_TRACE(::testing::Message() << "band " << w.lo << ".." << w.hi);
      EXPECT_EQ(g.samples, w.samples);
      EXPECT_EQ(g.violations, w.violations);
      EXPECT_EQ(g.encoding, w.encoding);
      EXPECT_EQ(g.undecidable, w.undecidable);
      EXPECT_TRUE(same_bits(g.budget_at_max_abs, w.budget_at_max_abs));
      for (const auto& [gx, wx] :
           {std::pair{&g.max_abs, &w.max_abs}, std::pair{&g.max_ulp, &w.max_ulp},
            std::pair{&g.max_ratio, &w.max_ratio}, std::pair{&g.max_vacuity, &w.max_vacuity}}) {
        EXPECT_TRUE(same_bits(gx->value, wx->value)) << gx->value << " vs " << wx->value;
        if (w.samples > 0) expect_same(gx->at, wx->at, b);
      }
      // The screen's stated radius (measure_alibi.h).
      const std::size_t k = band(w.lo);
      if (g.p99_abs != w.p99_abs) {
        EXPECT_LE(std::fabs(g.p99_abs - w.p99_abs), 0x1p-49 * (w.p99_abs + largest[k]));
      }
      if (g.p99_ulp != w.p99_ulp) {
        EXPECT_LE(std::fabs(g.p99_ulp - w.p99_ulp), 0x1p-49 * w.p99_ulp + 0x1p-25);
      }
    }
  }
  use_alibi_target(0);
  if (handed_out != nullptr) *handed_out = handed;
}

TEST(AlibiRows, CorrectKernelEqualsMpfrPathOnEveryTarget) {
  // 8 heads (powers of two among the slopes: exact products), 12 (interpolated), positions across 999|1000.
  for (const std::int64_t heads : {8, 12}) {
    for (const AlibiForm form : {AlibiForm::Causal, AlibiForm::Symmetric, AlibiForm::Bloom}) {
      SCOPED_TRACE(::testing::Message() << heads << " heads, form " << to_string(form));
      AlibiParams p{heads};
      p.form = form;
      const Case c = make_case(p, range(990, 13), range(0, 1013), "alibi.scalar_f32", 8, 0, 1);
      expect_rows_equal_elements(c, {&contract_of("alibi.scalar_f32"), DType::F32},
                                 form == AlibiForm::Causal);
    }
  }
}

TEST(AlibiRows, CorrectlyRoundedBiasHasExactZerosAndTiesDecidedAlike) {
  // alibi.exact: the correctly rounded bias, many elements exactly equal to the reference's.
  AlibiParams p{16};
  p.form = AlibiForm::Symmetric;
  const Case c = make_case(p, range(0, 37), range(0, 61), "alibi.exact", 8, 0, 2);
  expect_rows_equal_elements(c, {&contract_of("alibi.scalar_f32"), DType::F32});
}

TEST(AlibiRows, FailingAndSpoiledOutputsEqualMpfrPath) {
  // A kernel given another max_bias, then NaN, infinities, zeros, subnormal and huge values, one-ULP and
  // sign errors; the direct slope rule on 6 heads and max_bias 3.5 (no power-of-two slope).
  AlibiParams p{6, 3.5, AlibiSlopes::Direct, AlibiForm::Symmetric};
  const Case c = make_case(p, range(9990, 17), range(9975, 40), "alibi.scalar_f32", 4, 300, 3);
  Budget cls{nullptr, DType::F32};
  cls.any_of = {&contract_of("alibi.scalar_f32"), &contract_of("alibi.scalar_f64")};
  cls.extra = 1e-9;
  expect_rows_equal_elements(c, cls);
  expect_rows_equal_elements(c, {nullptr, DType::F32, 1e-3});  // a flat --max-abs
  expect_rows_equal_elements(c, {&contract_of("alibi.scalar_f32"), DType::F32});
}

TEST(AlibiRows, FarPositionsAndDecodeRows) {
  // A decode step at 10^6 against keys in two bands, the causal form's masked keys left out, every
  // vector length's remainder (1..9 keys).
  AlibiParams p{32};
  for (std::int64_t n = 1; n <= 9; ++n) {
    const Case c = make_case(p, {999'999 + n, 5}, range(999'995, n), "alibi.scalar_f32", 8, 2, 4);
    expect_rows_equal_elements(c, {&contract_of("alibi.scalar_f32"), DType::F32}, true);
  }
  const Case big = make_case(p, {(std::int64_t{1} << 40) + 3}, range((std::int64_t{1} << 40) - 50, 60),
                             "alibi.scalar_f32", 8, 0, 5);
  expect_rows_equal_elements(big, {&contract_of("alibi.scalar_f32"), DType::F32}, true);
}

TEST(AlibiScreened, OnePassGivesTheExactPathsMeasurementOnEveryTarget) {
  // Passing kernels in every form and rule, positions across 999|1000; a tally line that takes nothing
  // (INFINITY) and one that takes every element with an error (0).
  for (const std::int64_t heads : {8, 12}) {
    for (const AlibiForm form : {AlibiForm::Causal, AlibiForm::Symmetric, AlibiForm::Bloom}) {
      SCOPED_TRACE(::testing::Message() << heads << " heads, form " << to_string(form));
      AlibiParams p{heads};
      p.form = form;
      const Case c = make_case(p, range(990, 13), range(0, 1013), "alibi.scalar_f32", 8, 0, 1);
      // Most elements are proved quiet: the exact path takes the first runs and a few loud keys.
      std::size_t handed = 0;
      expect_screened_equals_rows(c, {&contract_of("alibi.scalar_f32"), DType::F32},
                                  form == AlibiForm::Causal, INFINITY, -1, &handed);
      EXPECT_LT(handed, c.y.size() / 10);
      expect_screened_equals_rows(c, {&contract_of("alibi.scalar_f32"), DType::F32},
                                  form == AlibiForm::Causal, 0.0);
      // Every position within what the contract promises: decidability not screened.
      expect_screened_equals_rows(c, {&contract_of("alibi.scalar_f32"), DType::F32},
                                  form == AlibiForm::Causal, INFINITY, 1 << 20);
    }
  }
  AlibiParams p{16};
  p.form = AlibiForm::Symmetric;
  const Case exact = make_case(p, range(0, 37), range(0, 61), "alibi.exact", 8, 0, 2);
  expect_screened_equals_rows(exact, {&contract_of("alibi.scalar_f32"), DType::F32}, false, INFINITY);
}

TEST(AlibiScreened, FailingSpoiledAndFarOutputs) {
  AlibiParams p{6, 3.5, AlibiSlopes::Direct, AlibiForm::Symmetric};
  const Case c = make_case(p, range(9990, 17), range(9975, 40), "alibi.scalar_f32", 4, 300, 3);
  Budget cls{nullptr, DType::F32};
  cls.any_of = {&contract_of("alibi.scalar_f32"), &contract_of("alibi.scalar_f64")};
  cls.extra = 1e-9;
  expect_screened_equals_rows(c, cls, false, INFINITY);
  expect_screened_equals_rows(c, {nullptr, DType::F32, 1e-3}, false, INFINITY);
  const Case passing = make_case(p, range(9990, 17), range(9975, 40), "alibi.scalar_f32", 3.5, 40, 6);
  expect_screened_equals_rows(passing, {&contract_of("alibi.scalar_f32"), DType::F32}, false, 1e-7);
  AlibiParams far{32};
  for (std::int64_t n = 1; n <= 9; ++n) {
    const Case d = make_case(far, {999'999 + n, 5}, range(999'995, n), "alibi.scalar_f32", 8, 2, 4);
    expect_screened_equals_rows(d, {&contract_of("alibi.scalar_f32"), DType::F32}, true, INFINITY);
  }
  const Case big = make_case(far, {(std::int64_t{1} << 40) + 3}, range((std::int64_t{1} << 40) - 50, 60),
                             "alibi.scalar_f32", 8, 0, 5);
  expect_screened_equals_rows(big, {&contract_of("alibi.scalar_f32"), DType::F32}, true, INFINITY);
}

TEST(AlibiScreened, KeysInOrderWithGaps) {
  // Keys not consecutive (no quiet bounds; the masked suffix and the turn found by search), queries below,
  // among and above them, in every form.
  std::vector<std::int64_t> keys;
  for (std::int64_t k = 0; k < 700; ++k) keys.push_back(2 + k * 3 + (k % 7 == 0 ? 1 : 0));
  for (const AlibiForm form : {AlibiForm::Causal, AlibiForm::Symmetric, AlibiForm::Bloom}) {
    SCOPED_TRACE(to_string(form));
    AlibiParams p{8};
    p.form = form;
    const Case c = make_case(p, {0, 1, 2, 3, 1000, 1001, 2097, 2500}, keys, "alibi.scalar_f32", 8, 20, 9);
    expect_screened_equals_rows(c, {&contract_of("alibi.scalar_f32"), DType::F32}, form == AlibiForm::Causal,
                                INFINITY);
  }
}

// The screen's slope, budget and bars for the quiet bounds' tests: the slope of 2^-1/4 (two doubles), or 1/2
// (exact); a contract-like budget, 2^-21·|V|.
AlibiScreen test_bars(bool exact_slope, bool reach, double max_ulp, double abs_floor, double ulp_floor,
                      double tally) {
  return {.slope_hi = exact_slope ? 0.5 : 0.8408964152537145,
          .slope_lo = exact_slope ? 0.0 : 3.1e-17,
          .exact_slope = exact_slope,
          .budget_slope = 0x1p-21,
          .floor_lo = 1e-30,
          .floor_hi = 2e-30,
          .ratio_bar = 0.4,
          .tally = tally,
          .max_abs = 1e-4,
          .max_ulp = max_ulp,
          .abs_floor = abs_floor,
          .ulp_floor = ulp_floor,
          .check_reach = reach};
}

TEST(AlibiScreened, QuietBoundsHoldOnlyQuietUnkeptOutputsOnEveryTarget) {
  // Multipliers about 0, across float32 binades and far out; bars and floors in combinations where each
  // binds.
  std::vector<double> s;
  for (int i = -1030; i <= 1030; ++i) s.push_back(i);
  for (int i = 0; i < 64; ++i) s.push_back(0x1p40 + i);
  std::size_t bounded = 0, tried = 0;
  for (const bool exact_slope : {false, true})
    for (const bool reach : {false, true})
      for (const double max_ulp : {0.7, 3.0})
        for (const double ulp_floor : {0.3, double{INFINITY}})
          for (const double abs_floor : {1e-7, double{INFINITY}})
            for (const double tally : {0x1p-24, double{INFINITY}}) {
              SCOPED_TRACE(::testing::Message()
                           << "exact " << exact_slope << " reach " << reach << " max_ulp " << max_ulp
                           << " floors " << abs_floor << ", " << ulp_floor << " tally " << tally);
              const AlibiScreen bars = test_bars(exact_slope, reach, max_ulp, abs_floor, ulp_floor, tally);
              for (std::size_t t = 0; t < alibi_targets().size(); ++t) {
                SCOPED_TRACE(alibi_targets()[t].name);
                use_alibi_target(t);  // the bounds the target builds, for its screen
                std::vector<float> lo(s.size()), hi(s.size());
                alibi_quiet_bounds(bars, s.data(), s.size(), lo.data(), hi.data());
                // Both ends of every bound, as outputs the full screen (no bounds given) judges.
                std::vector<double> keys;
                std::vector<float> y;
                for (std::size_t i = 0; i < s.size(); ++i) {
                  ++tried;
                  if (std::isnan(lo[i]) || std::isnan(hi[i])) {
                    EXPECT_TRUE(std::isnan(lo[i]) && std::isnan(hi[i]));
                    continue;
                  }
                  ++bounded;
                  EXPECT_LE(lo[i], hi[i]);
                  keys.insert(keys.end(), {s[i], s[i]});
                  y.insert(y.end(), {lo[i], hi[i]});
                }
                std::vector<std::uint32_t> loud(y.size());
                std::vector<double> abs_tail(y.size() + AlibiLanes::kLanes), ulp_tail(abs_tail.size());
                AlibiScreen r = bars;
                r.y = y.data(), r.keys = keys.data(), r.multiplier = AlibiScreen::Multiplier::Key;
                r.loud = loud.data(), r.abs_tail = abs_tail.data(), r.ulp_tail = ulp_tail.data();
                alibi_screen(r, y.size());
                EXPECT_EQ(r.loud_count, 0u) << "first: s " << keys[loud[0]] << ", y " << y[loud[0]];
                EXPECT_EQ(r.abs_kept, 0u);
                EXPECT_EQ(r.ulp_kept, 0u);
                EXPECT_EQ(r.quiet_encoding, y.size());
              }
              use_alibi_target(0);
            }
  EXPECT_GT(bounded, tried / 4);  // the bounds are not empty where nothing forbids them
}

// The screen given quiet bounds measures what it measures without them, wherever the outputs start
// against a vector boundary (the bounded loop takes the keys before y's next one first) and with a key
// outside its bounds planted before that boundary, on it or after it, alone or with others 4 and 8 keys on
// (both halves of a vector then hold one: AVX2's 4 doubles a half, AVX-512's 8), in runs shorter than a
// vector too: the same loud keys, in order, the same counts and the same values kept for the tails.
TEST(AlibiScreened, QuietBoundsChangeNothingAtEveryAlignment) {
  std::vector<double> s;
  for (int i = -100; i < 100; ++i) s.push_back(i);
  std::size_t bounded = 0, planted_loud_or_kept = 0;
  for (const double floor : {double{INFINITY}, 0.3}) {
    const AlibiScreen bars = test_bars(false, false, 3.0, floor * 1e-7, floor, INFINITY);
    for (std::size_t t = 0; t < alibi_targets().size(); ++t) {
      SCOPED_TRACE(::testing::Message() << alibi_targets()[t].name << ", floors " << floor);
      use_alibi_target(t);
      std::vector<float> lo(s.size()), hi(s.size());
      alibi_quiet_bounds(bars, s.data(), s.size(), lo.data(), hi.data());
      std::vector<float> inside(s.size());
      for (std::size_t i = 0; i < s.size(); ++i)  // within the bounds (alternate ends), or the rounded bias
        inside[i] = std::isnan(lo[i]) ? static_cast<float>(bars.slope_hi * s[i]) : i % 2 == 0 ? lo[i] : hi[i];
      std::vector<float> storage(s.size() + 64);
      const std::size_t to_boundary = (64 - reinterpret_cast<std::uintptr_t>(storage.data()) % 64) % 64 / 4;
      for (std::size_t offset = 0; offset < 32; ++offset)
        for (const std::size_t n : {std::size_t{5}, std::size_t{16}, std::size_t{37}, s.size()})
          for (const std::size_t planted :
               {SIZE_MAX, std::size_t{0}, std::size_t{1}, std::size_t{3}, std::size_t{7}, std::size_t{8},
                std::size_t{9}, std::size_t{15}, std::size_t{16}, std::size_t{17}, std::size_t{30}})
            for (const bool others : {false, true}) {
              if (planted != SIZE_MAX && (planted >= n || std::isnan(hi[planted]))) continue;
              if (others && planted == SIZE_MAX) continue;
              SCOPED_TRACE(::testing::Message() << "offset " << offset << ", n " << n << ", planted "
                                                << planted << ", others " << others);
              float* y = storage.data() + to_boundary + offset;
              std::copy_n(inside.begin(), n, y);
              if (planted != SIZE_MAX) y[planted] = std::nextafter(hi[planted], INFINITY);
              for (const std::size_t on : {std::size_t{4}, std::size_t{8}})
                if (others && planted + on < n && !std::isnan(hi[planted + on]))
                  y[planted + on] = std::nextafter(hi[planted + on], INFINITY);
              const auto run = [&](bool with_bounds) {
                AlibiScreen r = bars;
                r.y = y, r.keys = s.data(), r.multiplier = AlibiScreen::Multiplier::Key;
                if (with_bounds) r.quiet_lo = lo.data(), r.quiet_hi = hi.data();
                std::vector<std::uint32_t> loud(n);
                std::vector<double> abs_tail(n + AlibiLanes::kLanes), ulp_tail(abs_tail.size());
                r.loud = loud.data(), r.abs_tail = abs_tail.data(), r.ulp_tail = ulp_tail.data();
                alibi_screen(r, n);
                loud.resize(r.loud_count), abs_tail.resize(r.abs_kept), ulp_tail.resize(r.ulp_kept);
                return std::tuple{r, loud, abs_tail, ulp_tail};
              };
              const auto [with, loud_with, abs_with, ulp_with] = run(true);
              const auto [without, loud_without, abs_without, ulp_without] = run(false);
              EXPECT_EQ(loud_with, loud_without);
              EXPECT_EQ(with.quiet_encoding, without.quiet_encoding);
              EXPECT_EQ(abs_with, abs_without);
              EXPECT_EQ(ulp_with, ulp_without);
              bounded += with.bounded;
              if (planted != SIZE_MAX && (with.loud_count + with.abs_kept + with.ulp_kept) != 0)
                ++planted_loud_or_kept;
            }
    }
    use_alibi_target(0);
  }
  EXPECT_GT(bounded, 0u);               // the bounds took keys
  EXPECT_GT(planted_loud_or_kept, 0u);  // and keys outside them were screened
}

// measure_alibi_screened with `tuning` into a Measurement, and the records its sinks met, in order.
struct Screened {
  Measurement m;
  std::vector<ElementRecord> handed;
};
Screened screened(const Case& c, const Budget& budget, bool unmasked_only, const AlibiScreenTuning& tuning) {
  const AlibiScreenTuning before = alibi_screen_tuning();
  tune_alibi_screen(tuning);
  Screened out;
  out.m.expect(c.y.size());
  AlibiScreenedSinks sinks;
  sinks.row = [&](const RopeRow& row) {
    for (std::size_t i = 0; i < row.size(); ++i) out.handed.push_back(row.record(i));
  };
  sinks.loud = [&](const ElementRecord& e) { out.handed.push_back(e); };
  sinks.line = [&](std::size_t) { return 0x1p-23; };
  EXPECT_TRUE(measure_alibi_screened(c.params, c.queries, c.keys, c.y, budget, out.m, sinks, unmasked_only));
  tune_alibi_screen(before);
  return out;
}

// Two measurements alike in everything, the 99th percentiles included, bit for bit, and their sinks' records.
void expect_same_measurement(const Screened& got, const Screened& want) {
  EXPECT_EQ(got.m.count(), want.m.count());
  EXPECT_EQ(got.m.violations(), want.m.violations());
  ASSERT_EQ(got.m.worst().size(), want.m.worst().size());
  for (std::size_t i = 0; i < got.m.worst().size(); ++i) expect_same(got.m.worst()[i], want.m.worst()[i], i);
  ASSERT_EQ(got.m.bands().size(), want.m.bands().size());
  for (std::size_t b = 0; b < got.m.bands().size(); ++b) {
    const BandStats &g = got.m.bands()[b], &w = want.m.bands()[b];
    SCOPED_TRACE(::testing::Message() << "band " << w.lo << ".." << w.hi);
    EXPECT_EQ(g.samples, w.samples);
    EXPECT_EQ(g.encoding, w.encoding);
    EXPECT_EQ(g.undecidable, w.undecidable);
    EXPECT_TRUE(same_bits(g.p99_abs, w.p99_abs)) << g.p99_abs << " vs " << w.p99_abs;
    EXPECT_TRUE(same_bits(g.p99_ulp, w.p99_ulp)) << g.p99_ulp << " vs " << w.p99_ulp;
    for (const auto& [gx, wx] : {std::pair{&g.max_abs, &w.max_abs}, std::pair{&g.max_ulp, &w.max_ulp},
                                 std::pair{&g.max_ratio, &w.max_ratio}}) {
      EXPECT_TRUE(same_bits(gx->value, wx->value));
      if (w.samples > 0) expect_same(gx->at, wx->at, b);
    }
  }
  ASSERT_EQ(got.handed.size(), want.handed.size());
  for (std::size_t i = 0; i < got.handed.size(); ++i) expect_same(got.handed[i], want.handed[i], i);
}

TEST(AlibiScreened, QuietBoundsAndPresumedFloorsChangeNothing) {
  // 32 heads (ULP errors that grow from head to head) x 64 queries x 256 keys, consecutive: every head gets
  // its bounds, every band that holds 1024 sampled values a presumed floor; spoiled outputs (NaN among them:
  // a band's maxima turn NaN, its bars with them) in one case of each form.
  const AlibiScreenTuning off{.presume_from = SIZE_MAX, .quiet_bounds = false};
  const AlibiScreenTuning bounds{.presume_from = SIZE_MAX},
      presumed{.presume_from = 0, .quiet_bounds = false}, on{.presume_from = 0},
      wrong{.presume_from = 0, .presumed_share = 1e-9};
  for (const AlibiForm form : {AlibiForm::Causal, AlibiForm::Symmetric, AlibiForm::Bloom}) {
    for (const std::size_t spoiled : {0, 200}) {
      SCOPED_TRACE(::testing::Message() << "form " << to_string(form) << ", " << spoiled << " spoiled");
      AlibiParams p{32};
      p.form = form;
      const Case c = make_case(p, range(960, 64), range(768, 256), "alibi.scalar_f32", 8, spoiled, 8);
      const Budget budget{&contract_of("alibi.scalar_f32"), DType::F32};
      const bool causal = form == AlibiForm::Causal;
      const std::size_t folded = alibi_screen_folded_ties();
      const Screened plain = screened(c, budget, causal, off);
      EXPECT_EQ(alibi_screen_folded_ties(), folded);  // no bounds, nothing folded into them
      const std::size_t reruns = alibi_screen_reruns();
      {
        // The kernel's worst ULPs recur (s, 2s, ...; every fourth head): ties the bounds take. Spoiled
        // outputs replace a multiplier's tie, and the bounds let the one they took go (the Bloom form's).
        SCOPED_TRACE("bounds");
        expect_same_measurement(screened(c, budget, causal, bounds), plain);
        EXPECT_GT(alibi_screen_folded_ties(), folded);
      }
      {
        SCOPED_TRACE("presumed floors");
        expect_same_measurement(screened(c, budget, causal, presumed), plain);
      }
      {
        SCOPED_TRACE("bounds and presumed floors");
        expect_same_measurement(screened(c, budget, causal, on), plain);
        EXPECT_EQ(alibi_screen_reruns(), reruns);
      }
      {
        // A floor presumed at the sample's second largest: it does not hold, the pass runs again.
        SCOPED_TRACE("a presumption that fails");
        expect_same_measurement(screened(c, budget, causal, wrong), plain);
        EXPECT_EQ(alibi_screen_reruns(), reruns + 1);
      }
    }
  }
}

TEST(AlibiScreened, KeysOutOfOrderAreLeftToTheCaller) {
  AlibiParams p{4};
  const Case c = make_case(p, {3}, {0, 2, 1, 3}, "alibi.scalar_f32", 8, 0, 7);
  Measurement m;
  EXPECT_FALSE(measure_alibi_screened(c.params, c.queries, c.keys, c.y,
                                      {&contract_of("alibi.scalar_f32"), DType::F32}, m, {}));
  EXPECT_EQ(m.count(), 0u);
}

}  // namespace
}  // namespace pe::harness::alibi_rows_test

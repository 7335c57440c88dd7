// The sinusoidal table's screened pass (sinusoidal_screen.h) against measure_sinusoidal, the exact path:
// every statistic but the 99th percentiles bit for bit (verdict, counts, maxima and their elements, the
// worst list, a tally fed by the elements measured exactly), the percentiles within the screen's radius;
// on passing and failing tables (wrong base, swapped layout, NaN and infinite outputs, positions up to and
// past 2^31), in each output type, and every compiled Highway target with the same bits.
#include "pe/harness/sinusoidal_screen.h"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <set>

#include "pe/harness/instance.h"
#include "pe/plan.h"
#include "pe/variant.h"
#include "tally_stand_in.h"

namespace pe::harness {
namespace {

struct Table {
  SinusoidalParams params;
  std::vector<std::int64_t> positions;
  DType dtype = DType::F32;
  std::vector<double> values;  // as doubles (the type's values)
  std::vector<unsigned char> bytes;
  Values typed() const {
    return dtype == DType::F64 ? Values(values) : Values(bytes.data(), dtype, values.size());
  }
};

// A table of sin and cos of p·ω (in double, from `made`'s base and layout) rounded to `dtype`, a few
// elements a few ulps off, then `plant` applied to the doubles.
Table make(const SinusoidalParams& checked, const SinusoidalParams& made, std::vector<std::int64_t> positions,
           DType dtype, const std::function<void(std::vector<double>&)>& plant = {}) {
  const SinusoidalPlan plan(made);
  const std::size_t dim = plan.dim();
  std::vector<double> v(positions.size() * dim);
  std::mt19937_64 rng(7);
  for (std::size_t r = 0; r < positions.size(); ++r)
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      const double phi = static_cast<double>(positions[r]) * plan.inv_freq()[j];
      v[r * dim + plan.sin_index(j)] = std::sin(phi);
      v[r * dim + plan.cos_index(j)] = std::cos(phi);
    }
  if (plant) plant(v);
  TypedBuffer buffer(dtype, v.size());
  for (std::size_t i = 0; i < v.size(); ++i) {
    buffer.set(i, v[i]);
    if (rng() % 97 == 0 && std::isfinite(v[i])) buffer.set(i, buffer.get(i) * (1 + 0x1p-22));
  }
  Table t{checked, std::move(positions), dtype, {}, buffer.bytes()};
  for (std::size_t i = 0; i < v.size(); ++i) t.values.push_back(buffer.get(i));
  return t;
}

std::vector<std::int64_t> range(std::int64_t first, std::size_t n) {
  std::vector<std::int64_t> p(n);
  for (std::size_t i = 0; i < n; ++i) p[i] = first + static_cast<std::int64_t>(i);
  return p;
}

using Tally = TallyStandIn;

std::vector<const Contract*> sinusoidal_contracts(DType dtype) {
  std::vector<const Contract*> out;
  for (const Variant* v : registry())
    if (v->family() == Family::Sinusoidal && v->supports(dtype) && v->name().find('@') == std::string::npos &&
        v->name().find("mutant") == std::string::npos)
      out.push_back(&v->contract());
  return out;
}

struct Run {
  Measurement bands;
  Tally tally;
  std::size_t exact = 0;  // elements measured exactly
};

void expect_same_record(const ElementRecord& a, const ElementRecord& b, const std::string& what) {
  EXPECT_EQ(a.row, b.row) << what;
  EXPECT_EQ(a.channel, b.channel) << what;
  EXPECT_EQ(a.position, b.position) << what;
  EXPECT_TRUE(a.abs_error == b.abs_error || (std::isnan(a.abs_error) && std::isnan(b.abs_error))) << what;
  EXPECT_TRUE(a.y == b.y || (std::isnan(a.y) && std::isnan(b.y))) << what;
  EXPECT_EQ(a.budget, b.budget) << what;
}

void expect_same(const Run& exact, const Run& screened, double radius) {
  const Measurement &a = exact.bands, &b = screened.bands;
  EXPECT_EQ(a.verdict(), b.verdict());
  EXPECT_EQ(a.violations(), b.violations());
  EXPECT_EQ(a.count(), b.count());
  EXPECT_EQ(a.undecidable(), b.undecidable());
  ASSERT_EQ(a.bands().size(), b.bands().size());
  for (std::size_t i = 0; i < a.bands().size(); ++i) {
    const BandStats &x = a.bands()[i], &y = b.bands()[i];
    const std::string band = "band " + std::to_string(x.lo);
    EXPECT_EQ(x.samples, y.samples) << band;
    EXPECT_EQ(x.percentile_samples, y.percentile_samples) << band;
    EXPECT_EQ(x.violations, y.violations) << band;
    EXPECT_EQ(x.encoding, y.encoding) << band;
    EXPECT_EQ(x.undecidable, y.undecidable) << band;
    if (x.samples == 0) continue;
    for (const auto& [e, f, name] :
         {std::tuple{&x.max_abs, &y.max_abs, "max_abs"}, std::tuple{&x.max_ulp, &y.max_ulp, "max_ulp"},
          std::tuple{&x.max_ratio, &y.max_ratio, "max_ratio"},
          std::tuple{&x.max_vacuity, &y.max_vacuity, "max_vacuity"}}) {
      EXPECT_TRUE(e->value == f->value || (std::isnan(e->value) && std::isnan(f->value))) << band << name;
      expect_same_record(e->at, f->at, band + " " + name);
    }
    EXPECT_EQ(x.budget_at_max_abs, y.budget_at_max_abs) << band;
    if (std::isfinite(x.p99_abs)) {
      EXPECT_NEAR(x.p99_abs, y.p99_abs, radius) << band;
    } else {
      EXPECT_EQ(x.p99_abs, y.p99_abs) << band;
    }
  }
  ASSERT_EQ(a.worst().size(), b.worst().size());
  for (std::size_t i = 0; i < a.worst().size(); ++i) expect_same_record(a.worst()[i], b.worst()[i], "worst");
  ASSERT_EQ(exact.tally.worst.size(), screened.tally.worst.size());
  for (std::size_t k = 0; k < exact.tally.worst.size(); ++k)
    EXPECT_EQ(exact.tally.worst[k], screened.tally.worst[k]) << "contract " << k;
}

Budget class_budget(DType dtype) {
  Budget b{nullptr, dtype};
  for (const Contract* c : sinusoidal_contracts(dtype))
    if (c->compute_type == DType::F32 || c->compute_type == dtype) b.any_of.push_back(c);
  return b;
}

std::int64_t promise_of(const Budget& b) {
  std::int64_t p = std::numeric_limits<std::int64_t>::max();
  for (const Contract* c : b.members()) p = std::min(p, c->max_position);
  return b.members().empty() ? -1 : p;
}

// Both paths over `t`: the exact one element by element, the screened one (on `target`), each with a tally.
// `sample_block`: both take their percentiles over a sample of rows in blocks that long (0: every element).
std::pair<Run, Run> both(const Table& t, const Budget& budget, std::size_t target = 0, bool expect = true,
                         bool sole = false, std::size_t sample_block = 0) {
  Run exact, screened;
  for (Run* run : {&exact, &screened}) {
    run->bands.promise(promise_of(budget));
    if (expect) run->bands.expect(t.values.size());
    if (sample_block != 0) run->bands.sample_percentiles(sample_block, 0, 0);
    run->tally = Tally(sinusoidal_contracts(t.dtype), t.dtype);
  }
  measure_sinusoidal(t.params, t.positions, Values(t.values), budget, [&](const ElementRecord& e) {
    exact.bands.add(e);
    exact.tally.add(e);
    ++exact.exact;
  });
  TableSinks sinks;
  sinks.sole = sole;
  sinks.exact = [&](const ElementRecord& e) {
    screened.tally.add(e);
    ++screened.exact;
  };
  sinks.line = [&](std::span<const ref::dd::DD> omegas, std::int64_t max_position,
                   std::span<const double> phi_lo,
                   double* line) { screened.tally.line(omegas, max_position, phi_lo, line); };
  set_sinusoidal_screen(true, target);
  const bool took =
      measure_sinusoidal_screened(t.params, t.positions, t.typed(), budget, screened.bands, sinks);
  set_sinusoidal_screen(true, 0);
  EXPECT_TRUE(took);
  return {std::move(exact), std::move(screened)};
}

// The percentiles' distance from the exact path's: a row's radius (sinusoidal_screen.h) at positions below
// 2^32, (2^-48 + 2^32·(2^-88 + 2^-96))·(1 + 2^-16) + kTableRotationRadius, under 2^-47 +
// kTableRotationRadius.
constexpr double kRadius = 0x1p-47 + kTableRotationRadius;

const SinusoidalParams kInterleaved{64, 10000.0, Layout::Interleaved};
const SinusoidalParams kConcatenated{64, 10000.0, Layout::Concatenated};

TEST(SinusoidalScreen, PassingTablesInEachTypeAndLayoutMatchTheExactPath) {
  if (table_screen_targets().empty()) GTEST_SKIP() << "no vector target with a fused multiply-add";
  for (const DType dtype : {DType::F32, DType::BF16, DType::F16})
    for (const SinusoidalParams& params : {kInterleaved, kConcatenated}) {
      SCOPED_TRACE(std::string(to_string(dtype)) + " " + std::string(to_string(params.layout)));
      const Table t = make(params, params, range(0, 1500), dtype);
      const auto [exact, screened] = both(t, class_budget(dtype));
      expect_same(exact, screened, kRadius);
      EXPECT_TRUE(exact.bands.pass());
      EXPECT_LT(screened.exact, exact.exact / 4) << "the screen proved few elements quiet";
    }
}

// A table whose float32 angles err by far more than a float32 ulp (sinusoidal.scalar_f32's arithmetic:
// fl(fl(p)·fl(ω)), then sinf and cosf), in both layouts: its lines leave the float32 pre-test room
// (table_screen_float32_passes rises: the drivers hand it its lines), and every statistic is still the exact
// path's.
TEST(SinusoidalScreen, AFloat32AngleTableTakesTheFloat32PreTestAndMatchesTheExactPath) {
  if (table_screen_targets().empty()) GTEST_SKIP();
  for (const SinusoidalParams& params : {kInterleaved, kConcatenated}) {
    SCOPED_TRACE(std::string(to_string(params.layout)));
    const SinusoidalPlan plan(params);
    const std::vector<std::int64_t> positions = range(0, 3000);
    const auto float32_angles = [&](std::vector<double>& v) {
      for (std::size_t r = 0; r < positions.size(); ++r)
        for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
          const float angle = static_cast<float>(positions[r]) * static_cast<float>(plan.inv_freq()[j]);
          v[r * plan.dim() + plan.sin_index(j)] = std::sin(angle);
          v[r * plan.dim() + plan.cos_index(j)] = std::cos(angle);
        }
    };
    const Table t = make(params, params, positions, DType::F32, float32_angles);
    const std::size_t passes = table_screen_float32_passes();
    const auto [exact, screened] = both(t, class_budget(DType::F32));
    expect_same(exact, screened, kRadius);
    EXPECT_TRUE(exact.bands.pass());
    EXPECT_GT(table_screen_float32_passes(), passes);
  }
}

TEST(SinusoidalScreen, DoublesHandedOverForANarrowerTypeMatchTheExactPath) {
  if (table_screen_targets().empty()) GTEST_SKIP();
  Table t = make(kInterleaved, kInterleaved, range(0, 600), DType::F32);
  t.dtype = DType::F64;  // read as doubles; the budget is float32's
  const auto [exact, screened] = both(t, class_budget(DType::F32));
  expect_same(exact, screened, kRadius);
}

TEST(SinusoidalScreen, FailingTablesMatchTheExactPath) {
  if (table_screen_targets().empty()) GTEST_SKIP();
  const SinusoidalParams wrong_base{64, 500.0, Layout::Interleaved};
  const auto plant = [](std::vector<double>& v) {
    v[70 * 64 + 3] = std::numeric_limits<double>::quiet_NaN();
    v[400 * 64 + 10] = INFINITY;
    v[401 * 64 + 11] = -INFINITY;
    v[900 * 64 + 63] = std::numeric_limits<double>::quiet_NaN();
    v[1000 * 64 + 5] += 1e-3;
  };
  for (const DType dtype : {DType::F32, DType::BF16, DType::F16}) {
    SCOPED_TRACE(to_string(dtype));
    for (const auto& [checked, made] :
         {std::pair{kInterleaved, wrong_base}, std::pair{kInterleaved, kConcatenated},
          std::pair{kConcatenated, kInterleaved}}) {
      const auto [exact, screened] = both(make(checked, made, range(0, 1200), dtype), class_budget(dtype));
      expect_same(exact, screened, kRadius);
      EXPECT_FALSE(exact.bands.pass());
    }
    const auto [exact, screened] =
        both(make(kConcatenated, kConcatenated, range(0, 1200), dtype, plant), class_budget(dtype));
    expect_same(exact, screened, kRadius);
    EXPECT_FALSE(exact.bands.pass());
  }
}

TEST(SinusoidalScreen, LargePositionsAndFlatBudgetsMatchTheExactPath) {
  if (table_screen_targets().empty()) GTEST_SKIP();
  // Around 2^24 (the float32 class's promise), 2^31 and 2^32 (the double tier's range), in float32 tables
  // whose angles were formed in double: past the promise rows go element by element, some elements fail.
  std::vector<std::int64_t> positions = range((std::int64_t{1} << 24) - 200, 400);
  for (const std::int64_t p : range((std::int64_t{1} << 31) - 100, 200)) positions.push_back(p);
  for (const std::int64_t p : range((std::int64_t{1} << 32) - 50, 100)) positions.push_back(p);
  const Table t = make(kInterleaved, kInterleaved, positions, DType::F32);
  const auto [exact, screened] = both(t, class_budget(DType::F32));
  expect_same(exact, screened, kRadius);
  // A flat bound (no contract: no promise, every row element by element) and one contract.
  const Table small = make(kConcatenated, kConcatenated, range(0, 800), DType::F32);
  const auto [flat_exact, flat_screened] = both(small, Budget{nullptr, DType::F32, 1e-7});
  expect_same(flat_exact, flat_screened, kRadius);
  const auto [one_exact, one_screened] =
      both(small, Budget{sinusoidal_contracts(DType::F32).front(), DType::F32}, 0, false);
  expect_same(one_exact, one_screened, kRadius);
}

TEST(SinusoidalScreen, RowsShorterThanTheirLastVectorMatchTheExactPath) {
  if (table_screen_targets().empty()) GTEST_SKIP();
  // dim 36 and 20: the last vector of pairs is partial, read from the row's padded copy (never past the
  // data).
  for (const std::int64_t dim : {36, 20})
    for (const Layout layout : {Layout::Interleaved, Layout::Concatenated})
      for (const DType dtype : {DType::F32, DType::BF16}) {
        const SinusoidalParams params{dim, 10000.0, layout};
        const auto plant = [&](std::vector<double>& v) {
          v.back() = std::numeric_limits<double>::quiet_NaN();
        };
        const auto [exact, screened] =
            both(make(params, params, range(0, 900), dtype, plant), class_budget(dtype));
        expect_same(exact, screened, kRadius);
      }
}

TEST(SinusoidalScreen, EveryTargetGivesTheSameBits) {
  const auto& targets = table_screen_targets();
  if (targets.size() < 2) GTEST_SKIP() << targets.size() << " target(s)";
  const auto plant = [](std::vector<double>& v) {
    v[300 * 64 + 9] = std::numeric_limits<double>::quiet_NaN();
  };
  for (const DType dtype : {DType::F32, DType::BF16, DType::F16})
    for (const SinusoidalParams& params : {kInterleaved, kConcatenated}) {
      const Table t = make(params, params, range(0, 700), dtype, plant);
      const auto [reference, best] = both(t, class_budget(dtype), 0);
      for (std::size_t k = 1; k < targets.size(); ++k) {
        SCOPED_TRACE(targets[k].name);
        const auto [exact, other] = both(t, class_budget(dtype), k);
        expect_same(best, other, 0.0);  // the estimates too
        EXPECT_EQ(best.exact, other.exact);
        for (std::size_t i = 0; i < best.bands.bands().size(); ++i)
          EXPECT_EQ(best.bands.bands()[i].p99_ulp, other.bands.bands()[i].p99_ulp);
      }
    }
}

// The kernel alone (every target) on one row of 8 pairs of doubles, the sines at 0..7 and the cosines at
// 8..15, e given (no rotation), y = e but where a case plants an error; every bar open (no line, max_ulp
// large, no tails) but the one a case tests. Returns the loud flags per pair (1: sine, 2: cosine).
struct KernelRow {
  std::vector<double> y = std::vector<double>(16, 0.75), sin = std::vector<double>(8, 0.75),
                      cos = std::vector<double>(8, 0.75), step = std::vector<double>(8, 0.0),
                      line = std::vector<double>(8, INFINITY);
  double radius = 0x1p-40;
  TableScreenBars bars{.max_ulp = 0x1p40, .abs_floor = INFINITY, .ulp_floor = INFINITY};
  std::vector<int> flags(const TableScreenTarget& target) const {
    std::vector<double> sin_e = sin, cos_e = cos, out(8), abs(32), ulp(32);
    const TableScreenRow row{sin_e.data(), cos_e.data(), step.data(), step.data(),
                             line.data(),  radius,       false};
    TableScreenResult result{out.data(), abs.data(), ulp.data()};
    target.run(ScreenType::F64, y.data(), 8, ScreenChannels{0, 8, false}, row, bars, result);
    std::vector<int> f;
    for (const double v : out) f.push_back(static_cast<int>(v));
    return f;
  }
};

TEST(SinusoidalScreen, KernelJudgesAnElementWithinTwoRadiiAboveAPowerOfTwoInTheBinadeBelow) {
  // e within 2r above 0.5 (r = 2^-40): the exact value may lie below 0.5, where float32's ulp is 2^-25, half
  // e's; max_ulp 2 then bounds |y − e| + r by 2^-24, not 2^-23. An error of 2^-25 is quiet there, one of
  // 1.5·2^-24 loud (quiet under e's own binade, as at 0.75 + 2r, whose lower end stays at 0.75).
  for (const TableScreenTarget& target : table_screen_targets()) {
    SCOPED_TRACE(target.name);
    KernelRow k;
    k.bars.max_ulp = 2;
    k.sin[0] = 0.5 + 0x1p-41, k.y[0] = k.sin[0] + 0x1p-25;
    k.sin[1] = 0.5 + 0x1p-41, k.y[1] = k.sin[1] + 1.5 * 0x1p-24;
    k.sin[2] = 0.75 + 0x1p-39, k.y[2] = k.sin[2] + 1.5 * 0x1p-24;
    k.cos[3] = -(0.5 + 0x1p-42), k.y[8 + 3] = k.cos[3] - 1.5 * 0x1p-24;
    const std::vector<int> f = k.flags(target);
    EXPECT_EQ(f[0], 0);
    EXPECT_EQ(f[1], 1);
    EXPECT_EQ(f[2], 0);
    EXPECT_EQ(f[3], 2);
  }
}

// A call of several rows stops after its first step that holds a loud element (TableScreenRow::rows): the
// driver measures it exactly, and its bars may rise, before the next step. A step is two rows where two
// remain, one otherwise, and the first row alone where it is not rotated (its e the stored one). Rows of 8
// pairs of doubles, each e a quarter turn from the last ((sin ω, cos ω) = (1, 0): (s, c) to (c, −s), exact),
// so the e stored back tells how many rows the kernel rotated through; the rows it did not take keep flags
// 0. The table holds 40 rows, so the kernel prefetches rows ahead of those it reads (within the 40).
TEST(SinusoidalScreen, AKernelCallStopsAfterItsFirstLoudStep) {
  constexpr std::size_t n = 8, table_rows = 40, none = SIZE_MAX;
  const auto turned = [](std::size_t k) {  // (s, c) after k quarter turns from (0.75, 0.25)
    const std::array<std::pair<double, double>, 4> e{
        {{0.75, 0.25}, {0.25, -0.75}, {-0.75, -0.25}, {-0.25, 0.75}}};
    return e[k % 4];
  };
  struct Case {
    bool rotate;
    std::size_t rows, loud_row, taken;
  };
  // Rotated, 6 rows: steps {0, 1}, {2, 3}, {4, 5}; 5 rows: the last alone; not rotated: {0}, {1, 2}, ...
  const std::array<Case, 10> cases{{{true, 6, 0, 2},
                                    {true, 6, 1, 2},
                                    {true, 6, 2, 4},
                                    {true, 6, 5, 6},
                                    {true, 6, none, 6},
                                    {true, 5, 4, 5},
                                    {false, 6, 0, 1},
                                    {false, 6, 1, 3},
                                    {false, 6, 2, 3},
                                    {false, 6, 5, 6}}};
  for (const TableScreenTarget& target : table_screen_targets()) {
    SCOPED_TRACE(target.name);
    for (const Case& k : cases) {
      SCOPED_TRACE(testing::Message() << k.rotate << " " << k.rows << " " << k.loud_row);
      // Row r holds r + 1 quarter turns: rotated, the stored e is row 0's last; not rotated, row 0's own.
      const auto [s0, c0] = turned(k.rotate ? 0 : 1);
      std::vector<double> sin(n, s0), cos(n, c0), step_sin(n, 1.0), step_cos(n, 0.0), line(n, 0x1p-30);
      std::vector<double> y(table_rows * 2 * n), flags(k.rows * n, 0.0), abs(2 * n * k.rows + 8),
          ulp(2 * n * k.rows + 8);
      for (std::size_t r = 0; r < table_rows; ++r)
        for (std::size_t j = 0; j < n; ++j)
          y[r * 2 * n + j] = turned(r + 1).first, y[r * 2 * n + n + j] = turned(r + 1).second;
      if (k.loud_row != none) y[k.loud_row * 2 * n + n + 5] += 0x1p-20;  // row loud_row's cos of pair 5
      TableScreenRow row{sin.data(),  cos.data(), step_sin.data(), step_cos.data(),
                         line.data(), 0x1p-40,    k.rotate};
      row.rows = k.rows, row.y_stride = 2 * n * sizeof(double), row.table_rows = table_rows;
      const TableScreenBars bars{.max_ulp = 0x1p40, .abs_floor = INFINITY, .ulp_floor = INFINITY};
      TableScreenResult result{flags.data(), abs.data(), ulp.data()};
      target.run(ScreenType::F64, y.data(), n, ScreenChannels{0, n, false}, row, bars, result);
      EXPECT_EQ(result.rows, k.taken);
      EXPECT_EQ(result.loud, k.loud_row != none ? 1u : 0u);
      for (std::size_t i = 0; i < flags.size(); ++i)
        EXPECT_EQ(flags[i], k.loud_row != none && i == k.loud_row * n + 5 ? 2.0 : 0.0) << i;
      EXPECT_EQ(sin, std::vector<double>(n, turned(k.taken).first));
      EXPECT_EQ(cos, std::vector<double>(n, turned(k.taken).second));
    }
  }
}

// The driver goes on after a call that stopped at a loud row from that row's e: a table with one element
// far over budget has its exact elements, the loud ones, no more than the same table without it (plus the
// planted one and a few its raised bars change). Rotated from the wrong row, every element after the stop
// would be loud up to the next reseed (thousands).
TEST(SinusoidalScreen, AfterACallStopsTheNextRowsStayQuiet) {
  if (table_screen_targets().empty()) GTEST_SKIP();
  const Table plain = make(kInterleaved, kInterleaved, range(1000, 2000), DType::F32);
  const Table planted = make(kInterleaved, kInterleaved, range(1000, 2000), DType::F32,
                             [](std::vector<double>& v) { v[700 * 64 + 9] += 0.25; });
  const auto a = both(plain, class_budget(DType::F32)).second;
  const auto b = both(planted, class_budget(DType::F32)).second;
  EXPECT_EQ(b.bands.violations(), a.bands.violations() + 1);
  EXPECT_LE(b.exact, a.exact + 16);
  EXPECT_LT(a.exact, plain.values.size() / 10);  // the screen took most of it
}

TEST(SinusoidalScreen, KernelBoundsTheUlpErrorWithTheRadius) {
  // max_ulp 2 at e = 0.75 (float32's ulp there 2^-24): |y − e| + r must stay at or under 2^-23, so an error
  // of 2^-23 − r/2 is loud (under it without the radius) and one of 2^-23 − 2r quiet.
  for (const TableScreenTarget& target : table_screen_targets()) {
    SCOPED_TRACE(target.name);
    KernelRow k;
    k.bars.max_ulp = 2;
    k.y[0] = 0.75 + (0x1p-23 - k.radius / 2);
    k.y[1] = 0.75 + (0x1p-23 - 2 * k.radius);
    k.y[8 + 2] = 0.75 - (0x1p-23 - k.radius / 2);
    const std::vector<int> f = k.flags(target);
    EXPECT_EQ(f[0], 1);
    EXPECT_EQ(f[1], 0);
    EXPECT_EQ(f[2], 2);
    // The line (already less the radius) alone: an error at it is quiet, one just above it loud.
    KernelRow l;
    l.line[4] = l.line[5] = 0x1p-30;
    l.y[4] = 0.75 + 0x1p-30;
    l.y[5] = 0.75 + 0x1p-30 * (1 + 0x1p-20);
    const std::vector<int> g = l.flags(target);
    EXPECT_EQ(g[4], 0);
    EXPECT_EQ(g[5], 1);
  }
}

TEST(SinusoidalScreen, ASoleWritersOwnFloorsKeepEveryPercentile) {
  if (table_screen_targets().empty()) GTEST_SKIP();
  // TableSinks::sole: the tails keep only estimates above the driver's own floors (at least n/100 + 2 kept
  // values above them in the band). The percentiles must be the same bits as without them, in bands of
  // 64'000 to 128'000 elements whose 99th percentiles lie among many close values (a floor a bucket too high
  // takes some away).
  for (const DType dtype : {DType::F32, DType::BF16})
    for (const SinusoidalParams& params : {kInterleaved, kConcatenated}) {
      SCOPED_TRACE(std::string(to_string(dtype)) + " " + std::string(to_string(params.layout)));
      const Table t = make(params, params, range(0, 3000), dtype);
      const auto [exact, plain] = both(t, class_budget(dtype));
      const auto [exact_too, sole] = both(t, class_budget(dtype), 0, true, true);
      expect_same(exact, sole, kRadius);
      for (std::size_t i = 0; i < plain.bands.bands().size(); ++i) {
        EXPECT_EQ(plain.bands.bands()[i].p99_abs, sole.bands.bands()[i].p99_abs) << i;
        EXPECT_EQ(plain.bands.bands()[i].p99_ulp, sole.bands.bands()[i].p99_ulp) << i;
      }
    }
}

TEST(SinusoidalScreen, SwitchedOffOrSampledItDeclines) {
  const Table t = make(kInterleaved, kInterleaved, range(0, 10), DType::F32);
  Measurement m;
  set_sinusoidal_screen(false);
  EXPECT_FALSE(
      measure_sinusoidal_screened(t.params, t.positions, t.typed(), class_budget(DType::F32), m, {}));
  set_sinusoidal_screen(true);
  EXPECT_FALSE(measure_sinusoidal_screened(t.params, t.positions, t.typed(), class_budget(DType::F32), m, {},
                                           Sample{{1, 2}, {}}));
  EXPECT_FALSE(measure_sinusoidal_screened(t.params, t.positions, t.typed(),
                                           Budget{nullptr, DType::F64, 1e-15}, m, {}));
  EXPECT_EQ(m.count(), 0u);
}

// The kernel with and without its pre-test (table_fast_bars) on one row: the same flags, loud count, kept
// estimates (bit for bit) and rotated sin and cos.
struct PreTestRun {
  std::vector<double> flags, abs, ulp, sin, cos;
  std::size_t loud = 0;
};
PreTestRun run_kernel(const TableScreenTarget& target, ScreenType type, const void* y, std::size_t n,
                      const ScreenChannels& ch, TableScreenRow row, const TableScreenBars& bars,
                      std::vector<double> sin, std::vector<double> cos, bool pre_test) {
  PreTestRun out{std::vector<double>(n), std::vector<double>(2 * n + 8), std::vector<double>(2 * n + 8),
                 std::move(sin), std::move(cos)};
  std::vector<double> fast(n);
  row.sin = out.sin.data(), row.cos = out.cos.data();
  row.fast_line = nullptr;
  if (pre_test) {
    row.fast_ulp = table_fast_bars(bars, std::span<const double>(row.line, n), fast.data()).ulp;
    row.fast_line = fast.data();
  }
  TableScreenResult result{out.flags.data(), out.abs.data(), out.ulp.data()};
  target.run(type, y, n, ch, row, bars, result);
  out.abs.resize(result.abs_kept), out.ulp.resize(result.ulp_kept);
  out.loud = result.loud;
  return out;
}

bool same_doubles(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

TEST(SinusoidalScreen, ThePreTestChangesNoOutcomeOfTheKernel) {
  // Rows of 64 pairs (8 whole vectors on every target) of doubles, concatenated, with errors planted at and
  // one step past every bar the pre-test folds together (the line, the abs floor, the ulp bar less the
  // radius in the binade of |e| − 2r, the ulp floor in e's binade and less the radius in that lower one), e
  // at and beside powers of two and 0 (position 0's sines), NaN and infinite outputs, NaN and infinite lines,
  // floors of -inf (none yet) and bars of NaN; then float32 rows as a table's, interleaved and rotated. Every
  // outcome must be the judge's alone.
  constexpr std::size_t n = 64;
  std::mt19937_64 rng(53);
  const auto pick = [&](std::initializer_list<double> v) { return v.begin()[rng() % v.size()]; };
  std::size_t cases = 0, quiet_rows = 0;
  for (const TableScreenTarget& target : table_screen_targets()) {
    SCOPED_TRACE(target.name);
    for (int trial = 0; trial < 400; ++trial) {
      const double radius = 0x1p-40;
      TableScreenBars bars{.max_ulp = pick({0.75, 4.0, 1e6, NAN, INFINITY}),
                           .abs_floor = pick({-INFINITY, 0x1p-26, 0x1p-30, INFINITY}),
                           .ulp_floor = pick({-INFINITY, 0.25, 0.5, INFINITY})};
      std::vector<double> sin(n), cos(n), line(n), y(2 * n), step(n, 0.0);
      for (std::size_t j = 0; j < n; ++j) {
        const double phi = std::uniform_real_distribution<double>(0, 6.3)(rng);
        sin[j] = rng() % 8 == 0 ? pick({0.0, 0.5, -0.5, 0.5 + 0x1p-41, 0.5 - 0x1p-53, 0x1p-21, 1.0})
                                : std::sin(phi);
        cos[j] = rng() % 8 == 0 ? pick({0.0, 0.25 + 0x1p-39, -1.0}) : std::cos(phi);
        line[j] = rng() % 16 == 0 ? pick({NAN, INFINITY, 0.0}) : pick({0x1p-22, 0x1p-25, 0x1p-28});
      }
      const bool all_quiet = trial % 4 == 0;  // no planted error: the pre-test passes whole vectors
      quiet_rows += all_quiet ? 1 : 0;
      for (std::size_t j = 0; j < n; ++j)
        for (std::size_t o = 0; o < 2; ++o) {
          const double e = o == 0 ? sin[j] : cos[j];
          const auto ulp_at = [](double v) { return std::ldexp(1.0, std::max(std::ilogb(v), -126) - 23); };
          // e's own ulp (the estimates') and that of |e| − 2r's binade (the ulp bar's and the pre-test's).
          const double ulp = ulp_at(e == 0 ? 0x1p-126 : e);
          const double lower = ulp_at(std::max(std::fabs(e) - 2 * radius, 0x1p-126));
          double err = std::ldexp(static_cast<double>(rng() % 64), -40);
          if (!all_quiet && rng() % 4 == 0) {
            const double bar =
                pick({line[j], bars.abs_floor, bars.ulp_floor * ulp, bars.ulp_floor * lower - radius,
                      bars.max_ulp * (1 - 0x1p-49) * lower - radius});
            err = std::isfinite(bar) && bar >= 0 ? bar : err;
            if (rng() % 2 == 0) err = std::nextafter(err, INFINITY);
          }
          if (!all_quiet && rng() % 97 == 0) err = pick({NAN, INFINITY});
          y[o * n + j] = e + (rng() % 2 == 0 ? err : -err);
        }
      if (all_quiet) bars.abs_floor = bars.ulp_floor = INFINITY, bars.max_ulp = 1e6;
      const TableScreenRow row{nullptr, nullptr, step.data(), step.data(), line.data(), radius, false};
      const ScreenChannels ch{0, n, false};
      const PreTestRun judged =
          run_kernel(target, ScreenType::F64, y.data(), n, ch, row, bars, sin, cos, false);
      const PreTestRun pre = run_kernel(target, ScreenType::F64, y.data(), n, ch, row, bars, sin, cos, true);
      EXPECT_TRUE(same_doubles(judged.flags, pre.flags)) << "trial " << trial;
      EXPECT_EQ(judged.loud, pre.loud) << "trial " << trial;
      EXPECT_TRUE(same_doubles(judged.abs, pre.abs)) << "trial " << trial;
      EXPECT_TRUE(same_doubles(judged.ulp, pre.ulp)) << "trial " << trial;
      ++cases;
    }
    // A float32 table's rows, interleaved, each rotated from the last (its e rotated in the kernel), at
    // floors near the 99th percentiles' (most vectors pass the pre-test, some hold a kept estimate).
    const SinusoidalPlan plan(kInterleaved);
    const Table t = make(kInterleaved, kInterleaved, range(0, 200), DType::F32);
    std::vector<double> sin(n), cos(n), step_sin(n), step_cos(n), line(n, 0x1p-24);
    for (std::size_t j = 0; j < n / 2; ++j) {
      step_sin[j] = std::sin(plan.inv_freq()[j]), step_cos[j] = std::cos(plan.inv_freq()[j]);
      cos[j] = 1;
    }
    const TableScreenBars bars{.max_ulp = 4, .abs_floor = 0x1.fp-26, .ulp_floor = 0.49};
    const ScreenChannels ch{0, 1, true};
    for (std::size_t r = 1; r < 200; ++r) {
      const TableScreenRow row{nullptr, nullptr, step_sin.data(), step_cos.data(), line.data(),
                               0x1p-40, true};
      const void* y = t.bytes.data() + r * 64 * sizeof(float);
      const PreTestRun judged = run_kernel(target, ScreenType::F32, y, n / 2, ch, row, bars, sin, cos, false);
      const PreTestRun pre = run_kernel(target, ScreenType::F32, y, n / 2, ch, row, bars, sin, cos, true);
      EXPECT_TRUE(same_doubles(judged.flags, pre.flags)) << "row " << r;
      EXPECT_EQ(judged.loud, pre.loud) << "row " << r;
      EXPECT_TRUE(same_doubles(judged.abs, pre.abs)) << "row " << r;
      EXPECT_TRUE(same_doubles(judged.ulp, pre.ulp)) << "row " << r;
      EXPECT_TRUE(same_doubles(judged.sin, pre.sin) && same_doubles(judged.cos, pre.cos)) << "row " << r;
      sin = pre.sin, cos = pre.cos;
    }
  }
  if (!table_screen_targets().empty()) {
    EXPECT_GT(quiet_rows, 0u);
  }
  EXPECT_EQ(cases, 400 * table_screen_targets().size());
}

// The pre-test's bars: a NaN line none (-1), the abs floor folded into the line, the ulp floor into U.
TEST(SinusoidalScreen, ThePreTestsBarsFoldTheFloorsIn) {
  const TableScreenBars bars{.max_ulp = 2, .abs_floor = 0x1p-26, .ulp_floor = 0.5};
  const std::vector<double> line{NAN, 0x1p-20, 0x1p-30, INFINITY};
  std::vector<double> fast(line.size());
  EXPECT_EQ(table_fast_bars(bars, line, fast.data()).ulp, 0.5 * 0x1p-23);
  EXPECT_EQ(fast, (std::vector<double>{-1.0, 0x1p-26, 0x1p-30, 0x1p-26}));
  const TableScreenBars none{.max_ulp = 2, .abs_floor = -INFINITY, .ulp_floor = -INFINITY};
  EXPECT_EQ(table_fast_bars(none, line, fast.data()).ulp, -INFINITY);
  EXPECT_EQ(fast[1], -INFINITY);
  const TableScreenBars open{.max_ulp = 2, .abs_floor = INFINITY, .ulp_floor = INFINITY};
  EXPECT_EQ(table_fast_bars(open, line, fast.data()).ulp, 0x1p100);
}

// measure_sinusoidal_screened under `tuning` (restored after), with a tally and every record its exact sink
// met.
struct Presumed {
  Run run;
  std::vector<ElementRecord> handed;
};
// `sample_block`: the percentiles over a sample of rows in blocks that long (0: every element).
// `seeds`: where not null, counts the elements given ahead (TableSinks::seed), which the tally takes.
Presumed screened_with(const Table& t, const Budget& budget, const PresumeTuning& tuning, bool sole,
                       std::size_t sample_block = 0, std::size_t* seeds = nullptr) {
  const PresumeTuning before = sinusoidal_screen_tuning();
  tune_sinusoidal_screen(tuning);
  Presumed out;
  out.run.bands.promise(promise_of(budget));
  out.run.bands.expect(t.values.size());
  for (std::size_t r = 0; r < t.positions.size(); r += 1000)  // as check does: each band its own 1%
    out.run.bands.expect_band(t.positions[r],
                              std::min<std::size_t>(1000, t.positions.size() - r) * t.params.dim);
  if (sample_block != 0) out.run.bands.sample_percentiles(sample_block, 0, 0);
  out.run.tally = Tally(sinusoidal_contracts(t.dtype), t.dtype);
  TableSinks sinks;
  sinks.sole = sole;
  sinks.exact = [&](const ElementRecord& e) {
    out.run.tally.add(e);
    out.handed.push_back(e);
  };
  if (seeds != nullptr)
    sinks.seed = [&](const ElementRecord& e) {
      out.run.tally.add(e);
      ++*seeds;
    };
  sinks.line = [&](std::span<const ref::dd::DD> omegas, std::int64_t max_position,
                   std::span<const double> phi_lo,
                   double* line) { out.run.tally.line(omegas, max_position, phi_lo, line); };
  EXPECT_TRUE(measure_sinusoidal_screened(t.params, t.positions, t.typed(), budget, out.run.bands, sinks));
  tune_sinusoidal_screen(before);
  return out;
}

// Percentiles over a sample of rows (Measurement::sample_percentiles, in check's blocks, table_sample_block,
// and in blocks of 2 rows, which split the screen's batches and calls): the screen keeps the estimates of
// the sampled rows alone, whole batches in or out of the sample, and its percentiles are the exact path's
// over the same rows (within the rows' radius), its own floors (sole) included, with an element over budget
// planted in and outside the sample.
TEST(SinusoidalScreen, SampledPercentilesAreTheExactPathsOverTheSameRows) {
  if (table_screen_targets().empty()) GTEST_SKIP();
  for (const DType dtype : {DType::F32, DType::BF16})
    for (const std::size_t block : {table_sample_block(64), std::size_t{2}})
      for (const bool sole : {false, true}) {
        SCOPED_TRACE(::testing::Message() << to_string(dtype) << " block " << block << (sole ? " sole" : ""));
        // Over any type's budget: in band 1000-9999 the first row in the sample and the first out of it.
        Measurement probe;
        probe.sample_percentiles(block, 0, 0);
        std::size_t in = 1000, out = 1000;
        while (!probe.sampled_row(static_cast<std::int64_t>(in))) ++in;
        while (probe.sampled_row(static_cast<std::int64_t>(out))) ++out;
        const auto plant = [&](std::vector<double>& v) {
          for (const std::size_t row : {in, out}) v[row * 64 + 3] += 0.25;
        };
        const Table t = make(kInterleaved, kInterleaved, range(0, 3000), dtype, plant);
        const auto [exact, screened] = both(t, class_budget(dtype), 0, true, sole, block);
        expect_same(exact, screened, kRadius);
        for (const BandStats& b : screened.bands.bands()) {
          if (b.samples == 0) continue;
          EXPECT_GT(b.percentile_samples, 0U) << b.lo;
          EXPECT_LT(b.percentile_samples, b.samples / 4) << b.lo;
        }
        EXPECT_EQ(screened.bands.violations(), 2U);
        // Presumed floors, guessed from the sampled rows: they hold (no rerun), the percentiles the same
        // bits.
        const std::size_t reruns = sinusoidal_screen_reruns();
        const Presumed held = screened_with(t, class_budget(dtype), {.presume_from = 0}, sole, block);
        EXPECT_EQ(sinusoidal_screen_reruns(), reruns);
        expect_same(exact, held.run, kRadius);  // the bands' largest errors presumed too (the default)
        for (std::size_t i = 0; i < held.run.bands.bands().size(); ++i) {
          const BandStats &a = screened.bands.bands()[i], &b = held.run.bands.bands()[i];
          EXPECT_EQ(a.percentile_samples, b.percentile_samples) << i;
          EXPECT_TRUE(std::memcmp(&a.p99_abs, &b.p99_abs, sizeof(double)) == 0) << i;
          EXPECT_TRUE(std::memcmp(&a.p99_ulp, &b.p99_ulp, sizeof(double)) == 0) << i;
        }
      }
}

TEST(SinusoidalScreen, PresumedFloorsThatHoldOrFailChangeNothing) {
  if (table_screen_targets().empty()) GTEST_SKIP();
  // 3000 positions x dim 64 (bands of 64'000 and 128'000 elements, each sampled at 128 rows): presumed
  // floors that hold (the default share), and ones that fail (a share of 1e-9: the floor the sample's
  // second largest, above each band's 99th percentile), which run the pass again. Against the pass without
  // presumed floors: everything, the percentiles included, bit for bit (here: no element at a percentile's
  // rank is loud for the tally's line alone; in general a rerun's percentiles are within the rows' radius of
  // the exact ones, as any screened pass's), and each record handed once. With the bands' largest errors
  // presumed too (PresumeTuning::presume_largest), the same but for which records are handed: the presumed
  // bars leave other elements loud (APresumedLargestErrorLeavesFewerElementsLoudAndChangesNothingElse).
  const auto plant = [](std::vector<double>& v) {
    v[70 * 64 + 3] = std::numeric_limits<double>::quiet_NaN();
    v[1500 * 64 + 10] += 1e-3;
  };
  for (const bool largest : {false, true})
    for (const DType dtype : {DType::F32, DType::BF16})
      for (const bool sole : {false, true})
        for (const bool planted : {false, true}) {
          SCOPED_TRACE(::testing::Message() << to_string(dtype) << (sole ? " sole" : "")
                                            << (planted ? " planted" : "") << (largest ? " largest" : ""));
          const PresumeTuning off{.presume_from = SIZE_MAX},
              on{.presume_from = 0, .presume_largest = largest},
              wrong{.presume_from = 0, .presumed_share = 1e-9, .presume_largest = largest};
          const Table t = make(kInterleaved, kInterleaved, range(0, 3000), dtype,
                               planted ? std::function<void(std::vector<double>&)>(plant) : nullptr);
          const Budget budget = class_budget(dtype);
          const Presumed plain = screened_with(t, budget, off, sole);
          const std::size_t reruns = sinusoidal_screen_reruns();
          const Presumed held = screened_with(t, budget, on, sole);
          EXPECT_EQ(sinusoidal_screen_reruns(), reruns);
          const Presumed failed = screened_with(t, budget, wrong, sole);
          EXPECT_EQ(sinusoidal_screen_reruns(), reruns + 1);
          for (const Presumed* p : {&held, &failed}) {
            expect_same(plain.run, p->run, 0.0);
            if (largest) {
              std::set<std::pair<std::int64_t, std::int64_t>> handed;
              for (const ElementRecord& e : p->handed)
                EXPECT_TRUE(handed.insert({e.row, e.channel}).second) << e.row << " " << e.channel;
            } else {
              ASSERT_EQ(plain.handed.size(), p->handed.size());
              for (std::size_t i = 0; i < plain.handed.size(); ++i)
                expect_same_record(plain.handed[i], p->handed[i], "handed " + std::to_string(i));
            }
            for (std::size_t i = 0; i < plain.run.bands.bands().size(); ++i) {
              const BandStats &a = plain.run.bands.bands()[i], &b = p->run.bands.bands()[i];
              EXPECT_TRUE(std::memcmp(&a.p99_abs, &b.p99_abs, sizeof(double)) == 0) << i;
              EXPECT_TRUE(std::memcmp(&a.p99_ulp, &b.p99_ulp, sizeof(double)) == 0) << i;
            }
          }
        }
}

// A band's largest error presumed from its sample (PresumeTuning::presume_largest, TableSinks::seed). With a
// float32 angle's error growing with the position, as an engine's float32 table's does, a band's largest
// error rose every few hundred rows, each rise a loud element. Presumed: far fewer elements handed to the
// exact path, each at most once through `exact`, and everything else the exact path's, as without it: the
// bands' maxima (the first element attaining each), counts, worst lists, verdicts and the tally's worsts;
// the percentiles within the rows' radius.
TEST(SinusoidalScreen, APresumedLargestErrorLeavesFewerElementsLoudAndChangesNothingElse) {
  if (table_screen_targets().empty()) GTEST_SKIP();
  const SinusoidalPlan plan(kInterleaved);
  const auto float_angles = [&](std::vector<double>& v) {  // sin and cos of fl(fl(p)·fl(ω)) in double
    for (std::size_t r = 0; r < v.size() / 64; ++r)
      for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
        const float phi = static_cast<float>(r) * static_cast<float>(plan.inv_freq()[j]);
        v[r * 64 + plan.sin_index(j)] = std::sin(static_cast<double>(phi));
        v[r * 64 + plan.cos_index(j)] = std::cos(static_cast<double>(phi));
      }
  };
  const Table t = make(kInterleaved, kInterleaved, range(0, 12000), DType::F32, float_angles);
  const Budget budget = class_budget(DType::F32);
  const auto [exact, unused] = both(t, budget);
  std::size_t seeds = 0;
  const auto with = [&](bool presume_largest) {
    return screened_with(t, budget, {.presume_from = 0, .presume_largest = presume_largest}, false, 0,
                         presume_largest ? &seeds : nullptr);
  };
  const Presumed plain = with(false), seeded = with(true);
  expect_same(exact, plain.run, kRadius);
  expect_same(exact, seeded.run, kRadius);
  EXPECT_GT(seeds, 0U);
  // The rows that hand an element (each one ends its batch and raises the bars): here 188 without, 67 with,
  // five of them every element's (the first rows, whose bands have no largest yet, and the last).
  const auto rows_handing = [](const Presumed& p) {
    std::set<std::int64_t> rows;
    for (const ElementRecord& e : p.handed) rows.insert(e.row);
    return rows.size();
  };
  EXPECT_LT(rows_handing(seeded), rows_handing(plain) / 2);
  std::set<std::pair<std::int64_t, std::int64_t>> handed;
  for (const ElementRecord& e : seeded.handed)
    EXPECT_TRUE(handed.insert({e.row, e.channel}).second) << e.row << " " << e.channel;
}

TEST(SinusoidalScreen, APresumedLevelIsTheLargestValueThatEnoughExceed) {
  // presumed_level (measure.h, every family's) against its definition, by brute force: the largest value that
  // at least ⌈share·n⌉ values exceed (-inf where none), over samples with many ties (a table's errors repeat)
  // among close values in one bucket of the histogram (the tie's next value down in it), values in many
  // binades, zeros and +inf (a NaN error's), at shares from 1e-9 (tests forcing a failure) to 0.5.
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    std::vector<double> v(1 + rng() % 400);
    for (double& u : v) {
      const int kind = static_cast<int>(rng() % 10);
      u = kind == 0   ? 0.0
          : kind == 1 ? INFINITY
          : kind < 5
              ? std::ldexp(1.1 + 0.01 * static_cast<double>(rng() % 4), -30)
              : std::ldexp(1.0 + static_cast<double>(rng() % 1000) / 1000.0, -static_cast<int>(rng() % 60));
    }
    for (const double share : {1e-9, 0.0125, 0.02, 0.1, 0.5}) {
      const auto above = static_cast<std::size_t>(std::ceil(share * static_cast<double>(v.size())));
      double want = -INFINITY;
      for (const double l : v)
        if (static_cast<std::size_t>(std::count_if(v.begin(), v.end(), [&](double u) { return u > l; })) >=
            above)
          want = std::max(want, l);
      std::vector<double> copy = v;  // presumed_level reorders its values
      EXPECT_EQ(presumed_level(copy, share), want) << "trial " << trial << " share " << share;
    }
  }
}

}  // namespace
}  // namespace pe::harness

// measure_sinusoidal_rows (each block's exact pairs once per distinct position) against
// measure_sinusoidal_rows_exact (every pair afresh at every row): the same records, bit for bit and in the
// same order, and so the same measurement (bands, maxima, percentiles, worst list, verdicts), on grids
// (2-D with extra tokens, 3-D), timestep tables (flip, shift, scale 1000, repeated positions, padding rows,
// an odd dim's pad channel), under a contract, a class and a flat bound, for data that is correct, one ulp
// off, built with a switch flipped, holding NaN and infinities, or nonzero in a zero row; and with the fast
// path off (MPFR per element).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "pe/check/golden.h"
#include "pe/contract.h"
#include "pe/harness/sinusoidal_rows.h"
#include "pe/ref/fast_trig.h"
#include "pe/variant.h"
#include "sinusoidal_rows_cases.h"

namespace pe::harness {
namespace {

using namespace rows_cases;  // NOLINT(google-build-using-namespace)

bool cached_same_bits(double a, double b) { return std::memcmp(&a, &b, sizeof a) == 0; }

// The first field two records differ in ("" where none).
std::string cached_difference(const ElementRecord& a, const ElementRecord& b) {
  const std::int64_t ia[] = {
      a.row, a.head, a.position, a.channel, a.dim, static_cast<std::int64_t>(a.pair), a.unchanged ? 1 : 0};
  const std::int64_t ib[] = {
      b.row, b.head, b.position, b.channel, b.dim, static_cast<std::int64_t>(b.pair), b.unchanged ? 1 : 0};
  const char* in[] = {"row", "head", "position", "channel", "dim", "pair", "unchanged"};
  for (std::size_t f = 0; f < std::size(ia); ++f)
    if (ia[f] != ib[f])
      return std::string(in[f]) + " " + std::to_string(ia[f]) + " vs " + std::to_string(ib[f]);
  const double fa[] = {a.base,    a.y,     a.exact, a.abs_error,  a.ulp,  a.budget,
                       a.abs_phi, a.scale, a.gain,  a.gain_extra, a.reach};
  const double fb[] = {b.base,    b.y,     b.exact, b.abs_error,  b.ulp,  b.budget,
                       b.abs_phi, b.scale, b.gain,  b.gain_extra, b.reach};
  const char* dn[] = {"base",    "y",     "exact", "abs_error",  "ulp",  "budget",
                      "abs_phi", "scale", "gain",  "gain_extra", "reach"};
  for (std::size_t f = 0; f < std::size(fa); ++f)
    if (!cached_same_bits(fa[f], fb[f]))
      return std::string(dn[f]) + " " + std::to_string(fa[f]) + " vs " + std::to_string(fb[f]);
  return "";
}

struct CachedRun {
  std::vector<ElementRecord> records;
  Measurement bands;
};

CachedRun cached_run(bool cached, const SinusoidalRows& rows, const std::vector<double>& y,
                     const Budget& budget) {
  CachedRun run;
  run.bands.expect(y.size());
  const Sink sink = [&](const ElementRecord& e) {
    run.records.push_back(e);
    run.bands.add(e);
  };
  if (cached)
    measure_sinusoidal_rows(rows, y, budget, sink);
  else
    measure_sinusoidal_rows_exact(rows, y, budget, sink);
  return run;
}

void expect_same_runs(const CachedRun& got, const CachedRun& want, const std::string& what) {
  ASSERT_EQ(got.records.size(), want.records.size()) << what;
  for (std::size_t i = 0; i < got.records.size(); ++i) {
    const std::string d = cached_difference(got.records[i], want.records[i]);
    ASSERT_EQ(d, "") << what << ": record " << i << " (row " << want.records[i].row << ", channel "
                     << want.records[i].channel << ")";
  }
  const Measurement &a = got.bands, &b = want.bands;
  EXPECT_EQ(a.verdict(), b.verdict()) << what;
  EXPECT_EQ(a.violations(), b.violations()) << what;
  EXPECT_EQ(a.undecidable(), b.undecidable()) << what;
  EXPECT_EQ(a.undecidable_bands(), b.undecidable_bands()) << what;
  ASSERT_EQ(a.bands().size(), b.bands().size()) << what;
  for (std::size_t k = 0; k < a.bands().size(); ++k) {
    const BandStats &x = a.bands()[k], &w = b.bands()[k];
    EXPECT_EQ(x.samples, w.samples) << what << " band " << k;
    EXPECT_EQ(x.encoding, w.encoding) << what << " band " << k;
    EXPECT_TRUE(cached_same_bits(x.p99_abs, w.p99_abs)) << what << " band " << k;
    EXPECT_TRUE(cached_same_bits(x.p99_ulp, w.p99_ulp)) << what << " band " << k;
    for (const auto& [u, v] : {std::pair{&x.max_abs, &w.max_abs},
                               {&x.max_ulp, &w.max_ulp},
                               {&x.max_ratio, &w.max_ratio},
                               {&x.max_vacuity, &w.max_vacuity}})
      EXPECT_EQ(cached_difference(u->at, v->at), "") << what << " band " << k;
  }
  ASSERT_EQ(a.worst().size(), b.worst().size()) << what;
  for (std::size_t i = 0; i < a.worst().size(); ++i)
    EXPECT_EQ(cached_difference(a.worst()[i], b.worst()[i]), "") << what << " worst " << i;
}

TEST(SinusoidalRowsCached, SameRecordsAndMeasurementAsTheExactPath) {
  const Variant* v = find_variant("sinusoidal.scalar_f32");
  ASSERT_NE(v, nullptr);
  const std::vector<std::pair<std::string, Budget>> budgets = {
      {"contract", Budget{&v->contract(), DType::F32}},
      {"class", cached_class_budget(DType::F32)},
      {"flat 1e-7", Budget{nullptr, DType::F32, 1e-7}}};
  std::size_t failing = 0, records = 0;
  for (const CachedCase& c : cached_cases()) {
    for (const auto& [data_name, y] : cached_data(c)) {
      for (const auto& [budget_name, budget] : budgets) {
        const std::string what = c.name + ", " + data_name + ", " + budget_name;
        const CachedRun want = cached_run(false, c.rows, y, budget);
        const CachedRun got = cached_run(true, c.rows, y, budget);
        expect_same_runs(got, want, what);
        failing += want.bands.pass() ? 0 : 1;
        records += want.records.size();
        // Correct data passes its contract: the comparison is not of two empty or failing runs alone.
        if (data_name == "correct" && budget_name != "flat 1e-7") {
          EXPECT_TRUE(want.bands.pass()) << what;
        }
      }
    }
  }
  EXPECT_GT(failing, 10u);
  EXPECT_GT(records, 100000u);
}

// With the fast path off, every exact value is MPFR's, asked per element by both paths.
TEST(SinusoidalRowsCached, SameRecordsWithTheFastPathOff) {
  const Variant* v = find_variant("sinusoidal.scalar_f32");
  ASSERT_NE(v, nullptr);
  const Budget budget{&v->contract(), DType::F32};
  SinusoidalParams odd = cached_params(17);
  odd.flip_sin_to_cos = true;
  GridSpec g;
  g.sizes = {3, 5};
  g.extra_tokens = 1;
  for (const SinusoidalRows& rows :
       {one_axis_rows(odd, {0.25, 7, 0.25, 3, 1e6}, 3), grid_rows(cached_params(16), g)}) {
    std::vector<double> y = check::golden_sinusoidal(rows, DType::F32);
    y[5] += 1e-3;
    ref::set_fast_path(false);
    const CachedRun want = cached_run(false, rows, y, budget);
    const CachedRun got = cached_run(true, rows, y, budget);
    ref::set_fast_path(true);
    expect_same_runs(got, want, "fast path off");
    EXPECT_FALSE(want.bands.pass());
  }
}

}  // namespace
}  // namespace pe::harness

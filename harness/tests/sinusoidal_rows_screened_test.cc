// measure_sinusoidal_rows_screened (sinusoidal_screen.h) against measure_sinusoidal_rows_exact on the forms
// and data of sinusoidal_rows_cases.h (plus data at the budgets' edge), with the data in float32 in place
// and as doubles, under a contract, a class and a flat bound (with and without a promise): every statistic
// but the 99th percentiles bit for bit (verdict, counts, maxima and their records, the worst list), each
// record handed to the sink the exact path's, a tally fed by them (per block, as check's) the exact path's,
// and the percentiles within the screen's radius (the estimate's 2^-50 and the roundings of |y − e|; the ulp
// percentile half or twice across a power of two).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "pe/harness/sinusoidal_screen.h"
#include "pe/harness/typed_buffer.h"
#include "same_measurement.h"
#include "sinusoidal_rows_cases.h"
#include "tally_stand_in.h"

namespace pe::harness {
namespace {

using namespace rows_cases;  // NOLINT(google-build-using-namespace)

// The first field two records differ in ("" where none).
std::string rs_difference(const ElementRecord& a, const ElementRecord& b) {
  const std::int64_t ia[] = {
      a.row, a.position, a.channel, a.dim, static_cast<std::int64_t>(a.pair), a.unchanged ? 1 : 0};
  const std::int64_t ib[] = {
      b.row, b.position, b.channel, b.dim, static_cast<std::int64_t>(b.pair), b.unchanged ? 1 : 0};
  const char* in[] = {"row", "position", "channel", "dim", "pair", "unchanged"};
  for (std::size_t f = 0; f < std::size(ia); ++f)
    if (ia[f] != ib[f])
      return std::string(in[f]) + " " + std::to_string(ia[f]) + " vs " + std::to_string(ib[f]);
  const double fa[] = {a.base, a.y, a.exact, a.abs_error, a.ulp, a.budget, a.abs_phi, a.scale, a.reach};
  const double fb[] = {b.base, b.y, b.exact, b.abs_error, b.ulp, b.budget, b.abs_phi, b.scale, b.reach};
  const char* dn[] = {"base", "y", "exact", "abs_error", "ulp", "budget", "abs_phi", "scale", "reach"};
  for (std::size_t f = 0; f < std::size(fa); ++f)
    if (!bits_equal(fa[f], fb[f]))
      return std::string(dn[f]) + " " + std::to_string(fa[f]) + " vs " + std::to_string(fb[f]);
  return "";
}

// One tally per block on the screened side: its lower bounds are the block's.
using RsTally = TallyStandIn;

struct RsRun {
  Measurement bands;
  std::vector<double> worst;           // the tally's
  std::vector<ElementRecord> records;  // every one (exact) or the sink's (screened)
  bool took = true;
};

void rs_setup(Measurement& m, std::size_t n, std::int64_t promise) {
  m.promise(promise);
  m.expect(n);
}

RsRun rs_exact(const SinusoidalRows& rows, const std::vector<double>& y, const Budget& budget,
               std::int64_t promise, const std::vector<const Contract*>& contracts) {
  RsRun run;
  rs_setup(run.bands, y.size(), promise);
  RsTally tally(contracts, DType::F32);
  measure_sinusoidal_rows_exact(rows, y, budget, [&](const ElementRecord& e) {
    run.records.push_back(e);
    run.bands.add(e);
    tally.add(e);
  });
  run.worst = tally.worst;
  return run;
}

RsRun rs_screened(const SinusoidalRows& rows, Values y, const Budget& budget, std::int64_t promise,
                  const std::vector<const Contract*>& contracts, bool sole) {
  RsRun run;
  rs_setup(run.bands, y.size(), promise);
  std::vector<RsTally> tallies(rows.blocks.size(), RsTally(contracts, DType::F32));
  std::size_t at = SIZE_MAX;
  TableSinks sinks;
  sinks.sole = sole;
  sinks.block = [&](std::size_t k) { at = k; };
  sinks.exact = [&](const ElementRecord& e) {
    run.records.push_back(e);
    tallies.at(at).add(e);
  };
  sinks.line = [&](std::span<const ref::dd::DD> omegas, std::int64_t max_position,
                   std::span<const double> phi_lo,
                   double* line) { tallies.at(at).line(omegas, max_position, phi_lo, line); };
  run.took = measure_sinusoidal_rows_screened(rows, y, budget, run.bands, sinks, 0);
  run.worst.assign(contracts.size(), 0.0);
  for (const RsTally& t : tallies)
    for (std::size_t k = 0; k < contracts.size(); ++k)
      if (!(t.worst[k] <= run.worst[k])) run.worst[k] = t.worst[k];
  return run;
}

// Within the screen's radius: 2^-50 for e, 2^-52 relative for the roundings of |y − e| (sinusoidal_screen.h).
bool rs_near(double got, double want) {
  if (bits_equal(got, want)) return true;
  return std::fabs(got - want) <= 0x1p-50 + 0x1p-51 * std::fabs(want);
}
// A ulp estimate: the same binade's within that radius over the least ulp of the values near it, or half or
// twice across a power of two.
bool rs_near_ulp(double got, double want) {
  if (bits_equal(got, want) || std::fabs(got - want) <= 0x1p-20 * std::max(1.0, std::fabs(want))) return true;
  return got >= 0.5 * want * (1 - 0x1p-20) && got <= 2 * want * (1 + 0x1p-20);
}

// Returns how many bands' percentiles were the same bits.
std::size_t rs_compare(const RsRun& got, const RsRun& want, const std::string& what) {
  EXPECT_TRUE(got.took) << what;
  expect_same_but_percentiles(got.bands, want.bands, what);
  std::size_t same = 0;
  const auto &a = got.bands.bands(), &b = want.bands.bands();
  for (std::size_t k = 0; k < std::min(a.size(), b.size()); ++k) {
    const BandStats &x = a[k], &w = b[k];
    EXPECT_EQ(
        x.budget_at_max_abs == w.budget_at_max_abs || bits_equal(x.budget_at_max_abs, w.budget_at_max_abs),
        true)
        << what;
    for (const auto& [u, v] : {std::pair{&x.max_abs, &w.max_abs},
                               {&x.max_ulp, &w.max_ulp},
                               {&x.max_ratio, &w.max_ratio},
                               {&x.max_vacuity, &w.max_vacuity}})
      EXPECT_EQ(rs_difference(u->at, v->at), "") << what << " band " << k;
    EXPECT_TRUE(rs_near(x.p99_abs, w.p99_abs))
        << what << " band " << k << ": " << x.p99_abs << " vs " << w.p99_abs;
    EXPECT_TRUE(rs_near_ulp(x.p99_ulp, w.p99_ulp))
        << what << " band " << k << ": " << x.p99_ulp << " vs " << w.p99_ulp;
    same += bits_equal(x.p99_abs, w.p99_abs) && bits_equal(x.p99_ulp, w.p99_ulp) ? 1 : 0;
  }
  for (std::size_t i = 0; i < std::min(got.bands.worst().size(), want.bands.worst().size()); ++i)
    EXPECT_EQ(rs_difference(got.bands.worst()[i], want.bands.worst()[i]), "") << what << " worst " << i;
  EXPECT_EQ(got.worst, want.worst) << what << ": the tally";
  // Each record the sink met is the exact path's, in its order.
  std::map<std::pair<std::int64_t, std::int64_t>, std::size_t> at;
  for (std::size_t i = 0; i < want.records.size(); ++i)
    at[{want.records[i].row, want.records[i].channel}] = i;
  std::size_t last = 0;
  for (const ElementRecord& e : got.records) {
    const auto it = at.find({e.row, e.channel});
    if (it == at.end()) {
      ADD_FAILURE() << what << ": no such record";
      break;
    }
    EXPECT_EQ(rs_difference(e, want.records[it->second]), "")
        << what << " row " << e.row << " ch " << e.channel;
    EXPECT_GE(it->second + 1, last) << what << ": out of order";
    last = it->second + 1;
  }
  return same;
}

// `y` with every 61st element at its exact value plus its budget (ratio 1 up to rounding), and two elements
// with the largest error (ties): the bars' edges.
std::vector<double> rs_at_edges(const SinusoidalRows& rows, const std::vector<double>& y,
                                const Budget& budget) {
  std::vector<double> out = y;
  std::vector<ElementRecord> recs;
  measure_sinusoidal_rows_exact(rows, y, budget, [&](const ElementRecord& e) { recs.push_back(e); });
  for (std::size_t i = 0; i < recs.size(); i += 61) {
    const ElementRecord& e = recs[i];
    const std::size_t at = static_cast<std::size_t>(e.row) * rows.dim + static_cast<std::size_t>(e.channel);
    if (e.budget > 0) out[at] = e.exact + ((i / 61) % 2 == 0 ? e.budget : -e.budget);
  }
  const std::size_t a = recs.size() / 5, b = recs.size() / 4;
  for (const std::size_t i : {a, b}) {
    const ElementRecord& e = recs[i];
    out[static_cast<std::size_t>(e.row) * rows.dim + static_cast<std::size_t>(e.channel)] = e.exact + 0.25;
  }
  return out;
}

TEST(SinusoidalRowsScreened, SameMeasurementAsTheExactPath) {
  const Variant* v = find_variant("sinusoidal.scalar_f32");
  ASSERT_NE(v, nullptr);
  const Budget contract{&v->contract(), DType::F32};
  const Budget flat{nullptr, DType::F32, 1e-7};
  // A scaled table's budget (c1_scale and the subnormal angle's term, Budget::real_scale), which the screen's
  // lower bounds follow (TableBudgetBounds): its own edges below.
  Budget scaled = contract;
  scaled.real_scale = 1000;
  const std::vector<std::tuple<std::string, Budget, std::int64_t>> budgets = {
      {"contract", contract, v->contract().max_position},
      {"contract, scaled", scaled, v->contract().max_position},
      {"class", cached_class_budget(DType::F32), v->contract().max_position},
      {"flat 1e-7", flat, -1},
      {"flat 1e-7 promised", flat, std::numeric_limits<std::int64_t>::max()}};
  const std::vector<const Contract*> contracts = cached_class_budget(DType::F32).any_of;
  std::size_t failing = 0, exact_total = 0, screened_exact = 0, bands = 0, same = 0;
  for (const CachedCase& c : cached_cases()) {
    auto data = cached_data(c);
    data.emplace_back("at the edges", rs_at_edges(c.rows, data.front().second, contract));
    data.emplace_back("at the scaled edges", rs_at_edges(c.rows, data.front().second, scaled));
    for (const auto& [data_name, y] : data) {
      TypedBuffer typed(DType::F32, y.size());
      for (std::size_t i = 0; i < y.size(); ++i) typed.set(i, y[i]);
      const std::vector<unsigned char> bytes = typed.bytes();
      for (const auto& [budget_name, budget, promise] : budgets) {
        const std::string what = c.name + ", " + data_name + ", " + budget_name;
        const RsRun want = rs_exact(c.rows, y, budget, promise, contracts);
        const RsRun doubles = rs_screened(c.rows, y, budget, promise, contracts, false);
        same += rs_compare(doubles, want, what + ", doubles");
        if (!data_name.starts_with("at the")) {  // the edges' doubles are not float32 values
          // As check runs it: in place, the bands its own (TableSinks::sole).
          const RsRun f32 = rs_screened(c.rows, Values(bytes.data(), DType::F32, y.size()), budget, promise,
                                        contracts, true);
          same += rs_compare(f32, want, what + ", float32");
        }
        failing += want.bands.pass() ? 0 : 1;
        if (data_name == "correct" && budget_name != "flat 1e-7") {
          exact_total += want.records.size(), screened_exact += doubles.records.size();
        }
        bands += 2 * want.bands.bands().size();
        if (data_name == "correct" && budget_name.starts_with("contract")) {
          EXPECT_TRUE(want.bands.pass()) << what;
        }
      }
    }
  }
  // Not a comparison of failing runs or of runs measured element by element alone (correct data: about 1 in 6
  // elements exact, each band's first row and the loud ones).
  EXPECT_GT(failing, 10u);
  EXPECT_LT(screened_exact * 2, exact_total);
  RecordProperty("percentiles_same_bits", std::to_string(same) + " of " + std::to_string(bands));
}

// A long table through every compiled target: the same measurement as the exact path on each.
TEST(SinusoidalRowsScreened, EveryTarget) {
  const Variant* v = find_variant("sinusoidal.scalar_f32");
  ASSERT_NE(v, nullptr);
  const Budget budget{&v->contract(), DType::F32};
  SinusoidalParams p = cached_params(1280);
  p.flip_sin_to_cos = true;
  p.downscale_freq_shift = 1;
  std::vector<double> t;
  for (int k = 0; k < 300; ++k) t.push_back(static_cast<float>(999.0 * (k + 0.37) / 300.0));
  const SinusoidalRows rows = one_axis_rows(p, t);
  std::vector<double> y = check::golden_sinusoidal(rows, DType::F32);
  y[1280 * 150 + 7] += 1e-6;
  const std::vector<const Contract*> contracts{&v->contract()};
  const RsRun want = rs_exact(rows, y, budget, v->contract().max_position, contracts);
  ASSERT_FALSE(table_screen_targets().empty());
  for (std::size_t target = 0; target < table_screen_targets().size(); ++target) {
    set_sinusoidal_screen(true, target);
    const RsRun got = rs_screened(rows, y, budget, v->contract().max_position, contracts, target % 2 == 0);
    set_sinusoidal_screen(true, 0);
    rs_compare(got, want, table_screen_targets()[target].name);
    EXPECT_LT(got.records.size(), want.records.size() / 10);
  }
  set_sinusoidal_screen(false);
  EXPECT_FALSE(rs_screened(rows, y, budget, v->contract().max_position, contracts, true).took);
  set_sinusoidal_screen(true);
}

}  // namespace
}  // namespace pe::harness

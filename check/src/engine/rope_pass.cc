#include "engine/rope_pass.h"

#include <algorithm>
#include <atomic>
#include <span>
#include <stdexcept>
#include <thread>

#include "engine/budget.h"
#include "engine/thread_parts.h"
#include "pe/harness/rope_screen.h"
#include "pe/rope_scaling.h"

namespace pe::check {
namespace {

// The measurement of a pass over the whole batch's judged rows (each part's tails then keep what the whole's
// would: Measurement::merge), whichever part of them it measures.
harness::Measurement pass_bands(const RopeRequest& r, const RopeBatch& batch, const Budget& budget,
                                const std::vector<std::size_t>& rows) {
  const std::size_t heads = batch.heads, hd = r.x.shape.back();
  harness::Measurement bands;
  bands.promise(promised_up_to(budget));
  if (r.quiet) bands.verdict_only();
  bands.expect(rows.size() * heads * hd);
  if (batch.n_axes == 1)  // each element at its token's position: the bands' own counts
    for (std::size_t t : rows) bands.expect_band(batch.position(t), heads * hd);
  // A large band's p99 over 1 token in 8 (Measurement::sample_percentiles); tokens by their index in the
  // batch, which every thread's part shares.
  if (!r.exact_percentiles) bands.sample_percentiles(1);
  return bands;
}

Pass new_pass(const RopeRequest& r, const RopePlan& plan, const RopeBatch& batch, const Budget& budget,
              const std::vector<std::size_t>& rows) {
  return Pass{pass_bands(r, batch, budget, rows), ContractTally(Family::Rope, r.y.dtype, &plan),
              std::vector<bool>(batch.tokens() * batch.heads), std::nullopt};
}

// The rows whose elements the bands' percentiles take (all of them where no band takes a sample): the
// presumed floors are guessed from them, the population their proof counts.
std::vector<std::size_t> percentile_rows(const RopeRequest& r, const RopeBatch& batch, const Budget& budget,
                                         const std::vector<std::size_t>& rows) {
  harness::Measurement bands = pass_bands(r, batch, budget, rows);
  if (!bands.samples_percentiles()) return rows;
  std::vector<std::size_t> out;
  for (const std::size_t t : rows)
    if (bands.in_sample(batch.position(t), static_cast<std::int64_t>(t))) out.push_back(t);
  return out.empty() ? rows : out;
}

// The sinks that fill `p`: its tally, the rows over budget, the first moved pass-through channel. Quiet (the
// verdict alone): no contract's tally is reported, so no tally line makes elements loud.
harness::ScreenedSinks sinks_into(Pass& p, std::size_t heads, bool quiet) {
  const auto mark = [&p, heads](const harness::ElementRecord& e) {
    if (!(e.ratio() <= 1))
      p.over[static_cast<std::size_t>(e.row) * heads + static_cast<std::size_t>(e.head)] = true;
    if (!p.moved && e.unchanged && e.abs_error != 0) p.moved = e;
  };
  harness::ScreenedSinks sinks;
  sinks.row = [&p, mark](const harness::RopeRow& row) {
    p.tally.add_row(row);
    for (std::size_t i = 0; i < row.size(); ++i)
      if (!(harness::ElementRecord::ratio_of(row.abs_error[i], row.budget[i]) <= 1) ||
          (row.unchanged[i] != 0 && row.abs_error[i] != 0 && !p.moved))
        mark(row.record(i));
  };
  sinks.loud = [&p, mark](const harness::ElementRecord& e) {
    p.tally.add(e);
    mark(e);
  };
  if (!quiet)
    sinks.line = [&p](std::span<const double> phi_lo, double* slope, double* floor) {
      p.tally.screen_line(phi_lo, slope, floor);
    };
  return sinks;
}

// The judged rows in the order one screened pass takes them: a scaling that switches lists per token
// measures the tokens below its original context first (measure_rope_screened).
std::vector<std::size_t> pass_order(const RopeParams& params, const RopeBatch& batch,
                                    const std::vector<std::size_t>& rows) {
  if (!switches_per_token(params.scaling)) return rows;
  harness::PerTokenRows split = harness::per_token_rows(params.scaling, batch, rows);
  split.below.insert(split.below.end(), split.from.begin(), split.from.end());
  return split.below;
}

struct Part {
  std::vector<std::size_t> rows;
  std::optional<Pass> pass;
  bool took = false, nonfinite = false;
};

// Each part's screened pass on its own thread, the first on the calling thread, which alone reports
// progress (the tokens every part has done); an exception on any ends its part and is rethrown here once
// every thread has been joined (in_parts).
void run_parts(const RopeRequest& r, const RopeParams& params, const RopeBatch& batch, const Budget& budget,
               bool scanned, std::vector<Part>& parts, std::span<const double> real) {
  std::atomic<std::size_t> done{0};
  in_parts(parts.size(), [&](std::size_t k) {
    Part& part = parts[k];
    const bool reports = k == 0;
    harness::ScreenedSinks sinks = sinks_into(*part.pass, batch.heads, r.quiet);
    sinks.token = [&done, &r, &batch, reports](std::size_t) {
      const std::size_t now = done.fetch_add(1, std::memory_order_relaxed) + 1;
      if (reports && r.progress) r.progress(now, batch.tokens());
    };
    if (!scanned) sinks.nonfinite_input = [&part] { return part.nonfinite = true; };
    part.took = harness::measure_rope_screened(params, batch, r.x.read(), r.y.read(), budget,
                                               part.pass->bands, sinks, harness::Sample{part.rows, {}}, real);
  });
}

// The screened pass in `threads` parts merged in order; nullopt where it does not apply, or met a
// non-finite input (`nonfinite`).
std::optional<Pass> screened_in_parts(const RopeRequest& r, const RopeParams& params, const RopePlan& plan,
                                      const RopeBatch& batch, const Budget& budget,
                                      const std::vector<std::size_t>& rows, std::size_t threads, bool scanned,
                                      std::span<const harness::PresumedFloors> floors, bool& nonfinite,
                                      std::span<const double> real) {
  const std::vector<std::size_t> order = pass_order(params, batch, rows);
  std::vector<Part> parts(threads);
  for (std::size_t k = 0; k < threads; ++k) {
    const auto cut = [&](std::size_t i) { return static_cast<std::ptrdiff_t>(order.size() * i / threads); };
    parts[k].rows.assign(order.begin() + cut(k), order.begin() + cut(k + 1));
    // An empty Sample means every token: a part holds at least one (threads <= rows, rope_pass_threads).
    if (parts[k].rows.empty() && !order.empty()) throw std::logic_error("rope_pass: a part without tokens");
    parts[k].pass = new_pass(r, plan, batch, budget, rows);
    harness::presume(parts[k].pass->bands, floors);  // every part the same: merged, they are judged whole
  }
  run_parts(r, params, batch, budget, scanned, parts, real);
  nonfinite = std::any_of(parts.begin(), parts.end(), [](const Part& p) { return p.nonfinite; });
  if (nonfinite || !std::all_of(parts.begin(), parts.end(), [](const Part& p) { return p.took; }))
    return std::nullopt;
  Pass whole = std::move(*parts[0].pass);
  for (std::size_t k = 1; k < threads; ++k) {
    Pass& later = *parts[k].pass;
    whole.bands.merge(later.bands);
    whole.tally.merge(later.tally);
    for (std::size_t i = 0; i < whole.over.size(); ++i) whole.over[i] = whole.over[i] || later.over[i];
    if (!whole.moved) whole.moved = later.moved;
  }
  return whole;
}

}  // namespace

std::size_t rope_pass_threads(std::size_t requested, std::size_t tokens, std::size_t elements) {
  // Read once: hardware_concurrency reads /sys at every call (~4% of a small check's time).
  static const std::size_t hardware = std::max(1U, std::thread::hardware_concurrency());
  const std::size_t n = requested != 0 ? std::min(requested, hardware) : std::min(hardware, elements >> 18);
  return std::max<std::size_t>(1, std::min(n, tokens));
}

std::optional<Pass> measure_rope_pass(const RopeRequest& r, const RopeParams& params, const RopePlan& plan,
                                      const RopeBatch& batch, const Budget& budget,
                                      const harness::Sample& judged, bool scanned,
                                      const harness::OutputGain& gain, std::span<const double> real) {
  const std::vector<std::size_t> rows = harness::chosen_or_all(judged.rows, batch.tokens());
  const std::size_t elements = rows.size() * batch.heads * r.x.shape.back();
  if (!gain.any()) {
    bool nonfinite = false;
    const std::size_t threads = rope_pass_threads(r.threads, rows.size(), elements);
    // A correct kernel's errors grow with the position, so the tails' own floors, which rise only with what
    // came before, keep a good share of the estimates (and compact them again and again): presumed floors,
    // judged once the parts are merged, keep a few percent. Where they did not hold, the pass runs again
    // without them, from new parts: the report is then the one without presuming.
    const harness::PresumeTuning& tuning = harness::rope_screen_tuning();
    std::vector<harness::PresumedFloors> floors;
    if (elements >= tuning.presume_from && !r.quiet)  // quiet: no percentiles
      floors =
          harness::presumed_rope_floors(params, batch, r.x.read(), r.y.read(), budget, tuning.presumed_share,
                                        harness::Sample{percentile_rows(r, batch, budget, rows), {}}, real);
    auto p =
        screened_in_parts(r, params, plan, batch, budget, rows, threads, scanned, floors, nonfinite, real);
    if (p && !floors.empty() && !p->bands.presumptions_held()) {
      harness::count_rope_screen_rerun();
      p = screened_in_parts(r, params, plan, batch, budget, rows, threads, scanned, {}, nonfinite, real);
    }
    if (p) return p;
    if (nonfinite) return std::nullopt;
  }
  if (!scanned) return std::nullopt;
  Pass p = new_pass(r, plan, batch, budget, rows);
  const harness::ScreenedSinks sinks = sinks_into(p, batch.heads, r.quiet);
  harness::measure_rope_rows(
      params, batch, r.x.read(), r.y.read(), budget,
      [&](const harness::RopeRow& row) {
        if (r.progress) r.progress(static_cast<std::size_t>(row.row), batch.tokens());
        p.bands.add_row(row);
        sinks.row(row);
      },
      judged, RopeDirection::Forward, gain, real);
  return p;
}

}  // namespace pe::check

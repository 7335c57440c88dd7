#include "pe/harness/exhaustive.h"

#include <fmt/format.h>
#include <mpfr.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <stdexcept>
#include <thread>

#include "pe/errors.h"
#include "pe/harness/exhaustive_screen.h"
#include "pe/harness/family_traits.h"
#include "pe/harness/measure.h"
#include "pe/harness/typed_buffer.h"
#include "pe/ref/fast_trig.h"
#include "pe/ref/mpfr_thread_cache.h"
#include "pe/ref/reference.h"

namespace pe::exhaustive {
namespace {

// Rows per kernel call: the output (2048 × 128 values) stays in L2 while it is compared.
constexpr std::int64_t kChunk = 2048;
// The screen's double tier takes positions below 2^32 (exact products with ω's 21-bit pieces).
constexpr std::int64_t kScreenLimit = std::int64_t{1} << 32;

// The census's band edges, the last one open: [0, 10^3), ..., [10^9, 2^31), [2^31, ∞).
std::vector<std::int64_t> edges() {
  const auto e = harness::band_edges();
  std::vector<std::int64_t> out(e.begin(), e.end());
  out.push_back(std::numeric_limits<std::int64_t>::max());
  return out;
}

std::size_t band_of(const std::vector<std::int64_t>& edge, std::int64_t p) {
  std::size_t k = 0;
  while (k + 2 < edge.size() && p >= edge[k + 1]) ++k;
  return k;
}

// Later (position, channel) loses a tie: the result does not depend on which thread saw what first.
// A NaN counts as infinitely large.
void keep(Worst& w, double value, std::int64_t position, std::int64_t channel, double y, double exact,
          double budget) {
  const double v = std::isnan(value) ? INFINITY : value;
  const bool earlier = position < w.position || (position == w.position && channel < w.channel);
  if (w.position < 0 || v > w.value || (v == w.value && earlier))
    w = {v, position, channel, y, exact, budget};
}

void merge_worst(Worst& into, const Worst& w) {
  if (w.position >= 0) keep(into, w.value, w.position, w.channel, w.y, w.exact, w.budget);
}

void merge_band(Band& into, const Band& b) {
  into.lo = std::min(into.lo, b.lo);
  into.hi = std::max(into.hi, b.hi);
  into.elements += b.elements;
  into.violations += b.violations;
  merge_worst(into.max_abs, b.max_abs);
  merge_worst(into.max_ulp, b.max_ulp);
  merge_worst(into.max_ratio, b.max_ratio);
}

// One thread's share of one instance: chunks taken from a shared counter.
struct Sweep {
  const harness::Instance& in;
  const Options& o;
  std::int64_t begin, end;
  const std::vector<std::int64_t>& edge;
  std::atomic<std::int64_t>& next;  // first position of the next chunk to take
  std::atomic<std::int64_t>& done;  // positions finished, for progress

  // Per-band statistics indexed like `edge`, and the MPFR fallbacks.
  void operator()(std::vector<Band>& bands, std::uint64_t& fallbacks) const;
};

// One thread's tools for a Sweep: the exhaustive table, the screen, and buffers made once per thread
// (fresh pages cost more than the census's own work).
class SweepWorker {
 public:
  explicit SweepWorker(const Sweep& s)
      : s_(s),
        max_position_of_contract_(s.in.contract().max_position),
        max_position_(std::min(s.end - 1 + kChunk, max_position_of_contract_)),
        traits_(harness::traits_of(s.in.variant->family())),
        table_(traits_.exhaustive_table(s.in, s.o.dim, s.o.base, max_position_)),
        pairs_(static_cast<std::size_t>(s.o.dim / 2)),
        budget_{&s.in.contract(), s.in.dtype},
        reads_input_(table_->reads_input()),
        input_(s.in.dtype, reads_input_ ? chunk_elements() : 0),
        out_(s.in.dtype, chunk_elements()),
        ch_sin_(pairs_),
        ch_cos_(pairs_),
        screen_(
            omegas_and_channels(), [&](double abs_phi, std::size_t j) { return element_budget(abs_phi, j); },
            static_cast<double>(max_position_), s.in.dtype),
        screening_(ref::fast_path_enabled()),
        ys_(screen_.padded()),
        yc_(screen_.padded()),
        unsettled_(screen_.padded(), 3.0) {
    // The input (RoPE: unit pairs) is restored before every call.
    if (reads_input_) table_->write_input(input_, kChunk);
  }
  SweepWorker(const SweepWorker&) = delete;
  SweepWorker& operator=(const SweepWorker&) = delete;

  // The kernel's rows for the aligned block of kChunk positions starting at `block` (cut at the
  // contract's largest position): each position is computed in the block that holds it, whatever the
  // shard or the range, so a variant that carries state between rows gives every row the same bits in
  // any split.
  void compute_block(std::int64_t block) {
    const std::int64_t block_end = std::min(block + kChunk, max_position_of_contract_ + 1);
    positions_.resize(static_cast<std::size_t>(block_end - block));
    for (std::int64_t p = block; p < block_end; ++p) positions_[static_cast<std::size_t>(p - block)] = p;
    const Buffer call_out{out_.view().data, positions_.size() * static_cast<std::size_t>(s_.o.dim),
                          s_.in.dtype};
    if (reads_input_) std::memcpy(call_out.data, input_.view().data, call_out.size * size_of(s_.in.dtype));
    traits_.call(*s_.in.variant, s_.in.layout, s_.o.dim, s_.o.base, positions_, call_out, 1);
  }

  // Every element of position p's row (`row` its first value in the block's output) judged into `band`.
  void judge_row(std::int64_t p, std::size_t row, Band& band, std::uint64_t& fallbacks) {
    if (screen_settles(p, row, band)) return;
    for (std::size_t j = 0; j < pairs_; ++j) {
      const int flags = static_cast<int>(unsettled_[j]);
      if (flags == 0) {
        band.elements += 2;
        continue;
      }
      const double abs_phi = table_->abs_angle(p, j);
      // The double-double values, for the elements the screen did not settle.
      const std::optional<ref::FastSinCos> sc = table_->fast(p, j);
      const double b = element_budget(abs_phi, j);
      for (const bool is_sin : {true, false}) {
        if ((flags & (is_sin ? 1 : 2)) == 0) {
          ++band.elements;
          continue;
        }
        judge_element(p, j, is_sin, row, sc, b, band, fallbacks);
      }
    }
  }

 private:
  std::size_t chunk_elements() const { return static_cast<std::size_t>(kChunk * s_.o.dim); }

  double element_budget(double abs_phi, std::size_t j) const {
    return table_->element_budget(budget_, abs_phi, j);
  }

  // The table's frequencies for the screen, the pairs' output channels noted on the way.
  std::vector<ref::dd::DD> omegas_and_channels() {
    std::vector<ref::dd::DD> omegas(pairs_);
    for (std::size_t j = 0; j < pairs_; ++j) {
      omegas[j] = table_->omega(j);
      ch_sin_[j] = table_->sin_channel(j);
      ch_cos_[j] = table_->cos_channel(j);
    }
    return omegas;
  }

  // Whether the screen (the double tier, in vectors) settled every element of row p, counting them;
  // else `unsettled_` says which elements the precise path judges (1: sine, 2: cosine). Off with the
  // fast path (PE_REFERENCE=mpfr: every element through MPFR) and beyond the screen's positions.
  bool screen_settles(std::int64_t p, std::size_t row, Band& band) {
    if (!screening_ || p >= kScreenLimit) {
      std::fill(unsettled_.begin(), unsettled_.end(), 3.0);
      return false;
    }
    out_.gather(row, ch_sin_, ys_.data());
    out_.gather(row, ch_cos_, yc_.data());
    ScreenLimits limits;
    if (band.max_abs.position >= 0) limits = {band.max_abs.value, band.max_ulp.value, band.max_ratio.value};
    if (screen_row(screen_, p, ys_.data(), yc_.data(), limits, unsettled_.data())) return false;
    band.elements += 2 * pairs_;
    return true;
  }

  // Pair j's sine or cosine at position p against the double-double value `sc` where that decides the
  // verdict, else against MPFR's (a fallback); its error, ulps and ratio to the budget b kept in `band`.
  void judge_element(std::int64_t p, std::size_t j, bool is_sin, std::size_t row,
                     const std::optional<ref::FastSinCos>& sc, double b, Band& band,
                     std::uint64_t& fallbacks) const {
    const std::size_t ch = is_sin ? ch_sin_[j] : ch_cos_[j];
    const double y = out_.get(row + ch);
    double err = NAN, ulp = NAN, exact = NAN;
    bool decided = false;
    if (sc) {
      const ref::dd::DD e = is_sin ? sc->sin : sc->cos;
      err = ref::abs_error(y, e);
      // The verdict is the fast path's unless the error lies within its radius of the budget.
      decided = std::isnan(err) || std::fabs(err - b) > 2 * sc->radius;
      if (decided) {
        ulp = err / ref::ulp_of(e, s_.in.dtype);
        exact = e.hi;
      }
    }
    if (!decided) {
      ++fallbacks;
      const ref::Real e = table_->exact(p, j, is_sin);
      err = ref::abs_error(y, e);
      ulp = err / ref::ulp_of(e, s_.in.dtype);
      exact = e.convert_to<double>();
    }
    const double ratio = std::isnan(err) ? INFINITY : b > 0 ? err / b : (err > 0 ? INFINITY : 0.0);
    ++band.elements;
    if (!(ratio <= 1)) ++band.violations;
    const auto c = static_cast<std::int64_t>(ch);
    keep(band.max_abs, err, p, c, y, exact, b);
    keep(band.max_ulp, ulp, p, c, y, exact, b);
    keep(band.max_ratio, ratio, p, c, y, exact, b);
  }

  const Sweep& s_;
  const std::int64_t max_position_of_contract_, max_position_;
  const harness::FamilyTraits& traits_;
  const std::unique_ptr<harness::ExhaustiveTable> table_;
  const std::size_t pairs_;
  const harness::Budget budget_;
  const bool reads_input_;
  harness::TypedBuffer input_, out_;
  std::vector<std::size_t> ch_sin_, ch_cos_;
  const ScreenPlan screen_;
  const bool screening_;
  std::vector<double> ys_, yc_, unsettled_;
  std::vector<std::int64_t> positions_;
};

void Sweep::operator()(std::vector<Band>& bands, std::uint64_t& fallbacks) const {
  SweepWorker worker(*this);
  for (;;) {
    const std::int64_t block = next.fetch_add(kChunk);
    if (block >= end) break;
    const std::int64_t lo = std::max(begin, block), hi = std::min(end, block + kChunk);
    worker.compute_block(block);
    for (std::int64_t p = lo; p < hi; ++p)
      worker.judge_row(p, static_cast<std::size_t>((p - block) * o.dim), bands[band_of(edge, p)], fallbacks);
    done.fetch_add(std::max<std::int64_t>(0, hi - lo));
  }
}

nlohmann::json worst_json(const Worst& w) {
  return {{"value", w.value}, {"position", w.position}, {"channel", w.channel},
          {"y", w.y},         {"exact", w.exact},       {"budget", w.budget}};
}

Worst worst_from(const nlohmann::json& j) {
  const auto num = [](const nlohmann::json& v) { return v.is_null() ? INFINITY : v.get<double>(); };
  return {num(j.at("value")),
          j.at("position").get<std::int64_t>(),
          j.at("channel").get<std::int64_t>(),
          num(j.at("y")),
          num(j.at("exact")),
          num(j.at("budget"))};
}

nlohmann::json band_json(const Band& b) {
  return {{"lo", b.lo},
          {"hi", b.hi},
          {"elements", b.elements},
          {"violations", b.violations},
          {"max_abs", worst_json(b.max_abs)},
          {"max_ulp", worst_json(b.max_ulp)},
          {"max_ratio", worst_json(b.max_ratio)}};
}

Band band_from(const nlohmann::json& b) {
  Band band;
  band.lo = b.at("lo"), band.hi = b.at("hi");
  band.elements = b.at("elements"), band.violations = b.at("violations");
  band.max_abs = worst_from(b.at("max_abs")), band.max_ulp = worst_from(b.at("max_ulp"));
  band.max_ratio = worst_from(b.at("max_ratio"));
  return band;
}

}  // namespace

bool InstanceResult::within_contract() const {
  return std::all_of(bands.begin(), bands.end(), [](const Band& b) { return b.violations == 0; });
}

std::pair<std::int64_t, std::int64_t> shard_range(std::int64_t begin, std::int64_t end, std::size_t index,
                                                  std::size_t count) {
  // floor(L·i/n) as q·i + floor(r·i/n) for L = q·n + r: no product beyond 64 bits.
  const auto n = static_cast<std::int64_t>(count);
  const std::int64_t q = (end - begin) / n, rem = (end - begin) % n;
  const auto at = [&](std::size_t i) {
    const auto k = static_cast<std::int64_t>(i);
    return begin + q * k + rem * k / n;
  };
  return {at(index), at(index + 1)};
}

namespace {

// `part` (the positions just after `into`'s) added to `into`: bands by their census band, counts summed.
void join(InstanceResult& into, const InstanceResult& part) {
  if (into.begin == into.end) into.begin = part.begin;
  into.end = part.end;
  into.mpfr_fallbacks += part.mpfr_fallbacks;
  const std::vector<std::int64_t> edge = edges();
  for (const Band& b : part.bands) {
    const auto same = std::find_if(into.bands.begin(), into.bands.end(),
                                   [&](const Band& a) { return band_of(edge, a.lo) == band_of(edge, b.lo); });
    if (same == into.bands.end()) {
      into.bands.push_back(b);
    } else {
      merge_band(*same, b);
    }
  }
}

template <class Refuse>
std::int64_t restore_checked(const nlohmann::json& doc, Result& result,
                             const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges,
                             double& seconds, const Refuse& refuse) {
  const nlohmann::json mine = to_json(result);
  for (const char* key : {"dim", "base", "range", "shard"}) {
    if (doc.at(key) != mine.at(key))
      refuse(fmt::format("its {} is {}, this run's {}", key, doc.at(key).dump(), mine.at(key).dump()));
  }
  const nlohmann::json& instances = doc.at("instances");
  if (instances.size() != result.instances.size()) refuse("it holds other instances");
  for (std::size_t i = 0; i < instances.size(); ++i) {
    InstanceResult& r = result.instances[i];
    if (instances[i].value("instance", "") != r.instance.name())
      refuse(fmt::format("it holds {} where this run has {}", instances[i].value("instance", ""),
                         r.instance.name()));
    r.begin = instances[i].at("begin").get<std::int64_t>();
    r.end = instances[i].at("end").get<std::int64_t>();
    r.mpfr_fallbacks = instances[i].at("mpfr_fallbacks").get<std::uint64_t>();
    for (const nlohmann::json& b : instances[i].at("bands")) r.bands.push_back(band_from(b));
    if (r.begin != ranges[i].first) refuse("an instance's positions do not start at the shard's");
  }
  const auto done = doc.at("checkpoint").at("done_until").get<std::int64_t>();
  if (done < result.options.begin || done > result.options.end ||
      (done % kChunk != 0 && done != result.options.end))
    refuse(fmt::format("done_until {} is not a segment's end in [{}, {}]", done, result.options.begin,
                       result.options.end));
  seconds = doc.value("seconds", 0.0);
  return done;
}

// The checkpoint's results into `result` (whose instances are the selection, empty); returns the first
// position still to sweep. InvalidArgument naming "resume" for a checkpoint of another run.
std::int64_t restore(const nlohmann::json& doc, Result& result,
                     const std::vector<std::pair<std::int64_t, std::int64_t>>& ranges, double& seconds) {
  const auto refuse = [](const std::string& why) {
    throw InvalidArgument("resume", "the checkpoint is not one of this run: " + why);
  };
  if (!doc.is_object() || doc.value("schema", "") != std::string(kSchema) || !doc.contains("checkpoint"))
    refuse(std::string("not a checkpoint of an exhaustive census (schema ") + kSchema + ")");
  try {
    return restore_checked(doc, result, ranges, seconds, refuse);
  } catch (const nlohmann::json::exception& e) {
    refuse(std::string("malformed: ") + e.what());
  }
  return 0;
}

// The instances the census sweeps among those `o.glob` selects; InvalidArgument for a malformed range
// or shard, or a selection with none.
std::vector<harness::Instance> checked_selection(const Options& o) {
  if (o.begin < 0 || o.end <= o.begin || o.end > kMaxPosition)
    throw InvalidArgument("positions", "must be a range A:B with 0 <= A < B <= 2^53, got " +
                                           std::to_string(o.begin) + ":" + std::to_string(o.end));
  if (o.shard_count == 0 || o.shard_index >= o.shard_count)
    throw InvalidArgument("shard", "must be I/N with I < N, got " + std::to_string(o.shard_index) + "/" +
                                       std::to_string(o.shard_count));
  std::vector<harness::Instance> selected;
  for (const harness::Instance& in : harness::instances_matching(o.glob)) {
    const harness::FamilyTraits& t = harness::traits_of(in.variant->family());
    if (t.exhaustive_applies != nullptr && t.exhaustive_applies(in)) selected.push_back(in);
  }
  if (selected.empty()) {
    std::string swept;
    for (const harness::FamilyTraits* t : harness::family_traits())
      if (t->exhaustive_applies != nullptr) swept += (swept.empty() ? "" : " or ") + std::string(t->name);
    throw InvalidArgument("variant", "'" + o.glob + "' selects no " + swept + " instance");
  }
  return selected;
}

// Positions swept of all instances (for progress): `finished` of `total`.
struct Progress {
  std::int64_t finished = 0, total = 0;
};

// Runs `sweep` on `threads` threads (the calling one among them, or reporting progress every 200 ms
// while they sweep when the options ask for it), each into its own bands and fallback count.
void sweep_in_threads(const Sweep& sweep, std::size_t threads, const Progress& progress,
                      std::vector<std::vector<Band>>& bands, std::vector<std::uint64_t>& fallbacks) {
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < threads; ++t)
    workers.emplace_back([&, t] {
      const ref::MpfrThreadCache cache;
      sweep(bands[t], fallbacks[t]);
    });
  if (sweep.o.on_progress) {  // the calling thread reports while the workers sweep
    std::thread main_share([&] {
      const ref::MpfrThreadCache cache;
      sweep(bands[0], fallbacks[0]);
    });
    while (sweep.done.load() < sweep.end - sweep.begin) {
      sweep.o.on_progress(progress.finished + sweep.done.load(), progress.total);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    main_share.join();
  } else {
    sweep(bands[0], fallbacks[0]);
  }
  for (std::thread& w : workers) w.join();
}

// One instance's positions [lo, hi) swept by `threads` threads, the threads' statistics merged band by
// band (each band cut to [lo, hi)).
InstanceResult sweep_range(const harness::Instance& in, std::int64_t lo, std::int64_t hi, const Options& o,
                           const std::vector<std::int64_t>& edge, std::size_t threads, Progress& progress) {
  InstanceResult r{.instance = in, .begin = lo, .end = hi, .bands = {}};
  if (r.begin >= r.end) return r;
  std::atomic<std::int64_t> next{r.begin / kChunk * kChunk}, done{0};
  const Sweep sweep{in, o, r.begin, r.end, edge, next, done};
  std::vector<std::vector<Band>> bands(threads, std::vector<Band>(edge.size() - 1));
  std::vector<std::uint64_t> fallbacks(threads, 0);
  sweep_in_threads(sweep, threads, progress, bands, fallbacks);
  progress.finished += r.end - r.begin;
  for (std::size_t k = 0; k + 1 < edge.size(); ++k) {
    Band merged;
    merged.lo = std::max(edge[k], r.begin);
    merged.hi = std::min(edge[k + 1], r.end);
    if (merged.lo >= merged.hi) continue;
    for (std::size_t t = 0; t < threads; ++t) merge_band(merged, bands[t][k]);
    merged.lo = std::max(edge[k], r.begin);  // merge_band widened them from the empty bands' zeros
    merged.hi = std::min(edge[k + 1], r.end);
    r.bands.push_back(merged);
  }
  for (std::uint64_t f : fallbacks) r.mpfr_fallbacks += f;
  return r;
}

}  // namespace

Result run(const Options& o) {
  const std::vector<harness::Instance> selected = checked_selection(o);
  SinusoidalPlan{SinusoidalParams{o.dim, o.base, Layout::Interleaved}};  // validates dim and base

  const auto start = std::chrono::steady_clock::now();
  Result result;
  result.options = o;
  result.range_begin = o.begin;
  result.range_end = o.end;
  std::tie(result.options.begin, result.options.end) =
      shard_range(o.begin, o.end, o.shard_index, o.shard_count);
  const std::vector<std::int64_t> edge = edges();
  const std::size_t threads = o.threads != 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  // Each instance's share of the shard: up to its contract's largest position.
  Progress progress;
  std::vector<std::pair<std::int64_t, std::int64_t>> ranges;
  for (const harness::Instance& in : selected) {
    const std::int64_t b = result.options.begin;
    const std::int64_t e = std::min(result.options.end, in.contract().max_position + 1);
    ranges.emplace_back(b, std::max(b, e));
    progress.total += std::max<std::int64_t>(0, e - b);
    result.instances.push_back({.instance = in, .begin = b, .end = b, .bands = {}});
  }

  // Segments at absolute multiples of the step (a multiple of the chunk): each chunk is the one an
  // uninterrupted run computes, so the bits and the worst elements are its own.
  const std::int64_t shard_begin = result.options.begin, shard_end = result.options.end;
  const std::int64_t step =
      o.checkpoint_every > 0 ? (o.checkpoint_every + kChunk - 1) / kChunk * kChunk : shard_end - shard_begin;
  std::int64_t from = shard_begin;
  double seconds_before = 0;
  if (!o.resume.is_null()) from = restore(o.resume, result, ranges, seconds_before);
  for (std::size_t i = 0; i < selected.size(); ++i)
    progress.finished += std::max<std::int64_t>(0, std::min(from, ranges[i].second) - ranges[i].first);
  const auto elapsed = [&] {
    return seconds_before + std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  while (from < shard_end) {
    const std::int64_t to =
        o.checkpoint_every > 0 ? std::min(shard_end, (from / step + 1) * step) : shard_end;
    for (std::size_t i = 0; i < selected.size(); ++i) {
      const std::int64_t lo = std::max(from, ranges[i].first), hi = std::min(to, ranges[i].second);
      if (lo < hi) join(result.instances[i], sweep_range(selected[i], lo, hi, o, edge, threads, progress));
    }
    from = to;
    if (o.on_checkpoint && from < shard_end) {
      result.seconds = elapsed();
      nlohmann::json doc = to_json(result);
      doc["checkpoint"] = {{"done_until", from}};
      o.on_checkpoint(doc);
    }
  }
  if (o.on_progress) o.on_progress(progress.total, progress.total);
  result.seconds = elapsed();
  return result;
}

nlohmann::json to_json(const Result& r) {
  nlohmann::json instances = nlohmann::json::array();
  for (const InstanceResult& i : r.instances) {
    nlohmann::json bands = nlohmann::json::array();
    for (const Band& b : i.bands) bands.push_back(band_json(b));
    instances.push_back({{"instance", i.instance.name()},
                         {"begin", i.begin},
                         {"end", i.end},
                         {"mpfr_fallbacks", i.mpfr_fallbacks},
                         {"within_contract", i.within_contract()},
                         {"bands", bands}});
  }
  return {{"schema", kSchema},
          {"dim", r.options.dim},
          {"base", r.options.base},
          {"range", {r.range_begin, r.range_end}},
          {"shard",
           {{"index", r.options.shard_index},
            {"count", r.options.shard_count},
            {"begin", r.options.begin},
            {"end", r.options.end}}},
          {"seconds", r.seconds},
          {"instances", instances}};
}

nlohmann::json merge(const std::vector<nlohmann::json>& shards) {
  if (shards.empty()) throw std::runtime_error("no exhaustive census files");
  std::vector<const nlohmann::json*> sorted;
  for (const nlohmann::json& s : shards) {
    if (!s.is_object() || s.value("schema", "") != std::string(kSchema))
      throw std::runtime_error(std::string("not an exhaustive census (schema ") + kSchema + ")");
    if (s.contains("checkpoint")) {
      const nlohmann::json shard = s.value("shard", nlohmann::json::object()),
                           checkpoint = s.value("checkpoint", nlohmann::json::object());
      throw std::runtime_error(fmt::format(
          "shard {}/{} is a checkpoint, not a finished shard: positions [{}, {}) of its [{}, {}) are done "
          "(census --exhaustive --resume finishes it)",
          shard.value("index", 0), shard.value("count", 0), shard.value("begin", std::int64_t{0}),
          checkpoint.value("done_until", std::int64_t{0}), shard.value("begin", std::int64_t{0}),
          shard.value("end", std::int64_t{0})));
    }
    sorted.push_back(&s);
  }
  const nlohmann::json& first = *sorted.front();
  for (const nlohmann::json* s : sorted) {
    if ((*s)["dim"] != first["dim"] || (*s)["base"] != first["base"] || (*s)["range"] != first["range"])
      throw std::runtime_error("the files are not shards of one run: their dim, base or range differ");
  }
  std::sort(sorted.begin(), sorted.end(), [](const nlohmann::json* a, const nlohmann::json* b) {
    return (*a)["shard"]["begin"].get<std::int64_t>() < (*b)["shard"]["begin"].get<std::int64_t>();
  });
  std::int64_t covered = first["range"][0].get<std::int64_t>();
  const std::int64_t range_begin = covered, range_end = first["range"][1].get<std::int64_t>();
  // The shards of an i/n split that a gap [lo, hi) holds: the ones to run (again).
  const auto missing = [&](std::int64_t lo, std::int64_t hi) {
    const auto n = first["shard"].value("count", std::size_t{0});
    std::string out;
    for (std::size_t i = 0; i < n; ++i) {
      const auto [b, e] = shard_range(range_begin, range_end, i, n);
      if (b >= lo && e <= hi && b < e) out += fmt::format("{}{}/{}", out.empty() ? "" : ", ", i, n);
    }
    return out.empty() ? std::string() : " (missing: shard " + out + ")";
  };
  for (const nlohmann::json* s : sorted) {
    const auto b = (*s)["shard"]["begin"].get<std::int64_t>(), e = (*s)["shard"]["end"].get<std::int64_t>();
    if (b > covered)
      throw std::runtime_error("a gap: positions [" + std::to_string(covered) + ", " + std::to_string(b) +
                               ") are in no shard" + missing(covered, b));
    if (b < covered)
      throw std::runtime_error("an overlap: positions [" + std::to_string(b) + ", " +
                               std::to_string(covered) + ") are in two shards");
    covered = e;
  }
  if (covered != range_end)
    throw std::runtime_error("a gap: positions [" + std::to_string(covered) + ", " +
                             std::to_string(range_end) + ") are in no shard" + missing(covered, range_end));

  std::map<std::string, std::size_t> index;
  nlohmann::json merged_instances = nlohmann::json::array();
  std::vector<std::map<std::int64_t, Band>> bands;  // per instance, keyed by the census band's lower edge
  const std::vector<std::int64_t> edge = edges();
  double seconds = 0;
  for (const nlohmann::json* s : sorted) {
    seconds += (*s)["seconds"].get<double>();
    for (const nlohmann::json& in : (*s)["instances"]) {
      const std::string name = in["instance"];
      auto [it, fresh] = index.emplace(name, merged_instances.size());
      if (fresh) {
        merged_instances.push_back(
            {{"instance", name}, {"begin", in["begin"]}, {"end", in["end"]}, {"mpfr_fallbacks", 0}});
        bands.emplace_back();
      }
      nlohmann::json& m = merged_instances[it->second];
      if (in["begin"] != in["end"]) {
        if (m["begin"] == m["end"]) m["begin"] = in["begin"];
        m["end"] = in["end"];
      }
      m["mpfr_fallbacks"] =
          m["mpfr_fallbacks"].get<std::uint64_t>() + in["mpfr_fallbacks"].get<std::uint64_t>();
      for (const nlohmann::json& b : in["bands"]) {
        const Band band = band_from(b);
        const std::int64_t key = edge[band_of(edge, band.lo)];
        auto [at, added] = bands[it->second].emplace(key, band);
        if (!added) merge_band(at->second, band);
      }
    }
  }
  for (std::size_t i = 0; i < merged_instances.size(); ++i) {
    nlohmann::json list = nlohmann::json::array();
    bool within = true;
    for (const auto& [key, b] : bands[i]) {
      within = within && b.violations == 0;
      list.push_back(band_json(b));
    }
    merged_instances[i]["bands"] = list;
    merged_instances[i]["within_contract"] = within;
  }
  nlohmann::json out = first;
  out["shard"] = {{"index", 0}, {"count", 1}, {"begin", first["range"][0]}, {"end", range_end}};
  out["merged_from"] = sorted.size();
  out["seconds"] = seconds;
  out["instances"] = merged_instances;
  return out;
}

}  // namespace pe::exhaustive

// The one comparison with the exact reference: an output (a registered instance's, or an outside
// kernel's dumped array) element by element against the reference, each element with its budget,
// and the per-band statistics every reader prints (census, `check`, benchmarks' pre-timing check,
// properties). ULP errors are SLEEF's fractional ULP against the exact value: |y - exact| / ulp(exact)
// in the output type, where ulp(exact) is at least the type's smallest subnormal (the floor near zero).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pe/attn_temperature.h"
#include "pe/batch.h"
#include "pe/contract.h"
#include "pe/enum_names.h"
#include "pe/harness/large_vector.h"
#include "pe/harness/typed_buffer.h"
#include "pe/plan.h"
#include "pe/types.h"
#include "pe/xpos.h"

namespace pe::harness {

// A measurement's verdict: PASS, FAIL (an element over budget) or UNDECIDABLE (none over, but a position
// band where nothing could fail).
enum class Verdict : std::uint8_t { Pass, Fail, Undecidable };

// The allowed |y - exact| of one element: a contract's (element_budget / rope_element_budget, plus
// `extra`, e.g. the fused add's own rounding) or, without a contract, `max_abs` for every element.
struct Budget {
  const Contract* contract = nullptr;
  DType dtype = DType::F32;
  double max_abs = 0;
  double extra = 0;
  // A class of contracts instead of one (`contract` null): each element's budget is the largest of
  // theirs (`check`'s default: what every known formulation in the data's precision achieves).
  std::vector<const Contract*> any_of{};
  // A sinusoidal table scaled or read at real positions: its |scale| (rows_real_scale, sinusoidal_rows.h),
  // and each contract's c1_scale and subnormal angle term charged (table_element_budget; the table screens'
  // lower bounds and the tally's line too, TableBudgetBounds); 0 otherwise.
  double real_scale = 0;

  // The contracts an element's budget is the largest of: `contract`, else `any_of` (none: max_abs).
  std::span<const Contract* const> members() const {
    return contract != nullptr ? std::span<const Contract* const>(&contract, 1) : any_of;
  }
  // How the members' budgets make the element's: one contract's plus `extra`; a class's largest plus
  // `extra`; max_abs without members. `member(m)` is members()[m]'s budget.
  template <class Member>
  double combine(const Member& member) const {
    if (contract != nullptr) return member(0) + extra;
    if (any_of.empty()) return max_abs;
    double b = 0;
    for (std::size_t m = 0; m < any_of.size(); ++m) b = std::max(b, member(m));
    return b + extra;
  }
  // `plan`: RoPE's (its gains and scaled frequencies), null for tables; `scale` = |x_a| + |x_b| for RoPE.
  double operator()(const RopePlan* plan, double abs_phi, std::size_t pair, double scale) const;
  // The fused add's own rounding for an embedding of magnitude |e| (add_budget of the contract or class).
  double add_term(double abs_embedding) const;
};

// Contracts' RoPE budgets for readers that meet many elements at one angle per pair (every head of a
// token): each contract's slope at the pair's |φ| taken once per slot (RopeBudgetTerms), then
// slope·(|x_a| + |x_b|) + floor per element, rope_element_budget's bits.
class RopeSlopes {
 public:
  RopeSlopes(std::span<const Contract* const> contracts, const RopePlan& plan, DType out, std::size_t slots);
  std::size_t contracts() const noexcept { return terms_.size(); }
  const RopeBudgetTerms& terms(std::size_t m) const { return terms_[m]; }
  // Slot k holds pair j's slopes at angle |φ|.
  void at(std::size_t k, std::size_t pair, double abs_phi) {
    for (std::size_t m = 0; m < terms_.size(); ++m)
      slopes_[k * terms_.size() + m] = terms_[m].slope(abs_phi, pair);
  }
  double slope(std::size_t k, std::size_t m) const { return slopes_[k * terms_.size() + m]; }
  // Contract m's budget in slot k for |x_a| + |x_b| = abs_pair.
  double operator()(std::size_t k, std::size_t m, double abs_pair) const {
    return slope(k, m) * abs_pair + terms_[m].floor();
  }

 private:
  std::vector<RopeBudgetTerms> terms_;
  std::vector<double> slopes_;  // [slot][contract]
};

// One compared element. `row` is the table row or token, `channel` the index within the row (RoPE:
// within the head); `dim` and `base` name the case (a census mixes several).
struct ElementRecord {
  std::int64_t row = 0, head = 0, position = 0, channel = 0;
  std::int64_t dim = 0;
  double base = 0;
  double y = 0, exact = 0, abs_error = 0, ulp = 0, budget = 0;
  // The budget's terms, so that a reader can judge the element under any other contract c:
  // gain·Budget{&c, type}(plan, abs_phi, pair, scale) + gain_extra. `unchanged`: the element must
  // equal its input bit for bit (a pass-through channel; budget 0 under every contract).
  double abs_phi = 0, scale = 0, gain = 1, gain_extra = 0;
  std::size_t pair = 0;
  bool unchanged = false;
  // The largest error any output of this element's magnitude can have, so the most a wrong answer can
  // be off (RoPE: the exact pair's norm plus |exact|, at most twice the norm; a table's sinusoid: 1 +
  // |exact|, at most 2; ALiBi: 2·|bias|). Infinite for an element that carries no encoding (a
  // pass-through channel, a padded row, a bias of exactly 0), which a budget can never make vacuous.
  double reach = INFINITY;
  // abs_error / budget; a NaN error, or any error against a zero budget, is infinitely over.
  double ratio() const { return ratio_of(abs_error, budget); }
  // A budget that reaches the largest error any output could have cannot fail: the element is not
  // judged (its contract promises nothing there).
  bool undecidable() const { return undecidable_at(budget, reach); }
  static bool undecidable_at(double budget, double reach) { return budget >= reach; }
  // budget / reach: 1 and above, the element cannot be judged.
  double vacuity() const { return vacuity_of(budget, reach); }
  static double vacuity_of(double budget, double reach) { return std::isinf(reach) ? 0.0 : budget / reach; }
  static double ratio_of(double abs_error, double budget) {
    if (std::isnan(abs_error)) return INFINITY;
    return budget > 0 ? abs_error / budget : (abs_error > 0 ? INFINITY : 0.0);
  }
};

// The largest value of a statistic and the element it was met at (the first, on ties).
struct Extreme {
  double value = 0;
  ElementRecord at;
};

struct BandStats {
  std::int64_t lo = 0, hi = 0;  // positions in [lo, hi]
  std::size_t samples = 0, violations = 0;
  // Of the samples, those that carry the encoding (a finite reach) and, of those, the ones whose budget
  // reaches it (ElementRecord::undecidable): they cannot fail, so they are not judged.
  std::size_t encoding = 0, undecidable = 0;
  Extreme max_abs, max_ulp, max_ratio;
  Extreme max_vacuity;  // the largest budget / reach (the element least able to fail) where one cannot
  double budget_at_max_abs = 0;
  // Nearest-rank 99th percentiles over the band's samples, or over the rows in the percentiles' sample
  // (Measurement::sample_percentiles): percentile_samples of them (none: NaN).
  double p99_abs = 0, p99_ulp = 0;
  std::size_t percentile_samples = 0;
  bool percentiles_sampled() const { return percentile_samples != samples; }
  bool pass() const { return violations == 0; }
  // More than half of the elements carrying the encoding cannot be judged. Budgets grow with the angle, so
  // the ones left are the slowest pairs (channels): alone they cannot see an offset of a few positions or a
  // fast pair's frequency, and a gate resting on them would pass nearly any data (a dump at positions
  // 0..63 checked as 2^30..: 152 of 32768 elements judged, each budget within 2% of any output's error).
  bool undecidable_band() const { return encoding > 0 && 2 * undecidable > encoding; }
  std::size_t judged() const { return samples - undecidable; }
  // "pass", "FAIL" or "undecidable" (a band over budget fails whether or not the rest could be judged).
  const char* verdict() const { return !pass() ? "FAIL" : undecidable_band() ? "undecidable" : "pass"; }
};

struct RopeRow;

// Band statistics over the census's position bands 0-10^3-10^4-...-10^9-2^31, each clipped to
// `limit` (bands starting above it are absent); positions above 2^31 fall in the last band.
class Measurement {
 public:
  explicit Measurement(std::int64_t limit = std::numeric_limits<std::int64_t>::max(),
                       std::size_t keep_worst = 10);

  // Positions up to `position` lie within what the budget's contracts promise (their smallest max_position):
  // an element there is judged whatever its budget, since the contract covers it, and only elements beyond
  // can make a band undecidable (a correct float32 kernel at head_dim 256 just below 2^24, the class's
  // promise, leaves 57% of its elements under budgets that reach any output's error). Without a promise
  // (the census, a flat bound) every element counts.
  void promise(std::int64_t position) { promised_ = position; }
  // Only the verdict will be read (verdict(), pass(), violations(), undecidable(), count()): a screened row's
  // bars are then the budget itself from its band's first element on, and its quiet elements leave nothing in
  // the tails (check_rope's quiet request, verify_rope's check of a call: a correct kernel's rows all
  // screened, none measured exactly to fill the maxima and the worst list first). The maxima, percentiles and
  // worst list hold only the loud elements' and the rows measured exactly: not to be read. Call it before the
  // first add.
  void verdict_only() { verdict_only_ = true; }
  // At most n elements will be added (more throw std::logic_error): each band then keeps, for its
  // percentiles, only the values that can still be its 99th (the largest ~1%, in a buffer compacted as it
  // fills) instead of every value. The percentiles are the same.
  void expect(std::size_t n);
  // At most n more of them lie in the band of `position`, in `rows` rows (after expect(), before the first
  // add): that band's tails keep its own 1% instead of the whole measurement's (less memory, fewer
  // compactions); the rows tell sample_percentiles whether a sample of them can stand for the band.
  void expect_band(std::int64_t position, std::size_t n, std::size_t rows = 1);
  // Each band expected (expect_band) to hold at least `from` elements in at least `blocks_from` blocks of
  // rows (0 and 0: every band) takes its 99th percentiles over the elements of the rows in_sample() instead
  // of all of them (after expect_band, before the first add): rows in blocks of `block` consecutive rows (a
  // power of two), 1 block in kSampleEvery. 512 blocks put about 64 in the sample (none: a chance of 1 in
  // 10^29); a band of a few long rows (16 tokens of 2^17 elements) keeps every element's. The maxima, the
  // worst list, the counts and the verdict stay every element's. Why: the tails must take every element above
  // the band's 99th percentile, about 1% of them, which sends 15-23% of a screen's vectors (16 elements) down
  // its slow path and costs a sixth to a quarter of a passing float32 check (docs/speed.md, tenth round).
  static constexpr std::size_t kSampledFrom = std::size_t{1} << 21, kSampledBlocksFrom = 512,
                               kSampleEvery = 8;
  void sample_percentiles(std::size_t block, std::size_t from = kSampledFrom,
                          std::size_t blocks_from = kSampledBlocksFrom);
  // Whether row `row` (a token, a table's row: ElementRecord::row, RopeRow::row) is in the sample: its block
  // (row / block) mixed by splitmix64, 1 in kSampleEvery of them. A hash, not every 8th block: rows laid out
  // with a period (packed sequences of 64 tokens, each from position 0) would otherwise give a band's sample
  // the same few positions of every period.
  bool sampled_row(std::int64_t row) const {
    std::uint64_t z = (static_cast<std::uint64_t>(row) >> sample_shift_) + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return (z ^ (z >> 31)) % kSampleEvery == 0;
  }
  // Whether the elements of row `row` in the band of `position` feed its percentiles: every row where the
  // band takes no sample. A screened row outside it keeps no estimate (its floors +∞).
  bool in_sample(std::int64_t position, std::int64_t row) {
    return bands_.empty() || in_sample(band_of(position), row);
  }
  // Whether the band of `position` takes a sample (its rows' part of in_sample: callers that ask per row may
  // ask the hash once a block).
  bool samples_band(std::int64_t position) { return !bands_.empty() && band_of(position).sampled; }
  // Some band takes a sample (the screens that keep their estimates row by row without asking in_sample,
  // ALiBi's and the sinusoidal rows', refuse such a measurement).
  bool samples_percentiles() const;
  std::size_t sample_block() const noexcept { return std::size_t{1} << sample_shift_; }
  void add(const ElementRecord& e);
  // Every element of a row, as add() would take them one by one (a record is built only for an element
  // that becomes an extreme or one of the worst).
  void add_row(const RopeRow& row);
  // A screened row's (rope_screen.h): the bars of the band holding positions [lo, hi] and room in its tails
  // for n values each; `usable` is false where the row must go element by element instead (it spans two
  // bands, would be its band's first, the worst list is not yet full, or n more would pass expect()).
  struct ScreenRoom {
    bool usable = false;
    double max_abs = 0, max_ulp = 0, ratio_bar = 0, abs_floor = 0, ulp_floor = 0;
    double *abs_tail = nullptr, *ulp_tail = nullptr;
  };
  ScreenRoom screen_room(std::int64_t lo, std::int64_t hi, std::size_t n);
  // The same bars and floors for the band of `position` as they stand (no room: null tails; no compaction,
  // so the floors may be lower than screen_room's), for screens prepared ahead; they only rise from here.
  ScreenRoom screen_bars(std::int64_t position) const;
  // That row's quiet elements: n counted in the band of `position`, `encoding` of them carrying the encoding,
  // `sampled` of them in the percentiles' sample (in_sample: n or 0), and the first abs_kept and ulp_kept
  // values written at the room's tails taken into them.
  void screen_quiet(std::int64_t position, std::size_t n, std::size_t encoding, std::size_t sampled,
                    std::size_t abs_kept, std::size_t ulp_kept);
  // A loud element of a screened row, as add() takes it; `tails`: false where the screen already put its
  // estimates in the tails.
  void add_screened(const ElementRecord& e, bool tails);
  // A guess (from a sample) of a level that more than 1% of the band of `position`'s elements exceed, per
  // tail: values at or below it are dropped as a compaction drops those below the floor, from now on (after
  // expect(), before the first add). Whether the guess held, and so the percentiles are the ones without
  // it, is known once every element is in: presumptions_held(). `share`, where known: the part of the
  // band's expected elements the floors are guessed to keep (the tails take room for twice that at once
  // instead of growing to it by doubling).
  void presume_floors(std::int64_t position, double abs_floor, double ulp_floor, double share = 0);
  // Lower bounds of the largest error, ulp error and ratio of the band of e's position: e, one of the
  // pass's elements in that band, measured exactly ahead (a screen's pick from a sample,
  // measure_sinusoidal_screened's). The screen's bars for them (screen_room's max_abs, max_ulp, ratio_bar)
  // are then the larger of the running largest and e's, never above the band's final largest F; a quiet
  // element lies strictly under its bars, so every element attaining F is loud, and the first of them in
  // order finds the running largest below F and is recorded: each largest is still the exact path's. Before
  // the first add; a NaN or an infinity is no bound.
  void presume_largest(const ElementRecord& e);
  // Every band with a presumed floor kept at least as many values above it as its 99th percentile's rank
  // (then every value dropped for it lay below the percentile). Where not, the bands' percentiles are
  // unusable (NaN where too few were kept): measure again without presuming.
  bool presumptions_held() const;
  std::int64_t promised() const noexcept { return promised_; }
  // The elements of `later` (set up as this one: the same limit, keep_worst, promise and expected counts)
  // added after this one's, as if one Measurement had taken them all in that order: counts summed, the
  // first of equal maxima kept (the last NaN), the worst list the best of both (this one's first among
  // equal ratios), the tails together (threads measuring parts of one batch: measure_merge.cc). Both must
  // presume the same floors, if any (presume_floors): whether they held is then the whole's
  // (presumptions_held after the last merge).
  void merge(const Measurement& later);
  // The bands with their percentiles; empty bands included (samples = 0). Computed once after the last
  // add (a report asks for them several times; each is a selection over the band's kept values).
  const std::vector<BandStats>& bands() const;
  // The `keep_worst` elements with the largest ratio, worst first.
  const std::vector<ElementRecord>& worst() const { return worst_; }
  // No element over its budget (the bands may still be undecidable: verdict_pass()).
  bool pass() const { return violations_ == 0; }
  // No element over budget and every band with elements decidable: what a check may call PASS.
  bool verdict_pass() const { return pass() && undecidable_bands() == 0; }
  Verdict verdict() const {
    return !pass() ? Verdict::Fail : undecidable_bands() > 0 ? Verdict::Undecidable : Verdict::Pass;
  }
  std::size_t violations() const { return violations_; }
  std::size_t count() const { return count_; }
  // Elements that could not be judged (budget >= reach), and bands none of whose elements could.
  std::size_t undecidable() const;
  std::size_t undecidable_bands() const;
  // The largest |y - exact| over every band; infinite when any error is NaN.
  double max_abs() const;

 private:
  // The values a band's nearest-rank 99th percentile is selected from: all of them, or with a cap (expect)
  // the `cap` largest (ties interchangeable) once more than 4·cap have come.
  struct Tail {
    LargeVector values;  // [0, used) are the tail's; the rest is room, unwritten (large_vector.h's pool)
    std::size_t used = 0;
    Tail() = default;
    Tail(const Tail& other);  // its values alone, not its room (never written)
    Tail(Tail&&) noexcept = default;
    Tail& operator=(const Tail& other);
    Tail& operator=(Tail&&) noexcept = default;
    ~Tail();
    double floor = -INFINITY;     // values at or below it can no longer be among the `cap` largest
    double presumed = -INFINITY;  // presume_floors(): part of `floor` that the end must confirm
    std::size_t hint = 0;         // presume_floors(): room for this many taken at once
    std::span<const double> kept() const { return {values.data(), used}; }
    void room(std::size_t n, std::size_t cap);
    void push(double v, std::size_t cap) {
      if (cap != 0 && !(v > floor)) return;  // most elements, once the tail has been compacted
      append(v, cap);
    }
    void append(double v, std::size_t cap);
    void push_all(const double* v, std::size_t n, std::size_t cap);
    void compact(std::size_t cap);
    void merge(const Tail& later, std::size_t cap);
    double p99(std::size_t samples) const;
    bool presumption_held(std::size_t samples) const;
  };
  struct Acc {
    BandStats stats;
    Tail abs, ulp;
    std::size_t expected = 0, cap = 0;  // expect_band(): 0 when not declared
    std::size_t expected_rows = 0;      // expect_band()
    bool sampled = false;               // sample_percentiles(): its percentiles over in_sample rows
    // presume_largest(): lower bounds of stats.max_abs's, max_ulp's and max_ratio's end values
    double presumed_max_abs = 0, presumed_max_ulp = 0, presumed_max_ratio = 0;
  };
  std::size_t cap_of(const Acc& a) const { return a.cap != 0 ? a.cap : cap_; }
  Acc& band_of(std::int64_t position) {  // the last element's band, or a search
    const bool fits = position <= bands_[last_band_].stats.hi &&
                      (last_band_ == 0 || position > bands_[last_band_ - 1].stats.hi);
    return fits ? bands_[last_band_] : find_band(position);
  }
  Acc& find_band(std::int64_t position);
  ScreenRoom bars_of(const Acc& a) const;
  template <class Record>
  void add_one(std::int64_t position, double abs_error, double ulp, double budget, double reach,
               const Record& record, bool sampled, bool tails = true, bool decidability = true);
  bool in_sample(const Acc& a, std::int64_t row) const { return !a.sampled || sampled_row(row); }

  std::vector<Acc> bands_;
  std::size_t last_band_ = 0;
  mutable std::optional<std::vector<BandStats>> stats_;  // bands(), until the next add
  std::vector<ElementRecord> worst_;
  double worst_last_ratio_ = 0;  // worst_.back().ratio()
  std::size_t keep_, count_ = 0, violations_ = 0;
  std::size_t expected_ = 0, cap_ = 0;  // expect(): 0 when not declared
  std::int64_t promised_ = -1;          // promise(): none
  int sample_shift_ = 0;                // sample_percentiles(): log2 of the block
  bool verdict_only_ = false;
  std::vector<std::uint8_t> loud_;  // add_row's flags, per element
};

// The band edges (10^3 steps, 2^31 last), shared with readers that label bands.
std::span<const std::int64_t> band_edges();

// Which elements to compare: every row and every pair when empty, else these rows and pairs.
struct Sample {
  std::vector<std::size_t> rows, pairs;
};
// `chosen` (a Sample's rows or pairs), or all n (0, ..., n - 1) when it is empty.
std::vector<std::size_t> chosen_or_all(const std::vector<std::size_t>& chosen, std::size_t n);
// A per-token switching scaling's rows (the sample's, or every token), in order, split by the list each
// token takes: those below original_max_position and those from it on (per_token_sides' two scalings).
struct PerTokenRows {
  std::vector<std::size_t> below, from;
};
PerTokenRows per_token_rows(const RopeScaling& scaling, const RopeBatch& batch,
                            const std::vector<std::size_t>& sample_rows);

using Sink = std::function<void(const ElementRecord&)>;
// A sink that adds every element to `m`.
inline Sink into(Measurement& m) {
  return [&m](const ElementRecord& e) { m.add(e); };
}

// Read access to compared values, in place: an outside array of doubles, an outside array in its own
// type (a file's mapping or a Python array: no copy as doubles), or an instance's typed output (a 512 MiB
// table is sampled without a copy).
class Values {
 public:
  Values(std::span<const double> v) : span_(v) {}     // NOLINT(google-explicit-constructor)
  Values(const std::vector<double>& v) : span_(v) {}  // NOLINT(google-explicit-constructor)
  Values(const TypedBuffer& b) : buffer_(&b) {}       // NOLINT(google-explicit-constructor)
  // n elements of `type` at `data` (native byte order, suitably aligned).
  Values(const void* data, DType type, std::size_t n) : typed_(data), type_(type), n_(n) {}
  double operator[](std::size_t i) const {
    if (typed_ != nullptr) return typed_at(i);
    return buffer_ != nullptr ? buffer_->get(i) : span_[i];
  }
  std::size_t size() const {
    return typed_ != nullptr ? n_ : buffer_ != nullptr ? buffer_->size() : span_.size();
  }
  // out[k] = (*this)[first + index[k]] for every k, the kind of storage switched on once (hot loops).
  void gather(std::size_t first, std::span<const std::size_t> index, double* out) const;
  // Ask for values [i, i + n) ahead of their use (an outside array: a large batch is read from memory).
  void prefetch(std::size_t i, std::size_t n) const {
    if (buffer_ != nullptr || i + n > size()) return;
    const char* p = typed_ != nullptr ? static_cast<const char*>(typed_) + i * size_of(type_)
                                      : reinterpret_cast<const char*>(span_.data() + i);
    const std::size_t bytes = n * (typed_ != nullptr ? size_of(type_) : sizeof(double));
    for (std::size_t k = 0; k < bytes; k += 64) __builtin_prefetch(p + k);
  }

 private:
  double typed_at(std::size_t i) const;

 public:
  // The caller's elements in place (null for doubles or a buffer) and their type.
  const void* typed_data() const noexcept { return typed_; }
  DType typed_type() const noexcept { return type_; }
  // An array of doubles in place (null for typed elements or a buffer).
  const double* doubles() const noexcept {
    return typed_ == nullptr && buffer_ == nullptr ? span_.data() : nullptr;
  }

 private:
  std::span<const double> span_;
  const TypedBuffer* buffer_ = nullptr;
  const void* typed_ = nullptr;
  DType type_ = DType::F64;
  std::size_t n_ = 0;
};

// A sinusoidal table [positions, dim] (`y`, row-major, values as double) against the exact table.
void measure_sinusoidal(const SinusoidalParams& params, std::span<const std::int64_t> positions, Values y,
                        const Budget& budget, const Sink& sink, const Sample& sample = {});

// The fused add: y = embeddings + PE for rows whose padding flag is 0 (every row when empty), within
// the budget plus the add's (add_budget); padded rows must equal the embeddings (budget 0).
void measure_sinusoidal_add(const SinusoidalParams& params, std::span<const std::int64_t> positions,
                            Values embeddings, std::span<const std::uint8_t> padding, Values y,
                            const Budget& budget, const Sink& sink);

// A gain after the rotation: the attention temperature t(p) on q (pe/attn_temperature.h), read at the
// token's first-axis position, y* = t(p)·R(p)·x; or xPos's g_j(p) per pair (pe/xpos.h), y*_j =
// g_j(p)·R(p)x_j, on the rotated pairs alone. A rotated element's budget becomes g times the rotation's plus
// ((relative_error + per_exponent·|w|)·g·(|x_a| + |x_b|) + table_floor·(|x_a| + |x_b|) + floor), w xPos's
// exponent; these are the implementation's error model (gain_relative_error, or xpos_relative_error and
// xpos_table_floor; gain_floor), or 0 under a flat --max-abs.
struct OutputGain {
  AttnTemperature temperature{};  // type none: no temperature
  double relative_error = 0, floor = 0;
  XPos xpos{};  // not with a temperature
  double per_exponent = 0, table_floor = 0;

  bool any() const noexcept { return temperature.type != AttnTemperatureType::None || xpos.enabled(); }
};

// One (token, head) row's compared elements as arrays, in measure_rope's order (each pair's two outputs,
// then the pass-through channels): readers that meet every element of a large batch (check) take a row
// at a time and build a record only for an element they keep.
struct RopeRow {
  std::int64_t row = 0, head = 0, dim = 0;
  double base = 0;
  std::vector<std::int64_t> position, channel;
  std::vector<std::size_t> pair;
  std::vector<double> y, exact, abs_error, ulp, budget, abs_phi, scale, gain, gain_extra, reach;
  std::vector<std::uint8_t> unchanged;
  std::size_t size() const noexcept { return y.size(); }
  ElementRecord record(std::size_t i) const;
  void resize(std::size_t n);
};
using RowSink = std::function<void(const RopeRow&)>;

// RoPE: x before and y after rotation, both with the rows where `batch` puts them. Pass-through
// channels (from rotary_dim on) must equal x exactly: their budget is 0 (the gain scales them too).
// `real`, where given: real positions [n_axes][tokens], each the exact binary value of its double (the angle
// t·θ_j exact, ref::Rope's RealPosition), the batch's integers then each one's band key ceil(|t|) (the
// records' position); no gain and no scaling that switches per token (std::invalid_argument).
void measure_rope_rows(const RopeParams& params, const RopeBatch& batch, Values x, Values y,
                       const Budget& budget, const RowSink& sink, const Sample& sample = {},
                       RopeDirection direction = RopeDirection::Forward, const OutputGain& gain = {},
                       std::span<const double> real = {});
// What check's one pass tells its caller besides `bands`: each token before its rows (progress); a row
// measured exactly in full, and a loud element of a screened row, each after `bands` took it; and per token,
// the line per pair j of the plan under which the caller's own reader (a contract tally) needs no element:
// slope[j]·s + floor[j] for s = |x_a| + |x_b|, at angles of at least phi_lo[j] (every element above it comes
// as a loud one).
struct ScreenedSinks {
  std::function<void(std::size_t token)> token;
  std::function<void(const RopeRow&)> row;
  std::function<void(const ElementRecord&)> loud;
  std::function<void(std::span<const double> phi_lo, double* slope, double* floor)> line;
  // A row holds a non-finite input value (the screen finds it among the loud elements): true stops the
  // pass there (its measurement is then incomplete: the caller measures again without those tokens).
  std::function<bool()> nonfinite_input;
};
// measure_rope_rows into `bands` as one pass (rope_screen.h): x and y read in place in their type, most
// elements proved quiet by the screen, the others measured exactly; the verdict, maxima, worst elements and
// the sinks' records are measure_rope_rows's, the percentiles the screen's estimates' (each within its radius
// of the exact error; a ulp estimate up to twice the exact one where |e| lies within 2r above a power of
// two). false, with nothing measured, where it does not apply: a float64 budget, x and y not both in place in
// one type (the budget's, or doubles), sampled pairs, channels in neither half-split nor interleaved runs, no
// vector target. Forward, without a gain. `real`: real positions as measure_rope_rows takes them (no scaling
// that switches per token), each token's sines and cosines then the fast path's at t·θ_j (within the double
// tier's radius) instead of the double tier's.
bool measure_rope_screened(const RopeParams& params, const RopeBatch& batch, Values x, Values y,
                           const Budget& budget, Measurement& bands, const ScreenedSinks& sinks,
                           const Sample& sample = {}, std::span<const double> real = {});
// A guess of one band's floors (Measurement::presume_floors): the level `share` of a sample's values exceed.
struct PresumedFloors {
  std::int64_t position = 0;  // the band's first
  double abs = -INFINITY, ulp = -INFINITY, share = 0;
};
// For measure_rope_screened over `sample.rows` (every token when empty): per band with at least 1024 values
// in the sample, the level that presumed_share(share, size) of the screen's own estimates exceed, the sample
// being up to 512 (token, head) rows spread evenly over the pass's (each of a token's heads in turn). None
// where the screened pass does not apply or splits its rows (a scaling that switches per token).
std::vector<PresumedFloors> presumed_rope_floors(const RopeParams& params, const RopeBatch& batch, Values x,
                                                 Values y, const Budget& budget, double share,
                                                 const Sample& sample = {},
                                                 std::span<const double> real = {});
// Each of `floors` presumed in `bands` (after expect(), before the first add).
void presume(Measurement& bands, std::span<const PresumedFloors> floors);
// The share of a band's sample its presumed floor is taken at: the 1% its 99th percentile needs plus a
// margin, `share`'s at the least sample (1024 values) and shrinking as a share's standard error does,
// 1/sqrt(size): about 3.2 standard errors of a binomial 1% at every size for share 0.02 (0.02 at 1024
// values, 0.01125 at 65536). A share at or below 1% (tests forcing a failure) is taken as it is.
double presumed_share(double share, std::size_t size);
// A band's sample below this many values presumes nothing (presumed_share's margin is stated from it on).
inline constexpr std::size_t kLeastPresumingSample = 1024;
// One band's floors from its sample's estimates (`abs` and `ulp`, one value each per sampled element): the
// levels presumed_share(share, size) of them exceed; none under kLeastPresumingSample values. The values
// are left reordered (presumed_level). Every family's guess (RoPE, the sinusoidal table, ALiBi).
std::optional<PresumedFloors> presumed_floors_of(std::int64_t position, std::span<double> abs,
                                                 std::span<double> ulp, double share);
// The largest of `values` that at least `share` of them exceed (ties counted: errors repeat); -inf where
// none is. The values are left in another order, a NaN as +inf and -0 as 0.
double presumed_level(std::span<double> values, double share);
// The same, element by element.
void measure_rope(const RopeParams& params, const RopeBatch& batch, Values x, Values y, const Budget& budget,
                  const Sink& sink, const Sample& sample = {},
                  RopeDirection direction = RopeDirection::Forward, const OutputGain& gain = {},
                  std::span<const double> real = {});
// A NoPE layer: every channel of y is t(p)·x (x itself without a gain), within budget.max_abs plus the
// gain's (relative_error·t(p)·|x| + floor): bit for bit by default. A contract does not apply.
void measure_nope(const RopeBatch& batch, std::size_t head_dim, Values x, Values y, const Budget& budget,
                  const Sink& sink, const OutputGain& gain = {});
// The same for [tokens, heads, head_dim] row-major data, positions [n_axes][tokens] of the form.
void measure_rope(const RopeParams& params, std::span<const std::int64_t> positions, std::size_t heads,
                  Values x, Values y, const Budget& budget, const Sink& sink, const Sample& sample = {},
                  RopeDirection direction = RopeDirection::Forward);

}  // namespace pe::harness

template <>
struct pe::EnumNames<pe::harness::Verdict> {
  using V = pe::harness::Verdict;
  static constexpr EnumRow<V> rows[] = {
      {V::Pass, "PASS"}, {V::Fail, "FAIL"}, {V::Undecidable, "UNDECIDABLE"}};
};

// measure_sinusoidal_rows: the exact path's records, each block's exact pairs computed once per distinct
// position it reads (a grid's axis coordinates: H + W of them for H·W cells) instead of once per row.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <unordered_map>
#include <vector>

#include "pe/harness/sinusoidal_rows.h"
#include "pe/ref/fast_trig.h"
#include "pe/ref/reference.h"

namespace pe::harness {
namespace {

// What a record takes from one pair of a block at one position besides y: the exact sin and cos (the fast
// path's double-double; `fast` false where it does not reach, and MPFR is then asked per element as the
// exact path does), their ulps in the budget's type, |φ| and the budget. Each is the exact path's value,
// computed by the same calls.
struct SrPairExact {
  ref::FastSinCos sc;
  double ulp_sin = 0, ulp_cos = 0, abs_phi = 0, budget = 0;
  bool fast = false;
};

std::uint64_t sr_bits(double v) {
  std::uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// One block's distinct positions, each's pairs computed on first use and dropped after the last row that
// reads it: a grid holds its axis's coordinates (W, or H, a frame's), a table of distinct timesteps one
// row's at a time. Positions are told apart by their bits (an angle is a function of them).
class SrBlockCache {
 public:
  SrBlockCache(const SinusoidalRows& rows, std::size_t k, const Budget& budget)
      : block_(rows.blocks[k]),
        reference_(block_.params, ref::RealPosition{axis_reach(rows, block_)}),
        budget_(budget) {
    const std::vector<double>& p = rows.positions[block_.axis];
    for (std::size_t r = 0; r < rows.rows(); ++r) {
      if (rows.zero_row(r)) continue;
      const auto [it, added] = slot_.try_emplace(sr_bits(p[r]), last_.size());
      if (added) last_.push_back(r);
      last_[it->second] = r;
    }
    held_.resize(last_.size());
  }
  const SinusoidalBlock& block() const { return block_; }
  const ref::Sinusoidal& reference() const { return reference_; }
  // The pairs at position t, read by row r; dropped after r where r is the last row reading them.
  const std::vector<SrPairExact>& at(double t, std::size_t r) {
    const std::size_t s = slot_.at(sr_bits(t));
    std::vector<SrPairExact>& pairs = held_[s];
    if (pairs.empty()) fill(t, pairs);
    if (last_[s] == r) {
      done_ = std::move(pairs);  // read until the next row's at(): the row's elements use it
      pairs = {};
      return done_;
    }
    return pairs;
  }

 private:
  void fill(double t, std::vector<SrPairExact>& pairs) const {
    const ref::RealPosition at{t};
    pairs.resize(reference_.n_pairs());
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      SrPairExact& x = pairs[i];
      if (const auto sc = reference_.fast_pair(at, i)) {
        x.sc = *sc, x.fast = true;
        x.ulp_sin = ref::ulp_of(sc->sin, budget_.dtype);
        x.ulp_cos = ref::ulp_of(sc->cos, budget_.dtype);
      }
      x.abs_phi = std::fabs(reference_.angle(at, table_pair_channels(block_.params, i).sin));
      x.budget = budget_(nullptr, x.abs_phi, i, 1.0);
    }
  }

  const SinusoidalBlock& block_;
  ref::Sinusoidal reference_;
  const Budget& budget_;
  std::unordered_map<std::uint64_t, std::size_t> slot_;
  std::vector<std::size_t> last_;               // per slot: the last row reading it
  std::vector<std::vector<SrPairExact>> held_;  // per slot; empty when not held
  std::vector<SrPairExact> done_;               // the last one dropped
};

// The records of one row's block, in the exact path's order (each pair's sin, then cos; a pad channel last)
// and with its fields: the row's fixed ones set once in `e`.
class SrRowEmitter {
 public:
  SrRowEmitter(const SinusoidalRows& rows, Values y, const Budget& budget, const Sink& sink)
      : rows_(rows), y_(y), budget_(budget), sink_(sink) {}

  void set_band(std::int64_t band) { e_.position = band; }
  void row(std::size_t r, SrBlockCache& cache) {
    const SinusoidalBlock& b = cache.block();
    const bool zero_row = rows_.zero_row(r);
    e_.row = static_cast<std::int64_t>(r);
    e_.dim = static_cast<std::int64_t>(rows_.dim);
    e_.base = b.params.base;
    e_.scale = 1.0;
    base_ = r * rows_.dim + b.offset;
    offset_ = b.offset;
    const ref::Sinusoidal& reference = cache.reference();
    const std::size_t n = reference.n_pairs();
    if (zero_row) {
      for (std::size_t i = 0; i < n; ++i) {
        const PairChannels ch = table_pair_channels(b.params, i);
        zero(ch.sin, i), zero(ch.cos, i);
      }
    } else {
      const double t = rows_.positions[b.axis][r];
      const std::vector<SrPairExact>& pairs = cache.at(t, r);
      for (std::size_t i = 0; i < n; ++i) {
        const PairChannels ch = table_pair_channels(b.params, i);
        const SrPairExact& x = pairs[i];
        if (x.fast) {
          fast(ch.sin, x.sc.sin, x.ulp_sin, x, i);
          fast(ch.cos, x.sc.cos, x.ulp_cos, x, i);
        } else {
          slow(ch.sin, reference, t, x, i);
          slow(ch.cos, reference, t, x, i);
        }
      }
    }
    const auto last = static_cast<std::size_t>(b.params.dim) - 1;
    if (reference.is_pad(last)) zero(last, 0);
  }

 private:
  void emit(std::size_t c, double abs_phi, double budget, std::size_t pair, bool fixed_zero) {
    e_.channel = static_cast<std::int64_t>(offset_ + c);
    e_.abs_phi = abs_phi;
    e_.pair = pair;
    e_.unchanged = fixed_zero;
    e_.budget = budget;
    e_.reach = fixed_zero ? INFINITY : 1 + std::fabs(e_.exact);
    sink_(e_);
  }
  // A zero row's element or a pad channel: 0 exactly (budget 0), as the exact path's zero FastValue.
  void zero(std::size_t c, std::size_t pair) {
    e_.y = y_[base_ + c];
    e_.exact = 0;
    e_.abs_error = ref::abs_error(e_.y, ref::dd::DD{});
    e_.ulp = e_.abs_error / ref::ulp_of(ref::dd::DD{}, budget_.dtype);
    emit(c, 0.0, 0.0, pair, true);
  }
  void fast(std::size_t c, const ref::dd::DD& exact, double ulp, const SrPairExact& x, std::size_t pair) {
    e_.y = y_[base_ + c];
    e_.exact = exact.hi;
    e_.abs_error = ref::abs_error(e_.y, exact);
    e_.ulp = e_.abs_error / ulp;
    emit(c, x.abs_phi, x.budget, pair, false);
  }
  void slow(std::size_t c, const ref::Sinusoidal& reference, double t, const SrPairExact& x,
            std::size_t pair) {
    e_.y = y_[base_ + c];
    const ref::Real exact = reference.exact(ref::RealPosition{t}, c).value;
    e_.exact = exact.convert_to<double>();
    e_.abs_error = ref::abs_error(e_.y, exact);
    e_.ulp = e_.abs_error / ref::ulp_of(exact, budget_.dtype);
    emit(c, x.abs_phi, x.budget, pair, false);
  }

  const SinusoidalRows& rows_;
  Values y_;
  const Budget& budget_;
  const Sink& sink_;
  ElementRecord e_;
  std::size_t base_ = 0, offset_ = 0;
};

}  // namespace

void measure_sinusoidal_rows(const SinusoidalRows& rows, Values y, const Budget& budget, const Sink& sink) {
  std::vector<SrBlockCache> caches;
  caches.reserve(rows.blocks.size());
  for (std::size_t k = 0; k < rows.blocks.size(); ++k) caches.emplace_back(rows, k, budget);
  SrRowEmitter emitter(rows, y, budget, sink);
  for (std::size_t r = 0; r < rows.rows(); ++r) {
    emitter.set_band(row_band(rows, r));
    for (SrBlockCache& cache : caches) emitter.row(r, cache);
  }
}

}  // namespace pe::harness

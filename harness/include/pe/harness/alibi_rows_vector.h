// ALiBi's exact bias and the metrics measure_alibi reports (the exact value's leading double, |y - exact|,
// its ULPs, the budget and the reach), for a run of a float32 row's keys at once in vectors, on every
// Highway target whose multiply-add is fused. Each lane either equals the MPFR path (ref::Alibi::bias,
// ref::abs_error, ref::ulp_of, Budget) bit for bit, or is marked undecided for that path to take.
//
// How the exact value is exact enough: the reference's bias is V = m·s rounded to ~334 bits, m the head's
// slope at ~334 bits. With m = hi + lo + r (hi, lo its leading doubles, |r| <= 2^-106·m), hi·s = p + pe
// exactly (FMA) and lo·s = q within 2^-106·|m·s|, so |V - (p + pe + q)| < 2^-104·|p|; y - V is then a
// double-double within eta = 2^-102·(|p| + |d|) + 2^-51·(|y - p|'s low part + |pe| + |q|) of y - V rounded
// to 334 bits (both 0 for a slope that is a power of two: everything is exact). A lane is decided when
// that interval rounds to one double (Ziv's test: its low part plus eta stays below half an ULP, a quarter
// beside a power of two), and likewise for V's rounding and its binade (which ulp_of reads). Undecided
// lanes: about eta/ULP ~ 2^-26 of ordinary ones, plus NaN, infinite, subnormal or huge values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace pe::harness {

// One run of keys of one (head, query) row: inputs, the head's constants and the outputs, each array
// holding at least n values.
struct AlibiLanes {
  static constexpr std::size_t kLanes = 8;  // the widest vector of doubles any target uses
  // The head's slope m = slope_hi + slope_lo (+ < 2^-106·m), and whether that is all of it (m a power
  // of two and the reference's product exact): the error terms are then 0.
  double slope_hi = 0, slope_lo = 0;
  bool exact_slope = false;
  // The budget, as harness::Budget computes it at |φ| = 1 for the head's power: each member contract's
  // RN(RN(relative·scale) + floor), their largest plus `extra` (one contract: its term plus extra, the
  // same bits, the terms being positive); without members `max_abs` for all.
  const double *relative = nullptr, *floor = nullptr;
  std::size_t members = 0;
  double extra = 0, max_abs = 0;
  // In: the kernel's outputs and the integers s the slope multiplies (|s| <= 2^53), as doubles.
  const float* y = nullptr;
  const double* s = nullptr;
  // Out: y as a double, the exact bias's leading double, |y - exact| (negative: undecided, the MPFR path
  // takes that element), its float32 ULPs, the budget, the scale (|exact|, or the slope where it is 0) and
  // the reach (2·|exact|, or infinite).
  double *y_out = nullptr, *exact = nullptr, *abs_error = nullptr, *ulp = nullptr, *budget = nullptr,
         *scale = nullptr, *reach = nullptr;
};

// check's screen over a run of one (head, query) row's keys (measure_alibi_screened): each key either proved
// quiet (below every bar the exact path's measurement and the caller's tally compare with, so that the exact
// path would only have counted it) or listed loud for the exact path. Per key, with s the multiplier (exact:
// |key|, |query| < 2^52) and e = RN(p + RN(pe + q)) the exact bias's double (p + pe = slope_hi·s by FMA,
// q = slope_lo·s): |e − V| <= 2^-52·|e|, so the exact path's |y − V| (rounded) is at most
// err_hi = |y − e|·(1 + 2^-50) + 2^-50·|e|, and at least |y − e| less the same. Quiet: err_hi under
// min(ratio_bar·(budget_slope·|e| + floor_lo), tally·|e|, max_abs), err_hi/ulp(e) under max_ulp with V in e's
// float32 binade or below the least normal one (so ulp(V) >= ulp(e)), |e| < 2^127, and, with check_reach, the
// budget's upper bound below the reach 2·|V| (decidable). The bars arrive shrunk by the caller's margin (1 −
// 2^-44). A quiet key's estimates |y − e| and |y − e|·(1/ulp(e)) go to the tails where above their floors:
// each within 2^-50·(|y − e| + |e|) of the exact path's value, and its ulps within 2^-50·(its ulps) + 2^-26.
struct AlibiScreen {
  enum class Multiplier : std::uint8_t { KeyMinusQuery, MinusDistance, Key };  // causal, symmetric, BLOOM
  // In: n outputs and keys (as doubles), the query, the head's slope and budget terms (AlibiLanes').
  const float* y = nullptr;
  const double* keys = nullptr;
  double query = 0;
  Multiplier multiplier = Multiplier::KeyMinusQuery;
  double slope_hi = 0, slope_lo = 0;
  bool exact_slope = false;  // AlibiLanes': then e = V exactly, and err_hi = |y − e|·(1 + 2^-50)
  // The budget lies within budget_slope·|V| + [floor_lo, floor_hi] (AlibiLanes' terms: the members' largest
  // relative term, their least and largest floor, plus extra; a flat bound: slope 0, both floors max_abs).
  double budget_slope = 0, floor_lo = 0, floor_hi = 0;
  // The bars (shrunk), the tails' floors, whether decidability must be proved.
  double ratio_bar = 0, tally = 0, max_abs = 0, max_ulp = 0, abs_floor = 0, ulp_floor = 0;
  bool check_reach = false;
  // Optional (null: none): per key, float32 bounds (alibi_quiet_bounds') within which y is known to be quiet
  // with both estimates at or below the floors, and |e| > 0: such a key only counts, and costs a compare.
  const float *quiet_lo = nullptr, *quiet_hi = nullptr;
  // Out: the loud keys' indices (room for n), the estimates (room for n + kLanes each), counts.
  std::uint32_t* loud = nullptr;
  double *abs_tail = nullptr, *ulp_tail = nullptr;
  std::size_t loud_count = 0, quiet_encoding = 0, abs_kept = 0, ulp_kept = 0;
  std::size_t bounded = 0;  // keys not screened: each lay within its quiet bounds (not all such keys)
};
void alibi_screen(AlibiScreen& run, std::size_t n);

// For each multiplier s[i] (an integer, |s| < 2^53), the float32 outputs y in [lo[i], hi[i]] that the
// screen with `bars`' slope, budget, bars, floors and check_reach (its other fields unused) proves quiet,
// with |y − e| and its ULPs at or below the tails' floors, and |e| > 0; NaN bounds where there are none.
// The screen's own operations, on the target alibi_screen runs (a vector of multipliers at a time): every
// condition it tests is monotone in err = |RN(y − e)|, so the largest err T that passes them all (found from
// the bars and checked) bounds a set of errors that all pass, and RN(y − e) is monotone in y, so [lo, hi]
// is the floats whose err stays within T at both ends. Bars that only rise keep such bounds valid (smaller
// than needed). Requires a target.
void alibi_quiet_bounds(const AlibiScreen& bars, const double* s, std::size_t n, float* lo, float* hi);

// Fills the outputs for keys [0, n) (the last partial vector through a padded copy: nothing is read or
// written beyond n) and returns how many are undecided. Requires a target (alibi_targets() not empty).
std::size_t alibi_lanes(const AlibiLanes& lanes, std::size_t n);

// Every compiled target with a fused multiply-add that the CPU supports, best first.
struct AlibiTarget {
  std::string name;
  std::size_t (*run)(const AlibiLanes&, std::size_t);
  void (*screen)(AlibiScreen&, std::size_t);
  void (*bounds)(const AlibiScreen&, const double*, std::size_t, float*, float*);
};
const std::vector<AlibiTarget>& alibi_targets();
// Which of them alibi_lanes, alibi_screen and alibi_quiet_bounds run (default 0, the best), process-wide:
// the tests run each.
void use_alibi_target(std::size_t index) noexcept;

}  // namespace pe::harness

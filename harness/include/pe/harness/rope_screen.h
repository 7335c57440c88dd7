// check's one pass over a RoPE batch: a (token, head) row of x and y read in their own type (float32,
// bfloat16, float16, or as doubles), rotated in double by the reference's double tier (pe/ref/fast_trig.h),
// and each element either proved quiet (its error, bounded above, changes nothing of the measurement but its
// count and its band's 99th percentile) or flagged loud for the exact path (double-double, then MPFR).
// Conservative by construction: a quiet element is one the exact path would only have counted, so the
// verdict, the maxima, the worst elements and the contracts' tallies are the exact path's; the percentiles
// are read from the screen's estimates, within the radius below of the exact ones (docs/speed.md). Compiled
// for every Highway target with a fused multiply-add; the best one the CPU has runs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "pe/harness/presume_tuning.h"
#include "pe/types.h"

namespace pe::harness {

// A token's, per pair, each array padded to a multiple of kLanes (the padding's lanes are never counted).
// With s = |x_a| + |x_b| and e the pair's rotation in double: |e − exact| <= s·radius; the exact path's
// budget is at least budget_slope·s + budget_floor; a contract tally needs nothing unless the error exceeds
// tally_slope·s + tally_floor; and the budget is at most reach_slope·s + reach_floor (undecidability).
struct ScreenToken {
  static constexpr std::size_t kLanes = 8;  // the widest vector of doubles any target uses
  static std::size_t padded(std::size_t n) { return (n + kLanes - 1) / kLanes * kLanes; }
  const double *sin, *cos, *radius, *budget_slope, *tally_slope, *tally_floor, *reach_slope;
};

// Where a row's pairs lie in x and in y: contiguous (a at a0 + k, b at b0 + k: half-split) or interleaved
// (a at a0 + 2k, b at a0 + 2k + 1).
struct ScreenChannels {
  std::size_t a0 = 0, b0 = 0;
  bool interleaved = false;
};

// The row's scalars: the bars a quiet element stays under, already shrunk by the margins of
// rope_screen.cc, and where its estimates go.
struct ScreenBars {
  double budget_floor = 0;  // added to budget_slope·s
  double ratio_bar = 0;     // quiet: err <= ratio_bar·budget (the band's and the worst list's bar)
  double max_abs = 0, max_ulp = 0;
  double reach_floor = 0;   // added to reach_slope·s; reach_slope·s + reach_floor < reach_factor·s decides
  double reach_factor = 0;  // 0.7·A: the exact pair's reach is at least that times s
  bool check_reach = false;             // false where every position lies within what the contracts promise
  double attention = 1;                 // the rotation's factor (A), applied in double
  double abs_floor = 0, ulp_floor = 0;  // the tails keep estimates strictly above these
  int precision = 24, emin = -126;      // the output type's (ulp)
};

// Out: per pair, flags[k] = 1·(element a loud) + 2·(element b loud); the estimates |y − e| and its ulps
// above the tails' floors (each buffer has room for 2·padded(n) + kLanes values a row); counts. Over a run
// of rows (ScreenRows), the counts and flags are the last row's; the rows before it (all quiet) are counted
// in `before`, their estimates first in the tails, the last row's at abs_tail + before.abs_kept and
// ulp_tail + before.ulp_kept (the tails' pointers come back as given).
struct ScreenResult {
  double* flags;
  double *abs_tail, *ulp_tail;
  std::size_t loud = 0, quiet_encoding = 0, abs_kept = 0, ulp_kept = 0;
  struct Before {
    std::size_t rows = 0, quiet_encoding = 0, abs_kept = 0, ulp_kept = 0;
  } before{};
};

// A run of rows of one token under the same bars (the heads of a token): row r at r·stride elements on in x
// and y alike. The run stops after its first row with a loud element (the caller measures it and goes on
// from the next). While row r < ahead_rows is screened, `ahead_bytes` from `ahead` elements on are asked for
// from memory (the caller's: they must lie in x and y).
struct ScreenRows {
  std::size_t rows = 1, stride = 0, ahead = 0, ahead_bytes = 0, ahead_rows = 0;
};

// The element types a row is read in (F64: an output of a narrower type handed over as doubles).
enum class ScreenType : std::uint8_t { F32, BF16, F16, F64 };
// The type data of a 16/32-bit `out` is read in, in place (none for a float64 output).
inline std::optional<ScreenType> screen_type_of(DType out) {
  switch (out) {
    case DType::F32:
      return ScreenType::F32;
    case DType::BF16:
      return ScreenType::BF16;
    case DType::F16:
      return ScreenType::F16;
    case DType::F64:
      break;
  }
  return std::nullopt;
}
// Bytes an element of `type` takes.
constexpr std::size_t screen_size(ScreenType type) {
  return type == ScreenType::F64 ? 8 : type == ScreenType::F32 ? 4 : 2;
}

// A run of rows of n pairs (ScreenRows; one row by default), each as it would be screened alone, the row's
// constants made once; x and y point at the first row's first channel.
using ScreenRowFn = void (*)(ScreenType type, const void* x, const void* y, std::size_t n,
                             const ScreenChannels& in, const ScreenChannels& out, const ScreenToken& token,
                             const ScreenBars& bars, const ScreenRows& rows, ScreenResult& result);

struct ScreenRowTarget {
  std::string name;
  ScreenRowFn run;
};
// Every compiled target with a fused multiply-add that the CPU supports, best first (empty: no screen).
const std::vector<ScreenRowTarget>& screen_row_targets();

// Whether measure_rope_screened screens at all (default: on). Off, it declines and check measures every
// element exactly: the tests compare both. Process-wide.
bool rope_screen_enabled() noexcept;
void set_rope_screen(bool enabled) noexcept;

// check's presumed floors for a screened RoPE pass (presumed_rope_floors, presume_tuning.h), from 2^21
// judged elements on: at 2^20 elements (256 tokens of 32 heads × 128) the 512-row sample is a sixteenth of
// the rows and costs what the presumption saves there (2.36-2.40 ns an element without, 2.41-2.47 with).
void tune_rope_screen(const PresumeTuning& tuning) noexcept;
const PresumeTuning& rope_screen_tuning() noexcept;
// How many passes ran again, process-wide, because a presumed floor did not hold (tests, benchmarks); the
// pass that runs again counts itself.
std::size_t rope_screen_reruns() noexcept;
void count_rope_screen_rerun() noexcept;

}  // namespace pe::harness

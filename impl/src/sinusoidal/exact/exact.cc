// sinusoidal.exact: the phase of every pair is exact by construction. Each frequency is a 64-bit
// fixed-point fraction of a turn (TurnSteps, pe/plan.h); position p's phase is p·step mod 2^64 in
// integer arithmetic, sin/cos come from the nearest quarter turn and polynomials on |a| <= π/4 in
// double (detail/exact_phase.h). Along consecutive positions each pair is rotated by its one-step
// (sin, cos) in double and re-evaluated directly every 256 rows. One rounding into the output type.
// Compiled for every Highway target (foreach_target) so that the loops vectorise for the best one;
// dispatched at run time.
//
// Contract (derived), |exact| <= 1:
//   phase: |step - ω·2^64/(2π)| < 4.5, so p < 2^31 is within 2^31·4.5·2^-64 turns (5.3e-10), i.e.
//          < 3.3e-9 rad (docs/contracts.md §2h);
//   polynomials and split < 8e-12; 256 rotations in double < 256·4·2^-53 = 1.2e-13;
//   together < 3.32e-9 = 2.99e7·2^-53 (ck, compute type double), independent of |φ| (c1 = 0);
//   output: one rounding of a value in [-1, 1]: half an ulp, <= 0.5·u_out (c0 = 0.5).
//   Budget: 0.5·u_out + 3.32e-9: 3.31e-8 in float32. Largest position 2^31, base <= 1e7.
// Real positions and a scale (table_at; table and add under a scale other than 1): scale·t held exactly as
//   hi + lo (two_prod), each part's phase m·step·2^e in 128 bits with the bits below 2^-64 turn truncated
//   (detail/real_phase.h): the step's 4.5 units per unit of |scale·t| <= 2^31 as above, plus < 2 units
//   (6.9e-19 rad) of truncation, inside the 2e-11 rad the sum above leaves below 3.32e-9. Every row is
//   computed directly (no advancing); an integral scale·t (lo = 0) takes the integer path's DirectSinCos,
//   so at scale 1 table_at(p) gives the bits of table's directly computed rows.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "sinusoidal/exact/exact.cc"
#include <hwy/cache_control.h>
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <type_traits>
#include <utility>

#include "detail/bfloat16_bits-inl.h"
#include "detail/exact_phase-inl.h"
#include "detail/exact_phase.h"
#include "detail/hwy_register.h"
#include "detail/real_phase.h"
#include "detail/stream_bytes-inl.h"
#include "detail/streaming_call.h"
#include "pe/detail/convert.h"

#ifndef PE_SINUSOIDAL_EXACT_CONTRACT_
#define PE_SINUSOIDAL_EXACT_CONTRACT_
namespace pe::sinusoidal_exact {
inline const Contract kContract{
    .layouts = {Layout::Interleaved, Layout::Concatenated},
    .outputs = {DType::F32, DType::BF16, DType::F16},
    .angle_type = DType::F64,
    .compute_type = DType::F64,
    .max_position = std::int64_t{1} << 31,
    .max_base = 1e7,
    .max_input_abs = 1e30,
    .depends_on = "x86-64 long double (64-bit significand) for the plan's turn steps",
    .state_rows = detail::kRefreshRows,
    .c0 = 0.5,
    .ck = 2.99e7,
};
}  // namespace pe::sinusoidal_exact
#endif

HWY_BEFORE_NAMESPACE();
namespace pe::sinusoidal_exact::HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

inline constexpr std::size_t kChunk = 64;  // pairs kept as (sin, cos) state, in L1

// Every pair advanced by one position: (s, c) rotated by its one-step (sin, cos), in double.
HWY_INLINE void Advance(const TurnSteps& ts, std::size_t j0, std::size_t n, double* HWY_RESTRICT s,
                        double* HWY_RESTRICT c) {
  const hn::ScalableTag<double> dd;
  const std::size_t lanes = hn::Lanes(dd);
  std::size_t k = 0;
  for (; k + lanes <= n; k += lanes) {
    const auto vs = hn::Load(dd, s + k), vc = hn::Load(dd, c + k);
    const auto cw = hn::LoadU(dd, ts.cos_step.data() + j0 + k),
               sw = hn::LoadU(dd, ts.sin_step.data() + j0 + k);
    hn::Store(hn::MulAdd(vs, cw, hn::Mul(vc, sw)), dd, s + k);
    hn::Store(hn::MulSub(vc, cw, hn::Mul(vs, sw)), dd, c + k);
  }
  detail::advance_sincos(ts.cos_step.data() + j0 + k, ts.sin_step.data() + j0 + k, n - k, s + k, c + k);
}

// One row's chunk of pairs rounded into Out after a direct evaluation (or any type's row).
template <class Out>
HWY_INLINE void StoreRow(Out* HWY_RESTRICT ys, Out* HWY_RESTRICT yc, bool interleaved, const double* s,
                         const double* c, std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    ys[interleaved ? 2 * k : k] = detail::store_as<Out>(s[k]);
    yc[interleaved ? 2 * k : k] = detail::store_as<Out>(c[k]);
  }
}

// One position on for a vector of sines and one of cosines: Advance's s·cw + c·sw and c·cw - s·sw.
template <class V>
HWY_INLINE void StepHalves(V& vs, V& vc, V cw, V sw) {
  const V s1 = hn::MulAdd(vs, cw, hn::Mul(vc, sw));
  vc = hn::MulSub(vc, cw, hn::Mul(vs, sw));
  vs = s1;
}

// One position on: every pair of the chunk advanced (as Advance) and written as float32 or bfloat16
// in the same pass, four (AVX2) pairs at a time, interleaved or as two halves.
template <bool kInterleaved, class Out>
HWY_INLINE void AdvanceAndStore(const TurnSteps& ts, std::size_t j0, std::size_t n, double* HWY_RESTRICT s,
                                double* HWY_RESTRICT c, Out* HWY_RESTRICT ys, Out* HWY_RESTRICT yc) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const hn::Rebind<std::uint32_t, decltype(dd)> du;
  const std::size_t lanes = hn::Lanes(dd);
  const double* HWY_RESTRICT cos_step = ts.cos_step.data() + j0;
  const double* HWY_RESTRICT sin_step = ts.sin_step.data() + j0;
  // The state's vector at pair `at` advanced in place, returned in s1, c1.
  const auto step_at = [&](std::size_t at, hn::Vec<decltype(dd)>& s1, hn::Vec<decltype(dd)>& c1) {
    s1 = hn::Load(dd, s + at);
    c1 = hn::Load(dd, c + at);
    StepHalves(s1, c1, hn::LoadU(dd, cos_step + at), hn::LoadU(dd, sin_step + at));
    hn::Store(s1, dd, s + at);
    hn::Store(c1, dd, c + at);
  };
  std::size_t k = 0;
  // bfloat16 halves, four vectors at a time where a vector holds four doubles or more (with fewer, groups
  // of four ran 1.35-1.5x slower).
  if constexpr (!std::is_same_v<Out, float> && !kInterleaved && hn::MaxLanes(decltype(dd)()) >= 4) {
    for (; k + 4 * lanes <= n; k += 4 * lanes) {
      hn::Vec<decltype(dd)> s1[4], c1[4];
      for (std::size_t q = 0; q < 4; ++q) step_at(k + q * lanes, s1[q], c1[q]);
      detail::HWY_NAMESPACE::StoreBFloat16x4(dd, s1[0], s1[1], s1[2], s1[3],
                                             reinterpret_cast<std::uint16_t*>(ys + k));
      detail::HWY_NAMESPACE::StoreBFloat16x4(dd, c1[0], c1[1], c1[2], c1[3],
                                             reinterpret_cast<std::uint16_t*>(yc + k));
    }
  }
  for (; k + lanes <= n; k += lanes) {
    hn::Vec<decltype(dd)> s1, c1;
    step_at(k, s1, c1);
    if constexpr (std::is_same_v<Out, float> && kInterleaved) {
      hn::StoreInterleaved2(hn::DemoteTo(df, s1), hn::DemoteTo(df, c1), df, ys + 2 * k);
    } else if constexpr (std::is_same_v<Out, float>) {
      hn::StoreU(hn::DemoteTo(df, s1), df, ys + k);
      hn::StoreU(hn::DemoteTo(df, c1), df, yc + k);
    } else if constexpr (kInterleaved) {  // bfloat16: (sin, cos) is one 32-bit word, sin in the low half
      const auto word = hn::Or(detail::HWY_NAMESPACE::BFloat16Bits(dd, s1),
                               hn::ShiftLeft<16>(detail::HWY_NAMESPACE::BFloat16Bits(dd, c1)));
      hn::StoreU(word, du, reinterpret_cast<std::uint32_t*>(ys + 2 * k));
    } else {
      detail::HWY_NAMESPACE::StoreBFloat16(dd, s1, ys + k);
      detail::HWY_NAMESPACE::StoreBFloat16(dd, c1, yc + k);
    }
  }
  detail::advance_sincos(cos_step + k, sin_step + k, n - k, s + k, c + k);
  const std::size_t at = kInterleaved ? 2 * k : k;
  StoreRow(ys + at, yc + at, kInterleaved, s + k, c + k, n - k);
}

// AdvanceAndStore for the plan's layout.
template <class Out>
HWY_INLINE void AdvanceAndStoreRow(bool interleaved, const TurnSteps& ts, std::size_t j0, std::size_t n,
                                   double* s, double* c, Out* ys, Out* yc) {
  if (interleaved) {
    AdvanceAndStore<true>(ts, j0, n, s, c, ys, yc);
  } else {
    AdvanceAndStore<false>(ts, j0, n, s, c, ys, yc);
  }
}

#if !HWY_HAVE_SCALABLE  // arrays of vectors below: fixed-size targets only
// The interleaved table's steps spread over each pair's two lanes: (cw, cw) and (sw, -sw).
struct SpreadSteps {
  HWY_ALIGN double cw[2 * kChunk];
  HWY_ALIGN double sw[2 * kChunk];
  SpreadSteps(const TurnSteps& ts, std::size_t j0, std::size_t n) {
    for (std::size_t k = 0; k < n; ++k) {
      cw[2 * k] = cw[2 * k + 1] = ts.cos_step[j0 + k];
      sw[2 * k] = ts.sin_step[j0 + k];
      sw[2 * k + 1] = -ts.sin_step[j0 + k];
    }
  }
};

// One vector of (s, c) lanes (lanes / 2 pairs) rounded into Out and stored, streamed where asked (float32,
// aligned: the caller checks) unless the floats are less than a whole 16-byte vector (SSE4's two), which
// x86's streaming store would overrun.
template <class Out, class D>
HWY_INLINE void StorePairs(D dd, hn::Vec<D> v, Out* HWY_RESTRICT to, bool stream) {
  if constexpr (std::is_same_v<Out, float>) {
    const hn::Rebind<float, D> df;
    if (stream && hn::Lanes(df) * sizeof(float) >= 16) {
      hn::Stream(hn::DemoteTo(df, v), df, to);
    } else {
      hn::StoreU(hn::DemoteTo(df, v), df, to);
    }
  } else {  // bfloat16: the lanes' 16-bit patterns, packed
    detail::HWY_NAMESPACE::StoreBFloat16(dd, v, to);
  }
}

// One position on for a vector of (s, c) lanes: v' = v·(cw, cw) + swap(v)·(sw, -sw) is lane for lane
// Advance's s·cw + c·sw and c·cw - s·sw (the same roundings, so the same bits), and leaves the pairs
// interleaved for the store.
template <class D>
HWY_INLINE hn::Vec<D> StepPairs(D dd, hn::Vec<D> v, const double* HWY_RESTRICT cw,
                                const double* HWY_RESTRICT sw) {
  return hn::MulAdd(v, hn::Load(dd, cw), hn::Mul(hn::Reverse2(dd, v), hn::Load(dd, sw)));
}

// G vectors of pairs (from pair k) advanced over `count` rows in registers (StepPairs), each row written
// at `row_stride` after the one before.
template <std::size_t G, class Out>
HWY_INLINE void AdvanceRowsInRegisters(const SpreadSteps& steps, double* HWY_RESTRICT state, std::size_t k,
                                       Out* HWY_RESTRICT first, std::size_t row_stride, std::size_t count,
                                       bool stream) {
  const hn::ScalableTag<double> dd;
  const std::size_t lanes = hn::Lanes(dd);
  const double* HWY_RESTRICT cw = steps.cw + 2 * k;
  const double* HWY_RESTRICT sw = steps.sw + 2 * k;
  hn::Vec<decltype(dd)> v[G];
  for (std::size_t g = 0; g < G; ++g) v[g] = hn::Load(dd, state + 2 * k + g * lanes);
  Out* row = first + 2 * k;
  for (std::size_t r = 0; r < count; ++r, row += row_stride) {
    if constexpr (std::is_same_v<Out, float>) {
      for (std::size_t g = 0; g < G; ++g) {  // the steps from L1: the registers hold the state
        v[g] = StepPairs(dd, v[g], cw + g * lanes, sw + g * lanes);
        StorePairs(dd, v[g], row + g * lanes, stream);
      }
    } else {  // bfloat16: four vectors rounded and stored together (G is a multiple of 4)
      for (std::size_t g = 0; g < G; g += 4) {
        for (std::size_t q = g; q < g + 4; ++q) v[q] = StepPairs(dd, v[q], cw + q * lanes, sw + q * lanes);
        detail::HWY_NAMESPACE::StoreBFloat16x4(dd, v[g], v[g + 1], v[g + 2], v[g + 3],
                                               reinterpret_cast<std::uint16_t*>(row + g * lanes));
      }
    }
  }
}

// Rows `first`, first + row_stride, … (count of them) of an interleaved float32 or bfloat16 table, each
// one position after the one before, from the state s, c of the row before: the pairs whole vectors hold
// advanced with (s, c) in adjacent lanes, the last few pairs as AdvanceAndStore's tail. s and c are left
// undefined.
template <class Out>
HWY_INLINE void AdvanceInterleavedRows(const TurnSteps& ts, const SpreadSteps& steps, std::size_t j0,
                                       std::size_t n, double* HWY_RESTRICT s, double* HWY_RESTRICT c,
                                       Out* first, std::size_t row_stride, std::size_t count, bool stream) {
  const hn::ScalableTag<double> dd;
  // The vectors take the pairs AdvanceAndStore's vectors take (whole multiples of `lanes`), the rest its
  // scalar tail: the same pairs rounded the same way whichever loop a row comes from (a streamed table
  // that is not aligned takes the other one).
  const std::size_t per_vector = hn::Lanes(dd) / 2;
  const std::size_t whole = n / hn::Lanes(dd) * hn::Lanes(dd),
                    vectors = per_vector == 0 ? 0 : whole / per_vector;
  HWY_ALIGN double state[2 * kChunk];
  for (std::size_t k = 0; k < whole; ++k) {
    state[2 * k] = s[k];
    state[2 * k + 1] = c[k];
  }
  // A whole row's chunk at once where the registers hold it (AVX-512's 32 registers: up to 16 vectors,
  // 64 pairs; AVX2's 16: up to 8), so that each row is written in one sweep. Otherwise row by row with
  // the state in L1: sweeping a few vectors down the rows and coming back for the next few wrote each row
  // in pieces, and AVX2's tables at L65536 × 128 took 1.3-1.5x as long as before.
  constexpr std::size_t kMaxInRegisters = HWY_MAX_BYTES >= 64 ? 16 : 8;
  if (vectors == 16 && kMaxInRegisters >= 16) {
    AdvanceRowsInRegisters<16>(steps, state, 0, first, row_stride, count, stream);
  } else if (vectors == 8) {
    AdvanceRowsInRegisters<8>(steps, state, 0, first, row_stride, count, stream);
  } else if (vectors == 4) {
    AdvanceRowsInRegisters<4>(steps, state, 0, first, row_stride, count, stream);
  } else {
    const std::size_t lanes = hn::Lanes(dd);
    Out* row = first;
    for (std::size_t r = 0; r < count; ++r, row += row_stride) {
      for (std::size_t k = 0; k < 2 * whole; k += lanes) {
        const auto v = StepPairs(dd, hn::Load(dd, state + k), steps.cw + k, steps.sw + k);
        hn::Store(v, dd, state + k);
        StorePairs(dd, v, row + k, stream);
      }
    }
  }
  Out* row = first;
  for (std::size_t r = 0; r < count && whole < n; ++r, row += row_stride) {
    detail::advance_sincos(ts.cos_step.data() + j0 + whole, ts.sin_step.data() + j0 + whole, n - whole,
                           s + whole, c + whole);
    StoreRow(row + 2 * whole, row + 2 * whole + 1, true, s + whole, c + whole, n - whole);
  }
}

// G vectors of sines and G of cosines of a float32 table (the pairs AdvanceAndStore's vectors take)
// advanced over `count` rows in registers with AdvanceAndStore's operations (the same bits), each row's
// two halves written at `row_stride` after the row before; the last few pairs as its scalar tail. s and c
// are left undefined. (bfloat16 stays row by row: its four-vector rounding beside 2G state registers ran
// 1.2x slower than with the state in L1, measured.)
template <std::size_t G>
HWY_INLINE void AdvanceHalvesInRegisters(const TurnSteps& ts, std::size_t j0, std::size_t n,
                                         double* HWY_RESTRICT s, double* HWY_RESTRICT c, float* first_s,
                                         float* first_c, std::size_t row_stride, std::size_t count,
                                         bool stream) {
  const hn::ScalableTag<double> dd;
  const std::size_t lanes = hn::Lanes(dd), whole = G * lanes;
  const double* HWY_RESTRICT cos_step = ts.cos_step.data() + j0;
  const double* HWY_RESTRICT sin_step = ts.sin_step.data() + j0;
  hn::Vec<decltype(dd)> vs[G], vc[G];
  for (std::size_t g = 0; g < G; ++g)
    vs[g] = hn::Load(dd, s + g * lanes), vc[g] = hn::Load(dd, c + g * lanes);
  float* row_s = first_s;
  float* row_c = first_c;
  for (std::size_t r = 0; r < count; ++r, row_s += row_stride, row_c += row_stride) {
    for (std::size_t g = 0; g < G; ++g) {  // the steps from L1: the registers hold the state
      StepHalves(vs[g], vc[g], hn::LoadU(dd, cos_step + g * lanes), hn::LoadU(dd, sin_step + g * lanes));
      StorePairs(dd, vs[g], row_s + g * lanes, stream);
      StorePairs(dd, vc[g], row_c + g * lanes, stream);
    }
    if (whole < n) {
      detail::advance_sincos(cos_step + whole, sin_step + whole, n - whole, s + whole, c + whole);
      StoreRow(row_s + whole, row_c + whole, false, s + whole, c + whole, n - whole);
    }
  }
}

// Whether the registers hold a concatenated chunk's halves of n pairs: 2, 4 or (AVX-512's 32 registers)
// 8 vectors of each.
HWY_INLINE bool HalvesFitRegisters(std::size_t n) {
  const std::size_t vectors = n / hn::Lanes(hn::ScalableTag<double>());
  return vectors == 2 || vectors == 4 || (vectors == 8 && HWY_MAX_BYTES >= 64);
}

// The run of rows after a direct row of a concatenated float32 table, its halves' vectors in registers
// (the chunk's pairs fit them: HalvesFitRegisters).
HWY_INLINE void AdvanceHalvesRows(const TurnSteps& ts, std::size_t j0, std::size_t n, double* s, double* c,
                                  float* first_s, float* first_c, std::size_t row_stride, std::size_t count,
                                  bool stream) {
  const std::size_t vectors = n / hn::Lanes(hn::ScalableTag<double>());
  if constexpr (HWY_MAX_BYTES >= 64) {
    if (vectors == 8)
      return AdvanceHalvesInRegisters<8>(ts, j0, n, s, c, first_s, first_c, row_stride, count, stream);
  }
  if (vectors == 4)
    return AdvanceHalvesInRegisters<4>(ts, j0, n, s, c, first_s, first_c, row_stride, count, stream);
  AdvanceHalvesInRegisters<2>(ts, j0, n, s, c, first_s, first_c, row_stride, count, stream);
}

// How many positions after positions[r] continue it one by one (at most a refresh interval's worth):
// the rows a direct row's state advances to in registers.
HWY_INLINE std::size_t ConsecutiveRun(std::span<const std::int64_t> positions, std::size_t r) {
  std::size_t run = 0;
  while (r + 1 + run < positions.size() && run < detail::kRefreshRows &&
         positions[r + 1 + run] == positions[r + run] + 1) {
    ++run;
  }
  return run;
}

// One chunk of a direct row at position p, then the `run` rows after it advanced in registers: an
// interleaved table's pairs in adjacent lanes (AdvanceInterleavedRows), a concatenated float32
// table's halves as vectors of each (AdvanceHalvesRows). `spread` is made at the first run.
template <class Out>
HWY_INLINE void DirectRowThenRegisterRun(const TurnSteps& ts, std::optional<SpreadSteps>& spread, bool il,
                                         std::size_t j0, std::size_t n, std::size_t d, std::int64_t p,
                                         double* s, double* c, Out* row_s, Out* row_c, std::size_t run,
                                         bool stream) {
  detail::HWY_NAMESPACE::DirectSinCos(p, ts.step.data() + j0, n, s, c);
  StoreRow(row_s, row_c, il, s, c, n);
  if (run > 0 && il) {
    if (!spread) spread.emplace(ts, j0, n);
    AdvanceInterleavedRows(ts, *spread, j0, n, s, c, row_s + d, d, run, stream);
  } else if (run > 0) {
    if constexpr (std::is_same_v<Out, float>) {
      AdvanceHalvesRows(ts, j0, n, s, c, row_s + d, row_c + d, d, run, stream);
    }
  }
}
#endif

// One chunk of a float32 table's row (the common case): advanced from the row before or computed
// directly, through `stage` (in L1) and streamed to its place when `stream` (pe/streaming.h; the same
// bits as normal stores).
HWY_INLINE void Float32TableRow(const TurnSteps& ts, bool il, std::size_t j0, std::size_t n, std::int64_t p,
                                bool advance, double* s, double* c, float* ys, float* yc, float* stage,
                                bool stream) {
  float* const to_s = ys;
  float* const to_c = yc;
  if (stream) ys = stage, yc = il ? stage + 1 : stage + kChunk;
  if (advance) {
    AdvanceAndStoreRow(il, ts, j0, n, s, c, ys, yc);
  } else {
    detail::HWY_NAMESPACE::DirectSinCos(p, ts.step.data() + j0, n, s, c);
    StoreRow(ys, yc, il, s, c, n);
  }
  if (stream) {
    if (il) {
      detail::HWY_NAMESPACE::StreamBytes(to_s, stage, 2 * n * sizeof(float));
    } else {
      detail::HWY_NAMESPACE::StreamBytes(to_s, stage, n * sizeof(float));
      detail::HWY_NAMESPACE::StreamBytes(to_c, stage + kChunk, n * sizeof(float));
    }
  }
}

// One chunk of a row of any other table, or of an embedding to add to (skipped where padded): the
// state advanced (a bfloat16 table's stored in vectors as it goes) or computed directly.
// `packed`: whether the vector stores may run (not for a flipped interleaved row, see Rows).
template <class Out, bool kAdd>
HWY_INLINE void OtherRow(const TurnSteps& ts, bool il, std::size_t j0, std::size_t n, std::int64_t p,
                         bool advance, bool skip, bool packed, double* s, double* c, Out* ys, Out* yc) {
  if constexpr (std::is_same_v<Out, BFloat16> && !kAdd) {  // a bfloat16 table, in vectors
    if (advance && packed) return AdvanceAndStoreRow(il, ts, j0, n, s, c, ys, yc);
  }
  if (advance) {
    Advance(ts, j0, n, s, c);
  } else {
    detail::HWY_NAMESPACE::DirectSinCos(p, ts.step.data() + j0, n, s, c);
  }
  if (skip) return;
  if constexpr (kAdd) {
    const std::size_t stride = il ? 2 : 1;
    for (std::size_t k = 0; k < n; ++k) {
      ys[stride * k] = detail::store_as<Out>(detail::load_as<double>(ys[stride * k]) + s[k]);
      yc[stride * k] = detail::store_as<Out>(detail::load_as<double>(yc[stride * k]) + c[k]);
    }
  } else {
    StoreRow(ys, yc, il, s, c, n);
  }
}

// Rows at positions (std::int64_t or double) scaled by the plan's scale, each computed directly
// (detail/real_phase.h), stored or added in double at the plan's channels; padded rows skipped.
template <bool kAdd, class Out, class P>
void ScaledRows(const SinusoidalPlan& plan, std::span<const P> positions,
                std::span<const std::uint8_t> padding, Out* out) {
  const std::size_t d = plan.dim(), h = plan.n_pairs();
  const TurnSteps& ts = plan.turn_steps();
  HWY_ALIGN double s[kChunk];
  HWY_ALIGN double c[kChunk];
  for (std::size_t r = 0; r < positions.size(); ++r) {
    if (kAdd && !padding.empty() && padding[r] != 0) continue;
    const detail::ScaledPosition x = detail::scaled_position(static_cast<double>(positions[r]), plan.scale());
    const bool integral = detail::integral_position(x);
    Out* row = out + r * d;
    for (std::size_t j0 = 0; j0 < h; j0 += kChunk) {
      const std::size_t n = std::min(kChunk, h - j0);
      if (integral) {
        detail::HWY_NAMESPACE::DirectSinCos(static_cast<std::int64_t>(x.hi), ts.step.data() + j0, n, s, c);
      } else {
        detail::real_sincos(x, ts.step.data() + j0, n, s, c);
      }
      for (std::size_t k = 0; k < n; ++k) {
        Out& ys = row[plan.sin_index(j0 + k)];
        Out& yc = row[plan.cos_index(j0 + k)];
        if constexpr (kAdd) {
          ys = detail::store_as<Out>(detail::load_as<double>(ys) + s[k]);
          yc = detail::store_as<Out>(detail::load_as<double>(yc) + c[k]);
        } else {
          ys = detail::store_as<Out>(s[k]);
          yc = detail::store_as<Out>(c[k]);
        }
      }
    }
  }
}

template <class Out>
void RowsAt(const SinusoidalPlan& plan, std::span<const double> positions, Out* out) {
  ScaledRows<false>(plan, positions, {}, out);
}

// The table (kAdd false) or the embeddings plus the table (kAdd true), chunk by chunk of pairs: each
// row's chunk advanced from the row before when its position follows (at most kRefreshRows in a row),
// else computed directly. A scale other than 1 takes ScaledRows.
template <bool kAdd, class Out>
void Rows(const SinusoidalPlan& plan, std::span<const std::int64_t> positions,
          std::span<const std::uint8_t> padding, Out* out) {
  if (plan.scale() != 1.0) return ScaledRows<kAdd>(plan, positions, padding, out);
  const std::size_t d = plan.dim(), h = plan.n_pairs();
  const bool il = plan.layout() == Layout::Interleaved;
  // flip_sin_to_cos: each pair's sin goes where its cos would and the reverse, so ys and yc swap. The
  // interleaved vector stores (StoreInterleaved2, bfloat16 words, lanes of pairs) put sin first and read
  // yc as ys + 1: a flipped interleaved table takes the strided stores (OtherRow) instead.
  const bool flip = plan.params().flip_sin_to_cos, packed = !(flip && il);
  const TurnSteps& ts = plan.turn_steps();
  HWY_ALIGN double s[kChunk];
  HWY_ALIGN double c[kChunk];
  [[maybe_unused]] HWY_ALIGN float stage[2 * kChunk];  // a streamed float32 table's (Float32TableRow)
  const bool stream =
      std::is_same_v<Out, float> && !kAdd && detail::stream_output(positions.size() * d * sizeof(Out));
  // Runs of consecutive positions advanced in registers (DirectRowThenRegisterRun; float32 streamed only
  // where every row's vectors are aligned for it).
  constexpr bool kRegisterRuns =
      !HWY_HAVE_SCALABLE && !kAdd && (std::is_same_v<Out, float> || std::is_same_v<Out, BFloat16>);
  // Interleaved lanes need two pairs a vector at least to beat the de-interleaving loop (SSE4 holds one);
  // a concatenated float32 table's halves, AVX2 or AVX-512 (AdvanceHalvesRows), both starting a cache line.
  constexpr bool kHalvesInRegisters = kRegisterRuns && std::is_same_v<Out, float>;
  const bool aligned = reinterpret_cast<std::uintptr_t>(out) % 64 == 0 && (d * sizeof(Out)) % 64 == 0 &&
                       (il || (h * sizeof(Out)) % 64 == 0);
  const bool in_registers =
      kRegisterRuns && hn::Lanes(hn::ScalableTag<double>()) >= 4 && (!stream || aligned);
  for (std::size_t j0 = 0; j0 < h; j0 += kChunk) {
    const std::size_t n = std::min(kChunk, h - j0);
    int since_direct = detail::kRefreshRows;
    std::int64_t prev = -2;
#if !HWY_HAVE_SCALABLE
    std::optional<SpreadSteps> spread;  // made at the first run: a call of single rows never needs it
#endif
    for (std::size_t r = 0; r < positions.size(); ++r) {
      const std::int64_t p = positions[r];
      const bool advance = p == prev + 1 && since_direct < detail::kRefreshRows;
      prev = p;
      Out* ys = out + r * d + (il ? 2 * j0 : j0);
      Out* yc = il ? ys + 1 : out + r * d + h + j0;
      if (flip) std::swap(ys, yc);
#if !HWY_HAVE_SCALABLE
      if constexpr (kRegisterRuns) {
        // A direct row, then the run of rows that advance from it.
        if (in_registers && packed && !advance && (il || (kHalvesInRegisters && HalvesFitRegisters(n)))) {
          const std::size_t run = ConsecutiveRun(positions, r);
          DirectRowThenRegisterRun(ts, spread, il, j0, n, d, p, s, c, ys, yc, run, stream);
          r += run;
          prev = positions[r];
          since_direct = static_cast<int>(run);
          continue;
        }
      }
#endif
      since_direct = advance ? since_direct + 1 : 0;
      if constexpr (std::is_same_v<Out, float> && !kAdd) {
        if (packed) {
          Float32TableRow(ts, il, j0, n, p, advance, s, c, ys, yc, stage, stream);
          continue;
        }
      }
      const bool skip = kAdd && !padding.empty() && padding[r] != 0;
      OtherRow<Out, kAdd>(ts, il, j0, n, p, advance, skip, packed, s, c, ys, yc);
    }
  }
  if (stream) hwy::FlushStream();
}

PE_HWY_SINUSOIDAL_TABLE_ADD

}  // namespace pe::sinusoidal_exact::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

// Outside the target region: registration code is compiled for the baseline only.
namespace pe::sinusoidal_exact::HWY_NAMESPACE {
namespace {
PE_REGISTER_HWY_SINUSOIDAL("sinusoidal.exact", kContract, Table, TableAt, Add);
}  // namespace
}  // namespace pe::sinusoidal_exact::HWY_NAMESPACE

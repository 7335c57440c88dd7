// rope.exact, a backend of the RoPE driver (pe/detail/rope_driver.h): (sin, cos) of every pair from an
// exact fixed-point phase, as sinusoidal.exact (detail/exact_phase.h), once per token for every head; the
// rotation in double (float32 data: promoted, rotated and demoted in Highway vectors), rounded once into the
// data's type. Compiled for every Highway target, dispatched at run
// time.
//
// Contract (derived), per output element of a pair (a, b), N = |a| + |b|:
//   sin/cos within 3.32e-9 (sinusoidal/exact/exact.cc), moving the output by N times that; the
//   rotation a·c - b·s in double: 2·2^-53·N; together < 3.32e-9·N = 2.99e7·2^-53·N (ck);
//   output: one rounding, u_out·|y| <= u_out·N (c0 = 1).
//   Budget: N·(u_out + 3.32e-9). |input| <= 2^126. Largest position 2^31, base <= 1e7.
//   Scaling: the plan's turn steps of θ'_j. The 3.32e-9 assumes θ'_j <= 1 rad per position; a factor
//   below 1 can raise θ'_j to 1/s, and the steps' relative error 1.6·2^-60 then moves the phase by
//   |φ|·1.6·2^-60 = 0.0125·2^-53·|φ| more (c1_gain = 0.02, pairs the scaling rescales). cos and sin times the
//   attention factor in double (ca = 3: A rounded to double, the product; u = 2^-53).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "rope/exact/exact.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <algorithm>
#include <cstdint>

#include "detail/bfloat16_bits-inl.h"
#include "detail/exact_phase-inl.h"
#include "detail/exact_phase.h"
#include "detail/hwy_register.h"
#include "pe/detail/convert.h"
#include "pe/detail/rope_driver.h"

#ifndef PE_ROPE_EXACT_CONTRACT_
#define PE_ROPE_EXACT_CONTRACT_
namespace pe::rope_exact {
inline const Contract kContract{
    .layouts = {Layout::Interleaved, Layout::HalfSplit},
    .outputs = {DType::F32, DType::BF16, DType::F16},
    .angle_type = DType::F64,
    .compute_type = DType::F64,
    .max_position = std::int64_t{1} << 31,
    .max_base = 1e7,
    .max_input_abs = 0x1p126,
    .depends_on = "x86-64 long double (64-bit significand) for the plan's turn steps",
    .state_rows = detail::kRefreshRows,
    .c0 = 1,
    .ck = 2.99e7,
    .c1_gain = 0.02,
};
}  // namespace pe::rope_exact
#endif

HWY_BEFORE_NAMESPACE();
namespace pe::rope_exact::HWY_NAMESPACE {

inline constexpr std::size_t kChunk = 64;

namespace hn = hwy::HWY_NAMESPACE;

// Pairs (a[k·stride], b[k·stride]) rotated by (c[k], ±s[k]) in double, rounded once into T.
template <class T>
HWY_INLINE void RotatePairs(T* HWY_RESTRICT a, T* HWY_RESTRICT b, std::size_t stride,
                            const double* HWY_RESTRICT s, const double* HWY_RESTRICT c, double sign,
                            std::size_t n) {
  for (std::size_t k = 0; k < n; ++k) {
    const double x = detail::load_as<double>(a[stride * k]), y = detail::load_as<double>(b[stride * k]);
    const double sk = sign * s[k];
    a[stride * k] = detail::store_as<T>(x * c[k] - y * sk);
    b[stride * k] = detail::store_as<T>(x * sk + y * c[k]);
  }
}

// The per-token factors of the vector rotations, made once for all of a token's heads: the sign of the
// direction folded into sin, and for interleaved rows of one chunk (sin, cos) spread over the pairs' two
// lanes, so that a row is rotated without de-interleaving: y = x·(c, c) + swap(x)·(-s, s), as a·c - b·s
// and b·c + a·s. Plans of several chunks (head_dim 256) de-interleave: spread there, T2048 × 32 × 256 took
// 1.6-2.2x as long (measured, not understood). The spread form rounds b' as fma(b, c, a·s), the
// de-interleaving one (and half-split) as fma(a, s, b·c): one rounding of a double rotation either way,
// within the contract, but not the same bits.
struct TokenFactors {
  HWY_ALIGN double s[kChunk];             // sign·s
  HWY_ALIGN double spread_c[2 * kChunk];  // c0 c0 c1 c1 ...
  HWY_ALIGN double spread_s[2 * kChunk];  // -s0 s0 -s1 s1 ... (signed)
  bool spread;

  TokenFactors(const double* sin, const double* cos, double sign, std::size_t n, bool spread_pairs)
      : spread(spread_pairs) {
    for (std::size_t k = 0; k < n; ++k) s[k] = sign * sin[k];
    for (std::size_t k = 0; spread && k < n; ++k) {
      spread_c[2 * k] = spread_c[2 * k + 1] = cos[k];
      spread_s[2 * k] = -s[k];
      spread_s[2 * k + 1] = s[k];
    }
  }
};

// The data types RotateRow takes in vectors.
template <class T>
concept VectorRows = std::is_same_v<T, float> || std::is_same_v<T, BFloat16>;

// The same for float32 data, vectorised: floats promoted to double lanes, rotated, demoted once.
template <bool kInterleaved>
HWY_INLINE void RotateRow(float* HWY_RESTRICT row, std::size_t j0, std::size_t half, const TokenFactors& f,
                          const double* HWY_RESTRICT c, std::size_t n) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const std::size_t lanes = hn::Lanes(dd);
  std::size_t k = 0;
  if constexpr (kInterleaved) {
    if (f.spread) {  // lanes / 2 pairs per vector, no shuffle but the swap within each pair
      float* HWY_RESTRICT pairs = row + 2 * j0;
      for (; lanes >= 2 && 2 * k + lanes <= 2 * n; k += lanes / 2) {
        const auto x = hn::PromoteTo(dd, hn::LoadU(df, pairs + 2 * k));
        const auto y = hn::MulAdd(x, hn::Load(dd, f.spread_c + 2 * k),
                                  hn::Mul(hn::Reverse2(dd, x), hn::Load(dd, f.spread_s + 2 * k)));
        hn::StoreU(hn::DemoteTo(df, y), df, pairs + 2 * k);
      }
    } else {  // de-interleaved: lanes pairs per vector
      for (; k + lanes <= n; k += lanes) {
        hn::Vec<decltype(df)> fa, fb;
        hn::LoadInterleaved2(df, row + 2 * (j0 + k), fa, fb);
        const auto x = hn::PromoteTo(dd, fa), y = hn::PromoteTo(dd, fb);
        const auto vc = hn::Load(dd, c + k), vs = hn::Load(dd, f.s + k);
        hn::StoreInterleaved2(hn::DemoteTo(df, hn::MulSub(x, vc, hn::Mul(y, vs))),
                              hn::DemoteTo(df, hn::MulAdd(x, vs, hn::Mul(y, vc))), df, row + 2 * (j0 + k));
      }
    }
    RotatePairs(row + 2 * (j0 + k), row + 2 * (j0 + k) + 1, 2, f.s + k, c + k, 1.0, n - k);
  } else {
    for (; k + lanes <= n; k += lanes) {
      const auto x = hn::PromoteTo(dd, hn::LoadU(df, row + j0 + k));
      const auto y = hn::PromoteTo(dd, hn::LoadU(df, row + half + j0 + k));
      const auto vc = hn::Load(dd, c + k), vs = hn::Load(dd, f.s + k);
      hn::StoreU(hn::DemoteTo(df, hn::MulSub(x, vc, hn::Mul(y, vs))), df, row + j0 + k);
      hn::StoreU(hn::DemoteTo(df, hn::MulAdd(x, vs, hn::Mul(y, vc))), df, row + half + j0 + k);
    }
    RotatePairs(row + j0 + k, row + half + j0 + k, 1, f.s + k, c + k, 1.0, n - k);
  }
}

// The same for bfloat16 data: each value widened exactly (its bits are a float's top half), rotated in
// double, rounded once into bfloat16. With four or more doubles a vector (AVX2, AVX-512): float32's
// RotateRow forms on the same pairs (the same double that float32's output rounds), four vectors rounded and
// stored at a time; with fewer (SSE4, SSSE3, scalar), a vector at a time and interleaved rows de-interleaved
// (a pair a vector in the spread form, and four-vector groups of one or two lanes, ran 1.4-2.3x slower
// there): one rounding of a double rotation either way.
template <bool kInterleaved>
HWY_INLINE void RotateRow(BFloat16* HWY_RESTRICT row, std::size_t j0, std::size_t half, const TokenFactors& f,
                          const double* HWY_RESTRICT c, std::size_t n) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<float, decltype(dd)> df;
  const hn::Rebind<std::uint32_t, decltype(dd)> du;
  const hn::Rebind<std::uint16_t, decltype(dd)> d16;
  const std::size_t lanes = hn::Lanes(dd);
  constexpr bool kWide = hn::MaxLanes(dd) >= 4;
  const auto widen = [&](const BFloat16* from) {
    return hn::PromoteTo(
        dd, hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(
                                du, hn::LoadU(d16, reinterpret_cast<const std::uint16_t*>(from))))));
  };
  const auto store = [&](hn::Vec<decltype(dd)> v, BFloat16* to) {
    detail::HWY_NAMESPACE::StoreBFloat16(dd, v, to);
  };
  std::size_t k = 0;
  if constexpr (kInterleaved) {
    if (kWide && f.spread) {  // as float32's RotateRow: lanes / 2 pairs per vector, the pairs' lanes swapped
      BFloat16* HWY_RESTRICT pairs = row + 2 * j0;
      const auto rotated = [&](std::size_t at) {
        const auto x = widen(pairs + at);
        return hn::MulAdd(x, hn::Load(dd, f.spread_c + at),
                          hn::Mul(hn::Reverse2(dd, x), hn::Load(dd, f.spread_s + at)));
      };
      for (; 2 * k + 4 * lanes <= 2 * n; k += 2 * lanes) {
        detail::HWY_NAMESPACE::StoreBFloat16x4(dd, rotated(2 * k), rotated(2 * k + lanes),
                                               rotated(2 * k + 2 * lanes), rotated(2 * k + 3 * lanes),
                                               reinterpret_cast<std::uint16_t*>(pairs + 2 * k));
      }
      for (; 2 * k + lanes <= 2 * n; k += lanes / 2) store(rotated(2 * k), pairs + 2 * k);
    } else {  // de-interleaved: lanes pairs per vector, (a, b) one 32-bit word, a in the low half
      for (; k + lanes <= n; k += lanes) {
        const auto w = hn::LoadU(du, reinterpret_cast<const std::uint32_t*>(row + 2 * (j0 + k)));
        const auto x = hn::PromoteTo(dd, hn::BitCast(df, hn::ShiftLeft<16>(w)));
        const auto y = hn::PromoteTo(dd, hn::BitCast(df, hn::And(w, hn::Set(du, 0xFFFF0000u))));
        const auto vc = hn::Load(dd, c + k), vs = hn::Load(dd, f.s + k);
        const auto ra = detail::HWY_NAMESPACE::BFloat16Bits(dd, hn::MulSub(x, vc, hn::Mul(y, vs)));
        const auto rb = detail::HWY_NAMESPACE::BFloat16Bits(dd, hn::MulAdd(x, vs, hn::Mul(y, vc)));
        hn::StoreU(hn::Or(ra, hn::ShiftLeft<16>(rb)), du,
                   reinterpret_cast<std::uint32_t*>(row + 2 * (j0 + k)));
      }
    }
    RotatePairs(row + 2 * (j0 + k), row + 2 * (j0 + k) + 1, 2, f.s + k, c + k, 1.0, n - k);
  } else {
    // Pairs k .. k + lanes: a' and b' from one widening of each half.
    const auto rotate = [&](std::size_t at, hn::Vec<decltype(dd)>& ra, hn::Vec<decltype(dd)>& rb) {
      const auto x = widen(row + j0 + at), y = widen(row + half + j0 + at);
      const auto vc = hn::Load(dd, c + at), vs = hn::Load(dd, f.s + at);
      ra = hn::MulSub(x, vc, hn::Mul(y, vs));
      rb = hn::MulAdd(x, vs, hn::Mul(y, vc));
    };
    if constexpr (kWide) {
      for (; k + 4 * lanes <= n; k += 4 * lanes) {  // every input of the four vectors read before a store
        hn::Vec<decltype(dd)> ra[4], rb[4];
        for (std::size_t q = 0; q < 4; ++q) rotate(k + q * lanes, ra[q], rb[q]);
        detail::HWY_NAMESPACE::StoreBFloat16x4(dd, ra[0], ra[1], ra[2], ra[3],
                                               reinterpret_cast<std::uint16_t*>(row + j0 + k));
        detail::HWY_NAMESPACE::StoreBFloat16x4(dd, rb[0], rb[1], rb[2], rb[3],
                                               reinterpret_cast<std::uint16_t*>(row + half + j0 + k));
      }
    }
    for (; k + lanes <= n; k += lanes) {
      hn::Vec<decltype(dd)> ra, rb;
      rotate(k, ra, rb);
      store(ra, row + j0 + k);
      store(rb, row + half + j0 + k);
    }
    RotatePairs(row + j0 + k, row + half + j0 + k, 1, f.s + k, c + k, 1.0, n - k);
  }
}

// The driver's backend (pe/detail/rope_driver.h). sin/cos from the exact phase, advanced along
// consecutive positions by the plan's turn steps and refreshed directly every kRefreshRows tokens
// (the driver keeps s and c between the tokens of a chunk); the rotation in double.
struct Backend {
  const RopePlan& plan;
  std::size_t chunk = SIZE_MAX;
  int since_direct = 0;
  std::int64_t prev = -2;

  void sincos(std::int64_t p, std::size_t j0, std::size_t n, double* s, double* c) {
    const TurnSteps& ts = plan.turn_steps();
    if (j0 != chunk) {  // a new chunk: its first token starts from the direct phase
      chunk = j0;
      prev = -2;
    }
    if (p == prev + 1 && since_direct < detail::kRefreshRows) {
      detail::advance_sincos(ts.cos_step.data() + j0, ts.sin_step.data() + j0, n, s, c);
      ++since_direct;
    } else {
      detail::HWY_NAMESPACE::DirectSinCos(p, ts.step.data() + j0, n, s, c);
      since_direct = 0;
    }
    prev = p;
  }

  // float32 and bfloat16 data in vectors (RotateRow); float16 data takes the driver's rotation (the same
  // double arithmetic).
  template <VectorRows T>
  void rotate(T* const* rows, std::size_t n_rows, std::size_t j0, std::size_t n, const double* s,
              const double* c, double sign) const {
    const std::size_t h = plan.n_pairs();
    const bool il = plan.pairs_interleaved();
    const TokenFactors f(s, c, sign, n, il && h <= kChunk);
    for (std::size_t r = 0; r < n_rows; ++r) {
      if (il) {
        RotateRow<true>(rows[r], j0, h, f, c, n);
      } else {
        RotateRow<false>(rows[r], j0, h, f, c, n);
      }
    }
  }
};

PE_HWY_ROPE_ROTATE(double, kChunk, Backend);

}  // namespace pe::rope_exact::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

// Outside the target region: registration code is compiled for the baseline only.
namespace pe::rope_exact::HWY_NAMESPACE {
namespace {
PE_REGISTER_HWY_ROPE("rope.exact", kContract, Rotate);
}  // namespace
}  // namespace pe::rope_exact::HWY_NAMESPACE

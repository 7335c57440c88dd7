// The exact variants' bfloat16 rounding (impl/src/detail/bfloat16_bits-inl.h) on every Highway target the
// CPU has: bit for bit pe::to_bfloat16(double) (round to odd into float, then to nearest-even: one correct
// rounding), above all where rounding to float first would round twice: doubles off a bfloat16 midpoint
// by less than float's half ulp, which float rounds onto the midpoint, mixed into vectors of ordinary
// values; bfloat16's subnormals and the bottom of the normal range; ties.
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "bfloat16_rounding_test.cc"
#include <hwy/foreach_target.h>  // IWYU pragma: keep
#include <hwy/highway.h>

#include <cstdint>
#include <vector>

#include "detail/bfloat16_bits-inl.h"

HWY_BEFORE_NAMESPACE();
namespace pe::bfloat16_test::HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// bfloat16 bits of v[0, n), n a multiple of 32 (four vectors of any target's doubles): one vector at a
// time (BFloat16Bits) or four at a time (StoreBFloat16x4).
void RoundToBFloat16(const double* v, std::uint16_t* out, std::size_t n, bool four) {
  const hn::ScalableTag<double> dd;
  const hn::Rebind<std::uint32_t, decltype(dd)> du;
  const std::size_t lanes = hn::Lanes(dd);
  HWY_ALIGN std::uint32_t words[hn::MaxLanes(dd)];
  for (std::size_t i = 0; i + 4 * lanes <= n; i += 4 * lanes) {
    if (four) {
      pe::detail::HWY_NAMESPACE::StoreBFloat16x4(dd, hn::LoadU(dd, v + i), hn::LoadU(dd, v + i + lanes),
                                                 hn::LoadU(dd, v + i + 2 * lanes),
                                                 hn::LoadU(dd, v + i + 3 * lanes), out + i);
      continue;
    }
    for (std::size_t j = i; j < i + 4 * lanes; j += lanes) {
      hn::Store(pe::detail::HWY_NAMESPACE::BFloat16Bits(dd, hn::LoadU(dd, v + j)), du, words);
      for (std::size_t k = 0; k < lanes; ++k) out[j + k] = static_cast<std::uint16_t>(words[k]);
    }
  }
}

}  // namespace pe::bfloat16_test::HWY_NAMESPACE
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <hwy/tests/hwy_gtest.h>

#include <cmath>
#include <random>
#include <utility>

#include "pe/half.h"

namespace pe::bfloat16_test {
namespace {

HWY_EXPORT(RoundToBFloat16);

// A bfloat16 midpoint: m's value plus half its spacing (m a finite bfloat16 of either sign, not the
// largest).
double midpoint_above(std::uint16_t m) {
  const double a = to_float(BFloat16{m});
  const double b = to_float(BFloat16{static_cast<std::uint16_t>(m + 1)});
  return 0.5 * (a + b);
}

// Doubles the vector rounding must get right: ordinary values at every exponent the callers produce;
// values near midpoints of random bfloat16 values (normal and subnormal) far enough off that float does
// not round onto the midpoint (1.5 to 3 of float's half ulps: the fast path's hardest); the traps, offsets
// up to and at float's half ulp, which float rounds onto the midpoint, each alone in a block of four
// AVX-512 vectors of ordinary values and at every lane of the block in turn; zeros, ties and the bottom
// of the normal range.
std::vector<double> hard_cases() {
  std::mt19937_64 g(20261201);
  std::uniform_real_distribution<double> unit(1.0, 2.0);
  std::uniform_int_distribution<int> exponent(-140, 8);
  std::vector<double> v;
  auto ordinary = [&] { return std::ldexp(unit(g), exponent(g)) * (g() & 1 ? -1 : 1); };
  // A midpoint and float's half ulp there, from bits with a biased exponent 0 (subnormal) to 253 (2^126).
  auto random_midpoint = [&] {
    const auto m = static_cast<std::uint16_t>(
        (g() & 0x8000) | (std::uniform_int_distribution<int>(0, 253)(g) << 7) | (g() & 0x7F));
    const double mid = midpoint_above(m);
    return std::pair{mid, std::ldexp(1.0, std::max(std::ilogb(mid), -126) - 24)};
  };
  for (int i = 0; i < 4096; ++i) v.push_back(ordinary());
  for (int i = 0; i < 2048; ++i) {
    const auto [mid, float_half_ulp] = random_midpoint();
    for (const double off : {-3.0, -2.0, -1.5, 1.5, 2.0, 3.0}) v.push_back(mid + off * float_half_ulp);
  }
  std::size_t lane = 0;
  for (int i = 0; i < 2048; ++i) {
    const auto [mid, float_half_ulp] = random_midpoint();
    for (const double off : {-1.0, -0.75, -0.5, -0.25, -0x1p-20, 0.0, 0x1p-20, 0.25, 0.5, 0.75, 1.0}) {
      const std::size_t block = v.size();
      for (int k = 0; k < 32; ++k) v.push_back(ordinary());
      v[block + lane] = mid + off * float_half_ulp;
      lane = (lane + 1) % 32;
    }
  }
  for (const double x :
       {0.0, -0.0, 0x1p-126, -0x1p-126, 0x1p-133, 0x1p-134, 0x1.8p-134, 1.0, -1.0, 0x1.ff8p0})
    v.push_back(x);
  while (v.size() % 32) v.push_back(ordinary());
  return v;
}

class BFloat16Rounding : public hwy::TestWithParamTarget {};
INSTANTIATE_TEST_SUITE_P(Targets, BFloat16Rounding, ::testing::ValuesIn(hwy::SupportedAndGeneratedTargets()),
                         hwy::TestParamTargetName);

TEST_P(BFloat16Rounding, IsOneCorrectRoundingOfTheDouble) {
  const std::vector<double> v = hard_cases();
  for (const bool four : {false, true}) {
    std::vector<std::uint16_t> got(v.size());
    HWY_DYNAMIC_DISPATCH(RoundToBFloat16)(v.data(), got.data(), v.size(), four);
    int wrong = 0;
    for (std::size_t i = 0; i < v.size(); ++i) {
      const std::uint16_t want = to_bfloat16(v[i]).bits;
      if (got[i] != want && ++wrong <= 5) {
        ADD_FAILURE() << fmt::format("{} at a time: {} ({:a}): bits {:#06x}, one rounding gives {:#06x}",
                                     four ? "four vectors" : "one vector", v[i], v[i], got[i], want);
      }
    }
    EXPECT_EQ(wrong, 0) << "of " << v.size() << " values, " << (four ? "four vectors" : "one vector")
                        << " at a time";
  }
}

}  // namespace
}  // namespace pe::bfloat16_test
#endif  // HWY_ONCE

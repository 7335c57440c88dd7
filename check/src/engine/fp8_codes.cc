// The OCP 8-bit floats' codes and values (pe/check/fp8.h): each format's 256 values decoded once, and the
// round-to-nearest-even, saturating quantization a fused kernel's clamp-then-cast gives.
#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "pe/check/fp8.h"

namespace pe::check {
namespace {

struct Fp8Layout {
  int exponent_bits, mantissa_bits, bias;
};

constexpr Fp8Layout fp8_layout(Fp8Format f) {
  return f == Fp8Format::E4m3fn ? Fp8Layout{4, 3, 7} : Fp8Layout{5, 2, 15};
}

// 2^e, exact (constexpr, unlike ldexp).
constexpr double pow2(int e) {
  double r = 1;
  for (; e > 0; --e) r *= 2;
  for (; e < 0; ++e) r /= 2;
  return r;
}

constexpr double decode(Fp8Format f, std::uint8_t code) {
  const Fp8Layout l = fp8_layout(f);
  const double sign = (code & 0x80) != 0 ? -1.0 : 1.0;
  const int e = (code >> l.mantissa_bits) & ((1 << l.exponent_bits) - 1);
  const int m = code & ((1 << l.mantissa_bits) - 1);
  const int top = (1 << l.exponent_bits) - 1;
  if (f == Fp8Format::E4m3fn && e == top && m == (1 << l.mantissa_bits) - 1)
    return std::numeric_limits<double>::quiet_NaN();
  if (f == Fp8Format::E5m2 && e == top)
    return m == 0 ? sign * std::numeric_limits<double>::infinity() : std::numeric_limits<double>::quiet_NaN();
  const double fraction = static_cast<double>(m) / (1 << l.mantissa_bits);
  if (e == 0) return sign * fraction * pow2(1 - l.bias);
  return sign * (1.0 + fraction) * pow2(e - l.bias);
}

// Both formats' 256 values, decoded at compile time (no guard to test on every read: the check reads them
// once an element).
constexpr std::array<std::array<double, 256>, 2> kValues = [] {
  std::array<std::array<double, 256>, 2> t{};
  for (int c = 0; c < 256; ++c) {
    t[0][c] = decode(Fp8Format::E4m3fn, static_cast<std::uint8_t>(c));
    t[1][c] = decode(Fp8Format::E5m2, static_cast<std::uint8_t>(c));
  }
  return t;
}();

const std::array<double, 256>& values_of(Fp8Format f) { return kValues[f == Fp8Format::E4m3fn ? 0 : 1]; }

// The largest finite positive code: the positive codes' values ascend with the code up to it.
std::uint8_t largest_finite(Fp8Format f) { return f == Fp8Format::E4m3fn ? 0x7E : 0x7B; }

}  // namespace

std::string_view to_string(Fp8Format f) noexcept { return f == Fp8Format::E4m3fn ? "e4m3fn" : "e5m2"; }

std::optional<Fp8Format> parse_fp8_format(std::string_view s) noexcept {
  if (s == "e4m3fn" || s == "e4m3") return Fp8Format::E4m3fn;
  if (s == "e5m2") return Fp8Format::E5m2;
  return std::nullopt;
}

double fp8_value(Fp8Format f, std::uint8_t code) noexcept { return values_of(f)[code]; }

// From the bits, no search: a's binade 2^E (E at least the least normal exponent emin, so subnormals share
// emin's step), the count q = RN_even(a / 2^(E − m)) of its steps, rounded by adding and taking away 2^52
// (exact below it; the default rounding is to nearest, ties to even). The positive codes count the steps
// continuously across binades (code = (E − emin)·2^m + q, a carry to 2^(m+1) the next binade's first code),
// so the even q is the even code, the definition's tie.
std::uint8_t fp8_code(Fp8Format f, double v) noexcept {
  if (std::isnan(v)) return 0x7F;
  const Fp8Layout l = fp8_layout(f);
  const std::uint8_t top = largest_finite(f);
  const double a = std::fabs(v);
  std::uint8_t code = top;
  if (a < values_of(f)[top]) {
    const int emin = 1 - l.bias;
    const auto bits = std::bit_cast<std::uint64_t>(a);
    const int e = std::max(static_cast<int>(bits >> 52) - 1023, emin);
    const int step = e - l.mantissa_bits;
    const double scaled = a * std::bit_cast<double>(static_cast<std::uint64_t>(1023 - step) << 52);
    const double q = (scaled + 0x1p52) - 0x1p52;
    code = static_cast<std::uint8_t>(((e - emin) << l.mantissa_bits) + static_cast<int>(q));
  }
  return std::signbit(v) && values_of(f)[code] > 0 ? static_cast<std::uint8_t>(code | 0x80) : code;
}

}  // namespace pe::check

// alibi.exact: the plan's slope (exp2 of the exponent b·k/den formed in double) and the bias as the
// product of the exact distance and that slope, rounded once into the output type: the product is
// formed exactly (Dekker's two_prod) and rounded to odd in double, which a second rounding to
// any narrower type cannot spoil (Boldo & Melquiond, "When double rounding is odd", 2005).
//
// Contract (derived): b·k and /den round the exponent E by 2u, the slope by 2·ln2·E·u (c1 = 22.2
// covers E <= 16: max_base 2^16); exp2 (glibc, < 0.51 ULP) 1.02u; a float64 output rounds the
// product once more, u (ck = 2.1); narrower outputs are the correctly rounded product of the
// double slope (c0 = 1). Relative to the exact bias |m·s| (pe/contract.h). The slopes of every head
// count up to 128 at b = 8 are the correctly rounded ones in float32, bfloat16 and float16
// (AlibiProps checks it against the reference).
#include <bit>
#include <cmath>
#include <cstdint>

#include "detail/alibi_scalar.h"
#include "pe/register.h"

namespace pe {
namespace {

// Veltkamp's split and Dekker's two_prod (no FMA in the baseline x86-64 build: libm's fma costs a call
// per element): p + e = a·b exactly while |a·b| stays far from the underflow (slopes >= 2^-1000).
struct Split {
  double hi, lo;
};
Split split(double a) {
  const double c = 134217729.0 * a;  // 2^27 + 1
  const double hi = c - (c - a);
  return {hi, a - hi};
}

// m·s rounded to odd: truncated toward zero with the last bit set when inexact.
double product_to_odd(double m, double s) {
  const double p = m * s;
  const Split a = split(m), b = split(s);
  const double e = ((a.hi * b.hi - p) + a.hi * b.lo + a.lo * b.hi) + a.lo * b.lo;
  auto bits = std::bit_cast<std::uint64_t>(p);
  if (e == 0 || !std::isfinite(p) || (bits & 1) != 0) return p;
  // p was rounded to an even neighbour: the odd one on the exact product's side.
  bits += (e > 0) == (p > 0) ? 1 : std::uint64_t(-1);
  return std::bit_cast<double>(bits);
}

struct Exact {
  static double slope(const AlibiPlan& plan, std::size_t h) { return plan.slope(h); }
  template <class Out>
  static Out bias(double m, std::int64_t s) {
    const double d = static_cast<double>(s);
    if constexpr (std::is_same_v<Out, double>) {
      return m * d;
    } else {
      return detail::store_as<Out>(product_to_odd(m, d));
    }
  }
};

const Contract kContract = detail::alibi_exact_contract();

PE_REGISTER_ALIBI("alibi.exact", kContract, detail::ScalarAlibi<Exact>);

}  // namespace
}  // namespace pe

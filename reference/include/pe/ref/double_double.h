// Double-double arithmetic for the reference's fast path: a value hi + lo with |lo| <= ulp(hi)/2,
// about 106 significand bits. The error-free transformations (TwoSum, TwoProd by FMA) are exact; the
// compound operations are the algorithms of Joldes, Muller and Popescu, "Tight and rigorous error
// bounds for basic building blocks of double-word arithmetic" (ACM TOMS 44(2), 2017), with their
// proven relative bounds quoted beside each (u = 2^-53). docs/fast_reference.md adds them up.
#pragma once

#include <cmath>

namespace pe::ref::dd {

struct DD {
  double hi = 0, lo = 0;
};

// a + b = s + e exactly (Knuth's TwoSum, any magnitudes).
inline DD two_sum(double a, double b) {
  const double s = a + b;
  const double bb = s - a;
  return {s, (a - (s - bb)) + (b - bb)};
}

// a + b = s + e exactly when |a| >= |b| or a = 0 (Dekker's Fast2Sum).
inline DD fast_two_sum(double a, double b) {
  const double s = a + b;
  return {s, b - (s - a)};
}

// a·b = p + e exactly (no overflow or underflow), by one FMA.
inline DD two_prod(double a, double b) {
  const double p = a * b;
  return {p, std::fma(a, b, -p)};
}

// AccurateDWPlusDW (Algorithm 6): relative error <= 3u² / (1 - 4u) of |a + b|.
inline DD add(DD a, DD b) {
  DD s = two_sum(a.hi, b.hi);
  const DD t = two_sum(a.lo, b.lo);
  s.lo += t.hi;
  s = fast_two_sum(s.hi, s.lo);
  s.lo += t.lo;
  return fast_two_sum(s.hi, s.lo);
}

inline DD neg(DD a) { return {-a.hi, -a.lo}; }
inline DD sub(DD a, DD b) { return add(a, neg(b)); }

// DWTimesFP3 (Algorithm 9): relative error <= 2u² of |a·b|.
inline DD mul(DD a, double b) {
  DD c = two_prod(a.hi, b);
  const double cl3 = std::fma(a.lo, b, c.lo);
  return fast_two_sum(c.hi, cl3);
}

// DWTimesDW3 (Algorithm 12): relative error <= 4u² of |a·b|.
inline DD mul(DD a, DD b) {
  DD c = two_prod(a.hi, b.hi);
  const double tl0 = a.lo * b.lo;
  const double tl1 = std::fma(a.hi, b.lo, tl0);
  const double cl2 = std::fma(a.lo, b.hi, tl1);
  const double cl3 = c.lo + cl2;
  return fast_two_sum(c.hi, cl3);
}

}  // namespace pe::ref::dd

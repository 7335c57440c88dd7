#include "pe/ref/fast_trig.h"

#include <array>
#include <atomic>
#include <bit>
#include <boost/math/constants/constants.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>

namespace pe::ref {
namespace {

using dd::DD;

std::atomic<bool> g_enabled{[] {
  const char* e = std::getenv("PE_REFERENCE");
  return e == nullptr || std::strcmp(e, "mpfr") != 0;
}()};
std::atomic<std::uint64_t> g_fallbacks{0};

// sin and cos of j/64 for j = 0..kTable-1: |r| <= 2 covers π/4 plus the quotient's rounding error
// (fl(φ·2/π) is within 2^-53·|φ|·2/π of the true quotient: 0.2 at |φ| = 2^52).
constexpr int kTable = 129;

struct Constants {
  DD half_pi_hi_mid;  // π/2 = c1 + c2 + c3 within 2^-160
  double c3 = 0;
  double two_over_pi = 0;
  std::array<DD, kTable> sin_j{}, cos_j{};
  DD inv6, inv120, inv2, inv24;  // Taylor coefficients that need ~106 bits
};

const Constants& constants() {
  static const Constants c = [] {
    Constants k;
    const Real half_pi = boost::math::constants::pi<Real>() / 2;
    k.half_pi_hi_mid = to_dd(half_pi);
    k.c3 = Real(half_pi - Real(k.half_pi_hi_mid.hi) - Real(k.half_pi_hi_mid.lo)).convert_to<double>();
    k.two_over_pi = Real(1 / half_pi).convert_to<double>();
    for (int j = 0; j < kTable; ++j) {
      const Real a = Real(j) / 64;
      k.sin_j[static_cast<std::size_t>(j)] = to_dd(sin(a));
      k.cos_j[static_cast<std::size_t>(j)] = to_dd(cos(a));
    }
    k.inv6 = to_dd(Real(1) / 6);
    k.inv120 = to_dd(Real(1) / 120);
    k.inv2 = {0.5, 0};
    k.inv24 = to_dd(Real(1) / 24);
    return k;
  }();
  return c;
}

// sin t and cos t for |t| <= 2^-7 by their Taylor series: the terms from t^6 on are below 2^-54 and
// are summed in double; the leading ones in double-double. Truncation < 2^-130.
void taylor(DD t, const Constants& k, DD& s, DD& c) {
  const DD t2 = dd::mul(t, t);
  const double x = t2.hi;
  const double qs = -1.0 / 5040 + x * (1.0 / 362880 + x * (-1.0 / 39916800 + x * (1.0 / 6227020800)));
  const double qc = -1.0 / 720 + x * (1.0 / 40320 + x * (-1.0 / 3628800 + x * (1.0 / 479001600)));
  const DD us = dd::add(k.inv120, DD{x * qs, 0});
  const DD uc = dd::add(k.inv24, DD{x * qc, 0});
  const DD ws = dd::sub(dd::mul(t2, us), k.inv6);  // -1/6 + t²/120 - ...
  const DD wc = dd::sub(dd::mul(t2, uc), k.inv2);  // -1/2 + t²/24 - ...
  s = dd::add(t, dd::mul(t, dd::mul(t2, ws)));
  c = dd::add(DD{1, 0}, dd::mul(t2, wc));
}

// v rounded to its leading 21 significant bits (by zeroing the rest): exact products with integers
// below 2^32.
double leading21(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  const int e = std::ilogb(v);
  return std::ldexp(std::trunc(std::ldexp(v, 20 - e)), e - 20);
}

}  // namespace

const HalfPiPieces& half_pi_pieces() {
  static const HalfPiPieces h = [] {
    const Real half_pi = boost::math::constants::pi<Real>() / 2;
    HalfPiPieces out{};
    Real rest = half_pi;
    out.c1 = leading21(rest.convert_to<double>());
    rest -= out.c1;
    out.c2 = leading21(rest.convert_to<double>());
    rest -= out.c2;
    out.c3 = leading21(rest.convert_to<double>());
    rest -= out.c3;
    out.c4 = rest.convert_to<double>();
    return out;
  }();
  return h;
}

OmegaSplit split_omega(DD omega) {
  OmegaSplit s;
  s.w1 = leading21(omega.hi);
  const DD rest = dd::sub(omega, DD{s.w1, 0});
  s.w2 = leading21(rest.hi);
  s.w3 = dd::sub(rest, DD{s.w2, 0}).hi;  // |w3| <= 2^-41·ω: its own rounding is 2^-94·ω
  return s;
}

bool double_tier_sincos(std::int64_t p, const OmegaSplit& w, double& sin_phi, double& cos_phi) {
  constexpr std::int64_t kLimit = std::int64_t{1} << 32;
  if (p >= kLimit || p <= -kLimit || !(std::fabs(w.w1) < 2)) return false;
  const HalfPiPieces& h = half_pi_pieces();
  const auto pd = static_cast<double>(p);
  const double a = pd * w.w1, b = pd * w.w2;                      // exact: 32 + 21 bits
  const double k = std::nearbyint((a + b) * 0.6366197723675814);  // 2/π
  // r = a + b + p·w3 - k·(c1 + c2 + c3 + c4): a - k·c1 exact (Sterbenz), the rest by TwoSum.
  DD r = dd::two_sum(a - k * h.c1, b);
  for (const double t : {-k * h.c2, -k * h.c3, pd * w.w3, -k * h.c4}) {
    const DD u = dd::two_sum(r.hi, t);
    r = {u.hi, r.lo + u.lo};
  }
  const double x = r.hi + r.lo;
  if (!(std::fabs(x) < 1)) return false;  // cannot happen within the range
  const double x2 = x * x;
  // Taylor to x^17 / x^18: truncation below 2^-69 for |x| <= π/4 + 2^-40.
  const double sp =
      x2 *
      (-1.0 / 6 +
       x2 * (1.0 / 120 + x2 * (-1.0 / 5040 +
                               x2 * (1.0 / 362880 +
                                     x2 * (-1.0 / 39916800 +
                                           x2 * (1.0 / 6227020800 + x2 * (-1.0 / 1307674368000 +
                                                                          x2 * (1.0 / 355687428096000))))))));
  const double cp =
      x2 * x2 *
      (1.0 / 24 + x2 * (-1.0 / 720 +
                        x2 * (1.0 / 40320 +
                              x2 * (-1.0 / 3628800 +
                                    x2 * (1.0 / 479001600 + x2 * (-1.0 / 87178291200 +
                                                                  x2 * (1.0 / 20922789888000 +
                                                                        x2 * (-1.0 / 6402373705728000))))))));
  const double sr = x + x * sp;
  const double cr = (1 - 0.5 * x2) + cp;
  const auto quadrant = static_cast<int>(((static_cast<std::int64_t>(k) % 4) + 4) % 4);
  switch (quadrant) {
    case 0:
      sin_phi = sr, cos_phi = cr;
      break;
    case 1:
      sin_phi = cr, cos_phi = -sr;
      break;
    case 2:
      sin_phi = -sr, cos_phi = -cr;
      break;
    default:
      sin_phi = -cr, cos_phi = sr;
      break;
  }
  return true;
}

DD to_dd(const Real& v) {
  const double hi = v.convert_to<double>();
  return {hi, Real(v - hi).convert_to<double>()};
}

std::optional<FastSinCos> fast_sincos(std::int64_t p, DD omega, double omega_relative) {
  constexpr std::int64_t kExact = std::int64_t{1} << 53;
  if (p >= kExact || p <= -kExact) return std::nullopt;
  return fast_sincos(static_cast<double>(p), omega, omega_relative);
}

std::optional<FastSinCos> fast_sincos(double pd, DD omega, double omega_relative) {
  if (pd == 0) return FastSinCos{{0, 0}, {1, 0}, 0};
  // φ = p·ω: the product by ω.hi exactly, by ω.lo rounded (relative error <= 2^-104 of |φ| in all).
  const DD ph = dd::two_prod(pd, omega.hi);
  const DD phi = dd::fast_two_sum(ph.hi, ph.lo + pd * omega.lo);
  if (!(std::fabs(phi.hi) < 0x1p52)) return std::nullopt;
  const Constants& k = constants();
  // r = φ - q·π/2 with π/2 in three doubles: q·c1 and q·c2 exactly (TwoProd), q·c3 rounded (|q|·2^-158).
  const double q = std::nearbyint(phi.hi * k.two_over_pi);
  DD r = dd::sub(phi, dd::two_prod(q, k.half_pi_hi_mid.hi));
  r = dd::sub(r, dd::two_prod(q, k.half_pi_hi_mid.lo));
  r = dd::sub(r, DD{q * k.c3, 0});
  // r = j/64 + t with |t| <= 2^-7: the table's sin and cos of j/64 and the series of t.
  if (!(std::fabs(r.hi) < 2)) return std::nullopt;  // cannot happen for |φ| < 2^52
  const double j = std::nearbyint(r.hi * 64);
  const int ij = static_cast<int>(j);
  const int aj = ij < 0 ? -ij : ij;
  const DD t = dd::sub(r, DD{j / 64, 0});
  DD st, ct;
  taylor(t, k, st, ct);
  DD sj = k.sin_j[static_cast<std::size_t>(aj)];
  const DD cj = k.cos_j[static_cast<std::size_t>(aj)];
  if (ij < 0) sj = dd::neg(sj);
  const DD sr = dd::add(dd::mul(sj, ct), dd::mul(cj, st));
  const DD cr = dd::sub(dd::mul(cj, ct), dd::mul(sj, st));
  // The quadrant q mod 4 (q < 2^51 in magnitude: exact in int64).
  const auto quadrant = static_cast<int>(((static_cast<std::int64_t>(q) % 4) + 4) % 4);
  FastSinCos out;
  switch (quadrant) {
    case 0:
      out.sin = sr, out.cos = cr;
      break;
    case 1:
      out.sin = cr, out.cos = dd::neg(sr);
      break;
    case 2:
      out.sin = dd::neg(sr), out.cos = dd::neg(cr);
      break;
    default:
      out.sin = dd::neg(cr), out.cos = sr;
      break;
  }
  // docs/fast_reference.md: the phase's error |φ|·(ω's relative error + 2^-104), the reduction's
  // 2^-103 + |q|·2^-157, the evaluation's 2^-101; each term taken at least 4 times over.
  const double abs_phi = std::fabs(phi.hi);
  out.radius = abs_phi * (2 * omega_relative + 0x1p-100) + 0x1p-98;
  return out;
}

namespace {}  // namespace

bool fast_path_enabled() noexcept { return g_enabled.load(std::memory_order_relaxed); }
void set_fast_path(bool enabled) noexcept { g_enabled.store(enabled, std::memory_order_relaxed); }
std::uint64_t mpfr_fallbacks() noexcept { return g_fallbacks.load(std::memory_order_relaxed); }
void record_fallback() noexcept { g_fallbacks.fetch_add(1, std::memory_order_relaxed); }

}  // namespace pe::ref

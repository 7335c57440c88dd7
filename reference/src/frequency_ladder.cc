#include "pe/ref/frequency_ladder.h"

#include <atomic>
#include <cmath>

namespace pe::ref {
namespace {

std::atomic<std::uint64_t> g_fallbacks{0};

// An MPFR number of its own precision, freed at the end of its scope.
struct Mp {
  explicit Mp(mpfr_prec_t bits) { mpfr_init2(v, bits); }
  ~Mp() { mpfr_clear(v); }
  Mp(const Mp&) = delete;
  Mp& operator=(const Mp&) = delete;
  mpfr_t v;
};

// The exponent as ScalingRule<Real>::unscaled forms it: -(2k) / dim, rounded once to Real.
Real exponent(std::size_t k, std::int64_t dim) {
  return -Real(static_cast<long long>(2 * k)) / Real(static_cast<long long>(dim));
}

}  // namespace

std::vector<Real> unscaled_frequencies(const Real& b, std::int64_t dim, std::size_t count) {
  using std::pow;
  const mpfr_prec_t p = precision_bits<Real>(), w = p + 64;
  std::vector<Real> out(count);
  if (count == 0) return out;
  Mp ln_b(w), r(w), power(w), delta(w), t(w), series(w), value(w), q(p);
  mpfr_log(ln_b.v, b.backend().data(), MPFR_RNDN);
  // The bound's units of 2^-W (frequency_ladder.h) for every k < count, whatever count and dim: 2k + 4k|ln
  // b|/dim
  // + 2|ln b| + 4, rounded up to a power of two.
  const double ln = std::fabs(mpfr_get_d(ln_b.v, MPFR_RNDU)) + 1;
  const double units = 2.0 * static_cast<double>(count) +
                       (4.0 * static_cast<double>(count) / static_cast<double>(dim) + 2) * ln + 4;
  const mpfr_prec_t err = w - (static_cast<mpfr_prec_t>(std::ceil(std::log2(units))) + 1);
  mpfr_set_si(t.v, -2, MPFR_RNDN);
  mpfr_div_si(t.v, t.v, static_cast<long>(dim), MPFR_RNDN);
  mpfr_pow(r.v, b.backend().data(), t.v, MPFR_RNDN);  // r = b^(-2/dim)
  mpfr_set_ui(power.v, 1, MPFR_RNDN);                 // r^k, k = 0
  out[0] = Real(1);                                   // b^0, as pow gives it
  for (std::size_t k = 1; k < count; ++k) {
    mpfr_mul(power.v, power.v, r.v, MPFR_RNDN);
    // q = exponent(k, dim) without a Real made per k (a fifth of a new ladder's time): -2k rounded to
    // nearest at P is -(2k rounded to nearest), and the quotient is rounded once as Real's division does.
    mpfr_set_si(q.v, -static_cast<long>(2 * k), MPFR_RNDN);
    mpfr_div_si(q.v, q.v, static_cast<long>(dim), MPFR_RNDN);
    // δ = q + 2k/dim (q exact; 2k/dim rounded at W), then b^δ ≈ 1 + δ ln b + (δ ln b)²/2.
    mpfr_set_ui(t.v, static_cast<unsigned long>(2 * k), MPFR_RNDN);
    mpfr_div_si(t.v, t.v, static_cast<long>(dim), MPFR_RNDN);
    mpfr_add(delta.v, q.v, t.v, MPFR_RNDN);
    mpfr_mul(delta.v, delta.v, ln_b.v, MPFR_RNDN);  // δ ln b
    mpfr_sqr(series.v, delta.v, MPFR_RNDN);
    mpfr_div_2ui(series.v, series.v, 1, MPFR_RNDN);
    mpfr_add(series.v, series.v, delta.v, MPFR_RNDN);
    mpfr_add_ui(series.v, series.v, 1, MPFR_RNDN);
    mpfr_mul(value.v, power.v, series.v, MPFR_RNDN);
    // Relative error < units·2^-W: the absolute error < 2^(EXP(value) - err). Rounding to nearest at P is
    // decided when the rounding toward zero at P + 1 is (MPFR's own idiom).
    if (mpfr_can_round(value.v, err, MPFR_RNDN, MPFR_RNDZ, p + 1)) {
      mpfr_set(out[k].backend().data(), value.v, MPFR_RNDN);
    } else {
      g_fallbacks.fetch_add(1, std::memory_order_relaxed);
      out[k] = pow(b, exponent(k, dim));
    }
  }
  return out;
}

std::uint64_t frequency_ladder_fallbacks() noexcept { return g_fallbacks.load(); }

}  // namespace pe::ref

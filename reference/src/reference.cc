#include "pe/ref/reference.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <boost/math/constants/constants.hpp>
#include <cmath>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "pe/detail/kept.h"
#include "pe/ref/fast_trig.h"
#include "pe/ref/frequency_ladder.h"

namespace pe::ref {
namespace {

std::atomic<std::uint64_t> g_undecided{0};
thread_local std::uint64_t t_undecided = 0;

// Positions below this use the narrow tier: 168 - 40 - 53 leaves > 64 bits beyond float64.
constexpr std::int64_t kNarrowLimit = std::int64_t{1} << 40;

// Error of p·ω rounded twice at precision P (ω itself, then the product) plus one correctly rounded
// sin/cos: |φ|·2^(1-P) + 2^-P <= (|φ| + 1)·2^(2-P).
template <class R>
R radius_of(const R& abs_phi) {
  return (abs_phi + 1) * ldexp(R(1), static_cast<int>(2 - precision_bits<R>()));
}

double rounded_or_retry(const Enclosure& narrow, DType type, const auto& retry_wide) {
  if (auto r = decided_rounding(narrow, type)) return *r;
  const Enclosure wide = retry_wide();
  if (auto r = decided_rounding(wide, type)) return *r;
  record_undecided();
  return round_to(wide.value, type);
}

}  // namespace

// The values of one set of parameters, shared by every Frequencies object of them: the rule, built once,
// and each ω_i and its double-double, set once under the table's lock and never moved after (objects read
// them through pointers).
struct FrequencyTable {
  FrequencyTable(std::size_t n_pairs, std::int64_t frequency_dim, double base, const RopeScaling& scaling)
      : rule(scaling, frequency_dim, base, boost::math::constants::pi<Real>()),
        dim(frequency_dim),
        w(n_pairs),
        dd(n_pairs) {}

  const ScalingRule<Real> rule;
  const std::int64_t dim;
  // Filled in as the objects sharing the table read it (under its lock): kept as const, filled as mutable.
  mutable std::mutex lock;
  mutable std::vector<std::optional<Real>> w;
  mutable std::vector<std::optional<dd::DD>> dd;
};

namespace {

// unscaled_frequencies of recent (base, dim, count), kept: a FrequencyTable is per whole parameter set, and
// configs that differ in their scaling alone share a ladder (a verify_rope run draws a few bases and head
// sizes under every scaling; the ladder was a sixth of a new config's check). The base by its exact hex
// digits. At most 256 are kept (a few MB), then they start over: 300 drawn cases hold 139 (base, rotary
// dim), and 64 started over twice in them.
std::shared_ptr<const std::vector<Real>> kept_ladder(const Real& b, std::int64_t dim, std::size_t count) {
  mpfr_exp_t exponent = 0;
  char* digits = mpfr_get_str(nullptr, &exponent, 16, 0, b.backend().data(), MPFR_RNDN);
  const std::string key = fmt::format("{} {} {} {}", dim, count, static_cast<long>(exponent), digits);
  mpfr_free_str(digits);
  static auto* kept = new pe::detail::Kept<std::vector<Real>>(256);
  if (auto ladder = kept->find(key)) return ladder;
  return kept->keep(key, unscaled_frequencies(b, dim, count));
}

// Every pair's ω of the table, as rule.inv_freq(index) gives it bit for bit (unscaled(index) times its
// gain), the powers all at once (frequency_ladder.h).
// An axial form's ladders differ in their dim (pe/rope_form.h): one ladder per distinct dim, each over
// the pairs that read it (`dim` is then unused, and the plan has refused every scaling, so the gain is 1).
std::vector<Real> table_values(const FrequencyTable& t, const RopeForm& form, std::size_t n_pairs) {
  std::map<std::size_t, std::size_t> counts;  // dim -> the ladder's length
  for (std::size_t j = 0; j < n_pairs; ++j) {
    const FrequencyIndex f = frequency_index(form, n_pairs, j);
    auto& count = counts[form.axes_dim.empty() ? static_cast<std::size_t>(t.dim) : f.dim];
    count = std::max(count, f.index + 1);
  }
  std::map<std::size_t, std::shared_ptr<const std::vector<Real>>> unscaled;
  for (const auto& [dim, count] : counts)
    unscaled[dim] = kept_ladder(t.rule.effective_base(), static_cast<std::int64_t>(dim), count);
  std::vector<Real> out(n_pairs);
  for (std::size_t j = 0; j < n_pairs; ++j) {
    const FrequencyIndex f = frequency_index(form, n_pairs, j);
    const Real& w = (*unscaled[form.axes_dim.empty() ? static_cast<std::size_t>(t.dim) : f.dim])[f.index];
    out[j] = w * t.rule.gain(f.index, w);
  }
  return out;
}

// Every parameter the values depend on, exactly, as bytes (fmt's hex digits of two dozen doubles were a
// quarter of a new parameter set's Frequencies).
std::string frequency_key(std::size_t n_pairs, std::int64_t dim, double base, const RopeScaling& s,
                          const RopeForm& f) {
  std::string k;
  pe::detail::put(k, n_pairs), pe::detail::put(k, dim), pe::detail::put(k, base);
  pe::detail::put_scaling_and_form(k, s, f);
  return k;
}

// At most 64 parameter sets are kept (a sweep's configs, a verify run's recent cases): then they start over
// (objects still holding a table keep it).
std::shared_ptr<const FrequencyTable> shared_table(std::size_t n_pairs, std::int64_t dim, double base,
                                                   const RopeScaling& scaling, const RopeForm& form) {
  static auto* tables = new pe::detail::Kept<FrequencyTable>(64);
  return tables->find_or_make(frequency_key(n_pairs, dim, base, scaling, form), [&] {
    return std::make_shared<const FrequencyTable>(n_pairs, dim, base, scaling);
  });
}

}  // namespace

Frequencies::Frequencies(std::size_t n_pairs, std::int64_t dim, double base, const RopeScaling& scaling,
                         RopeForm form)
    : scaled_(scales(scaling)),
      form_(std::move(form)),
      w_(n_pairs, nullptr),
      shared_(shared_table(n_pairs, dim, base, scaling, form_)) {}

const ScalingRule<Real>& Frequencies::rule() const noexcept { return shared_->rule; }

const Real& Frequencies::operator[](std::size_t i) const {
  // The exponent -2i/dim is a quotient of small integers, rounded once at ~334 bits; unscaled, the
  // gain is exactly 1.
  if (w_[i]) return *w_[i];
  {
    const std::lock_guard<std::mutex> guard(shared_->lock);
    if (shared_->w[i]) return *(w_[i] = &*shared_->w[i]);
  }
  // The whole table at once: a check reads every pair, and the powers come cheaper together.
  std::vector<Real> all = table_values(*shared_, form_, w_.size());
  const std::lock_guard<std::mutex> guard(shared_->lock);
  for (std::size_t j = 0; j < all.size(); ++j)
    if (!shared_->w[j]) shared_->w[j] = std::move(all[j]);  // another object may have set some meanwhile
  return *(w_[i] = &*shared_->w[i]);
}

dd::DD Frequencies::omega(std::size_t i) const {
  {
    const std::lock_guard<std::mutex> guard(shared_->lock);
    if (shared_->dd[i]) return *shared_->dd[i];
  }
  const dd::DD v = to_dd((*this)[i]);
  const std::lock_guard<std::mutex> guard(shared_->lock);
  shared_->dd[i] = v;
  return v;
}

std::optional<double> decided_rounding(const Enclosure& e, DType type) {
  if (e.radius == 0) return round_to(e.value, type);
  const double lo = round_to(Real(e.value - e.radius), type);
  const double hi = round_to(Real(e.value + e.radius), type);
  if (lo == hi && std::signbit(lo) == std::signbit(hi)) return lo;
  if (lo == 0 && hi == 0) return round_to(e.value, type);  // ±0: the sign of the midpoint
  return std::nullopt;
}

std::uint64_t undecided_roundings() noexcept { return g_undecided.load(); }
std::uint64_t undecided_roundings_in_this_thread() noexcept { return t_undecided; }
void record_undecided() noexcept {
  g_undecided.fetch_add(1, std::memory_order_relaxed);
  ++t_undecided;
}

double abs_error(double y, const Real& exact) { return static_cast<double>(abs(Real(y) - exact)); }

double ulp_error(double y, const Real& exact, DType type) {
  return abs_error(y, exact) / ulp_of(exact, type);
}

// ---- Sinusoidal -------------------------------------------------------------------------------

namespace {

// Validated first: the members after it read the parameters.
const SinusoidalParams& validated(const SinusoidalParams& params) {
  validate_table_params(params);
  return params;
}

// p·ω from the double-double (within 2^-104 relative, so within an ulp of the rounded exact angle)
// where it is exact enough, else MPFR's product.
double phase(std::int64_t position, const dd::DD& omega, const Real& exact_omega) {
  if (fast_path_enabled() && position > -(std::int64_t{1} << 53) && position < (std::int64_t{1} << 53)) {
    const auto p = static_cast<double>(position);
    const dd::DD ph = dd::two_prod(p, omega.hi);
    return ph.hi + (ph.lo + p * omega.lo);
  }
  return static_cast<double>(Real(exact_omega * static_cast<long long>(position)));
}

long tier_bits(bool wide) {
  return wide ? pe::ref::precision_bits<Real>() : pe::ref::precision_bits<RealNarrow>();
}

}  // namespace

Sinusoidal::Sinusoidal(const SinusoidalParams& params, std::int64_t max_position)
    : Sinusoidal(params, RealPosition{std::fabs(static_cast<double>(max_position))}) {}

// The tier is chosen on |scale·p|, the largest multiple of a frequency <= 1 the angles reach.
Sinusoidal::Sinusoidal(const SinusoidalParams& params, RealPosition max_abs_position)
    : params_(validated(params)),
      inv_freq_(static_cast<std::size_t>(params.dim / 2), sinusoidal_frequency_dim(params), params.base),
      bits_(tier_bits(!(std::fabs(params.scale * max_abs_position.t) < 0x1p40))),
      wide_(!(std::fabs(params.scale * max_abs_position.t) < 0x1p40)),
      omega_dd_(inv_freq_.size()) {}

bool Sinusoidal::is_sin(std::size_t channel) const noexcept {
  const bool first = params_.layout == Layout::Interleaved ? channel % 2 == 0 : channel < inv_freq_.size();
  return first != params_.flip_sin_to_cos;
}

// scale·ω, ω at ~334 bits rounded to a double-double (relative error <= 2^-105, fast_trig.h's to_dd), times
// the scale in double-double arithmetic (2^-104 more).
const dd::DD& Sinusoidal::omega(std::size_t pair) const {
  if (!omega_dd_[pair]) {
    const dd::DD w = inv_freq_.omega(pair);
    if (params_.scale == 1) {
      omega_dd_[pair] = w;
    } else {
      const dd::DD p = dd::two_prod(params_.scale, w.hi);
      omega_dd_[pair] = dd::fast_two_sum(p.hi, p.lo + params_.scale * w.lo);
    }
  }
  return *omega_dd_[pair];
}

std::size_t Sinusoidal::pair_of(std::size_t channel) const noexcept {
  if (is_pad(channel)) return 0;
  return params_.layout == Layout::Interleaved ? channel / 2 : channel % inv_freq_.size();
}

double Sinusoidal::angle(std::int64_t position, std::size_t channel) const {
  return angle(RealPosition{static_cast<double>(position)}, channel);
}

// scale·p·ω from the double-double (within 2^-103 relative, so within an ulp of the rounded exact angle)
// where the fast path is on, else MPFR's product.
double Sinusoidal::angle(RealPosition position, std::size_t channel) const {
  if (is_pad(channel)) return 0;
  const std::size_t pair = pair_of(channel);
  if (fast_path_enabled()) {
    const dd::DD& w = omega(pair);
    const dd::DD ph = dd::two_prod(position.t, w.hi);
    return ph.hi + (ph.lo + position.t * w.lo);
  }
  return static_cast<double>(Real(inv_freq_[pair] * Real(params_.scale) * Real(position.t)));
}

std::optional<FastSinCos> Sinusoidal::fast_pair(std::int64_t position, std::size_t pair) const {
  constexpr std::int64_t kExact = std::int64_t{1} << 53;
  if (position >= kExact || position <= -kExact) return std::nullopt;
  return fast_pair(RealPosition{static_cast<double>(position)}, pair);
}

std::optional<FastSinCos> Sinusoidal::fast_pair(RealPosition position, std::size_t pair) const {
  if (!fast_path_enabled()) return std::nullopt;
  // ω's own error: 2^-105 from the double-double, ~2^-300 from MPFR's power, 2^-104 from the scale.
  return fast_sincos(position.t, omega(pair), 0x1p-105 + 0x1p-300 + (params_.scale == 1 ? 0 : 0x1p-104));
}

std::optional<FastValue> Sinusoidal::fast_exact(std::int64_t position, std::size_t channel) const {
  constexpr std::int64_t kExact = std::int64_t{1} << 53;
  if (position >= kExact || position <= -kExact) return std::nullopt;
  return fast_exact(RealPosition{static_cast<double>(position)}, channel);
}

std::optional<FastValue> Sinusoidal::fast_exact(RealPosition position, std::size_t channel) const {
  if (is_pad(channel)) return FastValue{};
  const auto sc = fast_pair(position, pair_of(channel));
  if (!sc) return std::nullopt;
  return FastValue{is_sin(channel) ? sc->sin : sc->cos, sc->radius};
}

// φ = ω·scale·p, three roundings at the tier's precision: radius_of's two cover them ((|φ| + 1)·2^(2-P)).
template <class R>
Enclosure Sinusoidal::evaluate(RealPosition position, std::size_t channel) const {
  if (is_pad(channel)) return {Real(0), Real(0)};
  const R phi = R(inv_freq_[pair_of(channel)]) * R(params_.scale) * R(position.t);
  const R v = is_sin(channel) ? sin(phi) : cos(phi);
  // p = 0: φ = 0, sin 0 = 0 and cos 0 = 1 are exact.
  const R radius = position.t == 0 ? R(0) : radius_of(R(abs(phi)));
  return {Real(v), Real(radius)};
}

Enclosure Sinusoidal::exact(std::int64_t position, std::size_t channel) const {
  return exact(RealPosition{static_cast<double>(position)}, channel);
}

Enclosure Sinusoidal::exact(RealPosition position, std::size_t channel) const {
  return wide_ ? evaluate<Real>(position, channel) : evaluate<RealNarrow>(position, channel);
}

double Sinusoidal::rounded(std::int64_t position, std::size_t channel, DType type) const {
  return rounded(RealPosition{static_cast<double>(position)}, channel, type);
}

double Sinusoidal::rounded(RealPosition position, std::size_t channel, DType type) const {
  if (fast_path_enabled()) {
    if (const auto v = fast_exact(position, channel)) {
      if (auto r = fast_rounding(v->value, v->radius, type)) return *r;
    }
    record_fallback();
  }
  return rounded_or_retry(exact(position, channel), type, [&] { return evaluate<Real>(position, channel); });
}

// ---- RoPE -------------------------------------------------------------------------------------

Rope::Rope(const RopeParams& params, std::int64_t max_position) : Rope(RopePlan(params), max_position) {}

// The validated plan gives rotary_dim (0 resolved) and the frequency bound the slack is built on.
Rope::Rope(const RopePlan& plan, std::int64_t max_position)
    : params_(plan.params()),
      inv_freq_(plan.n_pairs(),
                static_cast<std::int64_t>(frequency_index(params_.form, plan.n_pairs(), 0).dim), params_.base,
                params_.scaling, params_.form),
      bits_(max_position < kNarrowLimit ? pe::ref::precision_bits<RealNarrow>()
                                        : pe::ref::precision_bits<Real>()),
      wide_(max_position >= kNarrowLimit),
      frequency_slack_(std::max(1.0, plan.frequency_error() * 0x1p64 * 16)),
      omega_dd_(inv_freq_.size()),
      scaled_(inv_freq_.scaled()),
      attention_dd_(scaled_ ? to_dd(inv_freq_.rule().attention()) : dd::DD{1, 0}) {}

// ceil(|t|) picks the tier as an integer position of that magnitude would (2^62 at most: every tier).
Rope::Rope(const RopeParams& params, RealPosition max_abs_position)
    : Rope(params, static_cast<std::int64_t>(std::ceil(std::min(std::fabs(max_abs_position.t), 0x1p62)))) {}

const dd::DD& Rope::omega(std::size_t pair) const {
  if (!omega_dd_[pair]) omega_dd_[pair] = inv_freq_.omega(pair);
  return *omega_dd_[pair];
}

// The rotation in double-double: each product's relative error <= 2u², each sum's <= 3u² (u = 2^-53)
// of |a| + |b| at most, so (|a| + |b|)·2^-100 covers them; the attention factor (relative error
// 2^-105 from to_dd, 4u² from the product) another |A·y|·2^-100.
std::optional<std::pair<FastValue, FastValue>> Rope::fast_rotate(std::int64_t position, std::size_t pair,
                                                                 double a, double b,
                                                                 RopeDirection direction) const {
  const double n = std::fabs(a) + std::fabs(b);
  if (!fast_path_enabled() || !(n < 0x1p900)) return std::nullopt;
  const auto sc = fast_sincos(position, pair);
  if (!sc) return std::nullopt;
  return fast_rotate_by(*sc, a, b, direction);
}

std::optional<FastSinCos> Rope::fast_sincos(std::int64_t position, std::size_t pair) const {
  if (!fast_path_enabled()) return std::nullopt;
  // The scaled frequency's error: the plan's condition (frequency_slack_) at the wide tier, then to_dd.
  const double omega_relative =
      0x1p-105 + std::ldexp(frequency_slack_, static_cast<int>(2 - pe::ref::precision_bits<Real>()));
  return ::pe::ref::fast_sincos(position, omega(pair), omega_relative);
}

std::optional<FastSinCos> Rope::fast_sincos(RealPosition position, std::size_t pair) const {
  if (!fast_path_enabled()) return std::nullopt;
  const double omega_relative =
      0x1p-105 + std::ldexp(frequency_slack_, static_cast<int>(2 - pe::ref::precision_bits<Real>()));
  return ::pe::ref::fast_sincos(position.t, omega(pair), omega_relative);
}

double Rope::angle(std::int64_t position, std::size_t pair) const {
  return phase(position, omega(pair), inv_freq_[pair]);
}

// t·θ_j from the double-double (within 2^-104 relative) where the fast path is on, else MPFR's product.
double Rope::angle(RealPosition position, std::size_t pair) const {
  if (fast_path_enabled()) {
    const dd::DD& w = omega(pair);
    const dd::DD ph = dd::two_prod(position.t, w.hi);
    return ph.hi + (ph.lo + position.t * w.lo);
  }
  return static_cast<double>(Real(inv_freq_[pair] * Real(position.t)));
}

namespace {
// A position as a factor of the tier's product: an integer as MPFR takes it, a real one as its exact
// binary value (53 bits: exact at either tier).
template <class R>
R rope_position_factor(std::int64_t p) {
  return R(static_cast<long long>(p));
}
template <class R>
R rope_position_factor(RealPosition p) {
  return R(p.t);
}
bool rope_position_is_zero(std::int64_t p) { return p == 0; }
bool rope_position_is_zero(RealPosition p) { return p.t == 0; }
}  // namespace

// The product rounds once at the tier's precision for an integer or a real factor alike: the radius is one.
template <class R, class P>
std::pair<Enclosure, Enclosure> Rope::evaluate(P position, std::size_t pair, double a, double b,
                                               RopeDirection direction) const {
  R phi = R(inv_freq_[pair]) * rope_position_factor<R>(position);
  if (direction == RopeDirection::Inverse) phi = -phi;
  const R c = cos(phi), s = sin(phi);
  const R ra(a), rb(b);
  const R y0 = ra * c - rb * s;
  const R y1 = ra * s + rb * c;
  // Each of cos, sin is within radius_of(|φ|); two products and a sum add 3·2^-P relative of
  // |a| + |b|. Position 0 is exact: the products by 1 and 0 and the sum are exact at any precision
  // that holds a and b. A scaling's frequency comes from the same formulas as the plan's, with the
  // same condition: the plan's bound in units of 2^-64 (frequency_error·2^64), times 16, in units of
  // 2^-P here; the attention factor adds one more rounding.
  const int bits = static_cast<int>(pe::ref::precision_bits<R>());
  R radius(0);
  if (!rope_position_is_zero(position)) {
    const R n = abs(ra) + abs(rb);
    const R slack = inv_freq_.scaled() ? R(frequency_slack_) : R(1);
    radius = n * (slack * radius_of(R(abs(phi))) + 3 * ldexp(R(1), -bits));
  }
  if (!inv_freq_.scaled()) return {Enclosure{Real(y0), Real(radius)}, Enclosure{Real(y1), Real(radius)}};
  const R attention(inv_freq_.rule().attention());
  // Per component: A·y is within A·radius + (|y| + radius)·A·2^(2-P) (A's own error and the
  // product's rounding), so an exact zero (sin 0 at p = 0) stays an exact zero.
  const R unit = attention * ldexp(R(1), 2 - bits);
  const R r0 = attention * radius + (abs(y0) + radius) * unit;
  const R r1 = attention * radius + (abs(y1) + radius) * unit;
  return {Enclosure{Real(attention * y0), Real(r0)}, Enclosure{Real(attention * y1), Real(r1)}};
}

std::pair<Enclosure, Enclosure> Rope::rotate(std::int64_t position, std::size_t pair, double a, double b,
                                             RopeDirection direction) const {
  return wide_ ? evaluate<Real>(position, pair, a, b, direction)
               : evaluate<RealNarrow>(position, pair, a, b, direction);
}

std::pair<Enclosure, Enclosure> Rope::rotate(RealPosition position, std::size_t pair, double a, double b,
                                             RopeDirection direction) const {
  return wide_ ? evaluate<Real>(position, pair, a, b, direction)
               : evaluate<RealNarrow>(position, pair, a, b, direction);
}

std::pair<double, double> Rope::rounded(std::int64_t position, std::size_t pair, double a, double b,
                                        DType type, RopeDirection direction) const {
  return rounded_by(fast_sincos(position, pair), position, pair, a, b, type, direction);
}

std::pair<double, double> Rope::rounded_by_mpfr(std::int64_t position, std::size_t pair, double a, double b,
                                                DType type, RopeDirection direction) const {
  if (fast_path_enabled()) record_fallback();
  const auto narrow = rotate(position, pair, a, b, direction);
  const auto wide = [&] { return evaluate<Real>(position, pair, a, b, direction); };
  return {rounded_or_retry(narrow.first, type, [&] { return wide().first; }),
          rounded_or_retry(narrow.second, type, [&] { return wide().second; })};
}

// At a real position: the fast path where Ziv's test decides both, else MPFR (wide tier on a retry).
std::pair<double, double> Rope::rounded(RealPosition position, std::size_t pair, double a, double b,
                                        DType type, RopeDirection direction) const {
  if (const auto sc = fast_sincos(position, pair); sc && fast_path_enabled()) {
    if (const auto r = fast_rounded(*sc, a, b, type, direction)) return *r;
    record_fallback();
  }
  const auto narrow = rotate(position, pair, a, b, direction);
  const auto wide = [&] { return evaluate<Real>(position, pair, a, b, direction); };
  return {rounded_or_retry(narrow.first, type, [&] { return wide().first; }),
          rounded_or_retry(narrow.second, type, [&] { return wide().second; })};
}

std::pair<double, double> Rope::cos_sin(std::int64_t position, std::size_t pair, DType type) const {
  // Rotating (1, 0) gives (cos, sin) exactly.
  return rounded(position, pair, 1.0, 0.0, type);
}

}  // namespace pe::ref

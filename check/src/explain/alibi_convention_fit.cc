#include "explain/alibi_convention_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

namespace pe::check {
namespace {

// One convention: a slope rule (exponent shift for the off-by-one mistakes) and a bias form.
struct Model {
  std::string description;
  AlibiParams params;
  std::int64_t power_shift = 0;  // k + shift: m0^h is the shift -1
  bool negated = false, transposed = false;
  std::int64_t query_shift = 0;  // the queries' positions as the engine numbered them: i + shift
};

// The shift moves the power of m0 only: `m0 ** h` is the slip, the odd powers of m1 stay.
long double slope(const AlibiPlan& plan, std::size_t h, std::int64_t shift) {
  const bool base_head = static_cast<std::int64_t>(h) < plan.base_heads();
  const auto k = static_cast<long double>(plan.power(h) + (base_head ? shift : 0));
  return std::exp2(-static_cast<long double>(plan.max_bias()) * k /
                   static_cast<long double>(plan.denominator(h)));
}

// The max_bias head 0's slope says, read back from the data (slopes, or the first cell of head 0 whose
// multiplier is not zero): b = -log2(m_0)·denominator(0)/power(0), to the nearest 1/16 (configs state whole
// numbers); nothing when the data holds no positive slope there or it reads as the given one.
std::optional<double> max_bias_read_back(std::span<const double> data, const AlibiParams& given,
                                         std::span<const std::int64_t> queries,
                                         std::span<const std::int64_t> keys) {
  const AlibiPlan plan(given);
  long double slope0 = NAN;
  if (keys.empty()) {
    slope0 = data.empty() ? NAN : static_cast<long double>(data[0]);
  } else {
    for (std::size_t q = 0; q < queries.size() && std::isnan(slope0); ++q)
      for (std::size_t k = 0; k < keys.size(); ++k) {
        if (given.form == AlibiForm::Causal && keys[k] > queries[q]) continue;
        const std::int64_t m = plan.multiplier(queries[q], keys[k]);
        if (m == 0) continue;
        slope0 = static_cast<long double>(data[q * keys.size() + k]) / static_cast<long double>(m);
        break;
      }
  }
  if (!(slope0 > 0) || !std::isfinite(static_cast<double>(slope0))) return std::nullopt;
  const long double b = -std::log2(slope0) * static_cast<long double>(plan.denominator(0)) /
                        static_cast<long double>(plan.power(0));
  const double rounded = std::round(static_cast<double>(b) * 16) / 16;
  if (!(rounded > 0) || std::fabs(rounded - given.max_bias) < 1.0 / 32) return std::nullopt;
  return rounded;
}

std::vector<Model> models(const AlibiParams& given, std::optional<double> read_back,
                          std::span<const std::int64_t> queries) {
  std::vector<Model> out = {{"the conventions given", given}};
  // Fewer queries than keys (a decode step, a chunk) sit bottom-right, from keys - queries on: numbered from
  // 0 instead, every query's bias is its distance from the wrong row (the twin of RoPE's dropped offset).
  if (!queries.empty() && queries.front() != 0) {
    out.push_back({fmt::format("the query offset dropped: queries numbered from 0 instead of from {} (each "
                               "query's bias taken at i - {}: the bottom-right alignment lost)",
                               queries.front(), queries.front()),
                   given, 0, false, false, -queries.front()});
  }
  if (read_back) {
    AlibiParams p = given;
    p.max_bias = *read_back;
    out.push_back(
        {fmt::format("max_bias {:g} (given {:g}; read back from head 0's slope)", *read_back, given.max_bias),
         p});
  }
  AlibiParams other = given;
  other.slopes = given.slopes == AlibiSlopes::Interpolated ? AlibiSlopes::Direct : AlibiSlopes::Interpolated;
  out.push_back({other.slopes == AlibiSlopes::Direct ? "the direct rule 2^(-b(h+1)/n) for the slopes"
                                                     : "the paper's interpolated slopes (HF, ggml, vLLM)",
                 other});
  out.push_back({"the slope exponent off by one (m0^h for m0^(h+1))", given, -1});
  out.push_back({"the slope exponent off by one (m0^(h+2) for m0^(h+1))", given, 1});
  out.push_back({"the sign flipped (+m·(i - j))", given, 0, true});
  out.push_back({"queries and keys transposed (bias[h, j, i])", given, 0, false, true});
  for (AlibiForm f : {AlibiForm::Causal, AlibiForm::Symmetric, AlibiForm::Bloom}) {
    if (f == given.form) continue;
    AlibiParams p = given;
    p.form = f;
    out.push_back({f == AlibiForm::Bloom ? "BLOOM's form m·j (a per-row constant from -m·(i - j); softmax "
                                           "ignores it: --alibi-form bloom)"
                   : f == AlibiForm::Symmetric ? "the symmetric form -m·|i - j|"
                                               : "the causal form -m·(i - j)",
                   p});
  }
  return out;
}

}  // namespace

std::vector<AlibiFit> diagnose_alibi(std::span<const double> data, const AlibiParams& given,
                                     std::span<const std::int64_t> queries,
                                     std::span<const std::int64_t> keys) {
  const std::size_t H = static_cast<std::size_t>(given.n_heads), Q = queries.size(), K = keys.size();
  const bool slopes_only = keys.empty();
  // Every element of up to 64 evenly spread (query, key) cells per head.
  const std::size_t cells = slopes_only ? 1 : Q * K, step = std::max<std::size_t>(1, cells / 64);
  std::vector<AlibiFit> fits;
  for (const Model& m : models(given, max_bias_read_back(data, given, queries, keys), queries)) {
    if (slopes_only && (m.transposed || m.params.form != given.form)) continue;
    if (m.transposed && Q != K) continue;
    const AlibiPlan plan(m.params);
    long double worst = 0, largest = 0;
    for (std::size_t h = 0; h < H; ++h) {
      const long double s = slope(plan, h, m.power_shift) * (m.negated ? -1 : 1);
      for (std::size_t c = 0; c < cells; c += step) {
        const std::size_t q = c / std::max<std::size_t>(K, 1), k = c % std::max<std::size_t>(K, 1);
        long double model = s;
        std::size_t at = h;
        if (!slopes_only) {
          const std::int64_t i = (m.transposed ? queries[k] : queries[q]) + m.query_shift,
                             j = m.transposed ? keys[q] : keys[k];
          if (given.form == AlibiForm::Causal && keys[k] > queries[q]) continue;  // masked: not compared
          model = s * static_cast<long double>(plan.multiplier(i, j));
          at = (h * Q + q) * K + k;
        }
        worst = std::max(worst, std::fabs(static_cast<long double>(data[at]) - model));
        largest = std::max(largest, std::fabs(model));
      }
    }
    fits.push_back({m.description, static_cast<double>(worst / std::max(largest, 1e-300L))});
  }
  std::stable_sort(fits.begin(), fits.end(),
                   [](const AlibiFit& a, const AlibiFit& b) { return a.residual < b.residual; });
  return fits;
}

}  // namespace pe::check

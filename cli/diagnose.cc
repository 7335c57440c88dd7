#include "diagnose.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace pe::cli {
namespace {

std::vector<std::size_t> spread(std::size_t n, std::size_t at_most) {
  std::set<std::size_t> s;
  if (n == 0) return {};
  for (std::size_t k = 0; k < std::min(n, at_most); ++k)
    s.insert(k * (n - 1) / std::max<std::size_t>(1, std::min(n, at_most) - 1));
  return {s.begin(), s.end()};
}

long double inv_freq(const Convention& c, std::size_t i, std::size_t dim) {
  const long double half = static_cast<long double>(dim / 2);
  const long double exponent = c.t2t_exponent
                                   ? (half > 1 ? static_cast<long double>(i) / (half - 1) : 0.0L)
                                   : 2.0L * static_cast<long double>(i) / static_cast<long double>(dim);
  return std::pow(static_cast<long double>(c.base), -exponent);
}

// Every combination of the known conventions, with the given base and the common ones.
std::vector<Convention> candidates(const Convention& given, bool rope) {
  std::vector<double> bases = {given.base};
  for (double b : {1e4, 1e5, 5e5, 1e6, 1e7}) {
    if (b != given.base) bases.push_back(b);
  }
  const Layout other =
      rope ? (given.layout == Layout::Interleaved ? Layout::HalfSplit : Layout::Interleaved)
           : (given.layout == Layout::Interleaved ? Layout::Concatenated : Layout::Interleaved);
  std::vector<Convention> out;
  for (Layout layout : {given.layout, other}) {
    for (bool swapped : {false, true}) {
      for (bool t2t : {false, true}) {
        for (std::int64_t shift : {0, 1, -1, 2, -2}) {
          for (double base : bases) {
            for (bool inverse : rope ? std::vector<bool>{false, true} : std::vector<bool>{false}) {
              out.push_back({layout, base, swapped, t2t, shift, inverse});
            }
          }
        }
      }
    }
  }
  return out;
}

std::vector<Fit> ranked(std::vector<Fit> fits) {
  std::stable_sort(fits.begin(), fits.end(),
                   [](const Fit& a, const Fit& b) { return a.residual < b.residual; });
  return fits;
}

}  // namespace

std::string describe(const Convention& c, const Convention& given) {
  std::vector<std::string> parts;
  if (c.layout != given.layout)
    parts.push_back(fmt::format("layout {} (given: {})", to_string(c.layout), to_string(given.layout)));
  if (c.swapped) parts.push_back("sin and cos swapped");
  if (c.t2t_exponent) parts.push_back("tensor2tensor/fairseq exponent i/(d/2-1)");
  if (c.shift != 0)
    parts.push_back(fmt::format("positions shifted by {:+} (row for p holds p{:+})", c.shift, c.shift));
  if (c.base != given.base) parts.push_back(fmt::format("base {:g} (given: {:g})", c.base, given.base));
  if (c.inverse) parts.push_back("inverse rotation (angle negated)");
  if (parts.empty()) return "the conventions given";
  std::string s;
  for (const std::string& p : parts) s += (s.empty() ? "" : "; ") + p;
  return s;
}

std::vector<Fit> diagnose_sinusoidal(const std::vector<double>& table, std::size_t dim,
                                     const std::vector<std::int64_t>& positions, const Convention& given) {
  const std::size_t half = dim / 2;
  const auto rows = spread(positions.size(), 64);
  const auto pairs = spread(half, 128);
  std::vector<Fit> fits;
  for (const Convention& c : candidates(given, false)) {
    double worst = 0;
    for (std::size_t r : rows) {
      const auto p = static_cast<long double>(positions[r] + c.shift);
      for (std::size_t i : pairs) {
        const long double phi = p * inv_freq(c, i, dim);
        long double s = std::sin(phi), co = std::cos(phi);
        if (c.swapped) std::swap(s, co);
        const std::size_t ch_sin = c.layout == Layout::Interleaved ? 2 * i : i;
        const std::size_t ch_cos = c.layout == Layout::Interleaved ? 2 * i + 1 : half + i;
        const double e1 = std::fabs(table[r * dim + ch_sin] - static_cast<double>(s));
        const double e2 = std::fabs(table[r * dim + ch_cos] - static_cast<double>(co));
        worst = std::max({worst, std::isnan(e1) ? INFINITY : e1, std::isnan(e2) ? INFINITY : e2});
      }
    }
    fits.push_back({c, worst});
  }
  return ranked(fits);
}

std::vector<Fit> diagnose_rope(const RopeData& d, const std::vector<std::int64_t>& positions,
                               const Convention& given) {
  const std::size_t half = d.rotary_dim / 2;
  const auto tokens = spread(d.batch.tokens(), 32);
  const auto heads = spread(d.batch.heads, 2);
  const auto pairs = spread(half, 64);
  std::vector<Fit> fits;
  for (const Convention& c : candidates(given, true)) {
    double worst = 0;
    for (std::size_t t : tokens) {
      const auto p = static_cast<long double>(positions[t] + c.shift);
      for (std::size_t h : heads) {
        const std::size_t row = d.batch.row(t, h);
        for (std::size_t j : pairs) {
          const long double phi = (c.inverse ? -p : p) * inv_freq(c, j, d.rotary_dim);
          long double s = std::sin(phi), co = std::cos(phi);
          if (c.swapped) std::swap(s, co);
          const std::size_t a = row + (c.layout == Layout::Interleaved ? 2 * j : j);
          const std::size_t b = row + (c.layout == Layout::Interleaved ? 2 * j + 1 : half + j);
          const long double xa = d.x[a], xb = d.x[b];
          const double e1 = std::fabs(d.y[a] - static_cast<double>(xa * co - xb * s));
          const double e2 = std::fabs(d.y[b] - static_cast<double>(xb * co + xa * s));
          worst = std::max({worst, std::isnan(e1) ? INFINITY : e1, std::isnan(e2) ? INFINITY : e2});
        }
      }
    }
    fits.push_back({c, worst});
  }
  return ranked(fits);
}

}  // namespace pe::cli

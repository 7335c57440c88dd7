#include "pe/ref/self_check.h"

#include <fmt/format.h>

#include <boost/multiprecision/cpp_bin_float.hpp>
#include <cmath>
#include <random>

#include "pe/ref/reference.h"

namespace pe::ref {
namespace {

using Independent = bmp::number<bmp::cpp_bin_float<256, bmp::digit_base_2>, bmp::et_off>;

Independent independent_value(std::int64_t p, std::int64_t dim, double base, std::size_t pair, bool is_sin) {
  const Independent e =
      -Independent(static_cast<long long>(2 * pair)) / Independent(static_cast<long long>(dim));
  const Independent phi = pow(Independent(base), e) * static_cast<long long>(p);
  return is_sin ? sin(phi) : cos(phi);
}

}  // namespace

SelfCheckReport self_check(std::uint64_t seed, std::size_t samples, std::int64_t max_position) {
  SelfCheckReport report;
  std::mt19937_64 rng(seed);
  const std::int64_t dims[] = {2, 8, 48, 64, 80, 128, 4096};
  const double bases[] = {10000.0, 500000.0, 1e6, 10.0};
  std::uniform_int_distribution<std::int64_t> any_position(0, max_position);
  for (std::size_t k = 0; k < samples; ++k) {
    SinusoidalParams params;
    params.dim = dims[rng() % std::size(dims)];
    params.base = bases[rng() % std::size(bases)];
    params.layout = Layout::Interleaved;
    const Sinusoidal ref(params, max_position);
    const std::int64_t p = k == 0 ? 0 : any_position(rng);
    const std::size_t pair = rng() % static_cast<std::size_t>(params.dim / 2);
    ++report.samples;

    const Enclosure s = ref.exact(p, 2 * pair), c = ref.exact(p, 2 * pair + 1);
    const double scale = std::fabs(ref.angle(p, 2 * pair)) + 1;
    for (const bool is_sin : {true, false}) {
      const Independent other = independent_value(p, params.dim, params.base, pair, is_sin);
      const Real mine = is_sin ? s.value : c.value;
      const double diff = static_cast<double>(abs(mine - Real(other.str(90)))) / scale;
      report.max_disagreement = std::max(report.max_disagreement, diff);
      if (diff > 0x1p-120) {
        report.failures.push_back(
            fmt::format("p={} dim={} base={} pair={} {}: MPFR and cpp_bin_float "
                        "differ by {:.3g}·(|φ|+1)",
                        p, params.dim, params.base, pair, is_sin ? "sin" : "cos", diff));
      }
    }
    const double pyth = static_cast<double>(abs(s.value * s.value + c.value * c.value - 1));
    report.max_pythagoras_residual = std::max(report.max_pythagoras_residual, pyth);
    if (pyth > 0x1p-150) {
      report.failures.push_back(fmt::format("p={}: sin²+cos²-1 = {:.3g}", p, pyth));
    }
    if (p == 0 &&
        (ref.rounded(0, 2 * pair, DType::F64) != 0.0 || ref.rounded(0, 2 * pair + 1, DType::F64) != 1.0)) {
      report.failures.push_back("p=0: (sin, cos) is not exactly (0, 1)");
    }
  }
  return report;
}

}  // namespace pe::ref

#include "explain/xpos_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "explain/explanation.h"

namespace pe::check {
namespace {

constexpr std::size_t kMaxTokens = 512;  // sampled evenly: the line needs few, the data may hold millions

// Per token (sampled) its position and the exponent w that fits ln(|y_j|/|x_j|) = w·ln ζ_j over its heads
// and pairs by least squares; tokens whose pairs are all zero are left out.
void token_exponents(const RopeData& data, const RopePlan& plan, std::vector<double>& p,
                     std::vector<double>& w) {
  const RopeBatch& batch = data.batch;
  const std::size_t tokens = batch.tokens(), step = std::max<std::size_t>(1, tokens / kMaxTokens);
  const auto d = static_cast<std::int64_t>(plan.rotary_dim());
  for (std::size_t t = 0; t < tokens; t += step) {
    double num = 0, den = 0;
    for (std::size_t h = 0; h < batch.heads; ++h) {
      const std::size_t row = batch.row(t, h);
      for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
        const auto [i0, i1] = plan.input_channels(j);
        const auto [o0, o1] = plan.output_channels(j);
        const double nx = std::hypot(data.x[row + i0], data.x[row + i1]);
        const double ny = std::hypot(data.y[row + o0], data.y[row + o1]);
        if (!(nx > 0) || !(ny > 0) || !std::isfinite(nx) || !std::isfinite(ny)) continue;
        const double l = std::log(xpos_ratio(static_cast<std::int64_t>(j), d));
        num += l * std::log(ny / nx);
        den += l * l;
      }
    }
    if (den > 0) {
      p.push_back(static_cast<double>(batch.position(t)));
      w.push_back(num / den);
    }
  }
}

std::string shown(double v) {
  const double r = std::round(v);
  return std::fabs(v - r) <= 0.05 ? fmt::format("{:g}", r) : fmt::format("{:.4g}", v);
}

// The differences between the gain read back and the one given, in words and as the spec that fits.
std::vector<std::string> differences(const XPosReading& r, const XPos& given, XPosSpec& fits) {
  std::vector<std::string> out;
  const bool keys = r.slope < 0;
  const double scale_base = 1 / std::fabs(r.slope), centre = -r.intercept / r.slope;
  if (keys != given.keys) {
    out.push_back(keys ? "k's gain (dividing) where q's (multiplying) is given (xpos_keys)"
                       : "q's gain (multiplying) where k's (dividing) is given (xpos_keys)");
    fits.keys = keys;
  }
  if (std::fabs(scale_base - given.scale_base) > std::max(0.01 * given.scale_base, 4 * r.scale_base_error)) {
    out.push_back(fmt::format("scale_base {} where {:g} is given", shown(scale_base), given.scale_base));
    if (scale_base >= 1 && scale_base <= 0x1p53) fits.scale_base = std::round(scale_base);
  }
  // The centre's reading: a position's step in w is 1/scale_base; half of it tells one position from the
  // next.
  if (std::fabs(centre - static_cast<double>(given.centre)) > std::max(0.5, 4 * r.centre_error)) {
    out.push_back(
        fmt::format("centre {} where {} is given (the engines' seqlen // 2 of a table built to {} "
                    "positions)",
                    shown(centre), given.centre, shown(2 * centre)));
    if (centre >= 0 && centre <= static_cast<double>(kMaxPosition)) fits.centre = std::llround(centre);
  }
  return out;
}

// y with each pair's exact gain divided out (in double): the bare rotation, for the rotation's diagnosis.
std::vector<double> ungained(const RopeData& data, const RopePlan& plan, const XPos& xpos) {
  std::vector<double> y(data.y.begin(), data.y.end());
  const auto d = static_cast<std::int64_t>(plan.rotary_dim());
  for (std::size_t t = 0; t < data.batch.tokens(); ++t) {
    const double w = xpos_exponent(xpos, data.batch.position(t));
    for (std::size_t j = 0; j < plan.n_pairs(); ++j) {
      const double g = std::pow(xpos_ratio(static_cast<std::int64_t>(j), d), w);
      const auto [o0, o1] = plan.output_channels(j);
      for (std::size_t h = 0; h < data.batch.heads; ++h) {
        const std::size_t row = data.batch.row(t, h);
        y[row + o0] /= g;
        y[row + o1] /= g;
      }
    }
  }
  return y;
}

}  // namespace

XPosReading read_xpos_gain(const RopeData& data, const RopePlan& plan, DType dtype) {
  XPosReading r;
  std::vector<double> p, w;
  token_exponents(data, plan, p, w);
  r.tokens = p.size();
  const double u = dtype == DType::F64 ? 0x1p-52 : unit_roundoff(dtype);
  r.tolerance = 16 * u / std::fabs(std::log(xpos_ratio(0, 2)));
  const auto [lo, hi] = std::minmax_element(p.begin(), p.end());
  if (p.size() < 2 || *lo == *hi) return r;
  double mp = 0, mw = 0;
  for (std::size_t i = 0; i < p.size(); ++i) mp += p[i], mw += w[i];
  mp /= static_cast<double>(p.size()), mw /= static_cast<double>(p.size());
  double spp = 0, spw = 0;
  for (std::size_t i = 0; i < p.size(); ++i)
    spp += (p[i] - mp) * (p[i] - mp), spw += (p[i] - mp) * (w[i] - mw);
  r.read = true;
  r.slope = spw / spp;
  r.intercept = mw - r.slope * mp;
  double squares = 0;
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double e = w[i] - (r.slope * p[i] + r.intercept);
    r.residual = std::max(r.residual, std::fabs(e));
    squares += e * e;
  }
  const auto n = static_cast<double>(p.size());
  const double s2 = std::max(squares / std::max(1.0, n - 2), std::pow(r.tolerance / 16, 2));
  const double var_a = s2 / spp, var_b = s2 * (1 / n + mp * mp / spp), cov_ab = -mp * s2 / spp;
  r.slope_error = std::sqrt(var_a);
  r.intercept_error = std::sqrt(var_b);
  if (r.flat()) return r;  // scale_base and the centre are not read from a flat line
  const double centre = -r.intercept / r.slope;
  r.scale_base_error = r.slope_error / (r.slope * r.slope);  // d(1/|a|) = da/a²
  r.centre_error =
      std::sqrt(std::max(0.0, var_b + centre * centre * var_a + 2 * centre * cov_ab)) / std::fabs(r.slope);
  return r;
}

namespace {

std::string support_of(const XPosReading& r, DType dtype) {
  return fmt::format(
      "the pairs' norms |y_j|/|x_j| read as ζ_j^w over {} tokens: w = {:.6g}·p {} {:.6g}, each token within "
      "{:.3g} of that line ({:.3g} is what {} rounding leaves)",
      r.tokens, r.slope, r.intercept < 0 ? "-" : "+", std::fabs(r.intercept), r.residual, r.tolerance,
      to_string(dtype));
}

// What the reading says against the given xPos, under `paired`'s pairing; the rotation's own diagnosis (under
// the given plan) where the gain is the one given.
void explain_gain(const XPosReading& r, const RopeData& data, const RopePlan& paired, const RopePlan& plan,
                  const Convention& given, const XPos& xpos, const harness::Measurement& bands,
                  const std::vector<bool>& over, Report& out, const Names& names,
                  const std::vector<Convention>& alternatives, DType dtype) {
  const std::string support = support_of(r, dtype);
  if (r.flat()) {
    const bool none = std::fabs(r.intercept) <= 4 * r.intercept_error;
    const std::string words = none ? "no xPos gain (a plain rotation)"
                                   : fmt::format(
                                         "a gain ζ_j^{:.4g} at every position, not one that follows it "
                                         "(xPos's exponent moves by 1/scale_base a position)",
                                         r.intercept);
    out.say("the data fits: {} ({})\n", words, support);
    out.found({words, support, std::nullopt, std::nullopt});
    return;
  }
  XPosSpec fits;
  const std::vector<std::string> differ = differences(r, xpos, fits);
  if (!differ.empty()) {
    std::string words;
    for (const std::string& d : differ) words += (words.empty() ? "" : "; ") + d;
    out.say("the data fits: xPos with {} ({})\n", words, support);
    Finding f{"xPos with " + words, support, RopeSpec{}, std::nullopt};
    f.hypothesis->xpos = fits;
    f.restated = names.restate(entries(*f.hypothesis));
    out.say("  {}, to check the hypothesis: {}\n", f.restated->label, f.restated->text);
    out.found(std::move(f));
    return;
  }
  out.say("the gain is xPos's as given ({}); the rotation under it, with the gains divided out:\n", support);
  const std::vector<double> bare = ungained(data, paired, xpos);
  RopeData rotation = data;
  rotation.y = bare;
  diagnose_rope_output(rotation, plan, given, bands, over, out, names, alternatives, dtype);
}

}  // namespace

void diagnose_xpos_output(const RopeData& data, const RopePlan& plan, const Convention& given,
                          const XPos& xpos, const harness::Measurement& bands, const std::vector<bool>& over,
                          Report& out, const Names& names, const std::vector<Convention>& alternatives,
                          DType dtype) {
  if (bands.pass() || bands.max_abs() < 1e-3) return;
  out.say("\ndiagnosis (xPos's gain read back from the pairs' norms):\n");
  const XPosReading r = read_xpos_gain(data, plan, dtype);
  if (r.fits()) {
    explain_gain(r, data, plan, plan, given, xpos, bands, over, out, names, alternatives, dtype);
    return;
  }
  // A pairing mistake leaves the given pairs' norms off any line: the other layout's pairs, read the same
  // way.
  for (const Layout other : {Layout::HalfSplit, Layout::Interleaved}) {
    if (other == plan.params().layout || (other == Layout::Interleaved && plan.pairs_interleaved())) continue;
    RopeParams params = plan.params();
    params.layout = other;
    const RopePlan paired(params);
    const XPosReading ra = read_xpos_gain(data, paired, dtype);
    if (!ra.fits()) continue;
    const std::string words =
        fmt::format("pairs as {} pairs them (given: {})", to_string(other), to_string(plan.params().layout));
    const std::string support =
        "the norms of those pairs follow xPos's line, the given ones' do not; " + support_of(ra, dtype);
    out.say("the data fits: {} ({})\n", words, support);
    Finding f{words, support, RopeSpec{}, std::nullopt};
    f.hypothesis->layout = other;
    f.restated = names.restate(entries(*f.hypothesis));
    out.say("  {}, to check the hypothesis: {}\n", f.restated->label, f.restated->text);
    out.found(std::move(f));
    explain_gain(ra, data, paired, plan, given, xpos, bands, over, out, names, alternatives, dtype);
    return;
  }
  out.say("undetermined: {}\n",
          r.read ? "the norms' gain does not follow one line in the position (" + support_of(r, dtype) + ")"
                 : "fewer than two positions hold a nonzero pair");
}

}  // namespace pe::check

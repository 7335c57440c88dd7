#include "engine/against.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "pe/check/report.h"

namespace pe::check {
namespace {

std::size_t band_index(std::int64_t position) {
  const auto edges = harness::band_edges();
  const auto it = std::upper_bound(edges.begin(), edges.end() - 1, position);
  return static_cast<std::size_t>(std::max<std::ptrdiff_t>(0, it - edges.begin() - 1));
}

const harness::BandStats* band_at(const std::vector<harness::BandStats>& bands, std::int64_t lo) {
  const auto it =
      std::find_if(bands.begin(), bands.end(), [lo](const harness::BandStats& s) { return s.lo == lo; });
  return it == bands.end() || it->samples == 0 ? nullptr : &*it;
}

std::string wrong(const harness::BandStats& a, const harness::BandStats& b) {
  if (a.pass() && b.pass()) return "neither";
  if (!a.pass() && !b.pass()) return "both";
  return a.pass() ? "B" : "A";
}

}  // namespace

Against::Against(std::span<const double> a, std::int64_t promised)
    : a_(a), diff_(harness::band_edges().size()) {
  b_.promise(promised);
}

void Against::add(const harness::ElementRecord& b, std::size_t index) {
  b_.add(b);
  double& d = diff_[band_index(b.position)];
  const double e = std::fabs(a_[index] - b.y);
  d = std::isnan(e) ? INFINITY : std::max(d, e);
}

std::string Against::table(const harness::Measurement& a, const std::string& a_name,
                           const std::string& b_name) const {
  std::string out = fmt::format(
      "\nA = {}, B = {}: each against the exact reference, same budget\n{:>23}  "
      "{:>13}  {:>11}  {:>13}  {:>11}  {:>10}  {}\n",
      a_name, b_name, "positions", "A err/budget", "A", "B err/budget", "B", "max |A-B|", "wrong");
  const auto a_bands = a.bands(), b_bands = b_.bands();
  for (const harness::BandStats& sb : b_bands) {
    const harness::BandStats* sa = band_at(a_bands, sb.lo);
    if (sa == nullptr || sb.samples == 0) continue;
    const std::string range = sb.hi == std::numeric_limits<std::int64_t>::max()
                                  ? fmt::format(">= {}", sb.lo)
                                  : fmt::format("{}..{}", sb.lo, sb.hi);
    out += fmt::format("{:>23}  {:>13.3g}  {:>11}  {:>13.3g}  {:>11}  {:>10.3g}  {}\n", range,
                       sa->max_ratio.value, sa->verdict(), sb.max_ratio.value, sb.verdict(),
                       diff_[band_index(sb.lo)], wrong(*sa, sb));
  }
  const char* verdict = a.pass() && b_.pass() ? "both within budget"
                        : a.pass()            ? "B is wrong, A is within budget"
                        : b_.pass()           ? "A is wrong, B is within budget"
                                              : "both are wrong";
  return out + fmt::format("against: {} ({} of {} elements of B over budget)\n", verdict, b_.violations(),
                           b_.count());
}

nlohmann::json Against::to_json(const harness::Measurement& a, DType dtype, const std::string& b_name) const {
  nlohmann::json bands = bands_json(b_, dtype);
  const auto a_bands = a.bands();
  for (nlohmann::json& band : bands) {
    const auto lo = band["lo"].get<std::int64_t>();
    band["max_abs_a_minus_b"] = diff_[band_index(lo)];
    if (const harness::BandStats* sa = band_at(a_bands, lo); sa != nullptr)
      band["wrong"] = wrong(*sa, *band_at(b_.bands(), lo));
  }
  return {{"output", b_name},
          {"passed", b_.verdict_pass()},
          {"violations", b_.violations()},
          {"bands", bands},
          {"worst", [&] {
             nlohmann::json w = nlohmann::json::array();
             for (const harness::ElementRecord& e : b_.worst()) w.push_back(record_json(e));
             return w;
           }()}};
}

}  // namespace pe::check

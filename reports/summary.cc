#include "pe/reports/summary.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string_view>

#include "pe/harness/census.h"
#include "pe/reports/measured.h"

namespace pe::reports {
namespace {

// What stopped an instance's sweep ("fault"; census files of before the guard zones call it "crash").
std::string fault_of(const nlohmann::json& instance) {
  for (const char* key : {"fault", "crash"})
    if (instance.contains(key)) return instance[key].get<std::string>();
  return "";
}

// "1e4" or "2^31" for round numbers, the digits otherwise.
std::string show_position(std::int64_t v) {
  std::int64_t m = v;
  int e = 0;
  while (m >= 10 && m % 10 == 0) m /= 10, ++e;
  if (m == 1 && e >= 3) return fmt::format("1e{}", e);
  if (v >= (1 << 20) && (v & (v - 1)) == 0)
    return fmt::format("2^{}", __builtin_ctzll(static_cast<unsigned long long>(v)));
  return std::to_string(v);
}

// Half-open when the end is a round number ("[1e3, 1e4)"), closed otherwise ("[1e9, 2^31]").
std::string band_label(const census::Band& band) {
  const std::int64_t lo = band.lo, hi = band.hi;
  const std::string open_end = show_position(hi + 1);
  if (open_end != std::to_string(hi + 1)) return fmt::format("[{}, {})", show_position(lo), open_end);
  return fmt::format("[{}, {}]", show_position(lo), show_position(hi));
}

template <class Row>
void for_each_row(const nlohmann::json& census, Row&& row) {
  for (const auto& inst : census) {
    for (const auto& band : inst["bands"].get<std::vector<census::Band>>()) row(inst, band);
  }
}

// The width of the instance column: the longest instance name (at least `header`'s), so that
// `rope.halfsplit.exact@SCALAR/f32` and longer plugin names keep their rows in line.
std::size_t name_width(const nlohmann::json& instances, std::string_view header) {
  std::size_t w = header.size();
  for (const auto& inst : instances) w = std::max(w, inst.value("instance", std::string()).size());
  return w;
}

// err/budget in the 8 characters of its column: three decimals where pass and fail part (near 1), three
// significant digits once the integer part alone would overflow it (a wrong kernel's 1145428.781).
std::string ratio_cell(double r) {
  return std::abs(r) < 1000 ? fmt::format("{:.3f}", r) : fmt::format("{:.3g}", r);
}

}  // namespace

std::string census_instance_table(const nlohmann::json& census) {
  const std::size_t w = name_width(census, "instance");
  std::string out = fmt::format("{:<{}} {:>5} {:>10} {:>12} {:>10} {:>8}  {}\n", "instance", w, "bands",
                                "max |err|", "at position", "max ulp", "err/bud", "verdict");
  for (const auto& inst : census) {
    double err = 0, ulp = 0, ratio = 0;
    std::int64_t at = 0;
    for (const census::Band& band : inst["bands"].get<std::vector<census::Band>>()) {
      const double e = band.max_abs.value;
      if (!std::isnan(err) && (std::isnan(e) || e >= err)) {
        err = e;
        at = band.max_abs.position;
      }
      ulp = worse(ulp, band.max_ulp.value);
      ratio = worse(ratio, band.max_budget_ratio.value);
    }
    out += fmt::format("{:<{}} {:>5} {:>10.3g} {:>12} {:>10.3g} {:>8}  {}\n",
                       inst["instance"].get<std::string>(), w, inst["bands"].size(), err, at, ulp,
                       ratio_cell(ratio), inst.value("within_contract", false) ? "pass" : "FAIL");
  }
  for (const auto& inst : census) {
    if (const std::string note = run_failure(inst); !note.empty())
      out += fmt::format("{}: {}\n", inst["instance"].get<std::string>(), note);
    if (const std::string f = fault_of(inst); !f.empty()) out += f + "\n";
  }
  return out;
}

std::string run_failure(const nlohmann::json& instance) {
  const nlohmann::json runs = instance.value("runs", nlohmann::json::object());
  const auto differing = runs.value("differing_elements", std::size_t{0});
  if (differing == 0) return "";
  return fmt::format(
      "{} elements of runs of consecutive positions differ between the whole run and the run split at its "
      "direct rows (first at position {}): state along positions that the contract does not declare "
      "(state_rows = {})",
      differing, runs.value("first_position", std::int64_t{-1}),
      instance["contract"]["declared"].value("state_rows", std::int64_t{0}));
}

std::string census_table(const nlohmann::json& census) {
  const std::size_t w = name_width(census, "instance");
  std::string out = fmt::format("{:<{}} {:<18} {:>10} {:>10} {:>10} {:>8}  {}\n", "instance", w, "positions",
                                "max |err|", "max ulp", "budget", "err/bud", "verdict");
  for_each_row(census, [&](const nlohmann::json& inst, const census::Band& band) {
    out += fmt::format("{:<{}} {:<18} {:>10.3g} {:>10.3g} {:>10.3g} {:>8}  {}\n",
                       inst["instance"].get<std::string>(), w, band_label(band), band.max_abs.value,
                       band.max_ulp.value, band.budget_at_max_abs, ratio_cell(band.max_budget_ratio.value),
                       band.verdict);
  });
  return out;
}

std::string census_markdown(const nlohmann::json& census) {
  std::string out =
      "# pe-suite accuracy census\n\n"
      "Generated by `pe-suite verify`; do not edit. Errors are against the exact (MPFR) value. The "
      "budget is the contract's `c0·u_out + c1·u_angle·|φ|` at the worst element; `err/bud` above 1 "
      "breaks the contract.\n\n"
      "| instance | positions | max abs error | at (position, channel) | max ULP | budget there | err/budget "
      "| verdict |\n"
      "|---|---|---:|---|---:|---:|---:|---|\n";
  for_each_row(census, [&](const nlohmann::json& inst, const census::Band& band) {
    out += fmt::format("| `{}` | {} | {:.3g} | ({}, {}) | {:.3g} | {:.3g} | {:.3f} | {} |\n",
                       inst["instance"].get<std::string>(), band_label(band), band.max_abs.value,
                       band.max_abs.position, band.max_abs.channel, band.max_ulp.value,
                       band.budget_at_max_abs, band.max_budget_ratio.value, band.verdict);
  });
  for (const auto& inst : census)
    if (const std::string f = fault_of(inst); !f.empty()) out += "\n" + f + "\n";
  return out;
}

std::string exhaustive_table(const nlohmann::json& doc) {
  const std::size_t name_w = name_width(doc.at("instances"), "instance");
  std::string out = fmt::format("{:<{}} {:>23} {:>14} {:>10} {:>10} {:>11} {:>24} {:>10} {:>9}\n", "instance",
                                name_w, "positions", "elements", "max |err|", "max ulp", "err/budget",
                                "worst at (p, channel)", "over", "MPFR");
  const auto num = [](const nlohmann::json& v) { return v.is_null() ? INFINITY : v.get<double>(); };
  for (const nlohmann::json& in : doc.at("instances")) {
    bool first = true;
    for (const nlohmann::json& b : in.at("bands")) {
      const nlohmann::json& w = b.at("max_ratio");
      out += fmt::format(
          "{:<{}} {:>23} {:>14} {:>10.3g} {:>10.3g} {:>11.3g} {:>24} {:>10} {:>9}\n",
          first ? in.at("instance").get<std::string>() : "", name_w,
          fmt::format("{}..{}", b.at("lo").get<std::int64_t>(), b.at("hi").get<std::int64_t>() - 1),
          b.at("elements").get<std::uint64_t>(), num(b.at("max_abs").at("value")),
          num(b.at("max_ulp").at("value")), num(w.at("value")),
          fmt::format("({}, {})", w.at("position").get<std::int64_t>(), w.at("channel").get<std::int64_t>()),
          b.at("violations").get<std::uint64_t>(),
          first ? std::to_string(in.at("mpfr_fallbacks").get<std::uint64_t>()) : "");
      first = false;
    }
    if (first)
      out += fmt::format("{:<{}} outside its contract's positions in this range\n",
                         in.at("instance").get<std::string>(), name_w);
  }
  return out;
}

}  // namespace pe::reports

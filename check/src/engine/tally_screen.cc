#include "engine/tally_screen.h"

#include <algorithm>
#include <cmath>

#include "pe/ref/fma_clones.h"
#include "pe/variant.h"

namespace pe::check {
namespace {
PE_FMA_CLONES std::size_t count_loud(const double* err, const double* scale, std::size_t n, double bar) {
  std::size_t loud = 0;
  for (std::size_t i = 0; i < n; ++i) loud += err[i] <= bar * scale[i] ? 0 : 1;
  return loud;
}
// Every element of `row` a table element of `pair` (branch-free, so that it runs in vectors).
PE_FMA_CLONES bool table_row(const harness::RopeRow& row, std::size_t pair) {
  const std::size_t* p = row.pair.data();
  const double *phi = row.abs_phi.data(), *gain = row.gain.data(), *extra = row.gain_extra.data();
  const std::uint8_t* unchanged = row.unchanged.data();
  std::size_t other = 0;
  for (std::size_t i = 0; i < row.size(); ++i)
    other += (p[i] != pair) | (phi[i] != 1) | (gain[i] != 1) | (extra[i] != 0) | (unchanged[i] != 0);
  return other == 0;
}
}  // namespace

TallyScreen::TallyScreen(ContractTally& tally, DType dtype) : tally_(tally), dtype_(dtype) {
  // The tally's contracts by name (to_json lists every one), each worst 0 before any element.
  for (const nlohmann::json& c : tally.to_json())
    contracts_.push_back(&find_variant(c.at("contract").get<std::string>())->contract());
  worst_.assign(contracts_.size(), 0.0);
}

void TallyScreen::add(const harness::ElementRecord& e) {
  tally_.add(e);
  // ContractTally::add's ratio for a table element (no RoPE slopes): the same operations.
  for (std::size_t k = 0; k < contracts_.size(); ++k) {
    const double term =
        e.unchanged ? 0.0 : harness::Budget{contracts_[k], dtype_}(nullptr, e.abs_phi, e.pair, e.scale);
    const double r = harness::ElementRecord::ratio_of(e.abs_error, e.gain * term + e.gain_extra);
    if (!(r <= worst_[k])) worst_[k] = r, lines_.clear();
  }
}

const std::vector<double>& TallyScreen::relative(std::size_t pair) {
  if (pair >= relative_.size()) relative_.resize(pair + 1);
  std::vector<double>& out = relative_[pair];
  if (!out.empty() || contracts_.empty()) return out;
  for (const Contract* contract : contracts_) {
    // element_budget at |φ| = 1 is relative·scale + floor; relative read back at scale 2^600, where the
    // floor is far below the last bit.
    const Contract& c = *contract;
    const double relative = element_budget(c, dtype_, 1.0, pair, 0x1p600) * 0x1p-600;
    const double floor = element_budget(c, dtype_, 1.0, pair, 0.0);
    // Not that form (a zero relative term reads back as the floor): no line, every element is added.
    const bool form = element_budget(c, dtype_, 1.0, pair, 1e6) == relative * 1e6 + floor;
    out.push_back(form ? relative : NAN);
  }
  return out;
}

double TallyScreen::line(std::size_t pair) {
  if (pair < lines_.size() && !std::isnan(lines_[pair])) return lines_[pair];
  if (pair >= lines_.size()) lines_.resize(pair + 1, NAN);
  return lines_[pair] = line_now(pair);
}

double TallyScreen::line_now(std::size_t pair) {
  const std::vector<double>& r = relative(pair);
  double line = INFINITY;
  for (std::size_t k = 0; k < contracts_.size(); ++k) {
    if (std::isnan(r[k])) return 0;
    line = std::min(line, worst_[k] * r[k]);
  }
  return line;
}

void TallyScreen::add_row(const harness::RopeRow& row) {
  const std::size_t n = row.size();
  if (n == 0) return;
  const std::size_t pair = row.pair[0];
  // Table rows only (one pair, |φ| = 1, no gain, no extra, compared): what the line below is for.
  if (!table_row(row, pair)) {
    for (std::size_t k = 0; k < n; ++k) add(row.record(k));
    return;
  }
  // err <= line·|exact|·(1 - 2^-45) in rounded arithmetic gives err <= worst·budget·(1 - 2^-49) for every
  // contract (budget >= relative·scale, the floor being positive), so err/budget rounds to at most worst.
  // A NaN error is never quiet. Counted branch-free first (most rows have no loud element).
  const double bar = line(pair) * (1 - 0x1p-45);
  if (count_loud(row.abs_error.data(), row.scale.data(), n, bar) == 0) return;
  for (std::size_t i = 0; i < n; ++i)
    if (!(row.abs_error[i] <= bar * row.scale[i])) add(row.record(i));
}

}  // namespace pe::check

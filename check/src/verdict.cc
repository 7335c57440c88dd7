#include "verdict.h"

#include <fmt/format.h>

#include "band_table.h"

namespace pe::check {

std::string shape_words(const std::vector<std::size_t>& shape) {
  return fmt::format("[{}]", fmt::join(shape, ", "));
}

void report_verdict(const harness::Measurement& bands, const Budget& budget, Report& out,
                    const ContractTally* tally) {
  out.measured(bands, budget.dtype, budget.text);
  out.passed = bands.pass();
  if (tally != nullptr) out.j["contracts"] = tally->to_json();
  out.say("budget: {}\n\n{}\n", budget.text, band_table(bands));
  out.say("verdict: {} ({} of {} elements over budget; max |err| {:.3g})\n", bands.pass() ? "PASS" : "FAIL",
          bands.violations(), bands.count(), bands.max_abs());
  if (tally != nullptr) out.say("contracts: {}\n", tally->summary());
}

void require_same(const DataView& b, const DataView& a, std::string_view a_parameter, const Names& names) {
  if (b.shape != a.shape || b.dtype != a.dtype)
    names.fail("against", fmt::format("{} holds {} {}, {} {} {}: compare two outputs of one shape and type",
                                      b.name, to_string(b.dtype), shape_words(b.shape), names(a_parameter),
                                      to_string(a.dtype), shape_words(a.shape)));
}

}  // namespace pe::check

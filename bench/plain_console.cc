#include "plain_console.h"

#include <cmath>
#include <sstream>
#include <string>

namespace pe::bench {
namespace {

// Counters whose value Google Benchmark divides by the time (or inverts) before reporting: a per-element
// time carries kInvert, a fraction of the machine's limit is named so (grid.cc, exact_floors.cc).
bool divided_by_time(const std::string& name, const benchmark::Counter& c) {
  const bool fraction = name.size() > 9 && name.ends_with("_fraction");
  return (c.flags & benchmark::Counter::kIsRate) && ((c.flags & benchmark::Counter::kInvert) || fraction);
}

constexpr const char* kDebugWarning = "***WARNING*** Library was built as DEBUG. Timings may be affected.";

}  // namespace

std::vector<benchmark::BenchmarkReporter::Run> plain_runs(
    std::vector<benchmark::BenchmarkReporter::Run> runs) {
  using Run = benchmark::BenchmarkReporter::Run;
  for (Run& run : runs) {
    const bool spread = run.run_type == Run::RT_Aggregate && run.aggregate_unit == benchmark::kPercentage;
    for (auto& [name, c] : run.counters) {
      if (divided_by_time(name, c))
        c.flags = static_cast<benchmark::Counter::Flags>(
            c.flags & ~(benchmark::Counter::kIsRate | benchmark::Counter::kInvert));
      if (spread && std::isnan(c.value)) c.value = 0;  // 0/0: the same in every repetition
    }
  }
  return runs;
}

bool PlainConsole::ReportContext(const Context& context) {
  std::ostream& err = GetErrorStream();
  std::ostringstream captured;
  SetErrorStream(&captured);
  const bool ok = benchmark::ConsoleReporter::ReportContext(context);
  SetErrorStream(&err);
  std::string text = captured.str();
  if (const std::size_t at = text.find(kDebugWarning); at != std::string::npos) {
    text.replace(
        at, std::string(kDebugWarning).size(),
        "note: the Google Benchmark library linked here was built without NDEBUG and says so of itself; it "
        "says nothing of pe-suite's own build (its flags: pe_cxx_flags in the JSON context)");
  }
  err << text;
  return ok;
}

void PlainConsole::ReportRuns(const std::vector<Run>& runs) {
  benchmark::ConsoleReporter::ReportRuns(plain_runs(runs));
}

}  // namespace pe::bench

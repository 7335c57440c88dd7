// pe_bench's console: Google Benchmark's, with our counters in their own units. ns_per_element,
// fill_fraction and copy_fraction are declared as rates (Counter::kIsRate, ns_per_element also
// kInvert) only so that Google Benchmark divides them by the measured time; once reported their values
// are final (ns per element, a fraction), yet its console appends "s" or "/s" to every rate
// (`ns_per_element=2.04291s`). The coefficient of variation of a counter that is 0 in every repetition
// (allocs_per_call) is 0/0, printed `-nan%`: no spread, shown as 0. And Debian's libbenchmark is built
// without NDEBUG, so its context warns `Library was built as DEBUG` about itself, not about our code: the
// warning is replaced by a line that says so.
#pragma once

#include <benchmark/benchmark.h>

#include <vector>

namespace pe::bench {

class PlainConsole : public benchmark::ConsoleReporter {
 public:
  using benchmark::ConsoleReporter::ConsoleReporter;
  bool ReportContext(const Context& context) override;
  void ReportRuns(const std::vector<Run>& runs) override;
};

// The run as PlainConsole prints it: our time-divided counters without the rate flags, a 0/0 spread 0.
std::vector<benchmark::BenchmarkReporter::Run> plain_runs(
    std::vector<benchmark::BenchmarkReporter::Run> runs);

}  // namespace pe::bench

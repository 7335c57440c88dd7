// Benchmark JSON (pe_bench, Google Benchmark's format) as records: one per benchmark with the
// medians over its repetitions and its identity (pe/harness/bench_identity.h) read from the label. Google
// Benchmark's own memory fields (max_bytes_used, total_allocated_bytes; garbage in Debian's 1.7.1, upstream
// issue #1939) are ignored where an older run has them; allocs_per_call and peak_heap_bytes_per_call are
// ours.
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pe/harness/bench_identity.h"

namespace pe::reports {

// One benchmark of a Google Benchmark JSON file: its repetitions (iteration rows) or its error, and
// the identity its label holds (none for limits/ and plan/ rows).
struct BenchRuns {
  std::string name;
  std::optional<harness::BenchIdentity> identity;
  std::vector<const nlohmann::json*> repetitions;
  std::string error;  // the error message of a benchmark that was skipped with one
};
// Every benchmark of `run` in file order: the one reader of Google Benchmark JSON (compare and the
// report). Throws std::runtime_error on a file that is not Google Benchmark JSON, and on a label
// that claims the identity schema but does not hold it.
std::vector<BenchRuns> benchmark_runs(const nlohmann::json& run);

// A kernel benchmark: its identity and the medians over its repetitions.
struct BenchRecord : harness::BenchIdentity {
  std::string name;
  std::size_t repetitions = 0;
  double real_time_ns = 0, ns_per_element = 0, fill_fraction = 0, copy_fraction = 0;
  bool fill_limit_streams = false;  // the fill limit was streaming stores' (else the C library's memset)
  double allocs_per_call = -1, peak_heap_bytes = -1, max_abs_error = 0, error_over_budget = 0;
  std::string error;  // the contract check's message when it was not timed
  // (max - min) / median of ns_per_element over the repetitions (NaN for fewer than two): how far one
  // repetition's number can be trusted on this machine.
  double spread = NAN;
};

// A floor/ benchmark (an exact variant's innermost loop alone, pe_bench's exact_floors.cc): medians.
struct FloorRecord {
  std::string name;
  double ns_per_element = 0, fill_fraction = 0;  // NaN where the benchmark did not report it
};
// The floor/ benchmarks of `run`, in file order.
std::vector<FloorRecord> floor_records(const nlohmann::json& run);

// Nanoseconds in one Google Benchmark time unit ("ns", "us", "ms", "s").
double ns_per(const std::string& unit);
// The median (mean of the middle two for an even count); NaN for no values.
double median(std::vector<double> v);

// Google Benchmark writes NaN and inf as bare words (the coefficient of variation of a constant
// counter is 0/0), which JSON does not allow: they are read as null. Throws std::runtime_error
// naming `what` when the text is not JSON.
nlohmann::json parse_benchmark_json(const std::string& text, const std::string& what);

// Kernel benchmarks only: every benchmark with an identity (limits/ and plan/ rows are context).
// Throws as benchmark_runs.
std::vector<BenchRecord> bench_records(const nlohmann::json& run);

}  // namespace pe::reports

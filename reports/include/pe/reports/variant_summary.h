// One row per variant, joining the census, the benchmarks and the property run: what `pe-suite
// run` prints on one screen and the report's first table.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pe/harness/family_traits.h"
#include "pe/reports/bench_results.h"

namespace pe::reports {

struct VariantRow {
  // primary: the f32 instance in the first layout, else (a variant writing 16-bit data only) its first
  // instance, in primary_dtype
  std::string variant, family, primary, primary_dtype = "f32";
  std::size_t instances = 0, failing_instances = 0;
  double worst_ratio = 0;       // worst |err| / budget over every instance and band
  double primary_err_1e6 = -1;  // primary's worst |err| at positions < 10^6 (-1: none)
  double primary_err_max = -1;  // ... over every band it promises
  std::int64_t max_position = 0;
  int property_tests = -1, property_failures = -1;                       // -1: no property run
  double ns_per_element = -1, fill_fraction = -1, allocs_per_call = -1;  // at the row's shape
  std::string speed_shape;  // the benchmark's shape in the family's summary words ("H32·Q128·K2048")
};

// `gtest` may be null. Speed: sinusoidal table f32 L8192 x d128 from 0, RoPE T2048 x H32 x D128.
std::vector<VariantRow> variant_rows(const nlohmann::json& census, const std::vector<BenchRecord>& bench,
                                     const nlohmann::json& gtest);

// A column that is "-" in every row (no property run, no benchmarks) is left out of both.
std::string variant_table(const std::vector<VariantRow>& rows);     // terminal
std::string variant_markdown(const std::vector<VariantRow>& rows);  // report

// The benchmark of `instance` at the representative shape of its family (f32, positions from 0, unscaled,
// text, timed): its summary length, else the headline shape at the length nearest to it that the run
// timed (quick mode times no ALiBi Q2048); null when there is none.
const BenchRecord* representative(const std::vector<BenchRecord>& bench, const std::string& instance,
                                  const std::string& dtype = "f32");

// The family's summary shape at `length` ("H32·Q2048·K2048" at 128: "H32·Q128·K2048"): the first
// occurrence of summary_length in summary_shape replaced (in every family's row that is the length).
std::string shape_at(const harness::FamilyTraits& traits, std::int64_t length);

}  // namespace pe::reports

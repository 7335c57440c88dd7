// The report folder: report.md with SVG plots and the JSON it was made from. Generated, never
// edited by hand: `pe-suite report` (and `pe-suite run`) rewrite it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "pe/reports/bench_results.h"
#include "pe/reports/variant_summary.h"

namespace pe::reports {

struct ReportInputs {
  nlohmann::json census;             // census instances (merged shards)
  nlohmann::json rope_scaling;       // the census's RoPE scaling ({"type": "none"}), or null
  nlohmann::json bench;              // Google Benchmark JSON, or null
  nlohmann::json compare;            // `pe-suite compare --out` JSON, or null
  nlohmann::json properties;         // GoogleTest JSON of the property run, or null
  nlohmann::json exhaustive;         // an exhaustive census (merged shards, pe/harness/exhaustive.h), or null
  std::vector<std::string> sources;  // where each came from, for the header
};

struct ReportOutput {
  std::string markdown_path;
  std::vector<std::string> plots;
  bool plots_skipped = false;  // no gnuplot on PATH
};

ReportOutput write_report(const ReportInputs& in, const std::string& dir);

// bench.md: one row per kernel benchmark, every one bench_records() reads; then the exact variants'
// floors, where the run measured them.
std::string benchmarks_markdown(const std::vector<BenchRecord>& records,
                                const std::vector<FloorRecord>& floors = {});

// The accuracy-against-speed points of `family`'s rows, fastest first, each marked on the Pareto front or
// not: the Pareto plot labels the front only, this table names every point ("" for fewer than two).
std::string pareto_markdown(const std::string& family, const std::vector<VariantRow>& rows);

// ns/element and % of the fill limit per variant at the shapes (unscaled), the fastest per shape.
std::string speed_markdown(const nlohmann::json& bench);

}  // namespace pe::reports

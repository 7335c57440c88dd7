// The speed summary `pe-suite bench` ends with, and the order every speed listing shares (bench.md too):
// family (registry order), shape, then speed, fastest first. One table per family: a row per instance, a
// column per shape the run timed, so that a quick run over every RoPE variant fits one screen; the raw
// Google Benchmark rows stay in their own file.
#pragma once

#include <string>
#include <vector>

#include "pe/reports/bench_results.h"

namespace pe::reports {

// Family (registry order), shape (f32 before 16-bit, text before other forms, unscaled first, then
// threads, op, heads, dim, start before far, length), then ns per element (untimed last), then name.
bool bench_order_less(const BenchRecord& a, const BenchRecord& b);
// Whether two benchmarks time the same shape (every identity field but the instance's and variant's).
bool same_shape(const harness::BenchIdentity& a, const harness::BenchIdentity& b);
// A shape's short name, what differs from its family's headline shape after the length: "T2048",
// "T1 far", "T2048 yarn", "T2048 bf16", "T1 far mla H128 D192", "L128 add" (an unknown family: the
// benchmark name's shape part).
std::string shape_label(const harness::BenchIdentity& id);

// The terminal summary: per family, rows sorted fastest first at the family's summary shape; each cell
// "ns/element fraction-of-limit%" (medians over the repetitions; the limit is the faster fill at the same
// bytes, measured in the same run); then the most allocations per call and the widest spread of the row.
std::string bench_summary(const std::vector<BenchRecord>& records);

}  // namespace pe::reports

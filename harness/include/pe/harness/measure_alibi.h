// ALiBi's slopes and bias tables against the exact reference (pe/ref/alibi.h), element by element,
// each with its contract's budget (pe/contract.h: relative to the exact bias, k the head's power).
#pragma once

#include <cstdint>
#include <span>

#include "pe/alibi.h"
#include "pe/harness/measure.h"

namespace pe::harness {

// A bias table [n_heads, queries, keys] (`y`, row-major). Records name the head, the query index as
// `row`, the key index as `channel`, |s| (the distance the bias grows with) as `position`, the head
// count as `dim` and max_bias as `base`. A sample's rows are query indices, its pairs key indices
// (every head either way).
void measure_alibi(const AlibiParams& params, std::span<const std::int64_t> queries,
                   std::span<const std::int64_t> keys, Values y, const Budget& budget, const Sink& sink,
                   const Sample& sample = {});

// The same comparison of a float32 bias, a run of keys at a time: each run lies within one position band
// (band_edges()) and reaches `sink` as a row (RopeRow's columns are an ElementRecord's: row = the query
// index, head, dim = the head count, base = max_bias), in measure_alibi's order and with its records bit for
// bit: the vectors of alibi_rows_vector.h, the MPFR path where they are undecided. `unmasked_only`: keys
// after the query (the causal form's masked entries) are left out.
void measure_alibi_rows(const AlibiParams& params, std::span<const std::int64_t> queries,
                        std::span<const std::int64_t> keys, std::span<const float> y, const Budget& budget,
                        const RowSink& sink, bool unmasked_only = false);

// The slopes [n_heads]: the bias at s = 1 (position 1, channel h).
void measure_alibi_slopes(const AlibiParams& params, Values y, const Budget& budget, const Sink& sink);

}  // namespace pe::harness

// ALiBi's slopes and bias tables against the exact reference (pe/ref/alibi.h), element by element,
// each with its contract's budget (pe/contract.h: relative to the exact bias, k the head's power).
#pragma once

#include <cstdint>
#include <functional>
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

// What check's one pass over a float32 bias tells its caller besides `bands`: a run of keys measured exactly
// in full and a loud key of a screened run, each after `bands` took it; and per head power (the records'
// `pair`) the line under which the caller's own reader (a contract tally) needs no element: |y − exact| <=
// line·|exact| (0: every element with an error goes to `loud`), asked again only once `row` or `loud` met a
// record (the pass takes it to change only then).
struct AlibiScreenedSinks {
  std::function<void(const RopeRow&)> row;
  std::function<void(const ElementRecord&)> loud;
  std::function<double(std::size_t power)> line;
};
// measure_alibi_rows into `bands` as one pass (alibi_rows_vector.h's AlibiScreen): the bias read in place,
// most keys proved quiet by the screen, the others measured exactly (the vectors, then MPFR); the verdict,
// violations, maxima, worst elements and the sinks' records are measure_alibi_rows's, the 99th percentiles
// the screen's: |p99_abs' − p99_abs| <= 2^-49·(p99_abs + the band's largest |exact|) and
// |p99_ulp' − p99_ulp| <= 2^-49·p99_ulp + 2^-25. false, with nothing measured, where it does not apply: a
// budget not of float32, no vector target, keys not in increasing order, or a key or query of 2^52 or more.
bool measure_alibi_screened(const AlibiParams& params, std::span<const std::int64_t> queries,
                            std::span<const std::int64_t> keys, std::span<const float> y,
                            const Budget& budget, Measurement& bands, const AlibiScreenedSinks& sinks,
                            bool unmasked_only = false);

// How measure_alibi_screened saves time without changing what it reports (process-wide, set before
// measuring; tests force each part on small tables or turn it off).
struct AlibiScreenTuning {
  // From this many elements on, each band's tails presume a floor (Measurement::presume_floors): the level
  // `presumed_share` of a sample's estimates exceed (128 rows, 512 keys in each; the share over 1% shrinks
  // as 1/sqrt of a band's sample size from 1024 values on: 0.01125 at 65536). Where fewer than 1% of the
  // band turn out to exceed it, the pass runs again without (the sinks see each record once).
  std::size_t presume_from = std::size_t{1} << 20;
  double presumed_share = 0.02;
  // Where keys are consecutive integers, each head's quiet bounds per multiplier (alibi_quiet_bounds), so
  // that a quiet key below the floors costs a compare (the same keys quiet, the same estimates kept).
  bool quiet_bounds = true;
};
void tune_alibi_screen(const AlibiScreenTuning& tuning) noexcept;
const AlibiScreenTuning& alibi_screen_tuning() noexcept;
// How many passes ran again, process-wide, because a presumed floor did not hold (tests, benchmarks).
std::size_t alibi_screen_reruns() noexcept;
// How many times, process-wide, a head's quiet bounds grew to take a tie: an output measured exactly before
// at the same multiplier, its values at or below the tails' floors (tests).
std::size_t alibi_screen_folded_ties() noexcept;

// The slopes [n_heads]: the bias at s = 1 (position 1, channel h).
void measure_alibi_slopes(const AlibiParams& params, Values y, const Budget& budget, const Sink& sink);

}  // namespace pe::harness

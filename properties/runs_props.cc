// Position arrays of every kind a kernel's fast paths branch on (consecutive runs long enough to cross
// every refresh a contract declares, sorted, reversed, repeated, strided, scattered, non-monotone),
// over every instance in every output type: agreement with the reference, and determinism (a call
// split at its direct rows gives the whole call's bits: pe/contract.h's state_rows).

#include <algorithm>
#include <set>

#include "pe/harness/pieces.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

struct RunCase {
  std::vector<std::int64_t> positions;
  std::int64_t dim = 0;
  double base = 0;
  std::int64_t heads = 1;  // heads are rows alike (RopeProps.EveryBatchLayoutRotatesEachRowAlike)
  std::vector<double> x;   // the input of families that transform data
};

class PositionRuns : public InstanceTest {
 protected:
  // `max_elements` caps a run (rows · elements of a row) unless state_rows needs more.
  RunCase gen_case(std::size_t max_elements) const {
    const std::int64_t state = in().contract().state_rows;
    // A run crosses at least one refresh of a stateful variant (state_rows + 1 rows from a direct one),
    // and is up to a thousand rows long: a drift of 1e-9 per row along it moves bfloat16 roundings
    // (about s·(L - s)·dim·3e-7 of them between a call split at row s and the whole call).
    // With 2^16 elements (512 rows of 128) the flips above are about 0.005·L.
    RunCase c;
    c.dim = *rc::gen::oneOf(gen_dim(128), gen_tail_dim(3)).as("dim");
    c.base = *gen_base().as("base");
    const std::size_t row = harness::elements_per_position(in(), c.dim, c.heads);
    const std::size_t min_run = state > 0 ? static_cast<std::size_t>(state) + 2 : 2;
    const std::size_t max_run = std::max<std::size_t>(std::min<std::size_t>(1024, max_elements / row),
                                                      2 * static_cast<std::size_t>(state) + 3);
    const PositionKind kind = *gen_position_kind().as("kind");
    RC_CLASSIFY(true, std::string("run, then ") + to_string(kind));
    c.positions = *gen_run_then(kind, in().contract().max_position, min_run, max_run).as("positions");
    if (family().reads_data) {
      const std::size_t size = c.positions.size() * harness::elements_per_position(in(), c.dim, c.heads);
      c.x = seeded_inputs(in().dtype, size, *rc::gen::arbitrary<std::uint64_t>().as("input seed"));
    }
    return c;
  }
};

// The reference is compared on the first rows, the last rows, the direct rows of a stateful variant
// and the rows before them, and a few drawn ones; at most 16 pairs spread over the frequencies.
harness::Sample sample_of(const RunCase& c, std::int64_t state_rows) {
  std::set<std::size_t> rows;
  const std::size_t n = c.positions.size();
  for (std::size_t r = 0; r < std::min<std::size_t>(n, 3); ++r) rows.insert(r), rows.insert(n - 1 - r);
  for (std::size_t r : harness::direct_rows(c.positions, state_rows)) {
    if (state_rows == 0 || rows.size() > 16) break;
    rows.insert(r);
    if (r > 0) rows.insert(r - 1);
  }
  for (std::size_t r : *rc::gen::container<std::vector<std::size_t>>(4, rc::gen::inRange<std::size_t>(0, n))
                            .as("sampled rows")) {
    rows.insert(r);
  }
  const std::size_t pairs = static_cast<std::size_t>(c.dim / 2);
  std::set<std::size_t> p;
  const std::size_t m = std::min<std::size_t>(pairs, 16);
  for (std::size_t k = 0; k < m; ++k) p.insert(m == 1 ? 0 : k * (pairs - 1) / (m - 1));
  return {{rows.begin(), rows.end()}, {p.begin(), p.end()}};
}

TEST_P(PositionRuns, AgreesWithReferenceOnEveryKindOfPositionArray) {
  PE_RC_CHECK("|y - exact| <= budget along runs, sorted, reversed, repeated, strided, scattered", [&] {
    const RunCase c = gen_case(8192);  // the reference sees a sample of rows: longer runs only cost
    const TypedBuffer y = harness::run_call(in(), c.dim, c.base, c.positions, c.heads, c.x);
    family().measure(in(), c.dim, c.base, c.positions, c.heads, c.x, y, fail_over_budget(),
                     sample_of(c, in().contract().state_rows));
  });
}

TEST_P(PositionRuns, PiecesGiveTheWholeCallsBits) {
  PE_RC_CHECK("a call split at its direct rows gives the same bits as the whole call", [&] {
    const RunCase c = gen_case(65536);
    std::vector<std::size_t> candidates = harness::direct_rows(c.positions, in().contract().state_rows);
    candidates.erase(candidates.begin());  // row 0 starts every call
    RC_CLASSIFY(candidates.empty(), "nowhere to split");
    if (candidates.empty()) return;
    std::vector<std::size_t> splits =
        *rc::gen::container<std::vector<std::size_t>>(*rc::gen::inRange<std::size_t>(1, 4).as("pieces - 1"),
                                                      rc::gen::elementOf(candidates))
             .as("split before rows");
    std::sort(splits.begin(), splits.end());
    splits.erase(std::unique(splits.begin(), splits.end()), splits.end());
    const TypedBuffer whole = harness::run_call(in(), c.dim, c.base, c.positions, c.heads, c.x);
    const TypedBuffer pieces = harness::run_in_pieces(in(), c.dim, c.base, c.positions, c.heads, c.x, splits);
    const std::vector<std::size_t> differing = harness::differing_elements(whole, pieces);
    if (!differing.empty()) {
      const std::size_t i = differing.front(), row = i / harness::elements_per_position(in(), c.dim, c.heads);
      RC_FAIL(fmt::format(
          "row {} (position {}), element {}: {:.9g} in pieces, {:.9g} at once ({} elements differ)", row,
          c.positions[row], i, pieces.get(i), whole.get(i), differing.size()));
    }
  });
}

PE_INSTANTIATE(PositionRuns, selected());

}  // namespace
}  // namespace pe::testing

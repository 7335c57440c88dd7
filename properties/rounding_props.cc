// Narrow outputs are one rounding of the variant's own result: for every instance whose type is
// narrower than the widest its contract lists (bfloat16 and float16; float32 of a variant that also
// writes float64), the output equals the round-to-nearest-even of the wide instance's output on the
// same input, bit for bit, independent of the budget. When the wide type is itself narrower than the
// compute type (float32 out of a float64 computation), a wide value exactly halfway between two
// narrow ones may have come from either side of it: either neighbour is then the correct rounding.

#include "pe/harness/pieces.h"
#include "support/property_util.h"

namespace pe::testing {
namespace {

// Significand bits, the implicit one included: u = 2^-p.
int precision(DType t) { return -std::ilogb(unit_roundoff(t)); }

DType widest_output(const Contract& c) {
  DType w = c.outputs.front();
  for (DType t : c.outputs) w = precision(t) > precision(w) ? t : w;
  return w;
}

// Whether v lies exactly halfway between two neighbours of `narrow` (a double-rounding tie).
bool halfway(double v, DType narrow) {
  if (!std::isfinite(v) || v == 0) return false;
  // The spacing of `narrow` at |v|: 2u·2^⌊log2|v|⌋, and the subnormals' below the normal range.
  const double quantum = std::max(std::ldexp(2 * unit_roundoff(narrow), std::ilogb(v)), denorm_min(narrow));
  const double scaled = std::fabs(v) / quantum;
  return scaled - std::floor(scaled) == 0.5;
}

std::vector<Instance> narrower_than_their_widest() {
  std::vector<Instance> out;
  for (const Instance& i : selected()) {
    if (precision(i.dtype) < precision(widest_output(i.contract()))) out.push_back(i);
  }
  return out;
}

class NarrowOutputs : public InstanceTest {};

TEST_P(NarrowOutputs, AreTheRoundedWideOutput) {
  const Instance wide{in().variant, in().layout, widest_output(in().contract())};
  const bool ties_possible = precision(wide.dtype) < precision(in().contract().compute_type);
  const harness::FamilyTraits& family = harness::traits_of(in().variant->family());
  PE_RC_CHECK("narrow output == RNE(wide output), bit for bit", [&] {
    const PositionKind kind = *gen_position_kind().as("kind");
    RC_CLASSIFY(true, std::string("run, then ") + to_string(kind));
    const auto positions = *gen_run_then(kind, in().contract().max_position, 2, 40).as("positions");
    const std::int64_t dim = *rc::gen::oneOf(gen_dim(128), gen_tail_dim(3)).as("dim");
    const double base = *gen_base().as("base");
    const std::int64_t heads = 2;
    std::vector<double> x;  // representable in the narrow type, so both calls see the same input
    if (family.reads_data) {
      x = seeded_inputs(in().dtype, positions.size() * harness::elements_per_position(in(), dim, heads),
                        *rc::gen::arbitrary<std::uint64_t>().as("input seed"));
      // Also near and below the bottom of the normal range (float32's and bfloat16's 2^-126), where
      // a rounding that works on the significand alone goes wrong.
      const int scale = *rc::gen::element(0, 0, -122, -126, -130).as("input scale (power of two)");
      TypedBuffer scaled(in().dtype, x.size());
      for (std::size_t i = 0; i < x.size(); ++i) scaled.set(i, std::ldexp(x[i], scale));
      x = scaled.values();
    }
    const TypedBuffer w = harness::run_call(wide, dim, base, positions, heads, x);
    const TypedBuffer n = harness::run_call(in(), dim, base, positions, heads, x);
    TypedBuffer rounded(in().dtype, w.size());
    for (std::size_t i = 0; i < w.size(); ++i) rounded.set(i, w.get(i));
    for (std::size_t i : harness::differing_elements(rounded, n)) {
      if (std::isnan(w.get(i)) && std::isnan(n.get(i))) continue;
      const bool tie = ties_possible && halfway(w.get(i), in().dtype);
      RC_CLASSIFY(tie, "a tie of the wide value");
      if (tie && std::fabs(n.get(i) - w.get(i)) == std::fabs(rounded.get(i) - w.get(i))) continue;
      RC_FAIL(fmt::format("element {} (row {}): {} gives {:.9g}, rounding its {} {:.17g} gives {:.9g}", i,
                          i / harness::elements_per_position(in(), dim, heads), to_string(in().dtype),
                          n.get(i), to_string(wide.dtype), w.get(i), rounded.get(i)));
    }
  });
}

PE_INSTANTIATE(NarrowOutputs, narrower_than_their_widest());

}  // namespace
}  // namespace pe::testing

// Tails, alignment and determinism, exhaustively over small shapes: every even dimension 2..130 and
// the position counts 1..33 and 63..67 (crossed with the ends of the other), each instance's output is the
// same bits aligned, offset by one element, and on a repeated call, and within the sum of its budget and the
// float64 scalar variant's budget of that variant (which the property suite holds to the exact reference).

#include "support/property_util.h"

namespace pe::testing {
namespace {

struct Shape {
  std::int64_t dim;
  std::size_t count;
};

// Every dim at one and at 67 positions, counts at dims 2 and 130 (the properties draw a tail for
// every vector width in every case besides).
std::vector<Shape> shapes() {
  std::vector<Shape> out;
  for (std::int64_t d = 2; d <= 130; d += 2) {
    for (std::size_t n : {1, 67}) out.push_back({d, n});
  }
  // Every count to 33 (the RoPE driver's token blocks of 16, twice over) and the block edges beyond.
  for (std::size_t n = 1; n <= 67; n += n < 33 ? 1 : n == 33 ? 30 : 1) {
    for (std::int64_t d : {2, 130}) out.push_back({d, n});
  }
  return out;
}

std::vector<std::int64_t> positions_for(std::size_t n, std::int64_t max_position) {
  std::vector<std::int64_t> p(n);
  for (std::size_t k = 0; k < n; ++k) p[k] = static_cast<std::int64_t>(31 * k * k + k) % (max_position + 1);
  return p;
}

// Values in [-4, 4) exactly representable in every type (multiples of 1/16).
std::vector<double> inputs_for(std::size_t n) {
  std::vector<double> x(n);
  std::uint32_t state = 12345;
  for (double& v : x) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<double>(static_cast<int>(state >> 25) - 64) / 16.0;
  }
  return x;
}

class Tails : public InstanceTest {
 protected:
  Instance anchor() const {
    return {find_variant(std::string(family().name) + ".scalar_f64"), in().layout, DType::F64};
  }
};

TEST_P(Tails, SameBitsAlignedOffsetAndRepeatedAndAgreesWithScalarF64) {
  const Instance ref = anchor();
  ASSERT_NE(ref.variant, nullptr);
  const harness::FamilyTraits& t = family();
  for (const Shape& shape : shapes()) {
    const auto positions = positions_for(shape.count, in().contract().max_position);
    const std::size_t size = shape.count * static_cast<std::size_t>(shape.dim);
    const auto x = inputs_for(size);
    auto run = [&](const Instance& which, std::size_t offset) {
      TypedBuffer b(which.dtype, size, offset);
      if (t.reads_data) {
        for (std::size_t i = 0; i < size; ++i) b.set(i, x[i]);
      }
      t.call(*which.variant, which.layout, shape.dim, 10000.0, positions, b.view(), 1);
      return b;
    };
    const TypedBuffer aligned = run(in(), 0), offset = run(in(), 1), again = run(in(), 0);
    ASSERT_EQ(aligned.bytes(), offset.bytes()) << "dim " << shape.dim << " count " << shape.count;
    ASSERT_EQ(aligned.bytes(), again.bytes()) << "dim " << shape.dim << " count " << shape.count;
    const TypedBuffer want = run(ref, 0);
    const auto terms = t.budget_terms(in().layout, shape.dim, 10000.0, positions, 1, x);
    for (std::size_t i = 0; i < size; ++i) {
      const auto& [phi, pair, scale] = terms[i];
      // |φ| in double is within 2^-50 of the exact angle: 1.001 covers it.
      const double tol = 1.001 * (element_budget(in().contract(), in().dtype, phi, pair, scale) +
                                  element_budget(ref.contract(), DType::F64, phi, pair, scale));
      if (aligned.get(i) == want.get(i)) continue;  // the same overflow to infinity included
      ASSERT_LE(std::fabs(aligned.get(i) - want.get(i)), tol)
          << "dim " << shape.dim << " count " << shape.count << " element " << i;
    }
  }
}

PE_INSTANTIATE(Tails, selected());

}  // namespace
}  // namespace pe::testing

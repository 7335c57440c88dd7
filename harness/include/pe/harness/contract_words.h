// A contract in words, as `pe-suite list` and the report state it: the budget per output type in DESIGN's
// two-term form and the largest position it covers.
#pragma once

#include <cstdint>
#include <string>

#include "pe/variant.h"

namespace pe::harness {

// "f32: 1·u_f32 + 2.03·u_f64·|φ|; bf16: ..." per output type, with the family's scale ("× (|x_a| + |x_b|)").
std::string budget_words(const Variant& v);
// "2^31" for a power of two, else the number.
std::string position_words(std::int64_t p);

}  // namespace pe::harness

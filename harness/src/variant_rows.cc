#include "pe/harness/variant_rows.h"

#include <fmt/format.h>

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "pe/api.h"
#include "pe/errors.h"
#include "pe/plan.h"

namespace pe::harness {
namespace {

// The table's row (and a grid's axis) of the first position sinusoidal_table_at refuses, for its message:
// the call numbers the block's computed positions, not the caller's rows. Only on an error.
std::string at_row(const Variant& variant, const SinusoidalPlan& plan, DType dtype,
                   const std::vector<double>& positions, const std::vector<std::size_t>& computed,
                   const SinusoidalBlock& block) {
  TypedBuffer one(dtype, plan.dim());
  for (std::size_t k = 0; k < positions.size(); ++k) {
    try {
      sinusoidal_table_at(variant, plan, std::span<const double>(&positions[k], 1), one.view());
    } catch (const InvalidArgument&) {
      return fmt::format(" (the table's row {}{})", computed[k],
                         block.axis_name.empty() ? "" : ", axis " + block.axis_name);
    }
  }
  return "";
}

}  // namespace

TypedBuffer variant_rows(const Variant& variant, const SinusoidalRows& rows, DType dtype) {
  const std::size_t n = rows.rows();
  // The rows the blocks compute (zero rows are not), and each block's positions there.
  std::vector<std::size_t> computed;
  for (std::size_t r = 0; r < n; ++r) {
    if (!rows.zero_row(r)) computed.push_back(r);
  }
  TypedBuffer out(dtype, n * rows.dim);  // zero-initialised: the zero rows
  for (const SinusoidalBlock& block : rows.blocks) {
    const SinusoidalPlan plan(block.params);
    const std::size_t width = plan.dim();
    std::vector<double> positions(computed.size());
    for (std::size_t k = 0; k < computed.size(); ++k) positions[k] = rows.positions[block.axis][computed[k]];
    TypedBuffer part(dtype, computed.size() * width);
    try {
      sinusoidal_table_at(variant, plan, positions, part.view());
    } catch (const InvalidArgument& e) {
      throw InvalidArgument(e.parameter(),
                            std::string(e.what()) + at_row(variant, plan, dtype, positions, computed, block));
    }
    // Copied through double, which holds every output type's values exactly.
    for (std::size_t k = 0; k < computed.size(); ++k) {
      for (std::size_t j = 0; j < width; ++j) {
        out.set(computed[k] * rows.dim + block.offset + j, part.get(k * width + j));
      }
    }
  }
  for (std::size_t r = 0; r < n; ++r) {
    if (!rows.zero_row(r)) continue;
    for (std::size_t j = 0; j < rows.dim; ++j) out.set(r * rows.dim + j, 0.0);
  }
  return out;
}

}  // namespace pe::harness

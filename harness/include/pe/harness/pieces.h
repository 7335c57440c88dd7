// Calls through a family's entry point on owned buffers, whole or split into pieces: the determinism
// a contract's `state_rows` promises (pe/contract.h), checked by the properties and the census alike.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "pe/harness/instance.h"
#include "pe/harness/typed_buffer.h"

namespace pe::harness {

// The rows a variant with this `state_rows` computes directly (every row when 0): the first, each
// after a jump (p != previous + 1), and each after state_rows rows advanced from the last direct one.
std::vector<std::size_t> direct_rows(std::span<const std::int64_t> positions, std::int64_t state_rows);

// Elements of one position's output: dim, times `heads` for families with heads.
std::size_t elements_per_position(const Instance& in, std::int64_t dim, std::int64_t heads);

// `in` through its family's entry point (full rotary, unscaled) on `positions` into a fresh buffer
// of its type; `x` is the input of families that transform data (row-major, one row per position
// as elements_per_position; ignored by tables).
TypedBuffer run_call(const Instance& in, std::int64_t dim, double base,
                     std::span<const std::int64_t> positions, std::int64_t heads, std::span<const double> x);

// The same call split before each row of `splits` (increasing, within the positions), piece by
// piece, each into its own buffer, joined.
TypedBuffer run_in_pieces(const Instance& in, std::int64_t dim, double base,
                          std::span<const std::int64_t> positions, std::int64_t heads,
                          std::span<const double> x, std::span<const std::size_t> splits);

// The elements whose bytes differ between two buffers of one type and size, in order.
std::vector<std::size_t> differing_elements(const TypedBuffer& a, const TypedBuffer& b);

}  // namespace pe::harness

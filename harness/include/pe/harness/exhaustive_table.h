// What the exhaustive census sweeps of a family: sin φ and cos φ of every pair at every position, where the
// family's call writes them in a row of dim channels, with the exact values to judge them by. One
// implementation per family that has an exhaustive census (harness/src/families/<family>_exhaustive.cc);
// the sweep (exhaustive.cc) names no family.
#pragma once

#include <cstdint>
#include <optional>

#include "pe/harness/measure.h"
#include "pe/harness/typed_buffer.h"
#include "pe/ref/fast_trig.h"
#include "pe/ref/real.h"

namespace pe::harness {

class ExhaustiveTable {
 public:
  virtual ~ExhaustiveTable() = default;
  // Pair j's frequency in double-double, and the channels of its sine and cosine in a row.
  virtual const ref::dd::DD& omega(std::size_t j) const = 0;
  virtual std::size_t sin_channel(std::size_t j) const = 0;
  virtual std::size_t cos_channel(std::size_t j) const = 0;
  // Whether a call reads its buffer (RoPE rotates the unit vector (1, 0) of each pair); then `rows` rows
  // of that input are written into `input`.
  virtual bool reads_input() const = 0;
  virtual void write_input(TypedBuffer& input, std::int64_t rows) const = 0;
  // Pair j's element budget at |φ| under `budget`.
  virtual double element_budget(const Budget& budget, double abs_phi, std::size_t j) const = 0;
  // |p·ω_j| rounded to double; the double-double pair (nullopt where the fast path declines); the exact
  // sine or cosine.
  virtual double abs_angle(std::int64_t p, std::size_t j) const = 0;
  virtual std::optional<ref::FastSinCos> fast(std::int64_t p, std::size_t j) const = 0;
  virtual ref::Real exact(std::int64_t p, std::size_t j, bool is_sin) const = 0;
};

}  // namespace pe::harness

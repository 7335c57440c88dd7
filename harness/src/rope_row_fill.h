// measure_rope's exact row, shared with the screened pass (measure_rope_screened.cc), which measures only
// its loud elements this way: one pair's two elements, or the pass-through channels.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "pe/harness/measure.h"
#include "pe/ref/reference.h"

namespace pe::harness::detail {

// What a row's loop reads besides x and y: the token's angles, sines and cosines per sampled pair.
struct Token {
  std::span<const std::size_t> pairs;
  std::span<const std::int64_t> positions;  // per sampled pair: its axis's position
  std::span<const double> abs_phi;
  std::span<const std::optional<ref::FastSinCos>> sincos;
  std::span<const std::size_t> through;  // the pass-through channels (none when pairs are sampled)
  std::int64_t first_axis_position = 0;  // where the pass-through channels sit
  bool gained = false;
  std::optional<ref::Enclosure> t_exact;  // t(p), with a gain
  double tp = 1;
};

// The reach of a pair's two outputs (ElementRecord::reach).
void pair_reach(double exact0, double exact1, double& reach0, double& reach1);
// The pass-through channels, from element i on: each must equal its input (times the gain, if any).
void fill_through(const Token& tk, const OutputGain& gain, DType dtype, std::size_t base_row, const Values& x,
                  const Values& y, std::size_t i, RopeRow& out);
// Sampled pair k's two outputs at out[i], out[i + 1]; `slopes` slot k holds its slopes at tk.abs_phi[k].
void fill_pair(const RopePlan& plan, const ref::Rope& reference, const Token& tk, std::size_t k,
               const Budget& rule, const RopeSlopes& slopes, const OutputGain& gain, DType dtype,
               RopeDirection direction, std::size_t base_row, const Values& x, const Values& y, std::size_t i,
               RopeRow& out);
// One row: each sampled pair's two outputs, then the pass-through channels.
void fill_row(const RopePlan& plan, const ref::Rope& reference, const Token& tk, const Budget& rule,
              const RopeSlopes& slopes, const OutputGain& gain, DType dtype, RopeDirection direction,
              std::size_t base_row, const Values& x, const Values& y, RopeRow& out);

}  // namespace pe::harness::detail

// measure_rope's exact row, shared with the screened pass (measure_rope_screened.cc), which measures only
// its loud elements this way: one pair's two elements, or the pass-through channels.
#pragma once

#include <cstdint>
#include <optional>
#include <span>

#include "pe/harness/measure.h"
#include "pe/harness/rope_rows_vector.h"
#include "pe/ref/reference.h"

namespace pe::harness::detail {

// What a row's loop reads besides x and y: the token's angles, sines and cosines per sampled pair.
struct Token {
  std::span<const std::size_t> pairs;
  std::span<const std::int64_t> positions;  // per sampled pair: its axis's position
  std::span<const double> abs_phi;
  std::span<const std::optional<ref::FastSinCos>> sincos;
  std::span<const std::size_t> through;   // the pass-through channels (none when pairs are sampled)
  std::int64_t first_axis_position = 0;   // where the pass-through channels sit
  bool gained = false;                    // the rotated pairs carry a gain
  std::optional<ref::Enclosure> t_exact;  // t(p), with a temperature (it gains the pass-through channels too)
  double tp = 1;
  // Per sampled pair its axis's real position (measure_rope_rows's `real`; `positions` then hold band keys),
  // empty at integer positions.
  std::span<const double> real_positions = {};
  // xPos (OutputGain::xpos): per sampled pair its exact g_j(p), that as a double and its error model's
  // relative error; empty otherwise.
  std::span<const ref::Enclosure> pair_gain = {};
  std::span<const double> pair_gain_value = {}, pair_gain_error = {};
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

// The rows of a token whose pairs all have the fast path's sin and cos, without a gain: gathered into
// arrays per pair and rotated and measured in vectors (rope_rows_vector.h), the scalar loop's bits.
class VectorRows {
 public:
  VectorRows(const RopePlan& plan, std::span<const std::size_t> pairs, bool inverse)
      : n_(pairs.size()), inverse_(inverse) {
    for (auto* v : {&in0_, &in1_, &out0_, &out1_}) v->resize(n_);
    for (std::size_t k = 0; k < n_; ++k) {
      // Deinterleave reads and writes different channels (the inverse the other way round).
      const auto in = inverse ? plan.output_channels(pairs[k]) : plan.input_channels(pairs[k]);
      const auto out = inverse ? plan.input_channels(pairs[k]) : plan.output_channels(pairs[k]);
      in0_[k] = in.first, in1_[k] = in.second, out0_[k] = out.first, out1_[k] = out.second;
    }
    const std::size_t padded = RotationLanes::padded(n_);
    for (auto* v : {&sin_hi_, &sin_lo_, &cos_hi_, &cos_lo_, &xa_, &xb_, &y0_, &y1_, &exact0_, &exact1_,
                    &err0_, &err1_, &ulp0_, &ulp1_})
      v->assign(padded, 0.0);
  }

  // Takes the token's sines and cosines; false when a pair has none (the scalar loop decides it).
  bool load_token(std::span<const std::optional<ref::FastSinCos>> sincos) {
    for (std::size_t k = 0; k < n_; ++k) {
      if (!sincos[k]) return false;
      const ref::dd::DD s = inverse_ ? ref::dd::neg(sincos[k]->sin) : sincos[k]->sin;
      sin_hi_[k] = s.hi, sin_lo_[k] = s.lo, cos_hi_[k] = sincos[k]->cos.hi, cos_lo_[k] = sincos[k]->cos.lo;
    }
    return true;
  }

  // The token's fields of each rotated element (fill() leaves them alone).
  void token_fields(const Token& tk, RopeRow& out) const {
    for (std::size_t k = 0, i = 0; k < n_; ++k, i += 2) {
      for (std::size_t o = 0; o < 2; ++o) {
        out.position[i + o] = tk.positions[k];
        out.pair[i + o] = tk.pairs[k];
        out.abs_phi[i + o] = tk.abs_phi[k];
        out.channel[i + o] = static_cast<std::int64_t>(o == 0 ? out0_[k] : out1_[k]);
        out.gain[i + o] = 1;
        out.gain_extra[i + o] = 0;
        out.unchanged[i + o] = 0;
      }
    }
  }

  // The row's rotated elements; false when a pair lies beyond the fast path (the scalar loop decides).
  bool fill(const Values& x, const Values& y, std::size_t base_row, const Budget& rule,
            const RopeSlopes& slopes, const ref::dd::DD* attention, DType dtype, RopeRow& out) {
    x.gather(base_row, in0_, xa_.data());
    x.gather(base_row, in1_, xb_.data());
    y.gather(base_row, out0_, y0_.data());
    y.gather(base_row, out1_, y1_.data());
    const RotationLanes lanes{sin_hi_.data(), sin_lo_.data(), cos_hi_.data(), cos_lo_.data(), xa_.data(),
                              xb_.data(),     y0_.data(),     y1_.data(),     exact0_.data(), exact1_.data(),
                              err0_.data(),   err1_.data(),   ulp0_.data(),   ulp1_.data()};
    if (!rotate_and_measure(lanes, n_, attention, dtype)) return false;
    for (std::size_t k = 0, i = 0; k < n_; ++k, i += 2) {
      const double abs_pair = std::fabs(xa_[k]) + std::fabs(xb_[k]);
      const double budget = rule.combine([&](std::size_t m) { return slopes(k, m, abs_pair); });
      out.scale[i] = out.scale[i + 1] = abs_pair;
      out.budget[i] = out.budget[i + 1] = budget;
      out.y[i] = y0_[k], out.y[i + 1] = y1_[k];
      out.exact[i] = exact0_[k], out.exact[i + 1] = exact1_[k];
      out.abs_error[i] = err0_[k], out.abs_error[i + 1] = err1_[k];
      out.ulp[i] = ulp0_[k], out.ulp[i + 1] = ulp1_[k];
      pair_reach(exact0_[k], exact1_[k], out.reach[i], out.reach[i + 1]);
    }
    return true;
  }

 private:
  std::size_t n_;
  bool inverse_;
  std::vector<std::size_t> in0_, in1_, out0_, out1_;
  std::vector<double> sin_hi_, sin_lo_, cos_hi_, cos_lo_, xa_, xb_, y0_, y1_, exact0_, exact1_, err0_, err1_,
      ulp0_, ulp1_;
};

}  // namespace pe::harness::detail

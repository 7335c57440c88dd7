// Typed parameters, validated once into plans. A plan holds everything a kernel needs that does
// not depend on the positions: checked sizes and the frequencies ω_i = base^(-2i/dim).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "pe/rope_form.h"
#include "pe/rope_scaling.h"
#include "pe/types.h"

namespace pe {

// Largest dimension a plan accepts; beyond it the frequency table alone would be gigabytes.
inline constexpr std::int64_t kMaxDim = std::int64_t{1} << 24;
// Positions must be exactly representable in double for every variant: 0 <= p <= 2^53. A scaled or real
// position's angle argument scale·p is held to |scale·p| <= 2^53 as well (pe/api.h).
inline constexpr std::int64_t kMaxPosition = std::int64_t{1} << 53;

struct SinusoidalParams {
  std::int64_t dim = 0;
  double base = 10000.0;  // "Attention Is All You Need", section 3.5; diffusers' max_period
  Layout layout = Layout::Interleaved;
  // The switches diffusion and audio code sets (diffusers' get_timestep_embedding): each pair's cos where
  // its sin belongs and the reverse ([cos | sin] concatenated); the exponent's denominator dim/2 − shift
  // (ω_i = base^(−i/(dim/2 − shift)): 0 the paper's, 1 fairseq's, tensor2tensor's and Whisper's); the angle
  // scale·p·ω_i (p a position, integer or real: SinusoidalVariant::table_at). Plans and variants read all
  // three (2·shift an integer below dim, scale finite and nonzero).
  bool flip_sin_to_cos = false;
  double downscale_freq_shift = 0;
  double scale = 1;
};

// The frequency dimension of a table: ω_i = base^(−2i/d') with d' = dim − 2·downscale_freq_shift (dim rounded
// down to even), or −1 where that is not a positive integer (a shift leaving no exponent denominator).
std::int64_t sinusoidal_frequency_dim(const SinusoidalParams& params) noexcept;
// The channels of pair i's sin and cos (i < dim/2): (2i, 2i+1) interleaved, (i, dim/2 + i) concatenated; the
// other way round with flip_sin_to_cos.
struct PairChannels {
  std::size_t sin, cos;
};
inline PairChannels table_pair_channels(const SinusoidalParams& p, std::size_t i) noexcept {
  const auto half = static_cast<std::size_t>(p.dim / 2);
  const bool interleaved = p.layout == Layout::Interleaved;
  const std::size_t first = interleaved ? 2 * i : i, second = interleaved ? 2 * i + 1 : half + i;
  return p.flip_sin_to_cos ? PairChannels{second, first} : PairChannels{first, second};
}

// What the reference and check accept, a superset of a plan's: dim in [2, kMaxDim] (odd: the last channel
// a zero pad), base > 1, a table layout, a downscale_freq_shift with a frequency dim, a finite nonzero scale.
// Throws InvalidArgument naming the parameter.
void validate_table_params(const SinusoidalParams& params);

struct RopeParams {
  std::int64_t head_dim = 0;
  std::int64_t rotary_dim = 0;  // 0 means head_dim; channels beyond it pass through untouched
  double base = 10000.0;        // RoFormer (Su et al., 2021), eq. 15
  Layout layout = Layout::HalfSplit;
  RopeScaling scaling{};  // none by default; see pe/rope_scaling.h
  // First rotated channel: DeepSeek MLA's q = [q_nope(128) | q_pe(64)] rotates [128, 192). Channels
  // outside [rotary_offset, rotary_offset + rotary_dim) pass through; rotary_dim 0 means the rest.
  std::int64_t rotary_offset = 0;
  RopeForm form{};  // text RoPE by default; M-RoPE and 2-D vision (pe/rope_form.h)
};

// Largest rotary_dim of the deinterleave layout: the driver reorders a row's rotary channels through
// a buffer on its stack (kernels never allocate). DeepSeek's is 64.
inline constexpr std::int64_t kMaxDeinterleaveDim = 4096;

// Each pair's frequency as a 64-bit fixed-point fraction of a turn, step_i = round(ω_i/(2π)·2^64)
// (formed in long double: |step_i - ω_i/(2π)·2^64| <= 4.5): the phase of position p is then
// p·step_i mod 2^64, exact in integer arithmetic, within p·4.5·2^-64 turns of the true one
// (2^-31 turns for p < 2^31) and free of any large-argument reduction. cos/sin of one step
// (2π·step_i/2^64, correctly rounded to double) advance a phase by one position.
struct TurnSteps {
  std::vector<std::uint64_t> step;
  std::vector<double> cos_step, sin_step;
};

class SinusoidalPlan {
 public:
  // What validate_table_params accepts (odd dims: the last channel a zero pad, any finite nonzero scale).
  // Throws InvalidArgument naming dim, base, layout, downscale_freq_shift or scale.
  explicit SinusoidalPlan(const SinusoidalParams& params);

  const SinusoidalParams& params() const noexcept { return params_; }
  Layout layout() const noexcept { return params_.layout; }
  std::size_t dim() const noexcept { return static_cast<std::size_t>(params_.dim); }
  std::size_t n_pairs() const noexcept { return dim() / 2; }
  // An odd dim's last channel, dim - 1, holds no pair: a table writes it 0, a fused add leaves it.
  bool has_pad() const noexcept { return dim() % 2 != 0; }
  double scale() const noexcept { return params_.scale; }
  // The channels of pair i's sin and cos in the layout: (2i, 2i+1) interleaved, (i, dim/2 + i)
  // concatenated; the other way round with flip_sin_to_cos.
  std::size_t sin_index(std::size_t i) const noexcept { return table_pair_channels(params_, i).sin; }
  std::size_t cos_index(std::size_t i) const noexcept { return table_pair_channels(params_, i).cos; }
  // d' of ω_i = base^(-2i/d'): dim, less 2·downscale_freq_shift.
  std::size_t frequency_dim() const noexcept { return frequency_dim_; }
  // ω_i = base^(-2i/d'), i < dim/2; relative error <= 1.02·2^-53 for base <= 1e12 (plan.cc).
  std::span<const double> inv_freq() const noexcept { return inv_freq_; }
  // ω_i as a fixed-point fraction of a turn, and the rotation by it (see TurnSteps).
  const TurnSteps& turn_steps() const noexcept { return turns_; }

 private:
  SinusoidalParams params_;
  std::size_t frequency_dim_ = 0;
  std::vector<double> inv_freq_;
  TurnSteps turns_;
};

class RopePlan {
 public:
  // Throws InvalidArgument naming head_dim, rotary_dim, rotary_offset, base, layout, the form's
  // parameter (mrope_section, vision) or the scaling parameter (factor, original_max_position,
  // seq_len, beta_fast, beta_slow, mscale, mscale_all_dim, attention_factor, low_freq_factor,
  // high_freq_factor, short_factor, long_factor).
  // Plans of the same parameters are built once per process and copied after (plan.cc).
  explicit RopePlan(const RopeParams& params);

  const RopeParams& params() const noexcept { return params_; }
  Layout layout() const noexcept { return params_.layout; }
  std::size_t head_dim() const noexcept { return static_cast<std::size_t>(params_.head_dim); }
  std::size_t rotary_dim() const noexcept { return static_cast<std::size_t>(params_.rotary_dim); }
  std::size_t rotary_offset() const noexcept { return static_cast<std::size_t>(params_.rotary_offset); }
  std::size_t n_pairs() const noexcept { return rotary_dim() / 2; }
  // The rotation's pairing within the rotary channels: (2j, 2j+1) for Interleaved and Deinterleave
  // (whose output the driver then reorders half-split), (j, j + rotary_dim/2) for HalfSplit.
  bool pairs_interleaved() const noexcept { return params_.layout != Layout::HalfSplit; }
  // First channel of pair j after rotary_offset, and the distance to its partner.
  std::size_t pair_first(std::size_t j) const noexcept { return pairs_interleaved() ? 2 * j : j; }
  std::size_t pair_offset() const noexcept { return pairs_interleaved() ? 1 : n_pairs(); }
  // Channels of the head that pair j reads and writes (rotary_offset included); they differ only
  // for Deinterleave, which reads (2j, 2j+1) and writes (j, j + rotary_dim/2).
  std::pair<std::size_t, std::size_t> input_channels(std::size_t j) const noexcept {
    return {rotary_offset() + pair_first(j), rotary_offset() + pair_first(j) + pair_offset()};
  }
  std::pair<std::size_t, std::size_t> output_channels(std::size_t j) const noexcept {
    if (params_.layout != Layout::Deinterleave) return input_channels(j);
    return {rotary_offset() + j, rotary_offset() + j + n_pairs()};
  }
  bool passes_through(std::size_t channel) const noexcept {
    return channel < rotary_offset() || channel >= rotary_offset() + rotary_dim();
  }
  // Position axes the plan reads (RopeBatch::n_axes), the axis of pair j, and how many pairs from j
  // on read the same axis (the driver's chunks follow these runs).
  std::size_t n_axes() const noexcept { return n_axes_; }
  std::size_t axis_of_pair(std::size_t j) const noexcept { return axis_.empty() ? 0 : axis_[j]; }
  std::size_t axis_run(std::size_t j) const noexcept { return axis_.empty() ? n_pairs() - j : run_[j]; }
  // Pair j's unscaled frequency is base'^(-2·index/dim) (pe/rope_form.h): (j, rotary_dim) but for vision.
  FrequencyIndex frequency_index(std::size_t j) const noexcept {
    return pe::frequency_index(params_.form, n_pairs(), j);
  }
  // θ'_j = g_j·base'^(-2j/rotary_dim), j < rotary_dim/2, the scaled frequency
  // (pe/detail/rope_scaling_math.h), formed in long double and rounded once: relative error as
  // SinusoidalPlan::inv_freq.
  std::span<const double> inv_freq() const noexcept { return inv_freq_; }
  const TurnSteps& turn_steps() const noexcept { return turns_; }
  // The pieces, for formulations that build θ'_j their own way: base' (the NTK or dynamic base, else
  // base) and g_j = θ'_j / base'^(-2j/rotary_dim), each rounded once to double.
  double effective_base() const noexcept { return effective_base_; }
  std::span<const double> gain() const noexcept { return gain_; }
  // The factor on cos and sin (YaRN, LongRoPE; 1 otherwise), rounded once to double.
  double attention_factor() const noexcept { return attention_; }
  // A bound on the relative error of inv_freq(): 1.02·2^-53 unscaled (what contracts assume), more
  // for scalings whose gain is ill-conditioned (YaRN untruncated, large factors; plan.cc).
  double frequency_error() const noexcept { return frequency_error_; }

 private:
  // Validates `given` (params_ holds it, rotary_dim resolved) and computes the tables.
  void build(const RopeParams& given);

  RopeParams params_;
  std::vector<double> inv_freq_;
  TurnSteps turns_;
  double effective_base_ = 0;
  std::vector<double> gain_;
  double attention_ = 1;
  double frequency_error_ = 1.02 * 0x1p-53;
  std::size_t n_axes_ = 1;
  std::vector<std::uint8_t> axis_;  // empty for one axis
  std::vector<std::uint32_t> run_;
};

}  // namespace pe

// When an outside table fails badly, the usual cause is a convention, not rounding: the other
// layout, sin and cos swapped, tensor2tensor/fairseq's exponent i/(d/2-1) instead of 2i/d, positions
// off by one or two, another common base, or (RoPE) the inverse rotation. This tries each
// combination on a sample of the data in long double and ranks them by their residual.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "pe/attn_temperature.h"
#include "pe/batch.h"
#include "pe/rope_form.h"
#include "pe/rope_scaling.h"
#include "pe/types.h"

namespace pe::check {

struct Convention {
  Layout layout = Layout::Interleaved;
  double base = 10000.0;
  bool swapped = false;       // cos where sin belongs and the other way round
  bool t2t_exponent = false;  // inv_freq_i = base^(-i/(d/2-1))
  std::int64_t shift = 0;     // data row for position p holds position p + shift
  bool inverse = false;       // RoPE: rotated by -angle
  // RoPE's rotary forms: the form and the first rotary channel; `axes[a]` is the data's axis that
  // the form's axis a reads (a permutation: h and w swapped, ...); `one_d`: every pair reads axis 0
  // (M-RoPE run as 1-D RoPE on the t positions).
  RopeForm form{};
  std::int64_t rotary_offset = 0;
  std::array<std::uint8_t, 4> axes = {0, 1, 2, 3};
  bool one_d = false;
  // A NoPE layer is the identity (`rotated` false); a candidate that rotates it anyway has its own
  // rotary dim (0: the data's).
  bool rotated = true;
  std::int64_t rotary_dim = 0;
  // The gain on q, read at position p + temperature_shift (llama4 reads p + 1 where mistral reads p).
  AttnTemperature temperature{};
  std::int64_t temperature_shift = 0;
  // A candidate's own RoPE scaling (the given one when unset): ignored, the factor mistaken, another
  // method, YaRN's truncate or betas the other way.
  std::optional<RopeScaling> scaling{};
  // A rule no RopePlan models (YaRN's betas swapped, Llama-3's wavelength taken as 1/θ): the pairs'
  // frequencies, in place of the plan's (whose attention factor and channels still apply).
  std::shared_ptr<const std::vector<long double>> inv_freq{};
  // Words that name the candidate: instead of its scaling's difference with `inv_freq` ("yarn beta_fast
  // and beta_slow swapped"), instead of every difference without ("the sliding_attention layers' RoPE
  // (base 10000, scaling none)").
  std::string label{};
};

// How `c` differs from `given`, in words ("layout concatenated (given: interleaved); ...").
std::string describe(const Convention& c, const Convention& given);

struct Fit {
  Convention convention;
  double residual = 0;   // max |data - model| over the sample
  std::size_t rows = 0;  // the sample's rows (table rows; RoPE tokens x heads)
};

// Candidates best first; the given convention is among them. `table` is [positions, dim].
std::vector<Fit> diagnose_sinusoidal(std::span<const double> table, std::size_t dim,
                                     const std::vector<std::int64_t>& positions, const Convention& given);

struct RopeData {
  std::span<const double> x;  // rows where `batch` puts them; positions [n_axes][tokens]
  std::span<const double> y;
  RopeBatch batch;
  std::size_t head_dim, rotary_dim;
  RopeScaling scaling{};  // the given scaling, kept by every candidate (the model is the plan's)
  double unit = 0;        // the data type's unit roundoff: the angles read back are that far off
};
// Also the form's mistakes: sectioned vs interleaved M-RoPE, axes swapped, M-RoPE run as 1-D on t,
// deinterleave vs interleaved, rotary channels at the start instead of the end (or the reverse).
// `alternatives`: whole other settings to try besides (a model's other layer type), each with its label.
std::vector<Fit> diagnose_rope(const RopeData& data, const Convention& given,
                               const std::vector<Convention>& alternatives = {});
// A NoPE layer (given.rotated false): the identity with the given gain against RoPE at the bases of
// real configs, rotary dims head_dim and head_dim/2, half-split and interleaved, and the gain's
// mistakes (missing, read one position off).
std::vector<Fit> diagnose_nope(const RopeData& data, const Convention& given);

}  // namespace pe::check

// Our own number generators (RapidCheck's float generator gives no subnormals and mostly huge
// integers; gen::inRange is integer-only). Each stays inside a contract instead of discarding.
#pragma once

#include <rapidcheck.h>

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "pe/contract.h"
#include "pe/enum_names.h"
#include "pe/plan.h"
#include "pe/rope_scaling.h"
#include "pe/types.h"

namespace pe {
// "yarn(factor=4, L=4096, seq_len=0, beta_fast=32, ...)": counterexamples name every field.
std::ostream& operator<<(std::ostream& os, const RopeScaling& s);
// Every named enumeration a case draws, by name (RapidCheck would print "<???>").
template <NamedEnum E>
std::ostream& operator<<(std::ostream& os, E v) {
  return os << enum_name(v);
}
}  // namespace pe

namespace pe::testing {

// 0, 1, powers of two, 2^24 ± 1, small values, and uniform values up to max_position.
rc::Gen<std::int64_t> gen_position(std::int64_t max_position);
// n in [1, max_count] positions, each from gen_position.
rc::Gen<std::vector<std::int64_t>> gen_positions(std::int64_t max_position, std::size_t max_count);
// Position arrays by the kind a kernel's fast paths branch on.
enum class PositionKind { Run, Sorted, Reversed, Repeated, Strided, Scattered, NonMonotone };
inline const std::vector<PositionKind> kPositionKinds = {
    PositionKind::Run,     PositionKind::Sorted,    PositionKind::Reversed,   PositionKind::Repeated,
    PositionKind::Strided, PositionKind::Scattered, PositionKind::NonMonotone};
}  // namespace pe::testing
template <>
struct pe::EnumNames<pe::testing::PositionKind> {
  using K = pe::testing::PositionKind;
  static constexpr EnumRow<K> rows[] = {{K::Run, "consecutive run"},     {K::Sorted, "sorted"},
                                        {K::Reversed, "reversed"},       {K::Repeated, "repeated"},
                                        {K::Strided, "strided"},         {K::Scattered, "scattered"},
                                        {K::NonMonotone, "non-monotone"}};
};
namespace pe::testing {
using pe::operator<<;  // found by argument-dependent lookup for PositionKind
inline std::string to_string(PositionKind kind) { return std::string(enum_name(kind)); }
// Any kind, uniformly from the first case (RapidCheck scales ranges with the case's size).
rc::Gen<PositionKind> gen_position_kind();
// An array of `kind` below max_position: consecutive (length in [min_run, max_run]), strictly
// increasing with gaps, the same reversed, one position repeated, a constant stride, independent
// (gen_positions), or not monotone (at least three, rising then falling). The others hold 2 to 8.
rc::Gen<std::vector<std::int64_t>> gen_positions_of(PositionKind kind, std::int64_t max_position,
                                                    std::size_t min_run, std::size_t max_run);
// A consecutive run (length in [min_run, max_run]) and then an array of `kind` (2 to 8 positions; a
// run as long as the first): every batch holds a run, as a prefill does, and what follows it.
rc::Gen<std::vector<std::int64_t>> gen_run_then(PositionKind kind, std::int64_t max_position,
                                                std::size_t min_run, std::size_t max_run);
// Three to five positions, neither non-decreasing nor non-increasing.
rc::Gen<std::vector<std::int64_t>> gen_non_monotone(std::int64_t max_position);
// Float lanes of the widest vector Highway 1.0.3 compiles for x86 (AVX-512, 64 bytes); every other
// target's width (and the double lanes of each) divides it.
inline constexpr std::size_t kWidestFloatLanes = 16;
// An even dim whose pair count leaves a tail for every vector width of the build: lanes·m + t pairs, t
// odd in [1, lanes), so t is also a tail for every narrower power-of-two width; m in [0, max_blocks].
rc::Gen<std::int64_t> gen_tail_dim(std::int64_t max_blocks);
// Always true, shrinking to false: a part of every case (an edge case beside the drawn one) that the
// shrinker drops when the failure does not need it, so the minimal case is the smallest that fails.
rc::Gen<bool> gen_kept_while_needed();
// "tail t of 16 lanes": the RC_CLASSIFY label of a pair count.
std::string tail_class(std::size_t pairs);
// Powers of two 2..max_dim, the non-powers 48, 72, 80, 96, 120 models use, and any even value.
rc::Gen<std::int64_t> gen_dim(std::int64_t max_dim);
rc::Gen<std::int64_t> gen_odd_dim();
// 1e4 (the paper), 5e5 and 1e6 (Llama 3, long-context models), and log-uniform in [1.5, 1e7].
rc::Gen<double> gen_base();
// The table switches of diffusion and audio code, drawn into `params` (dim, base and layout already drawn)
// for a variant whose contract reads them (Contract::table_switches), left off otherwise: flip_sin_to_cos
// either way, downscale_freq_shift 0 (the paper), 1 (fairseq, tensor2tensor, Whisper) or 0.5 (an odd
// frequency dim), 0 where dim leaves no frequency dim for it. `tag` prefixes the labels.
void draw_table_switches(SinusoidalParams& params, const Contract& contract, const std::string& tag = "");
// A valid RoPE scaling of `type` for rotary dimension `rotary_dim` (NTK and dynamic need >= 4):
// factors in [1/4, 64] with 1, 2, 4, 8, 32, 40, 1024, 1/64 and s <= 1 favoured; L from real configs (4096,
// 8192, 32768) or anywhere in [16, 2^17]; seq_len 0, L-1, L, L+1 or up to 4L; YaRN betas with beta_fast ==
// beta_slow sometimes, truncate on and off, each attention form; Llama-3 frequency factors with low < high;
// LongRoPE lists in [1/2, 64]. Attention factors stay within [1/2, 1.9].
rc::Gen<RopeScaling> gen_scaling_of(RopeScalingType type, std::int64_t rotary_dim);
// Any method (none a third of the time), as gen_scaling_of.
rc::Gen<RopeScaling> gen_scaling(std::int64_t rotary_dim);
// A rotary form for params (head_dim, rotary_dim, layout and scaling already drawn), written into it:
// text RoPE half the time (its rotary channels moved to the end of the head, DeepSeek MLA's place,
// when they do not fill it), M-RoPE (3 or 4 sections of any sizes summing to rotary_dim/2, zeros
// included, sectioned or interleaved) and 2-D vision (qwen2vl, pixtral: the whole head, unscaled;
// M-RoPE instead when head_dim is not a multiple of 4), axial N-D (draw_axes_dim, unscaled). An interleaved
// layout becomes deinterleave a third of the time. Classifies the case by form.
void draw_rope_form(RopeParams& params);
// 3 or 4 M-RoPE sections of any sizes (zeros included) summing to `pairs`.
std::vector<std::int64_t> draw_mrope_sections(std::int64_t pairs);
// Sections for `layout`: draw_mrope_sections's, or ERNIE's three (t, h, w) with h == w (any h, zero
// included).
std::vector<std::int64_t> draw_mrope_sections(std::int64_t pairs, MropeLayout layout);
// Any M-RoPE layout (sectioned, interleaved, ernie).
rc::Gen<MropeLayout> gen_mrope_layout();
// An axial form's axes_dim: 1 to 4 axes (3 most often, at most `pairs`), each at least one pair, summing to
// 2·pairs.
std::vector<std::int64_t> draw_axes_dim(std::int64_t pairs);
// "M-RoPE interleaved", "vision pixtral", "text, rotary at 8", ...: the RC_CLASSIFY label.
std::string form_class(const RopeParams& params);
// Positions [n_axes][tokens] (tokens in [1, max_tokens]): each axis from gen_position.
rc::Gen<std::vector<std::int64_t>> gen_axes_positions(std::size_t n_axes, std::int64_t max_position,
                                                      std::size_t max_tokens);
// NTK with s < 1 lowers the base to b·s^(d/(d-2)); raises params.base so that it stays >= 1.5.
void keep_ntk_base_above_one(RopeParams& params);
// A finite value of `type` with |v| <= max_abs, from sign, exponent and significand bits: zeros,
// subnormals and the extremes included, with ordinary magnitudes (|v| in [2^-8, 2^8)) half the time.
rc::Gen<double> gen_value(DType type, double max_abs);
rc::Gen<std::vector<double>> gen_values(DType type, double max_abs, std::size_t count);

}  // namespace pe::testing

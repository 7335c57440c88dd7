// The rotary forms beyond 1-D text RoPE, as typed parameters of a RoPE plan: which position axis each
// pair reads and which frequency it turns by. Every form is a plan; no form has kernels of its own.
//
//   text          one axis; pair j turns by p·ω_j, ω_j = b^(-2j/r) (r = rotary_dim), then scaled.
//   M-RoPE        axes (t, h, w[, e]); ω_j as text over the global j (scaling included); the axis of
//                 pair j from `mrope_section` (pairs per axis):
//     sectioned   (Qwen2-VL, Qwen2.5-VL, GLM-4.1V; HF apply_multimodal_rotary_pos_emb, ggml MROPE):
//                 t for j < s_t, h for j < s_t+s_h, w for j < s_t+s_h+s_w, else e.
//     interleaved (Qwen3-VL; HF apply_interleaved_mrope, ggml IMROPE): h if j%3 == 1 and j < 3·s_h,
//                 w if j%3 == 2 and j < 3·s_w, else t (HF's rule, three sections); with a fourth
//                 section ggml's: t only if j%3 == 0 and j < 3·s_t, else e.
//     ernie       (ERNIE-4.5-VL; vLLM's and SGLang's Ernie4_5_VLRotaryEmbedding, "[h w h w … t t t]"):
//                 three sections with s_h == s_w (the engines' mrope_section [h, w, t], h = w = (D/2 − t)/2,
//                 t = the config's freq_allocation; given here in (t, h, w) order as every layout's): pair
//                 j < s_h + s_w reads h if j is even and w if odd, the rest read t.
//   vision        axes (h, w) of a patch; the whole head, half-split in HF:
//     qwen2vl     (Qwen2-VL/2.5-VL ViT, HF VisionRotaryEmbedding(D/2), ggml VISION): ω_k = b^(-2k/(D/2)),
//                 k < D/4; pair j < D/4 turns by h·ω_j, pair D/4 + k by w·ω_k.
//     pixtral     (HF PixtralRotaryEmbedding, vLLM precompute_freqs_cis_2d): ω_k = b^(-2k/D), k < D/2;
//                 pair j < D/4 turns by h·ω_2j, pair D/4 + k by w·ω_(2k+1).
//   axial         (diffusers' FluxPosEmbed/EmbedND, HunyuanVideo, Wan, CogVideoX, Llama-4 vision): axes_dim
//                 channels per axis, each axis its own ladder over its own dim: the pairs of axis a are the
//                 n_a = axes_dim[a]/2 pairs after those of the axes before it, pair k of them turning by
//                 p_a·b^(-2k/axes_dim[a]). With interleaved pairs (the engines' complex view) axis a holds
//                 contiguous channels; half-split puts its pairs in both halves (Cosmos' [t h w | t h w]).
//                 Llama-4 vision is axes_dim (D/2, D/2) at positions (x + 1, y + 1), the CLS row at (0, 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pe {

enum class MropeLayout : std::uint8_t { Sectioned, Interleaved, Ernie };
enum class VisionRope : std::uint8_t { None, Qwen2vl, Pixtral };

std::string_view to_string(MropeLayout l) noexcept;
std::string_view to_string(VisionRope v) noexcept;
std::optional<MropeLayout> parse_mrope_layout(std::string_view s) noexcept;
std::optional<VisionRope> parse_vision_rope(std::string_view s) noexcept;

struct RopeForm {
  std::vector<std::int64_t> mrope_section;  // empty: not M-RoPE; else 3 or 4 entries summing to r/2
  MropeLayout mrope_layout = MropeLayout::Sectioned;
  VisionRope vision = VisionRope::None;
  std::vector<std::int64_t> axes_dim;  // empty: not axial; else channels per axis, each even, summing to r

  bool is_text() const noexcept {
    return mrope_section.empty() && vision == VisionRope::None && axes_dim.empty();
  }
};

// Position axes the form reads: 1 for text, the section count for M-RoPE, 2 for vision, axes_dim's count for
// axial.
std::size_t n_axes(const RopeForm& form) noexcept;
// The axis pair j (< n_pairs) reads. The form must be valid for n_pairs (RopePlan checks it).
std::size_t axis_of_pair(const RopeForm& form, std::size_t n_pairs, std::size_t j) noexcept;

// Pair j's unscaled frequency is b^(-2·index/dim): dim is the same for every pair but for axial forms.
struct FrequencyIndex {
  std::size_t index, dim;
};
FrequencyIndex frequency_index(const RopeForm& form, std::size_t n_pairs, std::size_t j) noexcept;
// Largest number of axes an axial form may have (diffusers' forms have 3, Llama-4 vision's 2): the diagnosis
// tries every order of them (check's Convention::axes holds 4).
inline constexpr std::size_t kMaxAxialAxes = 4;
// "16,56,56": a list as the flags and messages write it.
std::string show_list(const std::vector<std::int64_t>& v);

}  // namespace pe

// Enumerations and type-erased buffer views shared by every part of pe-suite.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace pe {

enum class Family : std::uint8_t { Sinusoidal, Rope, Alibi };

// One enum for both families; validation rejects a layout used with the wrong family.
enum class Layout : std::uint8_t {
  // Sinusoidal: the paper's PE(p,2i)=sin, PE(p,2i+1)=cos (also the PyTorch tutorial's table).
  // RoPE: GPT-J / ggml ROPE_TYPE_NORMAL, pairs (2j, 2j+1).
  Interleaved,
  // Sinusoidal only: [sin... | cos...], as tensor2tensor's get_timing_signal and fairseq lay it out.
  Concatenated,
  // RoPE only: GPT-NeoX / HF rotate_half / ggml ROPE_TYPE_NEOX, pairs (j, j + rotary_dim/2).
  HalfSplit,
  // RoPE only: DeepSeek's de-interleaved form (HF apply_rotary_pos_emb_interleave): input pairs
  // (2j, 2j+1), output written half-split, y[j] = x_2j·cos - x_2j+1·sin, y[j + r/2] = x_2j+1·cos +
  // x_2j·sin. Every variant that rotates interleaved pairs runs it (the driver reorders the output).
  Deinterleave,
  // ALiBi only: bias[h, i, j] for head h, query i, key j, heads outermost: attention's scores
  // [heads, queries, keys] (HF's and Baichuan's materialised bias; ggml adds it inside soft_max).
  Hqk,
};

// Element types of outputs (and of RoPE's in-place data). bfloat16 and float16 are computed in
// float32 or wider and rounded once.
enum class DType : std::uint8_t { F32, F64, BF16, F16 };

enum class RopeDirection : std::uint8_t { Forward, Inverse };

std::string_view to_string(Family f) noexcept;
std::string_view to_string(Layout l) noexcept;
std::string_view to_string(DType t) noexcept;
std::optional<Family> parse_family(std::string_view s) noexcept;
std::optional<Layout> parse_layout(std::string_view s) noexcept;
std::optional<DType> parse_dtype(std::string_view s) noexcept;

bool layout_belongs_to(Layout l, Family f) noexcept;

// A family's identity: its name and its layouts, the first the default (what `check` and `export`
// assume when no layout is given). One row per family in types.cc; what the harness, benchmarks and
// reports know of a family beyond this is a row of harness::FamilyTraits.
struct FamilyInfo {
  Family family;
  std::string_view name;
  std::span<const Layout> layouts;
};
// Every family, in enumeration order.
std::span<const FamilyInfo> families() noexcept;
const FamilyInfo& family_info(Family f) noexcept;
inline Layout default_layout(Family f) noexcept { return family_info(f).layouts.front(); }

// Per DType, in enumeration order: the unit roundoff u = 2^-p of a type with p significand bits, the
// smallest positive subnormal (the absolute error floor of rounding into the type) and the size in
// bytes. Inline: every compared element's budget reads them several times.
struct DTypeTraits {
  double unit_roundoff, denorm_min;
  std::size_t size;
};
inline constexpr DTypeTraits kDTypeTraits[] = {
    {0x1p-24, 0x1p-149, 4}, {0x1p-53, 0x1p-1074, 8}, {0x1p-8, 0x1p-133, 2}, {0x1p-11, 0x1p-24, 2}};
constexpr double unit_roundoff(DType t) noexcept { return kDTypeTraits[static_cast<int>(t)].unit_roundoff; }
constexpr double denorm_min(DType t) noexcept { return kDTypeTraits[static_cast<int>(t)].denorm_min; }
constexpr std::size_t size_of(DType t) noexcept { return kDTypeTraits[static_cast<int>(t)].size; }

// A caller-owned buffer of `size` elements of type `dtype`. Views do not own memory.
struct Buffer {
  void* data = nullptr;
  std::size_t size = 0;
  DType dtype = DType::F32;
};

inline Buffer buffer(std::span<float> s) noexcept { return {s.data(), s.size(), DType::F32}; }
inline Buffer buffer(std::span<double> s) noexcept { return {s.data(), s.size(), DType::F64}; }

}  // namespace pe

// The batch view RoPE kernels read: positions as [n_axes][tokens] and the element offsets of each
// (token, head) row in the caller's buffer, so that [tokens, heads, head_dim], Hugging Face's
// [heads, tokens, head_dim] and a slice of a fused QKV tensor are rotated in place, without a copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace pe {

struct RopeBatch {
  // Axis a of token t is positions[a·tokens + t]. Text RoPE reads one axis.
  std::span<const std::int64_t> positions;
  std::size_t n_axes = 1;
  std::size_t heads = 1;
  // Row (t, h) starts at element t·token_stride + h·head_stride; its head_dim channels are contiguous.
  std::size_t token_stride = 0, head_stride = 0;

  std::size_t tokens() const noexcept { return n_axes == 0 ? 0 : positions.size() / n_axes; }
  std::int64_t position(std::size_t t, std::size_t axis = 0) const noexcept {
    return positions[axis * tokens() + t];
  }
  std::size_t row(std::size_t t, std::size_t h) const noexcept { return t * token_stride + h * head_stride; }

  // [tokens, heads, head_dim], contiguous.
  static RopeBatch tokens_first(std::span<const std::int64_t> positions, std::size_t heads,
                                std::size_t head_dim) noexcept {
    return {positions, 1, heads, heads * head_dim, head_dim};
  }
  // [heads, tokens, head_dim], contiguous (Hugging Face's q and k after the head transpose).
  static RopeBatch heads_first(std::span<const std::int64_t> positions, std::size_t heads,
                               std::size_t head_dim) noexcept {
    return {positions, 1, heads, head_dim, positions.size() * head_dim};
  }
};

}  // namespace pe

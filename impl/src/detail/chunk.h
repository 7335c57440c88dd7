// Fixed-capacity Eigen arrays for chunks of pairs: storage on the stack, so kernels never allocate.
#pragma once

#include <Eigen/Core>

namespace pe::detail {

inline constexpr Eigen::Index kEigenChunk = 64;
using ChunkF = Eigen::Array<float, Eigen::Dynamic, 1, Eigen::ColMajor, kEigenChunk, 1>;
// A strided view of n floats in a caller's buffer (stride 2: one half of interleaved pairs).
using StridedF = Eigen::Map<Eigen::ArrayXf, Eigen::Unaligned, Eigen::InnerStride<>>;

}  // namespace pe::detail

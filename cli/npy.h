// NumPy .npy files (format version 1.0): little-endian, C order.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "pe/types.h"

namespace pe::cli {

// Writes `values` (row-major, shape's product elements) as `dtype` (f32 or f64). Throws
// std::runtime_error when the file cannot be written.
void write_npy(const std::string& path, const std::vector<double>& values,
               const std::vector<std::size_t>& shape, DType dtype);

// The header dictionary numpy writes for this dtype and shape ("{'descr': '<f4', ...}").
std::string npy_header(const std::vector<std::size_t>& shape, DType dtype);

}  // namespace pe::cli

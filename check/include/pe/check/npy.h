// NumPy .npy files: writing (format 1.0, little-endian, C order) and reading (format 1.0-3.0,
// either byte order, C or Fortran order). numpy has no bfloat16: it travels as 16-bit unsigned
// integers ('<u2') holding the bits, and a reader must be told (DType::BF16) to decode them so.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pe/types.h"

namespace pe::check {

// A malformed, truncated or unsupported file; the message says which and where.
struct NpyError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct NpyArray {
  std::vector<std::size_t> shape;
  std::vector<double> values;  // C (row-major) order whatever the file's order
  DType dtype = DType::F32;    // what float elements were stored as
  bool integer = false;        // integer elements (positions); dtype is then meaningless
  // read_npy_in_place: the file's float elements (or, with `integer`, its unsigned bytes: FP8 codes) where
  // they lie, in a read-only mapping that `mapping` keeps alive (`values` then empty); null otherwise.
  const void* typed = nullptr;
  std::shared_ptr<const void> mapping;
};

// v resized to n zeros, with transparent huge pages asked for before the first touch when the array is
// large (a hint: the values are the same). Large arrays read from files or from Python use it.
void resize_large(std::vector<double>& v, std::size_t n);

// Writes `values` (row-major, shape's product elements) as `dtype`, rounding each value to it
// (bf16 as its bits in '<u2'). Throws std::runtime_error when the file cannot be written.
void write_npy(const std::string& path, const std::vector<double>& values,
               const std::vector<std::size_t>& shape, DType dtype);

// The header dictionary numpy writes for this dtype and shape ("{'descr': '<f4', ...}").
std::string npy_header(const std::vector<std::size_t>& shape, DType dtype);

// read_npy, but a regular file of little-endian floats in C order (float16/32/64, bfloat16 bits with u2_as
// BF16), or of unsigned bytes ('|u1', FP8 codes), is mapped, not converted: the check engine reads its
// elements in place (NpyArray::typed), with no copy as doubles. Other files (pipes, big-endian, Fortran
// order, wider integers) are read as read_npy reads them.
NpyArray read_npy_in_place(const std::string& path, DType u2_as = DType::F32);

// Parses a whole .npy file held in memory. `u2_as` is what 16-bit unsigned integers hold: BF16
// for bfloat16 bits, anything else for integers. Integer arrays (positions) are read exactly up to
// 2^53. Throws NpyError naming `name` and the problem.
NpyArray parse_npy(std::string_view bytes, const std::string& name, DType u2_as = DType::F32);
NpyArray read_npy(const std::string& path, DType u2_as = DType::F32);

}  // namespace pe::check

// Writing .npy (format 1.0, little-endian, C order); reading is npy_read.cc.
#include <fstream>

#include "pe/check/npy.h"
#include "pe/half.h"

namespace pe::check {
namespace {

const char* descr(DType dtype) {
  switch (dtype) {
    case DType::F32:
      return "<f4";
    case DType::F64:
      return "<f8";
    case DType::F16:
      return "<f2";
    case DType::BF16:
      return "<u2";
  }
  return "";
}

}  // namespace

std::string npy_header(const std::vector<std::size_t>& shape, DType dtype) {
  std::string dims;
  for (std::size_t i = 0; i < shape.size(); ++i) dims += (i ? ", " : "") + std::to_string(shape[i]);
  if (shape.size() == 1) dims += ",";  // a 1-tuple is "(3,)" in Python
  return "{'descr': '" + std::string(descr(dtype)) + "', 'fortran_order': False, 'shape': (" + dims + "), }";
}

void write_npy(const std::string& path, const std::vector<double>& values,
               const std::vector<std::size_t>& shape, DType dtype) {
  std::string header = npy_header(shape, dtype);
  // Magic (6) + version (2) + length (2) + header + '\n' is padded with spaces to a multiple of 64.
  const std::size_t unpadded = 10 + header.size() + 1;
  header.append((64 - unpadded % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error("cannot open " + path + " for writing");
  const auto len = static_cast<std::uint16_t>(header.size());
  out.write("\x93NUMPY\x01\x00", 8);
  const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(len_bytes, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  for (double v : values) {
    // Little-endian hosts only (x86-64, AArch64): the bytes are written as they lie in memory.
    if (dtype == DType::F32) {
      const auto f = static_cast<float>(v);
      out.write(reinterpret_cast<const char*>(&f), sizeof f);
    } else if (dtype == DType::F64) {
      out.write(reinterpret_cast<const char*>(&v), sizeof v);
    } else {
      const std::uint16_t bits = dtype == DType::BF16 ? to_bfloat16(v).bits : to_float16(v).bits;
      out.write(reinterpret_cast<const char*>(&bits), sizeof bits);
    }
  }
  if (!out) throw std::runtime_error("failed writing " + path);
}

}  // namespace pe::check

// The .npy reader and writer against numpy's format specification (NEP 1): headers, byte orders,
// Fortran order, every element type, and malformed files refused with a message.
#include "pe/check/npy.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "pe/harness/measure.h"

namespace pe::check {
namespace {

// A .npy file as numpy writes it (format 1.0 unless version 2): magic, version, header length,
// the header dictionary padded with spaces to a multiple of 64 bytes, then the data.
std::string npy_bytes(const std::string& dict, const std::string& data, int version = 1) {
  const std::size_t prefix = version == 1 ? 10 : 12;
  std::string h = dict;
  h.append((64 - (prefix + h.size() + 1) % 64) % 64, ' ');
  h += '\n';
  std::string out = "\x93NUMPY";
  out += static_cast<char>(version);
  out += '\0';
  for (std::size_t k = 0; k < prefix - 8; ++k) out += static_cast<char>((h.size() >> (8 * k)) & 0xff);
  return out + h + data;
}

template <class T>
std::string raw(std::initializer_list<T> v) {
  std::string s(v.size() * sizeof(T), '\0');
  std::memcpy(s.data(), std::data(v), s.size());
  return s;
}

TEST(Npy, ReadsCOrderFloat32) {
  const auto a = parse_npy(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }",
                                     raw<float>({0, 1, 2, 3, 4, 5})),
                           "t");
  EXPECT_EQ(a.shape, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(a.values, (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(a.dtype, DType::F32);
}

TEST(Npy, FortranOrderIsTransposedToRowMajor) {
  // Fortran order stores column by column: [[1, 2, 3], [4, 5, 6]] is 1 4 2 5 3 6 in the file.
  const auto a = parse_npy(npy_bytes("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 3), }",
                                     raw<double>({1, 4, 2, 5, 3, 6})),
                           "t");
  EXPECT_EQ(a.values, (std::vector<double>{1, 2, 3, 4, 5, 6}));
}

TEST(Npy, HalfBfloat16BigEndianAndVersion2) {
  // IEEE binary16 0x3c00 = 1, 0xc000 = -2; bfloat16 0x3f80 = 1, 0x4049 = 3.140625 (float 0x40490000).
  const auto h = parse_npy(npy_bytes("{'descr': '<f2', 'fortran_order': False, 'shape': (2,), }",
                                     std::string("\x00\x3c\x00\xc0", 4)),
                           "t");
  EXPECT_EQ(h.values, (std::vector<double>{1, -2}));
  const auto b = parse_npy(npy_bytes("{'descr': '<u2', 'fortran_order': False, 'shape': (2,), }",
                                     std::string("\x80\x3f\x49\x40", 4), 2),
                           "t", DType::BF16);
  EXPECT_EQ(b.values, (std::vector<double>{1, 3.140625}));
  EXPECT_EQ(b.dtype, DType::BF16);
  const auto be = parse_npy(npy_bytes("{'descr': '>f4', 'fortran_order': False, 'shape': (1,), }",
                                      std::string("\x3f\x80\x00\x00", 4)),
                            "t");
  EXPECT_EQ(be.values, (std::vector<double>{1}));
}

TEST(Npy, IntegersReadExactly) {
  const auto a = parse_npy(npy_bytes("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }",
                                     raw<std::int64_t>({-3, std::int64_t{1} << 40})),
                           "t");
  EXPECT_TRUE(a.integer);
  EXPECT_EQ(a.values, (std::vector<double>{-3, 1099511627776.0}));
}

TEST(Npy, RejectsMalformedFilesWithAMessage) {
  const std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  const std::string good = npy_bytes(dict, raw<float>({0, 1, 2, 3, 4, 5}));
  const auto fails_with = [](const std::string& bytes, const std::string& needle, DType u2 = DType::F32) {
    try {
      parse_npy(bytes, "x.npy", u2);
    } catch (const NpyError& e) {
      return std::string(e.what()).find(needle) != std::string::npos;
    }
    return false;
  };
  EXPECT_TRUE(fails_with(good.substr(0, good.size() - 1), "truncated"));
  EXPECT_TRUE(fails_with(good + "x", "trailing"));
  EXPECT_TRUE(fails_with("GIF89a", "not a .npy"));
  EXPECT_TRUE(fails_with(good.substr(0, 20), "truncated header"));
  EXPECT_TRUE(fails_with(npy_bytes("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", "12345678"),
                         "element type"));
  // Undeclared 16-bit integers are integers (positions); `check` then asks for --dtype bf16.
  EXPECT_TRUE(
      parse_npy(npy_bytes("{'descr': '<u2', 'fortran_order': False, 'shape': (1,), }", "12"), "t").integer);
  EXPECT_TRUE(fails_with(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (a,), }", "1234"),
                         "non-integer"));
  EXPECT_TRUE(fails_with(npy_bytes("{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }", "1234"),
                         "fortran_order"));
  EXPECT_TRUE(fails_with(npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': "
                                   "(4294967296, 4294967296, 4294967296), }",
                                   ""),
                         "too large"));
}

TEST(Npy, WriterRoundTripsEveryType) {
  const std::vector<double> v = {1.0, -0.5, 0.099609375};  // exact in all four types
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16}) {
    const std::string path = ::testing::TempDir() + "/rt.npy";
    write_npy(path, v, {3}, t);
    const auto a = read_npy(path, DType::BF16);
    EXPECT_EQ(a.values, v) << to_string(t);
    EXPECT_EQ(a.dtype, t);
  }
}

// read_npy streams a file's data in chunks: it gives parse_npy's array for every kind of file (several
// chunks of float32 and float64, Fortran order, big-endian half), and the same message for a bad one.
TEST(Npy, ReadingAFileIsParsingItsBytes) {
  std::string f32, f64;
  const std::size_t n = (1 << 20) / 4 + 77;  // more than one 1 MiB chunk, and a partial last one
  for (std::size_t i = 0; i < n; ++i) {
    const float a = std::sin(0.37f * static_cast<float>(i));
    const double b = std::cos(0.11 * static_cast<double>(i));
    f32.append(reinterpret_cast<const char*>(&a), 4);
    f64.append(reinterpret_cast<const char*>(&b), 8);
  }
  const std::string shape = "'shape': (" + std::to_string(n) + ",), }";
  const std::vector<std::string> files = {
      npy_bytes("{'descr': '<f4', 'fortran_order': False, " + shape, f32),
      npy_bytes("{'descr': '<f8', 'fortran_order': False, " + shape, f64, 2),
      npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", raw<float>({0, 1, 2, 3, 4, 5})),
      npy_bytes("{'descr': '>f2', 'fortran_order': False, 'shape': (2,), }",
                std::string("\x3c\x00\xc0\x00", 4)),
      npy_bytes("{'descr': '<f4', 'fortran_order': False, 'shape': (), }", raw<float>({2.5f})),
  };
  const std::string path = ::testing::TempDir() + "/read.npy";
  const auto write = [&](const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; };
  for (const std::string& bytes : files) {
    write(bytes);
    const NpyArray a = read_npy(path), b = parse_npy(bytes, path);
    EXPECT_EQ(a.shape, b.shape);
    EXPECT_EQ(a.dtype, b.dtype);
    EXPECT_EQ(a.values, b.values);
  }
  const std::string good = files[2];
  for (const std::string& bad : {good.substr(0, good.size() - 1), good + "x", std::string("GIF89a"),
                                 good.substr(0, 11), good.substr(0, 20)}) {
    write(bad);
    std::string from_file, from_bytes;
    try {
      read_npy(path);
    } catch (const NpyError& e) {
      from_file = e.what();
    }
    try {
      parse_npy(bad, path);
    } catch (const NpyError& e) {
      from_bytes = e.what();
    }
    EXPECT_FALSE(from_file.empty());
    EXPECT_EQ(from_file, from_bytes);
  }
}

// read_npy_in_place maps little-endian float files in C order and reads their elements where they lie
// (the same values as read_npy's); other files come as read_npy reads them (pipes too: cli/end_to_end).
TEST(Npy, InPlaceReadingIsReadingForEveryFile) {
  const std::string dict = "'fortran_order': False, 'shape': (2, 2), }";
  struct Case {
    std::string bytes;
    DType u2_as;
    bool in_place;
  };
  const std::vector<Case> cases = {
      {npy_bytes("{'descr': '<f4', " + dict, raw<float>({1.5f, -2, 0.25f, 3})), DType::F32, true},
      {npy_bytes("{'descr': '<f8', " + dict, raw<double>({1.5, -2, 0.1, 3})), DType::F32, true},
      {npy_bytes("{'descr': '<f2', " + dict, raw<std::uint16_t>({0x3c00, 0xc000, 0x3555, 0x7c00})),
       DType::F32, true},
      {npy_bytes("{'descr': '<u2', " + dict, raw<std::uint16_t>({0x3fc0, 0xc000, 0x3e80, 0x7f80})),
       DType::BF16, true},
      {npy_bytes("{'descr': '>f4', " + dict, std::string("\x3f\xc0\0\0\xc0\0\0\0\0\0\0\0\0\0\0\0", 16)),
       DType::F32, false},
      {npy_bytes("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", raw<float>({1, 2, 3, 4})),
       DType::F32, false},
      {npy_bytes("{'descr': '<i8', " + dict, raw<std::int64_t>({1, 2, 3, 4})), DType::F32, false},
      // FP8 codes: mapped, integer, one byte an element (their dtype is not theirs: the CLI reads the bytes).
      {npy_bytes("{'descr': '|u1', " + dict, std::string("\x00\x7e\x80\xff", 4)), DType::F32, true},
  };
  const std::string path = ::testing::TempDir() + "/in_place.npy";
  for (const Case& c : cases) {
    std::ofstream(path, std::ios::binary) << c.bytes;
    const NpyArray read = read_npy(path, c.u2_as), mapped = read_npy_in_place(path, c.u2_as);
    EXPECT_EQ(mapped.typed != nullptr, c.in_place) << c.bytes.substr(10, 20);
    EXPECT_EQ(read.shape, mapped.shape);
    EXPECT_EQ(read.dtype, mapped.dtype);
    EXPECT_EQ(read.integer, mapped.integer);
    if (mapped.typed == nullptr) {
      EXPECT_EQ(read.values, mapped.values);
      continue;
    }
    EXPECT_TRUE(mapped.values.empty());
    if (mapped.integer) {
      const auto* bytes = static_cast<const std::uint8_t*>(mapped.typed);
      for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(bytes[i], read.values[i]) << i;
      continue;
    }
    const harness::Values in_place(mapped.typed, mapped.dtype, 4);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(in_place[i], read.values[i]) << i;
  }
  // A pipe is read once, as a stream.
  const std::string fifo = ::testing::TempDir() + "/in_place.fifo";
  ::unlink(fifo.c_str());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  std::thread writer([&] { std::ofstream(fifo, std::ios::binary) << cases[0].bytes; });
  const NpyArray piped = read_npy_in_place(fifo);
  writer.join();
  EXPECT_EQ(piped.typed, nullptr);
  EXPECT_EQ(piped.values, (std::vector<double>{1.5, -2, 0.25, 3}));
  ::unlink(fifo.c_str());
  // A missing file: read_npy's message.
  std::string missing;
  try {
    read_npy_in_place(path + ".missing");
  } catch (const NpyError& e) {
    missing = e.what();
  }
  EXPECT_NE(missing.find("cannot open"), std::string::npos) << missing;
}

// resize_large is resize with a hint: n zeros, small or large (huge pages asked for past 2 MiB).
TEST(Npy, ResizeLargeGivesZeros) {
  for (std::size_t n : {std::size_t{0}, std::size_t{5}, std::size_t{3} << 20}) {
    std::vector<double> v;
    resize_large(v, n);
    ASSERT_EQ(v.size(), n);
    EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](double x) { return x == 0; }));
  }
}

}  // namespace
}  // namespace pe::check

// Reading .npy (format 1.0-3.0, either byte order, C or Fortran order); writing is npy_write.cc.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "pe/check/errors.h"
#include "pe/check/npy.h"
#include "pe/harness/large_vector.h"

namespace pe::check {
namespace {

// The value of key 'name' in numpy's header dictionary, as raw text up to the next top-level comma
// or closing brace (a tuple's commas are inside parentheses).
std::string_view dict_value(std::string_view header, std::string_view key, const std::string& name) {
  std::size_t at = std::string_view::npos;
  for (const char q : {'\'', '"'}) {
    const std::string quoted = std::string(1, q) + std::string(key) + q;
    if (const std::size_t k = header.find(quoted); k != std::string_view::npos) at = k + quoted.size();
  }
  if (at == std::string_view::npos) throw NpyError(name + ": header has no '" + std::string(key) + "'");
  at = header.find(':', at);
  if (at == std::string_view::npos)
    throw NpyError(name + ": header key '" + std::string(key) + "' has no value");
  std::size_t end = at + 1;
  int depth = 0;
  for (; end < header.size(); ++end) {
    const char c = header[end];
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    if (depth < 0) break;
  }
  std::string_view v = header.substr(at + 1, end - at - 1);
  while (!v.empty() && v.front() == ' ') v.remove_prefix(1);
  while (!v.empty() && v.back() == ' ') v.remove_suffix(1);
  return v;
}

std::vector<std::size_t> parse_shape(std::string_view v, const std::string& name) {
  if (v.size() < 2 || v.front() != '(' || v.back() != ')')
    throw NpyError(name + ": shape is not a tuple: " + std::string(v));
  std::vector<std::size_t> shape;
  std::size_t i = 1;
  const std::size_t end = v.size() - 1;
  while (i < end) {
    while (i < end && (v[i] == ' ' || v[i] == ',')) ++i;
    if (i >= end) break;
    std::size_t n = 0, digits = 0;
    for (; i < end && v[i] >= '0' && v[i] <= '9'; ++i, ++digits) {
      if (n > (std::numeric_limits<std::size_t>::max() - 9) / 10) throw NpyError(name + ": shape too large");
      n = n * 10 + static_cast<std::size_t>(v[i] - '0');
    }
    if (digits == 0) throw NpyError(name + ": shape has a non-integer entry: " + std::string(v));
    shape.push_back(n);
  }
  return shape;
}

// IEEE 754 binary16, decoded exactly (every half is a double); no _Float16, which clang 14 lacks
// on x86 and the fuzz build uses clang.
double half_to_double(std::uint16_t h) {
  const int exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double v = 0;
  if (exponent == 0) {
    v = std::ldexp(mantissa, -24);
  } else if (exponent == 31) {
    v = mantissa != 0 ? NAN : INFINITY;
  } else {
    v = std::ldexp(mantissa + 1024, exponent - 25);
  }
  return (h & 0x8000) ? -v : v;
}

struct Element {
  char kind = 'f';  // 'f' float, 'b' bfloat16 bits, 'i' signed, 'u' unsigned
  std::size_t width = 4;
};

double element(const unsigned char* p, Element e, bool big_endian) {
  unsigned char b[8] = {};
  for (std::size_t i = 0; i < e.width; ++i) b[i] = big_endian ? p[e.width - 1 - i] : p[i];
  std::uint64_t u = 0;
  for (std::size_t i = e.width; i-- > 0;) u = (u << 8) | b[i];
  switch (e.kind) {
    case 'b':
      return std::bit_cast<float>(static_cast<std::uint32_t>(u << 16));
    case 'u':
      return static_cast<double>(u);
    case 'i': {
      const unsigned shift = static_cast<unsigned>(64 - 8 * e.width);
      return static_cast<double>(static_cast<std::int64_t>(u << shift) >> shift);
    }
    default:
      break;
  }
  if (e.width == 2) return half_to_double(static_cast<std::uint16_t>(u));
  if (e.width == 4) return std::bit_cast<float>(static_cast<std::uint32_t>(u));
  return std::bit_cast<double>(u);
}

// What the header says: the array without its values, how its elements are stored, where they start.
struct Layout {
  NpyArray array;
  Element e;
  bool big_endian = false, fortran = false;
  std::size_t count = 0, data_at = 0;
};

// The preamble's header length and where the header starts; 0, 0 when `bytes` is too short to say.
std::pair<std::size_t, std::size_t> header_extent(std::string_view bytes, const std::string& name) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != std::string_view("\x93NUMPY", 6))
    throw NpyError(name + ": not a .npy file (no \\x93NUMPY magic)");
  const auto u8 = [&](std::size_t i) {
    return static_cast<std::size_t>(static_cast<unsigned char>(bytes[i]));
  };
  const std::size_t major = u8(6);
  if (major == 1) return {u8(8) | (u8(9) << 8), 10};
  if (major == 2 || major == 3) {
    if (bytes.size() < 12) throw NpyError(name + ": truncated header");
    return {u8(8) | (u8(9) << 8) | (u8(10) << 16) | (u8(11) << 24), 12};
  }
  throw NpyError(name + ": unsupported .npy format version " + std::to_string(major));
}

// The header of a file of `file_size` bytes whose first bytes are `bytes` (the whole header at least).
Layout parse_header(std::string_view bytes, std::size_t file_size, const std::string& name, DType u2_as) {
  const auto [header_len, header_at] = header_extent(bytes, name);
  if (header_len > bytes.size() - header_at) throw NpyError(name + ": truncated header");
  const std::string_view header = bytes.substr(header_at, header_len);

  const std::string_view d = dict_value(header, "descr", name);
  const std::string_view f = dict_value(header, "fortran_order", name);
  Layout l;
  NpyArray& a = l.array;
  a.shape = parse_shape(dict_value(header, "shape", name), name);
  if (f != "False" && f != "True") throw NpyError(name + ": fortran_order is neither True nor False");
  l.fortran = f == "True";
  if (d.size() != 5 || (d.front() != '\'' && d.front() != '"') || d.back() != d.front())
    throw NpyError(name + ": unsupported descr " + std::string(d));
  const std::string_view code = d.substr(1, 3);
  l.big_endian = code[0] == '>';
  if (code[0] != '<' && code[0] != '>' && code[0] != '|' && code[0] != '=')
    throw NpyError(name + ": unsupported byte order in descr " + std::string(d));
  const std::string_view type = code.substr(1);
  Element& e = l.e;
  e.kind = type[0];
  e.width = static_cast<std::size_t>(type[1] - '0');
  const bool is_float = e.kind == 'f' && (e.width == 2 || e.width == 4 || e.width == 8);
  const bool is_int =
      (e.kind == 'i' || e.kind == 'u') && (e.width == 1 || e.width == 2 || e.width == 4 || e.width == 8);
  if (!is_float && !is_int) {
    throw NpyError(name + ": element type " + std::string(d) +
                   " is not float16/32/64, bf16 bits or an integer");
  }
  // bfloat16 as its bits: numpy's uint16, or torch's .view(torch.int16) saved as int16.
  if ((e.kind == 'u' || e.kind == 'i') && e.width == 2 && u2_as == DType::BF16) e.kind = 'b';
  a.integer = is_int && e.kind != 'b';
  a.dtype = e.kind == 'b' ? DType::BF16 : e.width == 2 ? DType::F16 : e.width == 4 ? DType::F32 : DType::F64;

  std::size_t count = 1;
  for (std::size_t n : a.shape) {
    if (n != 0 && count > std::numeric_limits<std::size_t>::max() / n / 8)
      throw NpyError(name + ": shape too large");
    count *= n;
  }
  l.count = count;
  l.data_at = header_at + header_len;
  const std::size_t have = file_size - l.data_at;
  if (have != count * e.width) {
    std::ostringstream msg;
    msg << name << ": shape needs " << count * e.width << " data bytes, the file has " << have
        << (have < count * e.width ? " (truncated)" : " (trailing bytes)");
    throw NpyError(msg.str());
  }
  return l;
}

// Elements [first, first + n) of a C-order file from `data` (their bytes) into values[first...]: the
// common files (little-endian float32 and float64) in loops the compiler vectorizes.
void convert(const unsigned char* data, const Layout& l, std::size_t first, std::size_t n, double* values) {
  if (!l.big_endian && l.e.kind == 'f' && l.e.width == 4) {
    for (std::size_t i = 0; i < n; ++i) {
      float v;
      std::memcpy(&v, data + i * 4, 4);
      values[first + i] = v;
    }
  } else if (!l.big_endian && l.e.kind == 'f' && l.e.width == 8) {
    if (n != 0) std::memcpy(values + first, data, n * 8);
  } else {
    for (std::size_t i = 0; i < n; ++i) values[first + i] = element(data + i * l.e.width, l.e, l.big_endian);
  }
}

// Fortran order: the first index varies fastest. Walk the file in its order, placing each element at
// its row-major index.
void convert_fortran(const unsigned char* data, const Layout& l, double* values) {
  const std::vector<std::size_t>& shape = l.array.shape;
  const std::size_t rank = shape.size();
  std::vector<std::size_t> stride(rank, 1), index(rank, 0);
  for (std::size_t k = rank - 1; k-- > 0;) stride[k] = stride[k + 1] * shape[k + 1];
  for (std::size_t i = 0; i < l.count; ++i) {
    std::size_t at = 0;
    for (std::size_t k = 0; k < rank; ++k) at += index[k] * stride[k];
    values[at] = element(data + i * l.e.width, l.e, l.big_endian);
    for (std::size_t k = 0; k < rank && ++index[k] == shape[k]; ++k) index[k] = 0;
  }
}

}  // namespace

void resize_large(std::vector<double>& v, std::size_t n) {
  harness::reserve_large(v, n);
  v.resize(n);
}

NpyArray parse_npy(std::string_view bytes, const std::string& name, DType u2_as) {
  Layout l = parse_header(bytes, bytes.size(), name, u2_as);
  NpyArray& a = l.array;
  resize_large(a.values, l.count);
  const auto* data = reinterpret_cast<const unsigned char*>(bytes.data() + l.data_at);
  if (l.fortran && a.shape.size() >= 2) {
    convert_fortran(data, l, a.values.data());
  } else {
    convert(data, l, 0, l.count, a.values.data());
  }
  return std::move(a);
}

NpyArray read_npy(const std::string& path, DType u2_as) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw NpyError(path + ": cannot open (" + why_unreadable(path) + ")");
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size < 0) {  // a pipe: no size to ask for, read it whole
    in.clear();
    std::ostringstream stream;
    stream << in.rdbuf();
    return parse_npy(stream.str(), path, u2_as);
  }
  in.seekg(0);
  const auto file_size = static_cast<std::size_t>(size);
  const auto read = [&](char* to, std::size_t n) {
    if (!in.read(to, static_cast<std::streamsize>(n)))
      throw NpyError(path + ": cannot read (" + why_unreadable(path) + ")");
  };
  // The header, then the data in chunks converted as they come: no copy of the whole file in memory
  // (it would be touched, then copied, then freed: a large array's cost).
  std::string head(std::min<std::size_t>(file_size, 12), '\0');
  read(head.data(), head.size());
  const auto [header_len, header_at] = header_extent(head, path);
  if (header_len > file_size - std::min(file_size, header_at)) throw NpyError(path + ": truncated header");
  const std::size_t got = head.size();
  head.resize(std::max(got, header_at + header_len));
  read(head.data() + got, head.size() - got);
  Layout l = parse_header(head, file_size, path, u2_as);
  NpyArray& a = l.array;
  if (l.fortran && a.shape.size() >= 2) {
    std::string data(file_size - l.data_at, '\0');
    read(data.data(), data.size());
    resize_large(a.values, l.count);
    convert_fortran(reinterpret_cast<const unsigned char*>(data.data()), l, a.values.data());
    return std::move(a);
  }
  resize_large(a.values, l.count);
  constexpr std::size_t kChunk = 1 << 20;  // bytes
  std::vector<char> chunk(std::min(kChunk, l.count * l.e.width));
  const std::size_t per_chunk = chunk.empty() ? 1 : chunk.size() / l.e.width;
  for (std::size_t first = 0; first < l.count; first += per_chunk) {
    const std::size_t n = std::min(per_chunk, l.count - first);
    read(chunk.data(), n * l.e.width);
    convert(reinterpret_cast<const unsigned char*>(chunk.data()), l, first, n, a.values.data());
  }
  return std::move(a);
}

NpyArray read_npy_in_place(const std::string& path, DType u2_as) {
  // A pipe is read once, as a stream, by read_npy (stat does not open it); so are missing files (its
  // messages).
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) return read_npy(path, u2_as);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return read_npy(path, u2_as);
  const auto size = static_cast<std::size_t>(st.st_size);
  // MAP_POPULATE: the pages the file already has in the page cache are mapped in one call, not one fault
  // each.
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return read_npy(path, u2_as);
  std::shared_ptr<const void> mapping(map, [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
  const std::string_view bytes(static_cast<const char*>(map), size);
  const Layout l = parse_header(bytes, size, path, u2_as);
  const bool floats = l.e.kind == 'f' || l.e.kind == 'b';
  const bool bytes_only = l.e.kind == 'u' && l.e.width == 1;  // FP8 codes: no byte order
  const bool c_order = !l.fortran || l.array.shape.size() < 2;
  if (!(floats || bytes_only) || (floats && l.big_endian) || !c_order || l.data_at % l.e.width != 0 ||
      std::endian::native != std::endian::little)
    return parse_npy(bytes, path, u2_as);
  NpyArray a = l.array;
  a.typed = bytes.data() + l.data_at;
  a.mapping = std::move(mapping);
  return a;
}

}  // namespace pe::check

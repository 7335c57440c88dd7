#include "arrays.h"

#include <dlpack/dlpack.h>
#include <fmt/format.h>

#include <cmath>
#include <cstring>

#include "pe/half.h"

namespace pe::python {
namespace {

// An element type the readers know: the storage, not the meaning (bfloat16 bits arrive as u16).
enum class Kind { F16, BF16, F32, F64, I8, I16, I32, I64, U8, U16, U32, U64, Bool, Other };

struct View {
  const char* data = nullptr;
  std::vector<std::size_t> shape;
  std::vector<std::int64_t> strides;  // bytes
  Kind kind = Kind::Other;
  std::string type_name;  // for messages
  py::object owner;       // keeps `data` alive (the array, or the tensor and its DLPack capsule)
};

// Whether the elements lie in compact C order, aligned for their type: the engine can read them in place.
bool compact_c_order(const View& v, std::size_t item) {
  if (reinterpret_cast<std::uintptr_t>(v.data) % item != 0) return false;
  std::int64_t step = static_cast<std::int64_t>(item);
  for (std::size_t d = v.shape.size(); d-- > 0;) {
    if (v.shape[d] != 1 && v.strides[d] != step) return false;
    step *= static_cast<std::int64_t>(v.shape[d]);
  }
  return true;
}

bool is_integer(Kind k) { return k >= Kind::I8 && k <= Kind::Bool; }

template <class T>
double read_as(const char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return static_cast<double>(v);
}

double element(const char* p, Kind k) {
  switch (k) {
    case Kind::F16: {
      std::uint16_t b;
      std::memcpy(&b, p, 2);
      return to_float(Float16{b});
    }
    case Kind::BF16: {
      std::uint16_t b;
      std::memcpy(&b, p, 2);
      return to_float(BFloat16{b});
    }
    case Kind::F32:
      return read_as<float>(p);
    case Kind::F64:
      return read_as<double>(p);
    case Kind::I8:
      return read_as<std::int8_t>(p);
    case Kind::I16:
      return read_as<std::int16_t>(p);
    case Kind::I32:
      return read_as<std::int32_t>(p);
    case Kind::I64:
      return read_as<std::int64_t>(p);
    case Kind::U8:
    case Kind::Bool:
      return read_as<std::uint8_t>(p);
    case Kind::U16:
      return read_as<std::uint16_t>(p);
    case Kind::U32:
      return read_as<std::uint32_t>(p);
    case Kind::U64:
      return read_as<std::uint64_t>(p);
    case Kind::Other:
      break;
  }
  return NAN;
}

// f(pointer) for every element in C order, through the strides.
template <class F>
void for_each_element(const View& v, F&& f) {
  std::size_t n = 1;
  for (std::size_t s : v.shape) n *= s;
  if (n == 0) return;
  const std::size_t rank = v.shape.size();
  if (rank == 0) {
    f(v.data);
    return;
  }
  std::vector<std::size_t> index(rank, 0);
  for (std::size_t done = 0; done < n; done += v.shape.back()) {
    std::int64_t offset = 0;
    for (std::size_t d = 0; d + 1 < rank; ++d) offset += static_cast<std::int64_t>(index[d]) * v.strides[d];
    for (std::size_t i = 0; i < v.shape.back(); ++i)
      f(v.data + offset + static_cast<std::int64_t>(i) * v.strides.back());
    for (std::size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < v.shape[d]) break;
      index[d] = 0;
    }
  }
}

// Every element in C order, through the strides (any layout, no copy of the source).
template <Kind K>
void gather_typed(const View& v, std::vector<double>& out) {
  std::size_t i = 0;
  for_each_element(v, [&](const char* p) { out[i++] = element(p, K); });
}

std::vector<double> gather(const View& v) {
  std::size_t n = 1;
  for (std::size_t s : v.shape) n *= s;
  std::vector<double> out;
  check::resize_large(out, n);
  if (n == 0) return out;
  switch (v.kind) {
#define PE_GATHER(k)               \
  case Kind::k:                    \
    gather_typed<Kind::k>(v, out); \
    break;
    PE_GATHER(F16)
    PE_GATHER(BF16)
    PE_GATHER(F32)
    PE_GATHER(F64)
    PE_GATHER(I8)
    PE_GATHER(I16)
    PE_GATHER(I32)
    PE_GATHER(I64)
    PE_GATHER(U8)
    PE_GATHER(U16)
    PE_GATHER(U32)
    PE_GATHER(U64)
    PE_GATHER(Bool)
#undef PE_GATHER
    case Kind::Other:
      break;
  }
  return out;
}

Kind numpy_kind(char kind, std::size_t size) {
  if (kind == 'f') return size == 2 ? Kind::F16 : size == 4 ? Kind::F32 : size == 8 ? Kind::F64 : Kind::Other;
  if (kind == 'i')
    return size == 1   ? Kind::I8
           : size == 2 ? Kind::I16
           : size == 4 ? Kind::I32
           : size == 8 ? Kind::I64
                       : Kind::Other;
  if (kind == 'u')
    return size == 1   ? Kind::U8
           : size == 2 ? Kind::U16
           : size == 4 ? Kind::U32
           : size == 8 ? Kind::U64
                       : Kind::Other;
  if (kind == 'b') return Kind::Bool;
  return Kind::Other;
}

Kind dlpack_kind(DLDataType t) {
  if (t.lanes != 1) return Kind::Other;
  const std::size_t size = t.bits / 8;
  switch (t.code) {
    case kDLFloat:
      return numpy_kind('f', size);
    case kDLBfloat:
      return t.bits == 16 ? Kind::BF16 : Kind::Other;
    case kDLInt:
      return numpy_kind('i', size);
    case kDLUInt:
      return numpy_kind('u', size);
    default:
      return Kind::Other;
  }
}

// Reads `obj` as a view, calls f(view) while the source is alive.
template <class F>
auto with_view(py::handle obj, const std::string& name, F&& f) {
  if (obj.is_none()) throw py::type_error(fmt::format("{}: expected an array, got None", name));
  // PyTorch tensors (and other DLPack producers) are read through DLPack; numpy arrays through numpy.
  if (!py::isinstance<py::array>(obj) && py::hasattr(obj, "__dlpack__")) {
    py::object source = py::reinterpret_borrow<py::object>(obj);
    if (py::hasattr(source, "requires_grad") && source.attr("requires_grad").cast<bool>())
      source = source.attr("detach")();
    // A negated or conjugated view exports its memory without the bit: materialise it first.
    for (const char* resolve : {"resolve_neg", "resolve_conj"})
      if (py::hasattr(source, resolve)) source = source.attr(resolve)();
    // Read once: str(dtype) is a tenth of a small call's reading of its arrays.
    const std::string type_name =
        py::hasattr(source, "dtype") ? py::str(source.attr("dtype")).cast<std::string>() : std::string();
    if (type_name == "torch.bool")
      throw py::type_error(fmt::format("{}: expected numbers, got torch.bool", name));
    if (py::hasattr(source, "device")) {
      const std::string device = py::str(source.attr("device"));
      if (device != "cpu")
        throw py::type_error(
            fmt::format("{}: a tensor on {}; pe_suite reads CPU memory (call .cpu())", name, device));
    }
    py::object capsule = source.attr("__dlpack__")();
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
    if (managed == nullptr) throw py::error_already_set();
    const DLTensor& t = managed->dl_tensor;
    if (t.device.device_type != kDLCPU)
      throw py::type_error(
          fmt::format("{}: DLPack device {} is not the CPU", name, static_cast<int>(t.device.device_type)));
    View v;
    v.data = static_cast<const char*>(t.data) + t.byte_offset;
    v.kind = dlpack_kind(t.dtype);
    v.type_name = !type_name.empty()
                      ? type_name
                      : fmt::format("DLPack type code {} of {} bits", static_cast<int>(t.dtype.code),
                                    static_cast<int>(t.dtype.bits));
    const std::size_t item = t.dtype.bits / 8;
    for (int d = 0; d < t.ndim; ++d) v.shape.push_back(static_cast<std::size_t>(t.shape[d]));
    v.strides.resize(v.shape.size());
    std::int64_t step = static_cast<std::int64_t>(item);
    for (int d = t.ndim; d-- > 0;) {  // DLPack strides count elements; none: compact C order
      v.strides[static_cast<std::size_t>(d)] =
          t.strides != nullptr ? t.strides[d] * static_cast<std::int64_t>(item) : step;
      step *= t.shape[d];
    }
    v.owner = py::make_tuple(source, capsule);
    return f(v);  // `capsule` (unconsumed) frees the tensor's DLPack view when it goes
  }
  py::array a = py::array::ensure(obj);
  if (!a)
    throw py::type_error(
        fmt::format("{}: expected an array, got {}", name, py::str(py::type::of(obj)).cast<std::string>()));
  if (a.dtype().attr("byteorder").cast<std::string>() == ">")
    a = a.attr("astype")(a.dtype().attr("newbyteorder")("=")).cast<py::array>();
  View v;
  v.data = static_cast<const char*>(a.data());
  // The dtype's kind and size through Python: pybind11 before 2.12 reads them from the descriptor's C struct,
  // whose layout NumPy 2 changed (its itemsize read there is garbage).
  const py::object dtype = a.attr("dtype");
  v.kind =
      numpy_kind(dtype.attr("kind").cast<std::string>().at(0), dtype.attr("itemsize").cast<std::size_t>());
  v.type_name = py::str(a.dtype()).cast<std::string>();
  for (py::ssize_t d = 0; d < a.ndim(); ++d) {
    v.shape.push_back(static_cast<std::size_t>(a.shape(d)));
    v.strides.push_back(a.strides(d));
  }
  v.owner = a;
  return f(v);
}

}  // namespace

bool plain_sequence(py::handle obj) {
  return !obj.is_none() && !py::isinstance<py::array>(obj) && !py::hasattr(obj, "__dlpack__") &&
         (py::isinstance<py::list>(obj) || py::isinstance<py::tuple>(obj));
}

check::NpyArray read_floats(py::handle obj, const std::string& name, std::optional<DType> declared,
                            bool strict, bool in_place) {
  // A Python list has no type: read in the declared one (float16/32/64), else as float64.
  if (plain_sequence(obj) && declared && *declared != DType::BF16) {
    const char* type = *declared == DType::F16 ? "float16" : *declared == DType::F32 ? "float32" : "float64";
    const py::object typed = py::module_::import("numpy").attr("asarray")(obj, type);
    return read_floats(typed, name, declared, strict, in_place);
  }
  return with_view(obj, name, [&](View v) {
    if (declared == DType::BF16 && (v.kind == Kind::U16 || v.kind == Kind::I16)) v.kind = Kind::BF16;
    check::NpyArray a;
    switch (v.kind) {
      case Kind::F16:
        a.dtype = DType::F16;
        break;
      case Kind::BF16:
        a.dtype = DType::BF16;
        break;
      case Kind::F32:
        a.dtype = DType::F32;
        break;
      case Kind::F64:
        a.dtype = DType::F64;
        break;
      default:
        throw py::type_error(fmt::format(
            "{}: expected float16, bfloat16, float32 or float64 data, got {}{}", name, v.type_name,
            v.kind == Kind::U16 || v.kind == Kind::I16 ? " (bfloat16 bits: pass dtype=\"bfloat16\")" : ""));
    }
    if (strict && declared && *declared != a.dtype)
      throw py::type_error(
          fmt::format("dtype: {} given, but {} holds {}", to_string(*declared), name, v.type_name));
    a.shape = v.shape;
    if (in_place && compact_c_order(v, size_of(a.dtype))) {
      a.typed = v.data;
      // The array outlives the call: released with the GIL held, whichever thread drops the last copy.
      a.mapping = std::shared_ptr<const void>(new py::object(v.owner), [](const void* p) {
        const py::gil_scoped_acquire gil;
        delete static_cast<const py::object*>(p);
      });
      return a;
    }
    a.values = gather(v);
    return a;
  });
}

check::NpyArray read_integers(py::handle obj, const std::string& name) {
  return with_view(obj, name, [&](const View& v) {
    if (!is_integer(v.kind) || v.kind == Kind::Bool)
      throw py::type_error(fmt::format("{}: expected an integer array, got {}", name, v.type_name));
    // int64 and uint64 beyond 2^53 do not survive the doubles the CLI's readers hold: refused, named
    // by their own value, before the conversion.
    if (v.kind == Kind::I64 || v.kind == Kind::U64) {
      std::size_t i = 0;
      for_each_element(v, [&](const char* p) {
        std::int64_t s64;
        std::uint64_t u64;
        std::memcpy(&s64, p, 8);
        std::memcpy(&u64, p, 8);
        const bool beyond = v.kind == Kind::I64
                                ? (s64 > (std::int64_t{1} << 53) || s64 < -(std::int64_t{1} << 53))
                                : u64 > (std::uint64_t{1} << 53);
        if (beyond)
          throw py::value_error(fmt::format("{}: position {} at index {} exceeds 2^53", name,
                                            v.kind == Kind::I64 ? std::to_string(s64) : std::to_string(u64),
                                            i));
        ++i;
      });
    }
    check::NpyArray a;
    a.integer = true;
    a.shape = v.shape;
    a.values = gather(v);
    return a;
  });
}

std::optional<DType> dtype_argument(py::handle dtype, const std::string& name) {
  if (dtype.is_none()) return std::nullopt;
  std::string s = py::str(dtype);
  if (py::isinstance<py::type>(dtype) && py::hasattr(dtype, "__module__") &&
      py::str(dtype.attr("__module__")).cast<std::string>() == "numpy")
    s = py::str(py::module_::import("numpy").attr("dtype")(dtype).attr("name"));  // np.float32, the type
  if (s.starts_with("torch.")) s = s.substr(6);
  static const std::pair<const char*, DType> kNames[] = {
      {"float32", DType::F32}, {"float", DType::F32}, {"float64", DType::F64},  {"double", DType::F64},
      {"float16", DType::F16}, {"half", DType::F16},  {"bfloat16", DType::BF16}};
  for (const auto& [n, t] : kNames)
    if (s == n) return t;
  if (const auto t = parse_dtype(s)) return t;
  throw py::value_error(fmt::format("{}: expected float32, float64, float16 or bfloat16, got '{}'", name, s));
}

py::array to_numpy(const std::vector<double>& values, const std::vector<std::size_t>& shape, DType dtype) {
  std::vector<py::ssize_t> dims(shape.begin(), shape.end());
  auto fill = [&](auto* out, auto convert) {
    for (std::size_t i = 0; i < values.size(); ++i) out[i] = convert(values[i]);
  };
  switch (dtype) {
    case DType::F32: {
      py::array_t<float> a(dims);
      fill(a.mutable_data(), [](double v) { return static_cast<float>(v); });
      return a;
    }
    case DType::F64: {
      py::array_t<double> a(dims);
      fill(a.mutable_data(), [](double v) { return v; });
      return a;
    }
    case DType::F16: {  // the bits, viewed as float16: pybind11 before 2.12 sizes a py::dtype("float16")
                        // array's strides from a descriptor field NumPy 2 moved
      py::array_t<std::uint16_t> a(dims);
      fill(a.mutable_data(), [](double v) { return to_float16(v).bits; });
      return a.attr("view")("float16");
    }
    case DType::BF16: {
      py::array_t<std::uint16_t> a(dims);
      fill(a.mutable_data(), [](double v) { return to_bfloat16(v).bits; });
      return a;
    }
  }
  return {};
}

}  // namespace pe::python

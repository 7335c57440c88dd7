// What the module reads from Python and what it returns. Inputs: numpy arrays, anything numpy can
// take (__array__, lists) and DLPack producers (PyTorch CPU tensors, bfloat16 included), read in place
// through their strides into the check engine's NpyArray (doubles in C order, the shape, the element type;
// or, for the checks, a compact array's own memory); the caller's array is never written. Outputs: numpy
// arrays of the requested type (bfloat16 as its uint16 bits, as numpy has no bfloat16).
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <optional>
#include <string>
#include <vector>

#include "pe/check/npy.h"
#include "pe/types.h"

namespace pe::python {

namespace py = pybind11;

// A Python list or tuple (no type of its own: read as float64 unless a dtype is declared).
bool plain_sequence(py::handle obj);

// Floating-point data (a list in the declared float16/32/64, else float64). `declared`: DType::BF16 reads
// 16-bit integer arrays as bfloat16 bits; with
// `strict`, any declared type must be the array's own. TypeError naming `name` for anything else.
// `in_place`: an array in compact C order is not copied: the result's `typed` points into it and its
// `mapping` keeps it alive (the check engine reads it so: DataView::typed); others are copied as doubles.
check::NpyArray read_floats(py::handle obj, const std::string& name, std::optional<DType> declared,
                            bool strict = true, bool in_place = false);

// Integer data (positions): any integer type, |values| <= 2^53. TypeError for floats, ValueError for
// larger values.
check::NpyArray read_integers(py::handle obj, const std::string& name);

// None, a string ("float32", "f32", "bfloat16", "torch.bfloat16"), a numpy dtype or a torch dtype.
std::optional<DType> dtype_argument(py::handle dtype, const std::string& name);

// The values (already rounded to `dtype`) as a numpy array of that type.
py::array to_numpy(const std::vector<double>& values, const std::vector<std::size_t>& shape, DType dtype);

}  // namespace pe::python

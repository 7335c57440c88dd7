// pe_suite: the exact reference and the check engine for pytest, over the same C++ library as the
// command (nothing is computed in Python).
#include <pybind11/pybind11.h>

#include "bindings.h"

PYBIND11_MODULE(_native, m) {  // pe_suite._native: the package's __init__ re-exports it
  m.doc() =
      "Positional encodings checked against an exact reference: correctly rounded goldens "
      "(reference_sinusoidal, reference_rope, rope_cos_sin, reference_alibi) and checks with a named "
      "diagnosis "
      "(check_rope, check_sinusoidal, check_alibi and their assert_*_close forms).";
  m.attr("__version__") = PE_VERSION;
  pe::python::add_check_functions(m);
  pe::python::add_reference_functions(m);
  pe::python::add_black_box_functions(m);
}

// The module's parts, each adding its functions to the module.
#pragma once

#include <pybind11/pybind11.h>

namespace pe::python {

void add_check_functions(pybind11::module_& m);
void add_output_checks(pybind11::module_& m);  // check_outputs.cc
void add_reference_functions(pybind11::module_& m);
void add_black_box_functions(pybind11::module_& m);

}  // namespace pe::python

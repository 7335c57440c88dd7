// without_gil's body (keywords.h).
#pragma once

#include <fmt/format.h>

#include "pe/check/npy.h"
#include "pe/errors.h"

namespace pe::python {

template <class Work>
auto without_gil(Work&& work) -> decltype(work()) {
  std::string error;
  bool type_error = false;
  {
    py::gil_scoped_release release;
    try {
      return work();
    } catch (const check::BadRequest& e) {
      error = e.what();
    } catch (const InvalidArgument& e) {
      error = fmt::format("invalid {}: {}", e.parameter(), e.what());
    } catch (const check::NpyError& e) {
      error = e.what();
      type_error = true;
    } catch (const std::exception& e) {
      error = e.what();
    }
  }
  if (type_error) throw py::type_error(error);
  throw py::value_error(error);
}

}  // namespace pe::python

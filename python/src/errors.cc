// Status -> Python exception: onepool.Error (a RuntimeError) and one subclass per StatusCode,
// each carrying the C++ message unchanged and the code's name as `.code`.
#include <Python.h>

#include <array>
#include <string>

#include "python/src/bindings.h"

namespace onepool::python {
namespace {

struct ErrorClass {
  StatusCode code;
  const char* name;      // attribute of the module
  PyObject* extra_base;  // a built-in exception the class also derives from, or null
  const char* doc;
};

// Built at call time: the PyExc_* globals are not constants.
std::array<ErrorClass, 10> error_classes() {
  return {{
      {StatusCode::kInvalidArgument, "InvalidArgumentError", PyExc_ValueError,
       "The caller passed something wrong: a feed's name, dtype or shape, an option."},
      {StatusCode::kNotFound, "NotFoundError", nullptr,
       "A file, input or tensor that does not exist."},
      {StatusCode::kUnsupported, "UnsupportedError", nullptr,
       "A valid model uses something OnePool does not implement."},
      {StatusCode::kInvalidModel, "InvalidModelError", nullptr,
       "The model itself is malformed (parse error, cycle, dangling input)."},
      {StatusCode::kOutOfRange, "OutOfRangeError", nullptr,
       "A size overflows or a value lies outside its allowed range."},
      {StatusCode::kResourceExhausted, "ResourceExhaustedError", nullptr,
       "An allocation failed or a limit was reached."},
      {StatusCode::kDeviceError, "DeviceError", nullptr, "A CUDA, cuBLAS or driver failure."},
      {StatusCode::kFailedPrecondition, "FailedPreconditionError", nullptr,
       "The call is not valid in the current state."},
      {StatusCode::kInternal, "InternalError", nullptr, "A bug in OnePool."},
      {StatusCode::kCancelled, "CancelledError", nullptr,
       "The caller cancelled the run (RunOptions::cancel in C++)."},
  }};
}

const char* class_name(StatusCode code) {
  for (const ErrorClass& error : error_classes()) {
    if (error.code == code) return error.name;
  }
  return "Error";
}

py::object new_exception_class(const std::string& name, const char* doc, py::handle bases) {
  PyObject* type =
      PyErr_NewExceptionWithDoc(("onepool." + name).c_str(), doc, bases.ptr(), nullptr);
  if (type == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(type);
}

}  // namespace

void bind_errors(py::module_& module) {
  py::object error = new_exception_class(
      "Error",
      "Every OnePool failure. str(e) is the C++ Status message; e.code names the kind "
      "(\"invalid argument\", \"not found\", ...); the subclass says the same.",
      PyExc_RuntimeError);
  module.attr("Error") = error;
  for (const ErrorClass& entry : error_classes()) {
    py::tuple bases = entry.extra_base == nullptr
                          ? py::make_tuple(error)
                          : py::make_tuple(error, py::handle(entry.extra_base));
    module.attr(entry.name) = new_exception_class(entry.name, entry.doc, bases);
  }
}

void raise_status(const Status& status) {
  // Looked up on the module (not cached in a global), so the classes live as long as it does.
  py::object cls = py::module_::import("onepool._onepool").attr(class_name(status.code()));
  py::object error = cls(status.message());
  error.attr("code") = status_code_name(status.code());
  PyErr_SetObject(cls.ptr(), error.ptr());
  throw py::error_already_set();
}

}  // namespace onepool::python

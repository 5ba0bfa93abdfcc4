// The pieces of the `onepool` Python module (python/src/*.cc), registered by module.cc.
//
// Python objects wrap the C++ API: a PyModel shares its Model (std::shared_ptr) with every
// Session made from it, a PySession owns one Session. Every failing Status becomes a Python
// exception of the class named by its code (errors.cc), with the message unchanged.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <memory>
#include <mutex>
#include <string>

#include "onepool/onepool.h"

namespace onepool::python {

namespace py = pybind11;

/// A loaded Model. Immutable: shared by any number of Sessions and threads.
struct PyModel {
  std::shared_ptr<const Model> model;
  std::string path;
};

/// One Session. Session::run is not re-entrant, and run() releases the GIL, so the mutex keeps
/// two Python threads from running one Session at once (the second waits).
struct PySession {
  PyModel model;
  std::unique_ptr<Session> session;
  std::mutex run_mutex;
  /// The arrays bound with bind_input / bind_output (Model::inputs() / outputs() order; None
  /// where unbound), referenced so they outlive every run_bound() that reads or writes them.
  std::vector<py::object> bound_inputs;
  std::vector<py::object> bound_outputs;
};

// errors.cc
void bind_errors(py::module_& module);
/// Raises the exception for `status` (which must not be ok): sets the Python error and throws
/// py::error_already_set.
[[noreturn]] void raise_status(const Status& status);
inline void throw_if_error(const Status& status) {
  if (!status.is_ok()) raise_status(status);
}
template <class T>
T unwrap(Expected<T> expected) {
  if (!expected.has_value()) raise_status(expected.status());
  return std::move(expected).value();
}

// dtypes.cc
/// The numpy dtype of a OnePool dtype (bfloat16: uint16, its raw bits; numpy has none).
/// The planner options of a Session or a plan() call; raises InvalidArgumentError for a
/// `workspaces` other than "fit" or "fast".
PlanOptions plan_options(const std::string& algorithm, size_t alignment, bool aliasing,
                         const std::string& workspaces);
/// Applies `external` (None, a str or a list of str: "inputs", "outputs", "all" or tensor
/// names) to PlanOptions::external_*; raises InvalidArgumentError for anything else.
void set_external(const py::object& external, PlanOptions& options);

py::dtype numpy_dtype(DType dtype);
/// The OnePool dtype of a numpy dtype; kUndefined for one OnePool has no match for.
DType onepool_dtype(const py::dtype& dtype);
/// The numpy spelling of `dtype`, for messages ("float32", "bfloat16 (as uint16)").
std::string numpy_dtype_name(DType dtype);

// model.cc, session.cc, plan.cc
void bind_tensor_info(py::module_& module);
void bind_model(py::module_& module);
void bind_session(py::module_& module);
void bind_plan(py::module_& module);

/// Loads a model from Python arguments (shared by Model() and Session(path)).
PyModel load_model(const std::string& path, const py::object& shapes, const py::object& dims,
                   const py::object& values, const py::object& bounds, const std::string& optimize,
                   const std::string& schedule, bool check, size_t max_tensor_bytes);
/// The plan as a Python Plan object (a copy).
py::object wrap_plan(const Plan& plan);

}  // namespace onepool::python

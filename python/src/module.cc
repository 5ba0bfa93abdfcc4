// The `onepool._onepool` extension: python/onepool/__init__.py re-exports it as `onepool`.
#include "python/src/bindings.h"

PYBIND11_MODULE(_onepool, module) {
  namespace py = pybind11;
  using namespace onepool::python;
  module.doc() = "OnePool: ONNX inference with one static memory pool (C++ extension).";
  bind_errors(module);
  bind_tensor_info(module);
  bind_plan(module);
  bind_model(module);
  bind_session(module);
  module.attr("__version__") = onepool::library_version();
}

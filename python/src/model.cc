// onepool.Model and onepool.TensorInfo: LoadOptions from Python arguments, the model's inputs
// and outputs, and Model.plan().
#include <pybind11/stl.h>

#include <string>
#include <utility>
#include <vector>

#include "python/src/bindings.h"

namespace onepool::python {
namespace {

std::string fspath(const py::object& path) {
  return py::module_::import("os").attr("fspath")(path).cast<std::string>();
}

// {"x": [1, 3, 224, 224]} -> LoadOptions::input_shapes.
std::vector<std::pair<std::string, std::vector<int64_t>>> parse_shapes(const py::object& shapes) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> parsed;
  if (shapes.is_none()) return parsed;
  for (auto [name, dims] : shapes.cast<py::dict>()) {
    parsed.emplace_back(name.cast<std::string>(), dims.cast<std::vector<int64_t>>());
  }
  return parsed;
}

// {"batch": 8} -> LoadOptions::dims.
std::vector<std::pair<std::string, int64_t>> parse_dims(const py::object& dims) {
  std::vector<std::pair<std::string, int64_t>> parsed;
  if (dims.is_none()) return parsed;
  for (auto [name, value] : dims.cast<py::dict>()) {
    parsed.emplace_back(name.cast<std::string>(), value.cast<int64_t>());
  }
  return parsed;
}

// {"tokens": 256} -> LoadOptions::bounds.
std::map<std::string, int64_t> parse_bounds(const py::object& bounds) {
  std::map<std::string, int64_t> parsed;
  if (bounds.is_none()) return parsed;
  for (auto [name, value] : bounds.cast<py::dict>()) {
    parsed.emplace(name.cast<std::string>(), value.cast<int64_t>());
  }
  return parsed;
}

// {"axes": [1, 2], "scales": [1.0, 1.0, 2.0, 2.0]} -> LoadOptions::shape_input_values: integers
// stay integers (numpy decides, so numpy integer scalars and arrays count too).
std::map<std::string, ShapeInputValues> parse_values(const py::object& values) {
  std::map<std::string, ShapeInputValues> parsed;
  if (values.is_none()) return parsed;
  py::module_ numpy = py::module_::import("numpy");
  for (auto [key, value] : values.cast<py::dict>()) {
    const std::string name = key.cast<std::string>();
    py::array array = numpy.attr("asarray")(value).attr("reshape")(-1);
    const char kind = array.dtype().kind();
    if (kind == 'i' || kind == 'u' || kind == 'b') {
      parsed[name] = numpy.attr("asarray")(array, "int64").cast<std::vector<int64_t>>();
    } else if (kind == 'f') {
      parsed[name] = numpy.attr("asarray")(array, "float64").cast<std::vector<double>>();
    } else {
      raise_status(make_status(StatusCode::kInvalidArgument, "values '", name,
                               "': expected integers or floats, got numpy dtype ",
                               py::str(array.dtype()).cast<std::string>()));
    }
  }
  return parsed;
}

py::tuple shape_tuple(const Shape& shape) {
  py::tuple dims(static_cast<size_t>(shape.rank()));
  for (int axis = 0; axis < shape.rank(); ++axis) dims[static_cast<size_t>(axis)] = shape[axis];
  return dims;
}

std::string describe(const TensorInfo& info) {
  return "TensorInfo(name='" + info.name + "', dtype=" + numpy_dtype_name(info.dtype) +
         ", shape=" + py::repr(shape_tuple(info.shape)).cast<std::string>() + ")";
}

// Model.plan(): the plan a CPU Session of this model uses (Plan::build: the CPU backend prepares
// every node for its workspaces and sharing; no pool is allocated).
Plan plan_of(const PyModel& model, const std::string& algorithm, size_t alignment, bool aliasing,
             const std::string& workspaces, double budget_ms, const py::object& external) {
  SessionOptions options;
  options.threads = 1;
  options.plan = plan_options(algorithm, alignment, aliasing, workspaces);
  options.plan.budget_ms = budget_ms;
  set_external(external, options.plan);
  Expected<Plan> plan = Status();
  {
    py::gil_scoped_release release;
    plan = Plan::build(*model.model, options);
  }
  return unwrap(std::move(plan));
}

}  // namespace

PyModel load_model(const std::string& path, const py::object& shapes, const py::object& dims,
                   const py::object& values, const py::object& bounds, const std::string& optimize,
                   const std::string& schedule, bool check, size_t max_tensor_bytes) {
  LoadOptions options;
  options.input_shapes = parse_shapes(shapes);
  options.dims = parse_dims(dims);
  options.shape_input_values = parse_values(values);
  options.bounds = parse_bounds(bounds);
  options.optimize = optimize;
  options.schedule = schedule;
  options.run_checker = check;
  options.max_tensor_bytes = max_tensor_bytes;
  Expected<std::shared_ptr<const Model>> model = Status();
  {
    py::gil_scoped_release release;  // loading a large model takes seconds
    model = Model::load(path, options);
  }
  return PyModel{unwrap(std::move(model)), path};
}

void bind_tensor_info(py::module_& module) {
  py::class_<TensorInfo>(module, "TensorInfo",
                         "Name, numpy dtype and static shape of a model input or output.")
      .def_readonly("name", &TensorInfo::name)
      .def_property_readonly(
          "dtype", [](const TensorInfo& info) { return numpy_dtype(info.dtype); },
          "numpy dtype (bfloat16 travels as uint16, its raw bits)")
      .def_property_readonly(
          "dtype_name", [](const TensorInfo& info) { return dtype_name(info.dtype); },
          "OnePool's name of the dtype: 'float32', 'bfloat16', ...")
      .def_property_readonly("shape",
                             [](const TensorInfo& info) { return shape_tuple(info.shape); })
      .def_readonly("bound", &TensorInfo::bound,
                    "an output of data-dependent size: why `shape` is an upper bound (run() "
                    "returns the actual shape); empty when `shape` is exact")
      .def("__repr__", &describe);
}

void bind_model(py::module_& module) {
  py::class_<PyModel>(module, "Model", R"doc(
An imported, optimized ONNX model with its weights loaded once.

    model = onepool.Model("model.onnx", shapes={"x": [1, 3, 640, 640]})
    a, b = onepool.Session(model), onepool.Session(model)  # one copy of the weights

Immutable: share it across Sessions and threads. shapes binds inputs' full shapes, dims
symbolic dims by name, values the shape inputs (see the README), bounds the most rows of a
Loop's scan output whose trip count is not known at load ({"tokens": 256}); optimize is
"none", "basic" or "all"; schedule "model" or "memory". Errors raise onepool.Error subclasses.
)doc")
      .def(py::init([](const py::object& path, const py::object& shapes, const py::object& dims,
                       const py::object& values, const py::object& bounds,
                       const std::string& optimize, const std::string& schedule, bool check,
                       size_t max_tensor_bytes) {
             return load_model(fspath(path), shapes, dims, values, bounds, optimize, schedule,
                               check, max_tensor_bytes);
           }),
           py::arg("path"), py::kw_only(), py::arg("shapes") = py::none(),
           py::arg("dims") = py::none(), py::arg("values") = py::none(),
           py::arg("bounds") = py::none(), py::arg("optimize") = "all",
           py::arg("schedule") = "model", py::arg("check") = true, py::arg("max_tensor_bytes") = 0)
      .def_readonly("path", &PyModel::path)
      .def_property_readonly("inputs", [](const PyModel& m) { return m.model->inputs(); })
      .def_property_readonly("outputs", [](const PyModel& m) { return m.model->outputs(); })
      .def_property_readonly("weights_bytes",
                             [](const PyModel& m) { return m.model->weights_bytes(); })
      .def_property_readonly("warnings", [](const PyModel& m) { return m.model->warnings(); })
      .def_property_readonly("optimization_summary",
                             [](const PyModel& m) { return m.model->optimization_summary(); })
      .def(
          "plan",
          [](const PyModel& m, const std::string& algorithm, size_t alignment, bool aliasing,
             const std::string& workspaces, double budget_ms, const py::object& external) {
            return wrap_plan(
                plan_of(m, algorithm, alignment, aliasing, workspaces, budget_ms, external));
          },
          py::kw_only(), py::arg("algorithm") = "auto", py::arg("alignment") = 256,
          py::arg("aliasing") = true, py::arg("workspaces") = "fit", py::arg("budget_ms") = 100.0,
          py::arg("external") = py::none(),
          "The memory plan a CPU Session of this model uses (`onepool plan`'s), as a Plan. "
          "external: graph inputs/outputs kept out of the pool, as in Session.")
      .def("__repr__", [](const PyModel& m) {
        return "onepool.Model('" + m.path +
               "', inputs=" + py::repr(py::cast(m.model->inputs())).cast<std::string>() + ")";
      });
}

PlanOptions plan_options(const std::string& algorithm, size_t alignment, bool aliasing,
                         const std::string& workspaces) {
  if (workspaces != "fit" && workspaces != "fast") {
    raise_status(make_status(StatusCode::kInvalidArgument,
                             "workspaces: expected 'fit' or 'fast', got '", workspaces, "'"));
  }
  PlanOptions options;
  options.algorithm = algorithm;
  options.alignment = alignment;
  options.aliasing = aliasing;
  options.fast_workspaces = workspaces == "fast";
  return options;
}

void set_external(const py::object& external, PlanOptions& options) {
  if (external.is_none()) return;
  std::vector<std::string> items;
  if (py::isinstance<py::str>(external)) {
    items.push_back(external.cast<std::string>());
  } else {
    try {
      items = external.cast<std::vector<std::string>>();
    } catch (const py::cast_error&) {
      raise_status(make_status(StatusCode::kInvalidArgument,
                               "external: expected a str or a list of str, got ",
                               py::repr(external).cast<std::string>()));
    }
  }
  for (const std::string& item : items) {
    if (item == "inputs" || item == "all") options.external_inputs = true;
    if (item == "outputs" || item == "all") options.external_outputs = true;
    if (item != "inputs" && item != "outputs" && item != "all") {
      options.external_tensors.push_back(item);
    }
  }
}

}  // namespace onepool::python

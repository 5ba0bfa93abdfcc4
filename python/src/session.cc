// onepool.Session: a Session over a Model (or a path), and run() from numpy arrays to numpy
// arrays. Each feed is checked (name, dtype, shape) before the GIL is released; a non-contiguous
// feed is made contiguous once; every output is a fresh numpy array the Session writes into.
#include <pybind11/stl.h>

#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "python/src/bindings.h"

namespace onepool::python {
namespace {

std::string joined_names(const std::vector<TensorInfo>& infos) {
  std::string names;
  for (const TensorInfo& info : infos) names += (names.empty() ? "" : ", ") + info.name;
  return names;
}

std::string expected_text(const TensorInfo& info) {
  return numpy_dtype_name(info.dtype) + " " + info.shape.to_string();
}

SessionOptions session_options(int threads, const std::string& device, const std::string& algorithm,
                               size_t alignment, bool aliasing, const std::string& workspaces,
                               bool profile, bool cuda_graph, bool tf32) {
  SessionOptions options;
  options.device = unwrap(Device::parse(device));
  options.threads = threads;
  options.plan = plan_options(algorithm, alignment, aliasing, workspaces);
  options.profile = profile;
  options.cuda_graph = cuda_graph;
  options.tf32 = tf32;
  return options;
}

// Every feed names an input of the model; shape inputs were bound at load.
void check_feed_names(const Model& model, const py::dict& feeds) {
  for (auto [key, value] : feeds) {
    if (!py::isinstance<py::str>(key)) {
      raise_status(make_status(StatusCode::kInvalidArgument, "feeds: keys are input names, got ",
                               py::repr(key).cast<std::string>()));
    }
    const std::string name = key.cast<std::string>();
    if (model.input_index(name) >= 0) continue;
    for (const ShapeInputInfo& shape_input : model.shape_inputs()) {
      if (shape_input.info.name == name) {
        raise_status(make_status(StatusCode::kInvalidArgument, "input '", name,
                                 "': a shape input, bound at load (onepool.Model(..., values=)); "
                                 "do not feed it"));
      }
    }
    raise_status(make_status(StatusCode::kNotFound, "input '", name,
                             "': not an input of the model (inputs: ", joined_names(model.inputs()),
                             ")"));
  }
}

// The feed for `info` as a C-contiguous array of its dtype and shape. An ndarray keeps its dtype
// (a mismatch is an error, never a silent cast); anything else (a list, a scalar) is converted
// to the input's dtype by numpy.
py::array feed_array(const TensorInfo& info, const py::dict& feeds) {
  const py::str key(info.name);
  if (!feeds.contains(key)) {
    raise_status(make_status(StatusCode::kInvalidArgument, "missing input '", info.name,
                             "' (expected ", expected_text(info), ")"));
  }
  py::object value = feeds[key];
  if (!py::isinstance<py::array>(value)) {
    value = py::module_::import("numpy").attr("asarray")(value, numpy_dtype(info.dtype));
  }
  py::array array = value.cast<py::array>();
  DType dtype = onepool_dtype(array.dtype());
  if (info.dtype == DType::kBFloat16 && dtype == DType::kUInt16) dtype = DType::kBFloat16;
  if (dtype != info.dtype) {
    raise_status(make_status(StatusCode::kInvalidArgument, "input '", info.name,
                             "': expected dtype ", numpy_dtype_name(info.dtype), ", got ",
                             py::str(array.dtype()).cast<std::string>()));
  }
  if (!(array.flags() & py::array::c_style)) array = py::array::ensure(array, py::array::c_style);
  if (!array) throw py::error_already_set();
  return array;
}

TensorView feed_view(const TensorInfo& info, py::array& array) {
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  Expected<Shape> shape = Shape::from_dims(dims);
  if (!shape.has_value()) {
    raise_status(shape.status().with_context("input '" + info.name + "'"));
  }
  TensorView view{const_cast<void*>(array.data()), info.dtype, *shape, Device{}};
  throw_if_error(check_tensor_matches(info, view, "input"));
  return view;
}

// The names run() returns: all outputs, or the requested ones in the requested order.
std::vector<size_t> requested_outputs(const Model& model, const py::object& names) {
  std::vector<size_t> indices;
  if (names.is_none()) {
    for (size_t i = 0; i < model.outputs().size(); ++i) indices.push_back(i);
    return indices;
  }
  for (const std::string& name : names.cast<std::vector<std::string>>()) {
    const int index = model.output_index(name);
    if (index < 0) {
      raise_status(make_status(
          StatusCode::kNotFound, "output '", name,
          "': not an output of the model (outputs: ", joined_names(model.outputs()), ")"));
    }
    indices.push_back(static_cast<size_t>(index));
  }
  return indices;
}

// An output of data-dependent size (TensorInfo::bound): a new array of the actual shape holding
// the elements the run wrote at the start of the bound-sized one. Other outputs as they are.
py::array with_actual_shape(const py::array& written, const TensorInfo& info, const Shape& actual) {
  if (actual == info.shape) return written;
  std::vector<py::ssize_t> dims(actual.begin(), actual.end());
  py::array trimmed(numpy_dtype(info.dtype), dims);
  const size_t bytes = static_cast<size_t>(actual.element_count()) * dtype_size(info.dtype);
  if (bytes > 0) std::memcpy(trimmed.mutable_data(), written.data(), bytes);
  return trimmed;
}

py::dict run(PySession& self, const py::dict& feeds, const py::object& output_names) {
  const Model& model = *self.model.model;
  // Step 1. Feeds: names, then each input's array and view (in Model::inputs() order).
  check_feed_names(model, feeds);
  std::vector<py::array> input_arrays;
  std::vector<TensorView> inputs;
  input_arrays.reserve(model.inputs().size());
  for (const TensorInfo& info : model.inputs()) {
    input_arrays.push_back(feed_array(info, feeds));
    inputs.push_back(feed_view(info, input_arrays.back()));
  }
  // Step 2. Outputs: fresh arrays the Session writes into (every output: run() fills them all).
  const std::vector<size_t> returned = requested_outputs(model, output_names);
  std::vector<py::array> output_arrays;
  std::vector<TensorView> outputs;
  for (const TensorInfo& info : model.outputs()) {
    std::vector<py::ssize_t> dims(info.shape.begin(), info.shape.end());
    output_arrays.emplace_back(numpy_dtype(info.dtype), dims);
    outputs.push_back({output_arrays.back().mutable_data(), info.dtype, info.shape, Device{}});
  }
  // Step 3. Run without the GIL; the arrays stay referenced by the vectors above.
  Status status;
  std::vector<Shape> actual_shapes(outputs.size());
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.run_mutex);
    status = self.session->run(inputs, outputs);
    for (size_t i = 0; i < outputs.size(); ++i) actual_shapes[i] = self.session->output_shape(i);
  }
  throw_if_error(status);
  py::dict result;
  for (size_t index : returned) {
    result[py::str(model.outputs()[index].name)] =
        with_actual_shape(output_arrays[index], model.outputs()[index], actual_shapes[index]);
  }
  return result;
}

// The index of input / output `name`, or a kNotFound error listing them.
size_t tensor_index(const std::vector<TensorInfo>& infos, const std::string& name,
                    const char* kind) {
  for (size_t i = 0; i < infos.size(); ++i) {
    if (infos[i].name == name) return i;
  }
  raise_status(make_status(StatusCode::kNotFound, kind, " '", name, "': not an ", kind,
                           " of the model (", kind, "s: ", joined_names(infos), ")"));
}

// An array a binding can keep: its own dtype and shape, C-contiguous (a binding never copies the
// caller's array into a temporary: the Session reads or writes the array itself), and for an
// output, writable.
TensorView bindable_view(const TensorInfo& info, const py::array& array, const char* kind,
                         bool writable) {
  DType dtype = onepool_dtype(array.dtype());
  if (info.dtype == DType::kBFloat16 && dtype == DType::kUInt16) dtype = DType::kBFloat16;
  if (dtype != info.dtype) {
    raise_status(make_status(StatusCode::kInvalidArgument, kind, " '", info.name,
                             "': expected dtype ", numpy_dtype_name(info.dtype), ", got ",
                             py::str(array.dtype()).cast<std::string>()));
  }
  if (!(array.flags() & py::array::c_style)) {
    raise_status(make_status(StatusCode::kInvalidArgument, kind, " '", info.name,
                             "': a bound array must be C-contiguous (numpy.ascontiguousarray)"));
  }
  if (writable && !array.writeable()) {
    raise_status(make_status(StatusCode::kInvalidArgument, kind, " '", info.name,
                             "': a bound output array must be writable"));
  }
  std::vector<int64_t> dims(array.shape(), array.shape() + array.ndim());
  Expected<Shape> shape = Shape::from_dims(dims);
  if (!shape.has_value())
    raise_status(shape.status().with_context(kind + (" '" + info.name + "'")));
  TensorView view{const_cast<void*>(array.data()), info.dtype, *shape, Device{}};
  throw_if_error(check_tensor_matches(info, view, kind));
  return view;
}

void bind_input(PySession& self, const std::string& name, const py::array& array) {
  const std::vector<TensorInfo>& infos = self.model.model->inputs();
  const size_t index = tensor_index(infos, name, "input");
  const TensorView view = bindable_view(infos[index], array, "input", false);
  std::lock_guard<std::mutex> lock(self.run_mutex);
  throw_if_error(self.session->bind_input(index, view));
  self.bound_inputs.resize(infos.size(), py::none());
  self.bound_inputs[index] = array;
}

void bind_output(PySession& self, const std::string& name, const py::array& array) {
  const std::vector<TensorInfo>& infos = self.model.model->outputs();
  const size_t index = tensor_index(infos, name, "output");
  const TensorView view = bindable_view(infos[index], array, "output", true);
  std::lock_guard<std::mutex> lock(self.run_mutex);
  throw_if_error(self.session->bind_output(index, view));
  self.bound_outputs.resize(infos.size(), py::none());
  self.bound_outputs[index] = array;
}

void run_bound(PySession& self) {
  Status status;
  {
    py::gil_scoped_release release;
    std::lock_guard<std::mutex> lock(self.run_mutex);
    status = self.session->run_bound();
  }
  throw_if_error(status);
}

std::unique_ptr<PySession> create_session(PyModel model, const SessionOptions& options) {
  auto session = std::make_unique<PySession>();
  session->model = std::move(model);
  Expected<std::unique_ptr<Session>> created = Status();
  {
    py::gil_scoped_release release;
    created = Session::create(session->model.model, options);
  }
  session->session = unwrap(std::move(created));
  return session;
}

}  // namespace

void bind_session(py::module_& module) {
  py::class_<CpuThreadPool, std::shared_ptr<CpuThreadPool>>(module, "CpuThreadPool", R"doc(
CPU threads that several Sessions of this process share (C++ onepool::CpuThreadPool).

    pool = onepool.CpuThreadPool(4)
    a = onepool.Session(model, thread_pool=pool)
    b = onepool.Session(model, thread_pool=pool)   # no new threads

threads: the workers plus the calling thread (0: every hardware thread). A run borrows the
workers when no other Session holds them and otherwise runs on its calling thread alone; the
outputs are the same either way.
)doc")
      .def(py::init([](int threads) { return unwrap(CpuThreadPool::create(threads)); }),
           py::arg("threads") = 0)
      .def_property_readonly("threads", &CpuThreadPool::threads)
      .def("__repr__", [](const CpuThreadPool& pool) {
        return "onepool.CpuThreadPool(" + std::to_string(pool.threads()) + ")";
      });
  py::class_<PySession>(module, "Session", R"doc(
One Session: a Model's memory plan bound to a device, with its pool allocated once.

    s = onepool.Session("model.onnx", shapes={"x": [1, 3, 640, 640]})
    outputs = s.run({"x": array})  # {name: numpy array}

The first argument is a path (then shapes, dims, values, bounds and optimize load it as
onepool.Model
does) or an onepool.Model (share one Model's weights across Sessions). threads: CPU threads (0:
all); thread_pool: an onepool.CpuThreadPool whose threads this Session shares with others
instead of starting its own; cpu_isa: "auto", "avx512", "avx2" or "portable", the widest
instruction set the CPU kernels may use; device: "cpu" or "cuda:N" (never silently changed);
algorithm, alignment, aliasing and
workspaces: the planner's options (see `onepool plan --help`); external: "inputs", "outputs",
"all" or a list of tensor names, the graph inputs/outputs that run() reads and writes in the
numpy arrays themselves (no pool bytes, no copies; Session.plan() shows them as external). One
thread runs a Session at a time (a second caller waits); run() releases the GIL.
)doc")
      .def(py::init([](const py::object& model_or_path, const py::object& shapes,
                       const py::object& dims, const py::object& values, const py::object& bounds,
                       const py::object& optimize, int threads, const std::string& device,
                       const std::string& algorithm, size_t alignment, bool aliasing,
                       const std::string& workspaces, bool profile, bool cuda_graph, bool tf32,
                       const std::string& cpu_isa, const py::object& thread_pool,
                       const py::object& external) {
             SessionOptions options =
                 session_options(threads, device, algorithm, alignment, aliasing, workspaces,
                                 profile, cuda_graph, tf32);
             set_external(external, options.plan);
             options.cpu_isa = unwrap(parse_cpu_isa(cpu_isa));
             if (!thread_pool.is_none()) {
               options.thread_pool = thread_pool.cast<std::shared_ptr<CpuThreadPool>>();
             }
             if (py::isinstance<PyModel>(model_or_path)) {
               if (!shapes.is_none() || !dims.is_none() || !values.is_none() || !bounds.is_none() ||
                   !optimize.is_none()) {
                 raise_status(make_status(
                     StatusCode::kInvalidArgument,
                     "Session(model): shapes, dims, values, bounds and optimize apply when a "
                     "model is loaded; pass them to onepool.Model"));
               }
               return create_session(model_or_path.cast<PyModel>(), options);
             }
             const std::string path =
                 py::module_::import("os").attr("fspath")(model_or_path).cast<std::string>();
             PyModel model = load_model(path, shapes, dims, values, bounds,
                                        optimize.is_none() ? "all" : optimize.cast<std::string>(),
                                        "model", true, 0);
             return create_session(std::move(model), options);
           }),
           py::arg("model"), py::kw_only(), py::arg("shapes") = py::none(),
           py::arg("dims") = py::none(), py::arg("values") = py::none(),
           py::arg("bounds") = py::none(), py::arg("optimize") = py::none(), py::arg("threads") = 0,
           py::arg("device") = "cpu", py::arg("algorithm") = "auto", py::arg("alignment") = 256,
           py::arg("aliasing") = true, py::arg("workspaces") = "fit", py::arg("profile") = false,
           py::arg("cuda_graph") = true, py::arg("tf32") = false, py::arg("cpu_isa") = "auto",
           py::arg("thread_pool") = py::none(), py::arg("external") = py::none())
      .def("run", &run, py::arg("feeds"), py::arg("outputs") = py::none(),
           "Runs the model on {input name: numpy array}; returns {output name: numpy array} "
           "(every output, or those named in `outputs`). Feeds must match each input's dtype "
           "and shape exactly (Session.inputs).")
      .def("bind_input", &bind_input, py::arg("name"), py::arg("array"),
           "Binds input `name` to a numpy array (its dtype and shape, C-contiguous) that every "
           "run_bound() reads; an external input is read in place, any other copied in. The "
           "Session keeps a reference to the array.")
      .def("bind_output", &bind_output, py::arg("name"), py::arg("array"),
           "Binds output `name` to a writable numpy array (its dtype and shape, C-contiguous) "
           "that every run_bound() fills: an external output is written there by its node, any "
           "other copied there after the run.")
      .def("run_bound", &run_bound,
           "Runs on the bound arrays (every input and output must be bound; see bind_input). "
           "Returns None: the outputs are in the bound arrays.")
      .def(
          "is_external",
          [](const PySession& s, const std::string& name) {
            const Model& model = *s.model.model;
            const int input = model.input_index(name);
            if (input >= 0) return s.session->input_is_external(static_cast<size_t>(input));
            return s.session->output_is_external(tensor_index(model.outputs(), name, "output"));
          },
          py::arg("name"),
          "Whether the Session reads (input) or writes (output) `name` in the caller's array "
          "itself, with no copy (see external=).")
      .def_property_readonly("model", [](const PySession& s) { return s.model; })
      .def_property_readonly("inputs", [](const PySession& s) { return s.model.model->inputs(); })
      .def_property_readonly("outputs", [](const PySession& s) { return s.model.model->outputs(); })
      .def_property_readonly("device",
                             [](const PySession& s) { return s.session->device().to_string(); })
      .def_property_readonly("pool_bytes",
                             [](const PySession& s) { return s.session->plan().pool_bytes; })
      .def(
          "plan", [](const PySession& s) { return wrap_plan(s.session->plan()); },
          "This Session's memory plan, as a Plan.")
      .def("__repr__", [](const PySession& s) {
        return "onepool.Session('" + s.model.path + "', device=" + s.session->device().to_string() +
               ", pool_bytes=" + std::to_string(s.session->plan().pool_bytes) + ")";
      });
}

}  // namespace onepool::python

// onepool.Plan: the memory plan as Python objects (a copy of the C++ Plan), with the library's
// JSON and the planner's HTML view.
#include <pybind11/stl.h>

#include <string>

#include "planner/render/plan_html.h"
#include "python/src/bindings.h"

namespace onepool::python {
namespace {

py::tuple shape_tuple(const Shape& shape) {
  py::tuple dims(static_cast<size_t>(shape.rank()));
  for (int axis = 0; axis < shape.rank(); ++axis) dims[static_cast<size_t>(axis)] = shape[axis];
  return dims;
}

}  // namespace

py::object wrap_plan(const Plan& plan) { return py::cast(Plan(plan)); }

void bind_plan(py::module_& module) {
  py::class_<PlanStep>(module, "PlanStep", "One execution step: a node and its op.")
      .def_readonly("node", &PlanStep::node)
      .def_readonly("op", &PlanStep::op)
      .def("__repr__", [](const PlanStep& step) {
        return "PlanStep(node='" + step.node + "', op='" + step.op + "')";
      });

  py::class_<PlannedTensor>(module, "PlannedTensor", R"doc(
One placed buffer: a graph tensor (id >= 0) or a node's workspace (workspace_node >= 0), at
pool offset `offset` with `bytes` bytes, live from step `first` to step `last` (inclusive).
An alias (alias_of >= 0) has bytes 0 and uses the storage of tensor alias_of.
)doc")
      .def_readonly("id", &PlannedTensor::id)
      .def_readonly("name", &PlannedTensor::name)
      .def_readonly("producer_op", &PlannedTensor::producer_op)
      .def_property_readonly(
          "dtype", [](const PlannedTensor& t) { return dtype_name(t.dtype); },
          "OnePool's dtype name, as in the plan JSON ('undefined' for a "
          "workspace)")
      .def_property_readonly("shape", [](const PlannedTensor& t) { return shape_tuple(t.shape); })
      .def_readonly("bytes", &PlannedTensor::bytes)
      .def_readonly("offset", &PlannedTensor::offset)
      .def_readonly("first", &PlannedTensor::first)
      .def_readonly("last", &PlannedTensor::last)
      .def_readonly("alias_of", &PlannedTensor::alias_of)
      .def_readonly("alias_offset", &PlannedTensor::alias_offset)
      .def_readonly("workspace_node", &PlannedTensor::workspace_node)
      .def_readonly("external", &PlannedTensor::external,
                    "a graph input or output in the caller's buffer, not the pool (bytes 0)")
      .def("__repr__", [](const PlannedTensor& t) {
        return "PlannedTensor(name='" + t.name + "', offset=" + std::to_string(t.offset) +
               ", bytes=" + std::to_string(t.bytes) + ", first=" + std::to_string(t.first) +
               ", last=" + std::to_string(t.last) + ")";
      });

  py::class_<Plan>(module, "Plan", R"doc(
The memory plan: every intermediate tensor's fixed offset inside one pool of pool_bytes bytes.
lower_bound_bytes is the most bytes live at any step (no plan can use less). to_json() is the
versioned JSON `onepool plan --format json` writes; to_html() the offline page of
`--format html`.
)doc")
      .def_readonly("pool_bytes", &Plan::pool_bytes)
      .def_readonly("alignment", &Plan::alignment)
      .def_readonly("lower_bound_bytes", &Plan::lower_bound_bytes)
      .def_readonly("naive_bytes", &Plan::naive_bytes)
      .def_readonly("plain_lower_bound_bytes", &Plan::plain_lower_bound_bytes)
      .def_readonly("plain_pool_bytes", &Plan::plain_pool_bytes)
      .def_readonly("algorithm", &Plan::algorithm)
      .def_readonly("optimal", &Plan::optimal)
      .def_readonly("planning_ms", &Plan::planning_ms)
      .def_readonly("verified", &Plan::verified)
      .def_readonly("steps", &Plan::steps)
      .def_readonly("tensors", &Plan::tensors)
      .def("to_json", &Plan::to_json, "Versioned JSON (schema in the README).")
      .def(
          "to_html",
          [](const Plan& plan, const std::string& title, const std::string& source) {
            PlanHtmlOptions options;
            options.title = title;
            options.source = source;
            return render_plan_html(plan, options);
          },
          py::kw_only(), py::arg("title") = "memory plan", py::arg("source") = "",
          "One self-contained HTML page (address x step chart); open it in a browser.")
      .def(
          "verify", [](const Plan& plan) { throw_if_error(plan.verify()); },
          "Raises onepool.Error when two tensors overlap in time and address, or one leaves "
          "the pool.")
      .def_static(
          "from_json", [](const std::string& json) { return unwrap(Plan::from_json(json)); },
          py::arg("json"), "Parses what to_json() wrote.")
      .def("__repr__", [](const Plan& plan) {
        return "onepool.Plan(pool_bytes=" + std::to_string(plan.pool_bytes) +
               ", lower_bound_bytes=" + std::to_string(plan.lower_bound_bytes) +
               ", tensors=" + std::to_string(plan.tensors.size()) + ", algorithm='" +
               plan.algorithm + "')";
      });
}

}  // namespace onepool::python

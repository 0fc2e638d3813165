// The compiled half of the Python package `hetsim` (app/python/hetsim/__init__.py is the other): each
// function takes inputs as ("path", str) or ("bytes", serialized message) pairs and returns the
// serialized result, so no C++ type crosses the boundary. The GIL is released while hetsim works, so
// Python threads simulate in parallel. An error raises hetsim._hetsim.Error with the CLI's message
// ("<file>: <field path>: <problem>"); __init__.py turns it into hetsim.HetsimError.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <time.h>

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "app/api/api.h"

namespace py = pybind11;
using hetsim::api::Input;

namespace {

// ("path", "file.pbtxt") or ("bytes", b"...") named `name` in errors.
Input ToInput(const std::string& name, const py::tuple& t) {
  Input in;
  in.name = name;
  const std::string kind = t[0].cast<std::string>();
  if (kind == "path") {
    in.is_path = true;
    in.path = t[1].cast<std::string>();
  } else {
    in.bytes = t[1].cast<std::string>();
  }
  return in;
}

// Runs `call` without the GIL and raises on error; bytes come back as Python bytes.
template <typename F>
py::bytes Call(F&& call) {
  absl::StatusOr<std::string> r;
  {
    py::gil_scoped_release release;
    r = call();
  }
  if (!r.ok()) throw std::runtime_error(std::string(r.status().message()));
  return py::bytes(*r);
}

double ThreadCpuSeconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

}  // namespace

void DefineModule(py::module_& m) {
  m.doc() = "hetsim's C++ core (use the hetsim package, not this module)";
  static py::exception<std::runtime_error> error(m, "Error", PyExc_ValueError);
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const std::runtime_error& e) {
      error(e.what());
    }
  });
  m.def("run", [](const py::tuple& plan, const py::tuple& cluster, const std::string& network, bool ideal,
                  uint64_t max_events, double max_wall_seconds) {
    hetsim::api::RunOptions o{network, ideal, max_events, max_wall_seconds};
    Input p = ToInput("plan", plan), c = ToInput("cluster", cluster);
    return Call([&] { return hetsim::api::Run(p, c, o); });
  });
  m.def("plan", [](const py::tuple& model, const py::tuple& cluster, const std::string& planner, uint64_t global_batch,
                   uint64_t micro_batch, int layers, int threads, const std::string& prediction, int context_parallel,
                   const std::string& cp_comm_type, bool grad_reduce_in_fp32) {
    hetsim::api::PlanOptions o{planner,          global_batch, micro_batch,        layers, threads, prediction,
                               context_parallel, cp_comm_type, grad_reduce_in_fp32};
    Input md = ToInput("model", model), c = ToInput("cluster", cluster);
    return Call([&] { return hetsim::api::Plan(md, c, o); });
  });
  m.def("validate", [](const std::vector<py::tuple>& plans, const py::tuple& cluster, bool chart) {
    std::vector<Input> ps;
    for (size_t i = 0; i < plans.size(); ++i) ps.push_back(ToInput("plans[" + std::to_string(i) + "]", plans[i]));
    Input c = ToInput("cluster", cluster);
    return Call([&] { return hetsim::api::Validate(ps, c, chart); });
  });
  m.def("collective", [](const py::tuple& cluster, const std::string& op, int64_t bytes, std::vector<int64_t> gpus,
                         const std::string& algorithm, const std::string& network, bool ideal) {
    hetsim::api::CollectiveOptions o{op, bytes, std::move(gpus), algorithm, network, ideal};
    Input c = ToInput("cluster", cluster);
    return Call([&] { return hetsim::api::Collective(c, o); });
  });
  // Benchmark hook (bench/python/python_run.py): the CPU time of `repeats` native Run calls on
  // serialized inputs, in seconds of this thread's CPU (wall time on a shared machine measures the
  // other processes), so the Python wrapper's cost is measured against the C++ call in one process.
  m.def("time_run", [](const py::tuple& plan, const py::tuple& cluster, int repeats) {
    Input p = ToInput("plan", plan), c = ToInput("cluster", cluster);
    py::gil_scoped_release release;
    const double start = ThreadCpuSeconds();
    for (int i = 0; i < repeats; ++i) {
      absl::StatusOr<std::string> r = hetsim::api::Run(p, c, {});
      if (!r.ok()) throw std::runtime_error(std::string(r.status().message()));
    }
    return ThreadCpuSeconds() - start;
  });
  m.def("sweep", [](const py::tuple& sweep, int jobs) {
    Input s = ToInput("sweep", sweep);
    return Call([&] { return hetsim::api::Sweep(s, jobs); });
  });
  m.def("check", [](const py::tuple& file, const std::string& type, const py::object& cluster) {
    Input f = ToInput("file", file);
    std::optional<Input> c;
    if (!cluster.is_none()) c = ToInput("cluster", cluster.cast<py::tuple>());
    return Call([&] { return hetsim::api::Check(f, type, c ? &*c : nullptr); });
  });
}

PYBIND11_MODULE(_hetsim, m) { DefineModule(m); }

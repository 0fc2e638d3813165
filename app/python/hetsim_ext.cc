// The compiled half of the Python package `hetsim` (app/python/hetsim/__init__.py is the other): it
// binds every call of app/api/api.h's table at once. `calls()` describes them (name, docstring, result
// message, parameters with kind, message and default) and `call(name, args)` runs one on arguments
// converted by their parameters' kinds: inputs as ("path", str) or ("bytes", serialized message[, its
// type]) pairs, results as serialized messages or text, so no C++ type crosses the boundary. The GIL
// is released while hetsim works, so Python threads simulate in parallel. An error raises
// hetsim._hetsim.Error with the CLI's message ("<file>: <field path>: <problem>"); __init__.py turns it
// into hetsim.HetsimError and defines one Python function per call from `calls()`.
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <time.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "app/api/api.h"
#include "base/check.h"

namespace py = pybind11;
namespace api = hetsim::api;

namespace {

// ("path", "file.pbtxt") or ("bytes", b"...") named `name` in errors; a third item is the message's type.
api::Input ToInput(const std::string& name, const py::tuple& t) {
  api::Input in;
  in.name = name;
  const std::string kind = t[0].cast<std::string>();
  if (kind == "path") {
    in.is_path = true;
    in.path = t[1].cast<std::string>();
  } else {
    in.bytes = t[1].cast<std::string>();
  }
  if (t.size() > 2) in.message_type = t[2].cast<std::string>();
  return in;
}

// A Python int as int64, or the CLI's kind of message naming the argument (pybind11's own says "Unable to
// cast Python instance to C++ type", which names nothing).
int64_t ToInt64(const std::string& name, const py::handle& v) {
  try {
    return v.cast<int64_t>();
  } catch (const py::cast_error&) {
    throw std::runtime_error(name + ": " + py::str(v).cast<std::string>() +
                             " is not a 64-bit integer (outside [-2^63, 2^63 - 1])");
  }
}

// A Python argument as the parameter `p` takes it (__init__.py has converted it to that kind).
api::Value ToValue(const api::Param& p, const py::handle& v) {
  switch (p.kind) {
    case api::Kind::kInput:
    case api::Kind::kAnyInput: return ToInput(p.name, v.cast<py::tuple>());
    case api::Kind::kOptionalInput:
      if (v.is_none()) return std::monostate{};
      return ToInput(p.name, v.cast<py::tuple>());
    case api::Kind::kInputs: {
      std::vector<api::Input> inputs;
      for (const py::handle& item : v.cast<py::list>()) {
        inputs.push_back(ToInput(p.name + "[" + std::to_string(inputs.size()) + "]", item.cast<py::tuple>()));
      }
      return inputs;
    }
    case api::Kind::kString: return v.cast<std::string>();
    case api::Kind::kInt:
    case api::Kind::kCount: return ToInt64(p.name, v);
    case api::Kind::kDouble: return v.cast<double>();
    case api::Kind::kBool: return v.cast<bool>();
    case api::Kind::kInts: {
      std::vector<int64_t> ints;
      for (const py::handle& item : v.cast<py::list>()) {
        ints.push_back(ToInt64(p.name + "[" + std::to_string(ints.size()) + "]", item));
      }
      return ints;
    }
  }
  HETSIM_CHECK(false, "parameter %s: kind %d outside api::Kind", p.name.c_str(), static_cast<int>(p.kind));
}

py::object ToPython(const api::Value& v) {
  if (const auto* b = std::get_if<bool>(&v)) return py::bool_(*b);
  if (const auto* i = std::get_if<int64_t>(&v)) return py::int_(*i);
  if (const auto* d = std::get_if<double>(&v)) return py::float_(*d);
  if (const auto* s = std::get_if<std::string>(&v)) return py::str(*s);
  return py::none();  // required parameters and optional inputs have no other default
}

py::list Describe() {
  py::list calls;
  for (const api::Call& c : api::Calls()) {
    py::list params;
    for (const api::Param& p : c.params) {
      params.append(py::dict(py::arg("name") = p.name, py::arg("kind") = api::KindName(p.kind),
                             py::arg("message") = p.message, py::arg("keyword_only") = p.keyword_only,
                             py::arg("required") = p.required, py::arg("default") = ToPython(p.default_value)));
    }
    calls.append(py::dict(py::arg("name") = c.name, py::arg("doc") = c.doc, py::arg("result") = c.result,
                          py::arg("params") = params));
  }
  return calls;
}

// Runs `call` without the GIL and raises on error; bytes come back as Python bytes.
py::bytes InvokeWithoutGil(const api::Call& call, const std::vector<api::Value>& values) {
  absl::StatusOr<std::string> r;
  {
    py::gil_scoped_release release;
    r = api::Invoke(call, values);
  }
  if (!r.ok()) throw std::runtime_error(std::string(r.status().message()));
  return py::bytes(*r);
}

const api::Call& Find(const std::string& name) {
  const api::Call* call = api::FindCall(name);
  if (call == nullptr) throw std::invalid_argument("no call " + name);
  return *call;
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
      // A message may quote bytes that are not UTF-8 (a file name): escaped, where a strict decoding
      // raised the error with an empty message (session 33).
      const std::string what = e.what();
      PyObject* text = PyUnicode_DecodeUTF8(what.data(), static_cast<Py_ssize_t>(what.size()), "backslashreplace");
      PyErr_SetObject(error.ptr(), text);
      Py_XDECREF(text);
    }
  });
  m.def("calls", &Describe);
  m.def("call", [](const std::string& name, const py::list& args) {
    const api::Call& call = Find(name);
    if (args.size() != call.params.size()) throw std::invalid_argument(name + ": wrong number of arguments");
    std::vector<api::Value> values;
    for (size_t i = 0; i < call.params.size(); ++i) values.push_back(ToValue(call.params[i], args[i]));
    return InvokeWithoutGil(call, values);
  });
  // Benchmark hook (bench/python/python_run.py): the CPU time of `repeats` native `run` calls on
  // serialized inputs with the default options, in seconds of this thread's CPU (wall time on a shared
  // machine measures the other processes), so the Python wrapper's cost is measured against the C++
  // call in one process.
  m.def("time_run", [](const py::tuple& plan, const py::tuple& cluster, int repeats) {
    const api::Call& run = Find("run");
    std::vector<api::Value> values = api::DefaultArguments(run);
    values[0] = ToInput("plan", plan);
    values[1] = ToInput("cluster", cluster);
    py::gil_scoped_release release;
    const double start = ThreadCpuSeconds();
    for (int i = 0; i < repeats; ++i) {
      absl::StatusOr<std::string> r = api::Invoke(run, values);
      if (!r.ok()) throw std::runtime_error(std::string(r.status().message()));
    }
    return ThreadCpuSeconds() - start;
  });
}

PYBIND11_MODULE(_hetsim, m) { DefineModule(m); }

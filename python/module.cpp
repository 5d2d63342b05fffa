// hulk._core: the pybind11 extension, one submodule per part of the C++ tree.
//   _core.engine  graphs, the GNN model, threads, the CUDA backend's state (engine_bindings.cpp)
//   _core.plan    clusters, jobs, the cost model, planners, rules, repair (plan_bindings.cpp)
//   _core.bench   device timings for benchmarks/bench_gpu.py (bench_bindings.cpp)
// C++ exceptions map to the package's errors (hulk/errors.py): invalid_argument -> InputError
// (a ValueError), bad_alloc -> OutOfMemoryError (a MemoryError); runtime_error -> RuntimeError.
#include <pybind11/pybind11.h>

#include <new>
#include <stdexcept>
#include <string>

namespace py = pybind11;

void bind_engine(py::module_& m);  // engine_bindings.cpp
void bind_plan(py::module_& m);    // plan_bindings.cpp
void bind_bench(py::module_& m);   // bench_bindings.cpp

namespace {

// Raises hulk.errors.<name> (falling back to `fallback` when the package is not importable,
// as in a bare `import _core`), so C++ errors arrive in the package's own hierarchy.
void raise_as(const char* name, PyObject* fallback, const std::string& message) {
  PyObject* type = fallback;
  py::object cls;
  try {
    cls = py::module_::import("hulk.errors").attr(name);
    type = cls.ptr();
  } catch (const py::error_already_set&) {
    PyErr_Clear();
  }
  PyErr_SetString(type, message.c_str());
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const std::bad_alloc&) {
    // The Python wrappers name the sizes where they can; this is the floor.
    raise_as("OutOfMemoryError", PyExc_MemoryError,
             "out of memory: the C++ core could not allocate what this call needs (std::bad_alloc); "
             "make the graph, the model or the cluster smaller");
  } catch (const std::invalid_argument& e) {
    raise_as("InputError", PyExc_ValueError, e.what());
  }
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "Hulk C++ core: the GNN engine (_core.engine) and the planner (_core.plan)";
  m.attr("__version__") = HULK_VERSION;
  py::module_ engine = m.def_submodule("engine", "CSR graphs, GNN ops and the node classifier");
  py::module_ plan = m.def_submodule("plan", "Clusters, jobs, the cost model and the planners");
  bind_engine(engine);
  bind_plan(plan);
  bind_bench(m);
  py::register_exception_translator(&translate);
}

// hulk._core: the pybind11 extension, one submodule per part of the C++ tree.
//   _core.engine  graphs, the GNN model, threads, the CUDA backend's state (engine_bindings.cpp)
//   _core.plan    clusters, jobs, the cost model, planners, rules, repair (plan_bindings.cpp)
//   _core.bench   device timings for benchmarks/bench_gpu.py (bench_bindings.cpp)
// C++ exceptions map to Python ones: invalid_argument -> ValueError, runtime_error ->
// RuntimeError, bad_alloc -> MemoryError.
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_engine(py::module_& m);  // engine_bindings.cpp
void bind_plan(py::module_& m);    // plan_bindings.cpp
void bind_bench(py::module_& m);   // bench_bindings.cpp

PYBIND11_MODULE(_core, m) {
  m.doc() = "Hulk C++ core: the GNN engine (_core.engine) and the planner (_core.plan)";
  m.attr("__version__") = HULK_VERSION;
  py::module_ engine = m.def_submodule("engine", "CSR graphs, GNN ops and the node classifier");
  py::module_ plan = m.def_submodule("plan", "Clusters, jobs, the cost model and the planners");
  bind_engine(engine);
  bind_plan(plan);
  bind_bench(m);
}

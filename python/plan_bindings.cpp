// hulk._core planner bindings: the cluster, model specs, the planners and repairs.
// Plans cross into Python as opaque objects (kept for repairs) with a to_dict() view.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <memory>
#include <tuple>

#include "csrc/plan/job_helpers.h"
#include "csrc/plan/planners.h"
#include "csrc/plan/plausible.h"
#include "csrc/plan/rules.h"

namespace py = pybind11;
using namespace hulk::plan;

namespace {

MissingLinkRule parse_rule(const std::string& s) {
  if (s == "route") return MissingLinkRule::Route;
  if (s == "forbid") return MissingLinkRule::Forbid;
  throw std::invalid_argument("missing_links must be 'route' or 'forbid', got '" + s + "'");
}

py::dict stage_to_dict(const StageCost& s) {
  py::dict d;
  d["machine"] = s.machine;
  d["layers"] = py::make_tuple(s.first_layer, s.last_layer);
  d["compute_s"] = s.compute_s;
  d["send_s"] = s.send_s;
  d["memory_gb"] = s.memory_bytes / 1e9;
  d["capacity_gb"] = s.memory_capacity_bytes / 1e9;
  return d;
}

// A machine group given from Python: ids in range, none twice (the layouts index by id unchecked).
void check_group(const Cluster& c, const std::vector<int64_t>& group) {
  std::vector<uint8_t> seen(static_cast<size_t>(c.size()), 0);
  for (int64_t x : group) {
    if (x < 0 || x >= c.size())
      throw std::invalid_argument("group: machine " + std::to_string(x) + " out of range [0, " + std::to_string(c.size()) + ")");
    if (seen[static_cast<size_t>(x)]++) throw std::invalid_argument("group: machine " + std::to_string(x) + " appears twice");
  }
}

py::dict job_to_dict(const JobPlan& j) {
  py::dict d;
  d["job"] = j.model.name;
  d["strategy"] = j.strategy == Strategy::Pipeline ? "pipeline" : "tensor_parallel";
  d["machines"] = j.machines();
  py::list replicas;
  for (const Replica& r : j.replicas) replicas.append(py::make_tuple(r.machines, r.bounds));
  d["replicas"] = replicas;
  d["tensor_group"] = j.tensor_group;
  d["feasible"] = j.cost.feasible;
  d["reason"] = j.cost.reason;
  d["compute_s"] = j.cost.compute_s;
  d["comm_s"] = j.cost.comm_s;
  d["iteration_s"] = j.cost.iteration_s;
  d["memory_shortfall_gb"] = j.cost.memory_shortfall_bytes / 1e9;
  d["start_s"] = j.start_s;
  d["finish_s"] = j.finish_s;
  d["iterations"] = j.model.iterations;
  py::list stages;
  for (const auto& rep : j.cost.stages) {
    py::list row;
    for (const StageCost& s : rep) row.append(stage_to_dict(s));
    stages.append(row);
  }
  d["stages"] = stages;
  return d;
}

py::dict plan_to_dict(const Plan& p) {
  py::dict d;
  d["planner"] = p.planner;
  py::list jobs;
  for (const JobPlan& j : p.jobs) jobs.append(job_to_dict(j));
  d["jobs"] = jobs;
  d["sequential"] = p.sequential;
  d["feasible"] = p.feasible();
  d["makespan_s"] = p.makespan_s;
  d["planning_s"] = p.planning_s;
  d["notes"] = p.notes;
  return d;
}

py::tuple repair_to_tuple(Repair&& r) {
  return py::make_tuple(std::move(r.plan), std::move(r.cluster), r.moved, r.seconds);
}

std::vector<Link> make_links(const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                             const std::vector<double>& latency_ms, const std::vector<double>& bandwidth_gbps) {
  if (b.size() != a.size() || latency_ms.size() != a.size() || bandwidth_gbps.size() != a.size()) {
    throw std::invalid_argument("links: a, b, latency_ms and bandwidth_gbps must have the same length");
  }
  std::vector<Link> links(a.size());
  for (size_t i = 0; i < a.size(); ++i) links[i] = Link{a[i], b[i], latency_ms[i], bandwidth_gbps[i]};
  return links;
}

// Machines from the per-machine lists; gpu and gpus may be empty (no GPU types: the FLOP
// model everywhere, one GPU each).
std::vector<Machine> make_machines(const std::vector<std::string>& names, const std::vector<std::string>& regions,
                                   const std::vector<double>& memory_gb, const std::vector<double>& tflops,
                                   const std::vector<std::string>& gpu, const std::vector<double>& gpus) {
  const size_t n = names.size();
  if (regions.size() != n || memory_gb.size() != n || tflops.size() != n)
    throw std::invalid_argument("machines: names, regions, memory_gb and tflops must have the same length");
  if ((!gpu.empty() && gpu.size() != n) || (!gpus.empty() && gpus.size() != n))
    throw std::invalid_argument("machines: gpu and gpus must be empty or have one entry per machine");
  std::vector<Machine> machines(n);
  for (size_t i = 0; i < n; ++i)
    machines[i] = Machine{names[i], regions[i], memory_gb[i], tflops[i], gpu.empty() ? std::string() : gpu[i],
                          gpus.empty() ? 1.0 : gpus[i]};
  return machines;
}

// A regional cluster's R x R tables come as arrays (R^2 = 2.8 million entries at 1,668
// regions: a list of Python floats costs a second to build and convert). Safe casts only
// (no forcecast): an int table becomes double, a float region_link is refused.
template <class T>
using RegionTable = py::array_t<T, py::array::c_style>;

template <class T>
std::vector<T> to_vector(const RegionTable<T>& a) {
  return std::vector<T>(a.data(), a.data() + a.size());
}

using ProfileEntryTuple = std::tuple<double, int64_t, std::vector<double>, std::vector<double>, std::vector<double>>;

}  // namespace

// Long but flat: one statement per Python name, the submodule's table of contents; the
// conversions live in the helpers above.
void bind_plan(py::module_& m) {
  py::class_<ModelSpec>(m, "ModelSpec")
      .def(py::init([](std::string name, int64_t layers, int64_t hidden, int64_t seq_len, double params,
                       double flops_per_token, double bytes_per_param, double activation_bytes_per_token,
                       int64_t global_batch, int64_t micro_batches, int64_t iterations, bool recompute,
                       const std::vector<std::shared_ptr<Profile>>& profiles, bool efficiency_curve) {
             ModelSpec s{std::move(name), layers, hidden, seq_len, params, flops_per_token, bytes_per_param,
                         activation_bytes_per_token, global_batch, micro_batches, iterations, recompute};
             s.efficiency_curve = efficiency_curve;
             s.validate();
             for (const auto& p : profiles) s.add_profile(p);
             return s;
           }),
           py::arg("name"), py::arg("layers"), py::arg("hidden"), py::arg("seq_len"), py::arg("params"),
           py::arg("flops_per_token"), py::arg("bytes_per_param"), py::arg("activation_bytes_per_token"),
           py::arg("global_batch"), py::arg("micro_batches"), py::arg("iterations"), py::arg("recompute"),
           py::arg("profiles") = std::vector<std::shared_ptr<Profile>>{}, py::arg("efficiency_curve") = false)
      .def_readonly("name", &ModelSpec::name)
      .def("memory_bytes_whole", &ModelSpec::memory_bytes_whole, py::arg("sequences"))
      .def_property_readonly("memory_need_bytes", [](const ModelSpec& s) { return detail::memory_need(s); },
                             "The least memory any pipeline plan of the job needs (planners order jobs by it)");

  py::class_<Profile, std::shared_ptr<Profile>>(m, "Profile")
      .def(py::init([](std::string source, std::string model, std::string gpu, int64_t layers,
                       double optimizer_s_per_param, const std::vector<ProfileEntryTuple>& entries) {
             auto p = std::make_shared<Profile>();
             p->source = std::move(source);
             p->model = std::move(model);
             p->gpu = std::move(gpu);
             p->layers = layers;
             p->optimizer_s_per_param = optimizer_s_per_param;
             for (const auto& [b, tp, fwd, bwd, act] : entries) p->entries.push_back(ProfileEntry{b, tp, fwd, bwd, act});
             p->validate();
             return p;
           }),
           py::arg("source"), py::arg("model"), py::arg("gpu"), py::arg("layers"), py::arg("optimizer_s_per_param"),
           py::arg("entries"), "entries: (micro_batch, tensor_parallel, forward_s, backward_s, activation_bytes) tuples")
      .def("compute_s", &Profile::compute_s, py::arg("first"), py::arg("last"), py::arg("micro_batch"),
           py::arg("tensor_parallel") = 1, py::arg("recompute") = false)
      .def("activation_bytes", &Profile::activation_bytes, py::arg("first"), py::arg("last"), py::arg("micro_batch"),
           py::arg("tensor_parallel") = 1);
  m.def("flop_efficiency", &flop_efficiency, py::arg("hidden"), py::arg("tokens"),
        "The FLOP model's efficiency curve (csrc/plan/cost.h): fraction of peak at width h, T tokens per GPU");

  py::class_<Cluster, std::shared_ptr<Cluster>>(m, "PlanCluster")  // shared: AnytimePlanner keeps it without a copy
      .def(py::init([](const std::vector<std::string>& names, const std::vector<std::string>& regions,
                       const std::vector<double>& memory_gb, const std::vector<double>& tflops,
                       const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                       const std::vector<double>& latency_ms, const std::vector<double>& bandwidth_gbps,
                       const std::string& missing_links, const std::vector<std::string>& gpu,
                       const std::vector<double>& gpus) {
             return Cluster(make_machines(names, regions, memory_gb, tflops, gpu, gpus),
                            make_links(a, b, latency_ms, bandwidth_gbps), parse_rule(missing_links));
           }),
           py::arg("names"), py::arg("regions"), py::arg("memory_gb"), py::arg("tflops"), py::arg("a"), py::arg("b"),
           py::arg("latency_ms"), py::arg("bandwidth_gbps"), py::arg("missing_links"),
           py::arg("gpu") = std::vector<std::string>{}, py::arg("gpus") = std::vector<double>{})
      .def_static(
          "from_network",
          [](const std::vector<std::string>& names, const std::vector<std::string>& regions,
             const std::vector<double>& memory_gb, const std::vector<double>& tflops, int64_t n_regions,
             std::vector<int64_t> region, std::vector<double> access_ms, const RegionTable<double>& base_latency_ms,
             const RegionTable<double>& base_bandwidth_gbps, const RegionTable<uint8_t>& region_link,
             const std::string& missing_links, const std::vector<std::string>& gpu, const std::vector<double>& gpus) {
            std::vector<Machine> machines = make_machines(names, regions, memory_gb, tflops, gpu, gpus);
            RegionalNetwork net{n_regions, std::move(region), std::move(access_ms), to_vector(base_latency_ms),
                                to_vector(base_bandwidth_gbps), to_vector(region_link)};
            return Cluster::from_network(std::move(machines), std::move(net), parse_rule(missing_links));
          },
          py::arg("names"), py::arg("regions"), py::arg("memory_gb"), py::arg("tflops"), py::arg("n_regions"),
          py::arg("region"), py::arg("access_ms"), py::arg("base_latency_ms"), py::arg("base_bandwidth_gbps"),
          py::arg("region_link"), py::arg("missing_links"), py::arg("gpu") = std::vector<std::string>{},
          py::arg("gpus") = std::vector<double>{})
      .def_property_readonly("size", &Cluster::size)
      .def_property_readonly("regional", &Cluster::regional)
      .def("latency_s", &Cluster::latency_s)
      .def("bandwidth_Bps", &Cluster::bandwidth_Bps)
      .def("send_time", &Cluster::send_time)
      .def("names", [](const Cluster& c) {
        std::vector<std::string> out;
        for (const Machine& mm : c.machines()) out.push_back(mm.name);
        return out;
      });

  py::class_<Plan>(m, "Plan")
      .def("to_dict", &plan_to_dict)
      .def_readonly("planner", &Plan::planner)
      .def_readonly("makespan_s", &Plan::makespan_s);

  using Jobs = const std::vector<ModelSpec>&;
  m.def("plan_system_a", [](const Cluster& c, Jobs j) { return plan_system_a(c, j); });
  m.def("plan_system_b", [](const Cluster& c, Jobs j) { return plan_system_b(c, j); });
  m.def("plan_system_c", [](const Cluster& c, Jobs j) { return plan_system_c(c, j); });
  m.def(
      "plan_search",
      [](const Cluster& c, Jobs j, double time_limit_s, uint64_t seed, int64_t max_iterations) {
        py::gil_scoped_release release;
        return plan_search(c, j, SearchOptions{time_limit_s, seed, max_iterations});
      },
      py::arg("cluster"), py::arg("jobs"), py::arg("time_limit_s"), py::arg("seed"), py::arg("max_iterations") = 0);
  m.def(
      "refine_plan",
      [](const Cluster& c, Jobs j, const Plan& p, double time_limit_s, uint64_t seed, int64_t max_iterations) {
        py::gil_scoped_release release;
        return refine_plan(c, j, p, SearchOptions{time_limit_s, seed, max_iterations});
      },
      py::arg("cluster"), py::arg("jobs"), py::arg("plan"), py::arg("time_limit_s"), py::arg("seed"),
      py::arg("max_iterations"));
  py::class_<AnytimePlanner>(m, "AnytimePlanner",
                             "Hulk within a time budget (planners.h): candidate sources, then refinement")
      .def(py::init([](std::shared_ptr<Cluster> c, Jobs j, double time_limit_s, uint64_t seed, int64_t max_iterations) {
             return std::make_unique<AnytimePlanner>(std::move(c), j, SearchOptions{time_limit_s, seed, max_iterations});
           }),
           py::arg("cluster"), py::arg("jobs"), py::arg("time_limit_s"), py::arg("seed"), py::arg("max_iterations"))
      .def("elapsed_s", &AnytimePlanner::elapsed_s)
      .def("start_search_thread", &AnytimePlanner::start_search_thread)
      .def("time_for_another_step", &AnytimePlanner::time_for_another_step, py::arg("expected_s") = 0.0)
      .def("record_step", &AnytimePlanner::record_step, py::arg("seconds"), py::arg("nothing_from") = "")
      .def("skip", &AnytimePlanner::skip, py::arg("source"))
      .def("skipped_any", &AnytimePlanner::skipped_any)
      .def("add_search_starts", &AnytimePlanner::add_search_starts, py::arg("first"), py::arg("end"),
           py::call_guard<py::gil_scoped_release>())
      .def_property_readonly_static("search_starts", [](py::object) { return AnytimePlanner::kSearchStarts; })
      .def("add_classification", &AnytimePlanner::add_classification, py::arg("source"), py::arg("classes"),
           py::arg("grow_rounds"), py::call_guard<py::gil_scoped_release>())
      .def("add_send_time_start", &AnytimePlanner::add_send_time_start, py::call_guard<py::gil_scoped_release>())
      .def("descend_best", &AnytimePlanner::descend_best, py::arg("share"), py::call_guard<py::gil_scoped_release>())
      .def("finish", &AnytimePlanner::finish, py::call_guard<py::gil_scoped_release>());
  m.def("plan_hulk", [](const Cluster& c, Jobs j, const std::vector<int64_t>& classes) {
    py::gil_scoped_release release;
    return plan_hulk(c, j, classes);
  });
  m.def("plan_assignment", [](const Cluster& c, Jobs j, const std::vector<int64_t>& assignment,
                              const std::string& name) { return plan_assignment(c, j, assignment, name.c_str()); });
  m.def("heuristic_classes", &heuristic_classes);
  m.def(
      "plausible_ranges",
      [] {
        py::list out;
        for (const PlausibleRange& r : plausible_ranges()) {
          py::dict d;
          d["field"] = r.field;
          d["lo"] = r.lo;
          d["hi"] = r.hi;
          d["zero_ok"] = r.zero_ok;
          d["unit"] = r.unit;
          d["why"] = r.why;
          out.append(d);
        }
        return out;
      },
      "The plausible range of each machine and link attribute (csrc/plan/plausible.h)");
  m.def("greedy_classes", &greedy_classes, py::arg("cluster"), py::arg("jobs"),
        "Job index per machine (-1 idle): each job, largest memory need first, on the fastest free "
        "machines of the one region that holds it with the most throughput (hulk.greedy's rule)");
  m.def(
      "grow_bottleneck",
      [](const Cluster& c, Jobs j, std::vector<int64_t> classes, int rounds, std::vector<int64_t> steps) {
        Growth g;
        {
          py::gil_scoped_release release;
          g = grow_bottleneck(c, j, std::move(classes), rounds, std::move(steps));
        }
        return py::make_tuple(std::move(g.plan), std::move(g.classes), g.start_makespan_s);
      },
      py::arg("cluster"), py::arg("jobs"), py::arg("classes"), py::arg("rounds") = 8,
      py::arg("steps") = default_growth_steps(),
      "(plan, classes, makespan_s before growth): the job that finishes last takes more of its regions' "
      "fastest idle machines while that shortens the plan (rules.h)");
  m.def("flops_per_token", &flops_per_token_of, py::arg("params"), py::arg("layers"), py::arg("hidden"),
        py::arg("seq_len"), "Training FLOPs per token, forward + backward: 6 P + 12 L h s");
  m.def("activation_bytes_per_token", &activation_bytes_per_token_of, py::arg("hidden"),
        "Activation bytes per token per layer kept for backward: 34 h");
  m.def("best_pipeline", [](const Cluster& c, const ModelSpec& model, const std::vector<int64_t>& group) {
    check_group(c, group);
    py::gil_scoped_release release;
    JobPlan j = best_pipeline(c, model, group);
    py::gil_scoped_acquire acquire;
    return job_to_dict(j);
  });
  m.def(
      "pipeline_cost",
      [](const Cluster& c, const ModelSpec& model, const std::vector<std::pair<std::vector<int64_t>, std::vector<int64_t>>>& reps) {
        std::vector<Replica> rs;
        for (const auto& r : reps) rs.push_back(Replica{r.first, r.second});
        const JobCost jc = pipeline_cost(c, model, rs);
        py::dict d;
        d["feasible"] = jc.feasible;
        d["reason"] = jc.reason;
        d["iteration_s"] = jc.iteration_s;
        return d;
      },
      py::arg("cluster"), py::arg("model"), py::arg("replicas"),
      "The cost model on given replicas: [(machines, bounds), ...] as in a plan's 'replicas'");
  m.def("bottleneck_pipeline", [](const Cluster& c, const ModelSpec& model, const std::vector<int64_t>& group) {
    check_group(c, group);
    return job_to_dict(bottleneck_pipeline(c, model, group));
  });
  m.def("repair_without", [](const Cluster& c, const Plan& p, int64_t failed, bool shorten) {
    return repair_to_tuple(repair_without(c, p, failed, shorten));
  }, py::arg("cluster"), py::arg("plan"), py::arg("failed"), py::arg("shorten") = true);
  m.def("repair_with", [](const Cluster& c, const Plan& p, const std::string& name, const std::string& region,
                          double memory_gb, double tflops, const std::vector<int64_t>& a,
                          const std::vector<int64_t>& b, const std::vector<double>& latency_ms,
                          const std::vector<double>& bandwidth_gbps, const std::string& gpu, double gpus, bool shorten) {
    return repair_to_tuple(repair_with(c, p, Machine{name, region, memory_gb, tflops, gpu, gpus},
                                       make_links(a, b, latency_ms, bandwidth_gbps), shorten));
  }, py::arg("cluster"), py::arg("plan"), py::arg("name"), py::arg("region"), py::arg("memory_gb"), py::arg("tflops"),
     py::arg("a"), py::arg("b"), py::arg("latency_ms"), py::arg("bandwidth_gbps"), py::arg("gpu") = std::string(),
     py::arg("gpus") = 1.0, py::arg("shorten") = true);
}

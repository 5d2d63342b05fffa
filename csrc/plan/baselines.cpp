// The paper's Systems A, B and C, and plans from a given assignment.
#include "csrc/plan/job_helpers.h"
#include "csrc/plan/assignment.h"
#include "csrc/plan/planners.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace hulk::plan {

using namespace detail;

// ---- the paper's baselines ------------------------------------------------------------------------

namespace {

JobPlan system_a_job(const Cluster& c, const ModelSpec& m) {
  // Memory of a data-parallel replica holding the whole model and B / D sequences.
  auto need = [&](int64_t D) {
    const double b = micro_batch(m, D);
    return m.state_bytes(m.layers) + m.stage_activation_bytes(m.layers, b, m.micro_batches);
  };
  // D and the set of machines that fit depend on each other: fewer replicas means a bigger
  // share of the batch each. Shrink D until it equals the number of machines that fit.
  int64_t D = c.size();
  std::vector<int64_t> fit;
  while (D > 0) {
    fit.clear();
    for (int64_t i = 0; i < c.size(); ++i)
      if (need(D) <= capacity_bytes(c, i)) fit.push_back(i);
    if (static_cast<int64_t>(fit.size()) == D || fit.empty()) break;
    D = static_cast<int64_t>(fit.size());
  }
  if (fit.empty()) {
    double largest = 0;
    for (int64_t i = 0; i < c.size(); ++i) largest = std::max(largest, capacity_bytes(c, i));
    return infeasible_job(m,
                          "System A: no machine fits the whole model (needs " + format_gb(need(1)) +
                              " with the whole batch; the largest machine has " + format_gb(largest) + ")",
                          need(1) - largest);
  }
  JobPlan jp;
  jp.model = m;
  for (int64_t i : fit) jp.replicas.push_back(Replica{{i}, {0, m.layers}});
  jp.cost = pipeline_cost(c, m, jp.replicas);
  return jp;
}

JobPlan system_b_job(const Cluster& c, const ModelSpec& m) {
  if (c.size() == 0) return infeasible_job(m, "System B: the cluster has no machines", memory_need(m));
  const int64_t S = std::min(c.size(), m.layers);
  std::vector<int64_t> ms(static_cast<size_t>(S));
  std::iota(ms.begin(), ms.end(), 0);
  JobPlan jp;
  jp.model = m;
  jp.replicas.push_back(Replica{ms, even_bounds(S, m.layers)});
  jp.cost = pipeline_cost(c, m, jp.replicas);
  if (!jp.cost.feasible) jp.cost.reason = "System B: " + jp.cost.reason;
  return jp;
}

JobPlan system_c_job(const Cluster& c, const ModelSpec& m) {
  if (c.size() == 0) return infeasible_job(m, "System C: the cluster has no machines", memory_need(m));
  JobPlan jp;
  jp.model = m;
  jp.strategy = Strategy::TensorParallel;
  jp.tensor_group.resize(static_cast<size_t>(c.size()));
  std::iota(jp.tensor_group.begin(), jp.tensor_group.end(), 0);
  jp.cost = tensor_parallel_cost(c, m, jp.tensor_group);
  if (!jp.cost.feasible) jp.cost.reason = "System C: " + jp.cost.reason;
  return jp;
}

template <class F>
Plan sequential_plan(const char* name, const Cluster& c, const std::vector<ModelSpec>& jobs, F job) {
  const auto t0 = Clock::now();
  Plan p;
  p.planner = name;
  p.sequential = true;
  for (size_t j = 0; j < jobs.size(); ++j) {
    p.jobs.push_back(job(c, jobs[j]));
    if (!p.jobs.back().cost.feasible)
      p.notes.push_back(job_label(jobs, static_cast<int64_t>(j)) + " infeasible: " + p.jobs.back().cost.reason);
  }
  p.schedule();
  p.planning_s = seconds_since(t0);
  return p;
}


}  // namespace

Plan plan_system_a(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  return sequential_plan("System A", c, jobs, system_a_job);
}
Plan plan_system_b(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  return sequential_plan("System B", c, jobs, system_b_job);
}
Plan plan_system_c(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  return sequential_plan("System C", c, jobs, system_c_job);
}

Plan plan_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& assignment,
                     const char* name) {
  const auto t0 = Clock::now();
  check_assignment(c, jobs, assignment, "assignment");
  Plan p = plan_from_assignment(c, jobs, assignment, name ? name : "assignment");
  p.planning_s = seconds_since(t0);
  return p;
}

}  // namespace hulk::plan

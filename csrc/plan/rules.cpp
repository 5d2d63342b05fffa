// The greedy classification and the bottleneck growth (rules.h).
#include "csrc/plan/rules.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "csrc/plan/job_helpers.h"
#include "csrc/plan/assignment.h"

namespace hulk::plan {

using namespace detail;

namespace {

// The shortest fastest-first prefix of some machines whose memory reaches a job's need.
struct Cover {
  double memory = 0, tflops = 0;
  std::vector<int64_t> machines;
  bool done = false;
};

void check_growth_arguments(int rounds, const std::vector<int64_t>& steps) {
  if (rounds < 0) throw std::invalid_argument("grow_bottleneck: rounds must be >= 0, got " + std::to_string(rounds));
  for (size_t i = 0; i < steps.size(); ++i) {
    if (steps[i] < 1)
      throw std::invalid_argument("grow_bottleneck: steps[" + std::to_string(i) + "] = " + std::to_string(steps[i]) +
                                  " must be >= 1");
    if (i > 0 && steps[i] <= steps[i - 1])
      throw std::invalid_argument("grow_bottleneck: steps must be increasing, got steps[" + std::to_string(i) +
                                  "] = " + std::to_string(steps[i]) + " after " + std::to_string(steps[i - 1]));
  }
}

// The job that finishes last (infeasible: +inf; ties: the lower index), -1 when there are none.
int64_t last_to_finish(const Plan& p) {
  int64_t pick = -1;
  double latest = 0;
  for (size_t j = 0; j < p.jobs.size(); ++j) {
    const double t = p.jobs[j].cost.feasible ? p.jobs[j].finish_s : kInf;
    if (pick < 0 || t > latest) {
      pick = static_cast<int64_t>(j);
      latest = t;
    }
  }
  return pick;
}

// Idle machines in the regions job `j` already uses, fastest first (ties: lower id).
std::vector<int64_t> idle_in_regions_of(const Cluster& c, const std::vector<int64_t>& classes, int64_t j,
                                        const std::vector<int64_t>& by_speed) {
  std::unordered_set<std::string> regions;
  for (int64_t x = 0; x < c.size(); ++x)
    if (classes[static_cast<size_t>(x)] == j) regions.insert(c.machine(x).region);
  std::vector<int64_t> out;
  if (regions.empty()) return out;
  for (int64_t x : by_speed)
    if (classes[static_cast<size_t>(x)] < 0 && regions.count(c.machine(x).region)) out.push_back(x);
  return out;
}

}  // namespace

std::vector<int64_t> greedy_classes(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  const int64_t N = c.size();
  std::vector<int64_t> assign(static_cast<size_t>(N), -1);
  const std::vector<int64_t> by_speed = fastest_first(c);
  for (int64_t j : jobs_by_need(jobs)) {
    const double need = memory_need(jobs[static_cast<size_t>(j)]);
    std::unordered_map<std::string, Cover> per_region;
    Cover anywhere;
    const Cover* best = nullptr;
    for (int64_t x : by_speed) {
      if (assign[static_cast<size_t>(x)] >= 0) continue;
      for (Cover* cov : {&per_region[c.machine(x).region], &anywhere}) {
        if (cov->done) continue;
        cov->memory += capacity_bytes(c, x);
        cov->tflops += c.machine(x).tflops;
        cov->machines.push_back(x);
        cov->done = cov->memory >= need;
      }
    }
    // Most throughput; ties: fewer machines, then the lowest machine id. Regions' lowest ids
    // differ, so the unordered map's order never decides.
    const auto key = [](const Cover& v) {
      return std::make_tuple(v.tflops, -static_cast<int64_t>(v.machines.size()),
                             -*std::min_element(v.machines.begin(), v.machines.end()));
    };
    for (const auto& [region, cov] : per_region)
      if (cov.done && (best == nullptr || key(cov) > key(*best))) best = &cov;
    if (best == nullptr && anywhere.done) best = &anywhere;
    if (best != nullptr)
      for (int64_t x : best->machines) assign[static_cast<size_t>(x)] = j;
  }
  return assign;
}

Growth grow_bottleneck(const Cluster& c, const std::vector<ModelSpec>& jobs, std::vector<int64_t> classes,
                       int rounds, std::vector<int64_t> steps, const std::function<bool()>& out_of_time,
                       const Plan* first) {
  const auto stop = [&] { return out_of_time && out_of_time(); };
  check_growth_arguments(rounds, steps);
  check_assignment(c, jobs, classes, "classes");
  Growth g{first ? *first : plan_hulk(c, jobs, classes), std::move(classes), 0, {}};
  g.start_makespan_s = g.plan.makespan_s;
  g.start = g.plan;
  const std::vector<int64_t> by_speed = fastest_first(c);
  for (int round = 0; round < rounds && !stop(); ++round) {
    const int64_t j = last_to_finish(g.plan);
    if (j < 0) break;
    const std::vector<int64_t> candidates = idle_in_regions_of(c, g.classes, j, by_speed);
    if (candidates.empty()) break;  // also when job j has no machines (no regions)
    bool found = false;
    Plan best_plan;
    std::vector<int64_t> best_classes;
    for (int64_t k : steps) {
      if (k > static_cast<int64_t>(candidates.size()) || stop()) break;
      std::vector<int64_t> trial = g.classes;
      for (int64_t i = 0; i < k; ++i) trial[static_cast<size_t>(candidates[static_cast<size_t>(i)])] = j;
      Plan q = plan_hulk(c, jobs, trial);
      if (q.makespan_s < (found ? best_plan.makespan_s : g.plan.makespan_s * (1 - 1e-9))) {
        found = true;
        best_plan = std::move(q);
        best_classes = std::move(trial);
      }
    }
    if (!found) break;
    g.plan = std::move(best_plan);
    g.classes = std::move(best_classes);
  }
  return g;
}

}  // namespace hulk::plan

// Assignments turned into plans, and plans compared (assignment.h).
#include "csrc/plan/assignment.h"

#include <cmath>
#include <stdexcept>
#include <string>

#include "csrc/plan/job_helpers.h"

namespace hulk::plan::detail {

void check_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& a,
                      const char* what) {
  if (static_cast<int64_t>(a.size()) != c.size()) {
    throw std::invalid_argument(std::string(what) + ": has " + std::to_string(a.size()) +
                                " entries, the cluster has " + std::to_string(c.size()) + " machines");
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] < -1 || a[i] >= static_cast<int64_t>(jobs.size())) {
      throw std::invalid_argument(std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(a[i]) +
                                  " is not -1 (idle) or a job index below " + std::to_string(jobs.size()));
    }
  }
}

std::vector<std::vector<int64_t>> groups_of(const std::vector<int64_t>& assign, size_t n_jobs) {
  std::vector<std::vector<int64_t>> g(n_jobs);
  for (size_t i = 0; i < assign.size(); ++i)
    if (assign[i] >= 0) g[static_cast<size_t>(assign[i])].push_back(static_cast<int64_t>(i));
  return g;
}

// Re-plans a job on a new group keeping its strategy (tensor parallel stays tensor parallel).
JobPlan replan(const Cluster& c, const JobPlan& old, const std::vector<int64_t>& group) {
  if (old.strategy == Strategy::TensorParallel) {
    if (group.empty()) return infeasible_job(old.model, "no machines left", memory_need(old.model));
    JobPlan jp;
    jp.model = old.model;
    jp.strategy = Strategy::TensorParallel;
    jp.tensor_group = group;
    jp.cost = tensor_parallel_cost(c, old.model, group);
    return jp;
  }
  return best_pipeline(c, old.model, group);
}

// ---- comparing plans ---------------------------------------------------------------------

bool operator<(const Score& a, const Score& b) {
  if (a.infeasible != b.infeasible) return a.infeasible < b.infeasible;
  if (a.shortfall != b.shortfall) return a.shortfall < b.shortfall;
  if (a.makespan != b.makespan) return a.makespan < b.makespan;
  return a.total < b.total;
}

Score score_of(const Plan& p) {
  Score s;
  for (const auto& j : p.jobs) {
    if (!j.cost.feasible) {
      ++s.infeasible;
      s.shortfall += j.cost.memory_shortfall_bytes;
    } else {
      s.makespan = std::max(s.makespan, j.finish_s);
      s.total += j.finish_s - j.start_s;
    }
  }
  return s;
}

// A job that starts later than 0 in a concurrent plan waited for the job that finished
// when it started (Plan keeps start/finish, not the waits themselves).
std::vector<int64_t> infer_waits(const Plan& p) {
  std::vector<int64_t> w(p.jobs.size(), -1);
  if (p.sequential) return w;
  for (size_t j = 0; j < p.jobs.size(); ++j) {
    if (!(p.jobs[j].start_s > 0)) continue;
    double best = kInf;
    for (size_t k = 0; k < p.jobs.size(); ++k) {
      if (k == j) continue;
      const double d = std::fabs(p.jobs[k].finish_s - p.jobs[j].start_s);
      if (d < best) {
        best = d;
        w[j] = static_cast<int64_t>(k);
      }
    }
  }
  return w;
}


Plan plan_from_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& a,
                          const char* name) {
  Plan p;
  p.planner = name;
  const auto groups = groups_of(a, jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    p.jobs.push_back(best_pipeline(c, jobs[j], groups[j]));
    if (!p.jobs.back().cost.feasible)
      p.notes.push_back(job_label(jobs, static_cast<int64_t>(j)) + " infeasible: " + p.jobs.back().cost.reason);
  }
  p.schedule();
  return p;
}

}  // namespace hulk::plan::detail

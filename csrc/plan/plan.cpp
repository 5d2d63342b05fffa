// JobPlan / Plan helpers: machines of a job, feasibility, and the schedule.
//
// Choices the header leaves open, stated once here:
// - JobPlan::machines() returns the union of the replicas' machines and the tensor group,
//   sorted ascending, each machine once.
// - schedule(): waits_for is empty (nobody waits) or has one entry per job, each -1 or the
//   index of another job; anything else throws std::invalid_argument. A job starts at the
//   latest of: 0; the previous job's finish when sequential; the waited-for job's finish.
//   Waits may point forwards or backwards in job order; a cycle (including a sequential plan
//   whose job waits for a later job) throws std::invalid_argument.
// - finish = start + iterations * iteration_s; an infeasible job finishes at +inf (so does
//   every job after it when sequential, and every job waiting on it). makespan_s = the
//   latest finish (0 for no jobs).
// - Two feasible jobs that share a machine must not run at overlapping times: schedule()
//   throws std::invalid_argument naming them instead of silently reporting a plan that
//   double-books a machine (overlaps up to a relative 1e-9 are rounding, not overlaps).
#include "csrc/plan/plan.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>

namespace hulk::plan {

std::vector<int64_t> JobPlan::machines() const {
  std::vector<int64_t> out;
  for (const Replica& r : replicas) out.insert(out.end(), r.machines.begin(), r.machines.end());
  out.insert(out.end(), tensor_group.begin(), tensor_group.end());
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

bool Plan::feasible() const {
  return std::all_of(jobs.begin(), jobs.end(), [](const JobPlan& j) { return j.cost.feasible; });
}

void Plan::schedule(const std::vector<int64_t>& waits_for) {
  const int64_t n = static_cast<int64_t>(jobs.size());
  if (!waits_for.empty() && static_cast<int64_t>(waits_for.size()) != n)
    throw std::invalid_argument("Plan::schedule: waits_for has " + std::to_string(waits_for.size()) +
                                " entries, expected 0 or one per job (" + std::to_string(n) + ")");
  for (int64_t j = 0; j < static_cast<int64_t>(waits_for.size()); ++j) {
    const int64_t w = waits_for[static_cast<size_t>(j)];
    if (w < -1 || w >= n)
      throw std::invalid_argument("Plan::schedule: waits_for[" + std::to_string(j) + "] = " + std::to_string(w) +
                                  " is not -1 or a job index in [0, " + std::to_string(n) + ")");
    if (w == j) throw std::invalid_argument("Plan::schedule: job " + std::to_string(j) + " waits for itself");
  }
  constexpr double kInf = std::numeric_limits<double>::infinity();
  // 0 = not visited, 1 = in progress, 2 = done
  std::vector<int> state(static_cast<size_t>(n), 0);
  std::function<void(int64_t)> visit = [&](int64_t j) {
    const size_t u = static_cast<size_t>(j);
    if (state[u] == 2) return;
    if (state[u] == 1)
      throw std::invalid_argument("Plan::schedule: jobs wait for each other in a cycle (job " + std::to_string(j) +
                                  (sequential ? ", jobs run in order" : "") + ")");
    state[u] = 1;
    double start = 0;
    if (sequential && j > 0) {
      visit(j - 1);
      start = std::max(start, jobs[u - 1].finish_s);
    }
    if (!waits_for.empty() && waits_for[u] >= 0) {
      visit(waits_for[u]);
      start = std::max(start, jobs[static_cast<size_t>(waits_for[u])].finish_s);
    }
    JobPlan& job = jobs[u];
    job.start_s = start;
    job.finish_s = job.cost.feasible
                       ? start + static_cast<double>(job.model.iterations) * job.cost.iteration_s
                       : kInf;
    state[u] = 2;
  };
  for (int64_t j = 0; j < n; ++j) visit(j);

  makespan_s = 0;
  for (const JobPlan& job : jobs) makespan_s = std::max(makespan_s, job.finish_s);

  // No machine runs two feasible jobs at once.
  std::vector<std::vector<int64_t>> ms;
  ms.reserve(jobs.size());
  for (const JobPlan& job : jobs) ms.push_back(job.machines());
  for (int64_t a = 0; a < n; ++a) {
    const JobPlan& ja = jobs[static_cast<size_t>(a)];
    if (!ja.cost.feasible) continue;
    for (int64_t b = a + 1; b < n; ++b) {
      const JobPlan& jb = jobs[static_cast<size_t>(b)];
      if (!jb.cost.feasible) continue;
      // Overlap beyond rounding (relative 1e-9): back-to-back jobs computed along different
      // sums may differ in the last bits.
      const double eps = 1e-9 * std::max({1.0, std::fabs(ja.finish_s), std::fabs(jb.finish_s)});
      if (!(ja.start_s < jb.finish_s - eps && jb.start_s < ja.finish_s - eps)) continue;
      std::vector<int64_t> shared;
      std::set_intersection(ms[static_cast<size_t>(a)].begin(), ms[static_cast<size_t>(a)].end(),
                            ms[static_cast<size_t>(b)].begin(), ms[static_cast<size_t>(b)].end(),
                            std::back_inserter(shared));
      if (!shared.empty())
        throw std::invalid_argument("Plan::schedule: jobs " + std::to_string(a) + " and " + std::to_string(b) +
                                    " both use machine " + std::to_string(shared.front()) +
                                    " at the same time; make one wait for the other or run sequentially");
    }
  }
}

}  // namespace hulk::plan

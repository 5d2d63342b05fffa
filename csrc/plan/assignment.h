// Assignments (machine -> job index, -1 idle) turned into plans and plans compared: what the
// search, Hulk's refinement and the repairs share. Internal to the planners.
#pragma once

#include <cstdint>
#include <vector>

#include "csrc/plan/planners.h"

namespace hulk::plan::detail {

// Throws std::invalid_argument unless `a` has one entry per machine in [-1, jobs).
void check_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& a,
                      const char* what);
// Each job's machines, in id order.
std::vector<std::vector<int64_t>> groups_of(const std::vector<int64_t>& assign, size_t n_jobs);
// Plans each job with best_pipeline on its machines of the assignment, concurrently.
Plan plan_from_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& a,
                          const char* name);
// Re-plans a job on a new group keeping its strategy.
JobPlan replan(const Cluster& c, const JobPlan& old, const std::vector<int64_t>& group);

// Lexicographic plan quality: fewer infeasible jobs, less shortfall, makespan, sum of times.
struct Score {
  int64_t infeasible = 0;
  double shortfall = 0;
  double makespan = 0;
  double total = 0;
  int64_t last = -1;  // the job that finishes last (set by the local searches' scoring only)
};
bool operator<(const Score& a, const Score& b);
Score score_of(const Plan& p);
// Which job each job of a concurrent plan waited for (-1: none), read off start/finish.
std::vector<int64_t> infer_waits(const Plan& p);

}  // namespace hulk::plan::detail

// Simple rules for who trains what, shared by the search planner and the Python package
// (hulk.greedy, hulk.planner): one implementation, bound as _core.plan.greedy_classes and
// _core.plan.grow_bottleneck.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "csrc/plan/planners.h"

namespace hulk::plan {

// Each job, largest memory need first, on the fastest free machines whose memory covers its
// need, from the one region where that holds with the most throughput (ties: fewer machines,
// then the lowest machine id); a job no region holds alone takes the fastest free machines
// anywhere, and a job the free machines cannot hold takes none. Job index per machine, -1 idle.
std::vector<int64_t> greedy_classes(const Cluster& c, const std::vector<ModelSpec>& jobs);

// The growth steps Hulk tries by default: 1, 2, 4, 8 and 16 more machines.
inline const std::vector<int64_t>& default_growth_steps() {
  static const std::vector<int64_t> steps{1, 2, 4, 8, 16};
  return steps;
}

struct Growth {
  Plan plan;                     // plan_hulk on `classes`
  std::vector<int64_t> classes;  // the classification after growth
  double start_makespan_s = 0;   // plan_hulk's makespan on the classification given
  Plan start;                    // plan_hulk on the classification given
};

// Gives the job that finishes last more machines while that shortens the plan. Each round
// plans `classes` with plan_hulk, takes the job with the latest finish (an infeasible one
// counts as +inf; ties: the lower index), and tries adding the first k of the idle machines
// in the regions it already uses, fastest first (ties: lower id), for k in `steps` up to
// the number of such machines. The trial of least makespan is kept if it beats the current
// makespan by more than a relative 1e-9. Stops when no trial does, when that job has no
// machines or no candidates, or after `rounds` rounds. Throws std::invalid_argument for
// rounds < 0, steps not positive and strictly increasing, or invalid classes. `out_of_time`,
// when given, ends the growth early (the best plan so far is kept): Hulk's anytime planner
// passes its budget's clock. `first`, when given, is plan_hulk on `classes` already computed.
Growth grow_bottleneck(const Cluster& c, const std::vector<ModelSpec>& jobs, std::vector<int64_t> classes,
                       int rounds, std::vector<int64_t> steps = default_growth_steps(),
                       const std::function<bool()>& out_of_time = {}, const Plan* first = nullptr);

}  // namespace hulk::plan

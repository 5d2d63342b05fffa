// Plans: which machines train which job, how, and what the cost model says it costs.
#pragma once

#include <string>
#include <vector>

#include "csrc/plan/cost.h"

namespace hulk::plan {

enum class Strategy { Pipeline, TensorParallel };  // data parallel = pipeline replicas of one stage

struct JobPlan {
  ModelSpec model;
  Strategy strategy = Strategy::Pipeline;
  std::vector<Replica> replicas;       // Pipeline
  std::vector<int64_t> tensor_group;   // TensorParallel, ring order
  JobCost cost;
  double start_s = 0, finish_s = 0;    // when the job starts and ends (iterations x iteration_s)

  std::vector<int64_t> machines() const;  // every machine the job uses
};

struct Plan {
  std::string planner;
  std::vector<JobPlan> jobs;   // in the order the jobs were given
  bool sequential = false;     // jobs run one after another on the whole cluster (Systems A/B/C)
  double makespan_s = 0;       // time until every job has finished (+inf if one is infeasible)
  double planning_s = 0;       // wall time the planner took
  std::vector<std::string> notes;  // what the planner did that a reader should know (waits, moves)

  bool feasible() const;
  // Fills start_s / finish_s of every job and makespan_s: back to back in job order when
  // sequential; otherwise concurrently on disjoint groups, except that a job marked to wait
  // (waits_for >= 0) starts when the job it waits for has finished.
  void schedule(const std::vector<int64_t>& waits_for = {});
};

}  // namespace hulk::plan

// Hulk's refinement step: steepest descent on the job that finishes last.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "csrc/plan/evaluator.h"

namespace hulk::plan::detail {

struct Descent {
  int64_t steps = 0;        // moves taken
  int64_t evaluations = 0;  // groups laid out (cache hits included)
  Descent& operator+=(const Descent& o) {
    steps += o.steps;
    evaluations += o.evaluations;
    return *this;
  }
};

// Improves a concurrent assignment (job index per machine, -1 idle) in place. Each step looks
// only at the job that finishes last, since no other change can shorten the makespan: it may
// take one machine from outside (idle, or another job's), give one of its machines back to idle,
// or do both at once (a swap, tried only when no single move helps). When neither helps, it takes
// 2 to `batch_max` machines at once: each outside machine tried with its nearest outside machines
// (a deeper pipeline in each of r replicas, or one more replica, needs several machines at once
// and each alone makes the plan worse). The outside machines tried are the `pool` closest to its group
// in the time to send its boundary activations (bandwidth and latency), the `pool` fastest and
// the `pool` with the most memory. The move with the best score is taken when it beats the
// current one; the descent stops when no move does, or at out_of_time (the best move found so
// far is still taken). An assignment with an infeasible job is left as it is.
//
// Why: the annealing walk draws machines uniformly, so on thousands of machines almost every
// move touches a job that does not decide the makespan. On measured networks the last job is
// typically a large model on a few tens of machines, whose time hangs on which machines and
// links it gets; that is where these moves look.
Descent descend_last_job(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev,
                         std::vector<int64_t>& assign, const std::function<bool()>& out_of_time, size_t pool = 8,
                         size_t batch_max = 4);

}  // namespace hulk::plan::detail

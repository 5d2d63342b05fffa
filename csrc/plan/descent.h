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
  int64_t resplits = 0;     // of the steps, re-splits of two jobs' machines
  Descent& operator+=(const Descent& o) {
    steps += o.steps;
    evaluations += o.evaluations;
    resplits += o.resplits;
    return *this;
  }
};

// The re-split below runs where the last job holds at least 1 / kResplitShareInverse of the
// machines.
constexpr size_t kResplitShareInverse = 10;

// The prefix sizes a re-split tries when the last job holds `now` of the `pool` machines: every
// t within max(4, now / 2) of now, in [1, pool - 1]; empty when pool < 2.
std::vector<size_t> resplit_cuts(size_t now, size_t pool);

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
//
// When no batch helps either and the last job holds at least 1 / kResplitShareInverse of the
// machines, it re-splits: for each other job, the two jobs' machines pooled
// and ordered into the last job's layout chain (chain_order: from the machine with the most
// memory, each next one the cheapest to send to), the last job takes a prefix of t machines
// (t from resplit_cuts) and the other job the rest; the best cut is taken when it beats the
// current score. Why: on small measured clusters the last job's better group can lie in
// another basin (47 measured machines, OPT-175B on 8 fast machines in four regions, 69 s of
// its 77 s iteration in communication; 13 machines along one chain: 4.5 s), which single
// machines, swaps and batches of 2-4 never reach because each step alone makes it worse.
Descent descend_last_job(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev,
                         std::vector<int64_t>& assign, const std::function<bool()>& out_of_time, size_t pool = 8,
                         size_t batch_max = 4);

}  // namespace hulk::plan::detail

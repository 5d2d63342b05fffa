// The idle check that ends Hulk's refinement: idle machines offered to the job that finishes
// last, and a note from the cost model for every machine that stays idle.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "csrc/plan/evaluator.h"

namespace hulk::plan::detail {

struct IdleCheck {
  int64_t given = 0;  // machines given to last jobs
  std::vector<std::string> notes;
};

// Offers the idle machines (assign: job index per machine, -1 idle; first, machines a job's
// layout leaves without a stage go back to idle where that costs it nothing) to the job that
// finishes last, closest to its group first (ties:
// faster, then lower id), in batches of 1, 2, 4, ..., all (at most 4 x its group + 16) and one
// replica's worth (the group's size); the batch that shortens it most is kept if the makespan
// drops, and the check repeats for the (new) last job. When machines stay idle the note says
// what the best batch would have cost, from the cost model. Cut short by out_of_time in the
// round after one that gave the same job machines, the note says what that round took and
// weighed (larger batches were no shorter), not only that the time limit came first.
IdleCheck offer_idle_to_last_job(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev,
                                 std::vector<int64_t>& assign, const std::function<bool()>& out_of_time);

}  // namespace hulk::plan::detail

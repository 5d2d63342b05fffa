// Growth: a concurrent assignment's idle machines handed to its slowest jobs (Search's starts,
// Hulk's candidates grown as starts, the refinement of a given plan).
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "csrc/plan/evaluator.h"

namespace hulk::plan::detail {

// How far machine x is from machine y for job j: the latency (Search's measure), or the time
// to send one micro-batch's boundary activations of j (bandwidth included; Hulk's extra start).
// Both grow with y's access latency within y's region (grow_groups relies on it).
using JobDistance = std::function<double(size_t j, int64_t x, int64_t y)>;
JobDistance latency_distance(const Cluster& c);
JobDistance send_time_distance(const Cluster& c, const std::vector<ModelSpec>& jobs);

// When grow_groups stops. Every job is grown until no batch helps it (Search). Or it stops at
// the first job no batch helps: that job is the slowest (the others only get faster), so the
// makespan is then final and the rest would lower the other jobs' times alone, at ~60% of
// growth's layouts (5,000 measured machines, k = 300-305, Search's eight starts: 76-156 of
// 129-254 layouts; the eight starts 0.31 s -> 0.14 s). The makespan of one call is the same
// either way, but not that of an assignment grown twice: a second call starts again from the
// slowest job, and the machines the other jobs took in the first changes which idle ones are
// closest to it. Search's greedy start is grown twice (greedy_assignment, then as every start):
// on 5,000 measured machines #453 with OPT+RoBERTa+BERT, OPT-175B went 222 -> 333 machines in
// the second call after every job's growth (5.62 h) and stayed at 222 after growth stopped at
// the final makespan (6.88 h); so its first growth is always every job's (search.cpp).
enum class GrowUntil { EveryJobDone, MakespanFixed };

// Bottleneck growth: repeatedly takes the job with the longest time (an infeasible one first)
// and gives it the idle machines closest to its group, in a batch of its own size, halving the
// batch down to one machine until a batch shortens its time; a job no batch helps is done.
// O(J log^2 N) evaluations; distances to each group are kept incrementally. Stops when the
// clock says so, or as `until` says.
void grow_groups(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev, std::vector<int64_t>& assign,
                 const std::function<bool()>& out_of_time, const JobDistance& distance,
                 GrowUntil until = GrowUntil::EveryJobDone);

}  // namespace hulk::plan::detail

// Hulk's refinement step: the job that finishes last laid out afresh from other regions.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "csrc/plan/evaluator.h"

namespace hulk::plan::detail {

struct Reseed {
  int64_t seeds = 0;        // seed regions grown
  int64_t evaluations = 0;  // groups laid out (cache hits included)
  bool improved = false;    // the assignment changed
  int64_t cut_dismissed = 0;  // shorter groups from descents the clock cut, by less than the margin
  Reseed& operator+=(const Reseed& o) {
    seeds += o.seeds;
    evaluations += o.evaluations;
    cut_dismissed += o.cut_dismissed;
    improved = improved || o.improved;
    return *this;
  }
};

// The region of each machine as an index in [0, R): a regional cluster's own, else the
// machines' region names numbered in order of first appearance.
std::vector<int64_t> region_index(const Cluster& c);

// The seed regions of reseed_last_job: the `seeds` regions whose `free` machines (flag per
// machine) have the most compute in all (TFLOP/s summed), most first; ties go to the lower
// region index. Regions without a free machine are never seeds.
std::vector<int64_t> seed_regions(const Cluster& c, const std::vector<int64_t>& region, const std::vector<uint8_t>& free,
                                  size_t seeds);

// The shortest prefix of `machines` (in their order) with which `job` is feasible, sorted by
// index; empty when all of them are not enough. By bisection (a longer prefix holds more
// memory), so a cut by out_of_time returns a longer prefix that fits. Counts its layouts in
// `evaluations`.
std::vector<int64_t> smallest_fitting_prefix(Evaluator& ev, size_t job, const std::vector<int64_t>& machines,
                                             const std::function<bool()>& out_of_time, int64_t& evaluations);

// A seed region's machines `fast` (fastest first, all of them), then up to `pool` of the other
// `free` machines (flag per machine), closest to the region in the time to send `bytes` first:
// the list whose shortest fitting prefix starts a seed region too small for the job.
std::vector<int64_t> region_then_closest(const Cluster& c, const std::vector<int64_t>& fast, std::vector<uint8_t> free,
                                         double bytes, size_t pool);

// A group from a descent the clock cut replaces the job's only when at least this share shorter
// than the job's time (reseed.cpp says why).
constexpr double kCutGroupMargin = 0.02;

// Grows new groups for the job that finishes last in a concurrent assignment (job index per
// machine, -1 idle) from its free machines (idle or its own; other jobs keep theirs). From each
// seed region (seed_regions) in turn, two steepest descents on that job's time alone: from all
// of the region's free machines and from the fewest of its fastest free machines that hold the
// job (smallest_fitting_prefix; where that is fewer than all), the smaller start first where the
// region holds at least 4 times its machines (reseed.cpp says why): each step
// takes one free machine or gives one back, the best of them, among the group's own machines,
// the `pool` free machines closest to the group in the time to send the job's boundary
// activations and the `pool` fastest free machines; a seed that does not fit in memory climbs
// by least memory shortfall until it does. The best group found replaces the job's group when
// its time is shorter (its old machines outside the new group go idle), which never lengthens
// the makespan; a group from a descent that out_of_time cut replaces it only when at least 2%
// shorter (kCutGroupMargin). Stops at out_of_time. An assignment with an infeasible
// job is left as it is.
//
// Why: the descent on the last job (descent.h) improves the group it is given, and on measured
// networks of 1,000 machines that group's basin decides the plan: OPT-175B is a pipeline whose
// bottleneck stage is compute plus the send to the next machine, and the good chains link many
// regions through fast pairs. 1,000 measured machines #4 (OPT+RoBERTa+BERT): Hulk's 1 s group
// 41.5 s per iteration, Search's after 60 s 34.3 s, this descent from the third seed region
// 28.3-30.6 s (prototype over the same evaluator). The descent from the fewest fastest: see
// kFewFirstRatio in reseed.cpp.
Reseed reseed_last_job(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev, std::vector<int64_t>& assign,
                       const std::function<bool()>& out_of_time, size_t seeds = 8, size_t pool = 48);

}  // namespace hulk::plan::detail

// Small helpers the planner files share: machine memory, a job's memory need and micro-batch,
// a job's time and label, job order. Internal to the planners (not part of planners.h).
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "csrc/plan/planners.h"

namespace hulk::plan::detail {

constexpr double kInf = std::numeric_limits<double>::infinity();
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0);
double capacity_bytes(const Cluster& c, int64_t i);  // machine memory in bytes
// The least memory a job needs in total (a lower bound for any pipeline plan).
double memory_need(const ModelSpec& m);
double group_memory(const Cluster& c, const std::vector<int64_t>& g);
// Sequences per micro-batch with D replicas: B / (D m).
double micro_batch(const ModelSpec& m, int64_t replicas);
// Even split of L layers over S stages, the remainder to the first stages (System B).
std::vector<int64_t> even_bounds(int64_t S, int64_t L);
// Wall time the job occupies its machines (+inf when it cannot run).
double job_time(const JobPlan& j);
std::string job_label(const std::vector<ModelSpec>& jobs, int64_t j);
// Seconds as hours for the notes ("12.34 h"; "infeasible" when not finite).
std::string hours(double s);
// Jobs in decreasing order of memory need (stable).
std::vector<int64_t> jobs_by_need(const std::vector<ModelSpec>& jobs);
JobPlan infeasible_job(const ModelSpec& m, const std::string& reason, double shortfall);
// The machines of `g` a distance from outside g to its closest machine needs to look at. On a
// regional cluster latency and send time from x to y are access(x) + access(y) + (region pair
// terms), so within a region of g the one of least access latency (ties: lower id) is as close
// as any: one machine per region. Elsewhere g itself. The minimum over them is the same number.
std::vector<int64_t> closest_per_region(const Cluster& c, const std::vector<int64_t>& g);
// Machine ids, fastest first (stable: equal throughput keeps id order).
std::vector<int64_t> fastest_first(const Cluster& c);
// A local search's outside candidates for group `g`: the `pool` machines flagged in `eligible`
// (one flag per machine; members of g are never eligible) closest to g in the time to send
// `bytes` (ties: lower id), closest first; then from each of `orders` (machine ids, e.g.
// fastest_first) its first `pool` eligible machines, those already listed counted but not
// repeated.
std::vector<int64_t> closest_then_ordered(const Cluster& c, const std::vector<int64_t>& g,
                                          const std::vector<uint8_t>& eligible, double bytes, size_t pool,
                                          const std::vector<const std::vector<int64_t>*>& orders);

}  // namespace hulk::plan::detail

// Internal helpers shared by the planner files (partition, baselines, hulk_assign, search,
// repair). Not part of the public planner API (planners.h).
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
// Wall time the job occupies its machines (+inf when it cannot run).
double job_time(const JobPlan& j);
std::string job_label(const std::vector<ModelSpec>& jobs, int64_t j);
// Jobs in decreasing order of memory need (stable).
std::vector<int64_t> jobs_by_need(const std::vector<ModelSpec>& jobs);
// Throws std::invalid_argument unless `a` has one entry per machine in [-1, jobs).
void check_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& a,
                      const char* what);
std::vector<std::vector<int64_t>> groups_of(const std::vector<int64_t>& assign, size_t n_jobs);
// Sequences per micro-batch with D replicas: B / (D m).
double micro_batch(const ModelSpec& m, int64_t replicas);
// Even split of L layers over S stages, the remainder to the first stages (System B).
std::vector<int64_t> even_bounds(int64_t S, int64_t L);
JobPlan infeasible_job(const ModelSpec& m, const std::string& reason, double shortfall);
// Re-plans a job on a new group keeping its strategy.
JobPlan replan(const Cluster& c, const JobPlan& old, const std::vector<int64_t>& group);

// Machines split into sets that can reach each other: each set is the machines reachable
// from its first one (under MissingLinkRule::Route, the cluster's connected components;
// under Forbid, those with a direct link to it). O(n x sets). In partition.cpp.
std::vector<std::vector<int64_t>> reach_groups(const Cluster& c, std::vector<int64_t> machines);
// What a reader of a plan should know about the cluster for these jobs: sets of machines
// that cannot reach each other, machines too small for every job, pairs without a direct
// link and the rule that applies to them. Empty when there is nothing to say. In detail.cpp.
std::vector<std::string> cluster_facts(const Cluster& c, const std::vector<ModelSpec>& jobs);

// ---- the layer split (split.cpp) ----------------------------------------------------------
// Largest number of layers a stage can hold in `cap` bytes at micro-batch b (0: not one).
int64_t layers_that_fit(const ModelSpec& m, double b, double cap);
// One job's D replicas of S stage positions on fixed machines, as the split sees them; the
// formula it optimises is written out at the top of split.cpp.
struct SplitProblem {
  int64_t layers = 0, micro_batches = 1;
  std::vector<std::vector<double>> c, x;  // [D][S] compute per layer, send after the stage
  std::vector<double> o;                  // [S] slowest replica's optimiser time per layer
  std::vector<double> ar_a, ar_b;         // [S] all-reduce of n layers = ar_a + ar_b n (D > 1)
  std::vector<int64_t> max_layers;        // [S] layers that fit every replica's machine
};
// `batch_replicas` > 0 sets the micro-batch as for that many replicas (default: replicas.size()).
SplitProblem split_problem(const Cluster& c, const ModelSpec& m, const std::vector<std::vector<int64_t>>& replicas,
                           const CostOptions& opts = {}, int64_t batch_replicas = 0);
// The job's iteration time for a split (pipeline_cost's iteration_s); +inf if it does not fit.
double split_objective(const SplitProblem& p, const std::vector<int64_t>& bounds);
// The split of least split_objective: exact when at most `exhaustive_limit` splits exist,
// otherwise DP + bounded search (split.cpp). Empty when no split fits.
std::vector<int64_t> optimise_split(const SplitProblem& p, double exhaustive_limit = 4096);
// The split the planner used before it optimised the whole cost: least bottleneck
// max_s (n_s c_s + x_s) (worst replica), then least sum among those. The reference that
// bottleneck_pipeline and the benchmark measure the new split against.
std::vector<int64_t> bottleneck_split(const SplitProblem& p);

// Lexicographic plan quality: fewer infeasible jobs, less shortfall, makespan, sum of times.
struct Score {
  int64_t infeasible = 0;
  double shortfall = 0;
  double makespan = 0;
  double total = 0;
};
bool operator<(const Score& a, const Score& b);
Score score_of(const Plan& p);
// Which job each job of a concurrent plan waited for (-1: none), read off start/finish.
std::vector<int64_t> infer_waits(const Plan& p);
// Plans each job with best_pipeline on its machines of the assignment, concurrently.
Plan plan_from_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& a,
                          const char* name);

}  // namespace hulk::plan::detail

// The planners. All return a Plan costed by the same cost model (cost.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "csrc/plan/plan.h"

namespace hulk::plan {

namespace detail {
class LayoutMemo;  // layout_memo.h
}

// ---- building blocks --------------------------------------------------------------------

// Orders machines into a chain that keeps consecutive stages close: start at the machine
// with the most memory, then repeatedly append the unvisited machine with the cheapest
// send_time of one micro-batch's boundary activations from the chain's end.
std::vector<int64_t> chain_order(const Cluster& c, const ModelSpec& m, std::vector<int64_t> machines);
// The same walk comparing every remaining machine at each step (O(n^2)); chain_order takes a
// shortcut on regional clusters that gives the same chain. The tests' reference.
std::vector<int64_t> chain_order_reference(const Cluster& c, const ModelSpec& m, std::vector<int64_t> machines);
// Open-path 2-opt on a stage order: reverses segments while the path's total send time of
// `bytes` falls (links are symmetric, so only the two end edges change). At most 4 passes;
// paths of fewer than 3 or more than 256 machines are left as they are.
void two_opt(const Cluster& c, std::vector<int64_t>& path, double bytes);

// Layer split of one pipeline over a fixed machine chain: minimises the pipeline's whole
// iteration time as the cost model computes it (sum_s (C_s + X_s) + (m - 1) max_s (C_s + X_s)
// plus the optimiser step) subject to every stage fitting in memory and holding at least one
// layer (split.cpp: exact on small cases, DP over that objective plus a bounded search
// otherwise). `replicas` (D) sets the micro-batch size b = B / (D m). Returns bounds (size
// chain + 1) or an empty vector when no split fits.
std::vector<int64_t> partition_layers(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& chain,
                                      int64_t replicas);

// Best pipeline plan for a job on a machine group. Machines that cannot hold one layer of
// the job (state plus the stage's activations) never get a stage; the others are ordered
// into a chain (chain_order). For D = 1..max replicas (every D up to 8, then growing by a
// quarter) and S = n / D stages (and half as many, fuller ones) it tries layouts:
// replica-major (each replica a consecutive piece of the chain; all-reduce ring in chain
// order and in zigzag order), stage-major (each stage's D replicas are consecutive chain
// machines, DT-FM's stage groups) and, for one replica, the stage order improved by 2-opt on
// send times, its reverse, or every order when S <= 4. Each layout's split minimises the
// job's whole iteration time, all-reduce included (split.cpp), and is never worse than the
// even split; the cheapest feasible configuration wins, and its stages are then tried in
// reverse order too. Machines not needed stay idle rather than make the job fail.
// (Layouts are split in order of a lower bound of their time, split_lower_bound, and those
// whose bound exceeds the best time found are not split.) Groups that differ only by
// interchangeable machines (Cluster::machine_class) get one layout, found on the classes'
// lowest ids and mapped onto the group's own machines (interchangeable.h).
JobPlan best_pipeline(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& group);
// The same plan, with the layouts' splits kept in `memo` across calls for one job on one
// cluster (layout_memo.h): the local searches' Evaluator passes one per job.
JobPlan best_pipeline(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& group, detail::LayoutMemo& memo);
// The same layouts, every one split, in the order tried: the same plan as best_pipeline (a
// layout it skips costs more than its best); the tests' reference.
JobPlan best_pipeline_reference(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& group);

// The layout the planner used before it optimised the whole cost, kept as the reference the
// benchmark and tests measure best_pipeline against: every machine of the group in
// chain_order, D = 1.. replicas as consecutive chain pieces of n / D machines, each split by
// least bottleneck max_s (C_s + X_s) (then least sum); the cheapest feasible configuration.
JobPlan bottleneck_pipeline(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& group);

// ---- the paper's baselines (jobs one after another on the whole cluster) -------------------

Plan plan_system_a(const Cluster& c, const std::vector<ModelSpec>& jobs);  // DP on machines that fit the model
Plan plan_system_b(const Cluster& c, const std::vector<ModelSpec>& jobs);  // GPipe over all machines, id order
Plan plan_system_c(const Cluster& c, const std::vector<ModelSpec>& jobs);  // Megatron TP over all machines

// ---- concurrent planners ---------------------------------------------------------------------

// A given assignment (machine -> job index, or -1 idle), e.g. the paper's Table 2, each job
// planned with best_pipeline on its machines.
Plan plan_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& assignment,
                     const char* name = "assignment");

struct SearchOptions {
  double time_limit_s = 2.0;
  uint64_t seed = 0;
  int64_t max_iterations = 0;  // > 0: also stop after this many moves (same seed -> same plan)
};
// Several starts, in this order: each job on the fewest machines that fit it (machines by
// the layers they hold; small groups, so quick at any size), System A's machines (each
// machine that holds a whole model),
// System B's contiguous blocks, System C's machines dealt round robin, one region group per
// job (heuristic_classes), Hulk's own plan, and the greedy growth; each start then hands
// idle machines to its bottleneck jobs while that helps. Then local search from the best start (move a machine to another job or idle, swap two machines) with simulated
// annealing on the makespan. The clock is checked between starts (a start begins only if the
// time left exceeds the longest start so far), inside the greedy ones and at every move: the
// search stops at time_limit_s (plus the one step under way; the first start always runs). The result is never worse than the best start: the annealing
// keeps the best assignment it saw, and Hulk's plan (which may make a job wait for another)
// is returned when it beats every concurrent assignment. Systems A/B/C's sequential plans
// are never returned as Search's: when no feasible plan is found the plan says so (notes),
// naming any sequential baseline that would run.
Plan plan_search(const Cluster& c, const std::vector<ModelSpec>& jobs, const SearchOptions& opts = {});

// Hulk's short local refinement (DESIGN section 6): the search's annealing moves started
// from the plan's own assignment, within opts' budget; returns the better of the two plans
// (planning_s includes the refinement). A plan whose jobs share machines (a job waits) or
// run one after another is returned unchanged.
Plan refine_plan(const Cluster& c, const std::vector<ModelSpec>& jobs, const Plan& p, const SearchOptions& opts);

// Hulk within a time budget (hulk/plan/planners.py plan(..., "hulk")): every step checks one
// clock, started at construction, against opts.time_limit_s. The candidate sources come first
// and share the first 60% of the budget: Search's starts (add_search_starts: plan_search's own,
// in its order but System A's start last; Hulk runs the first two, then its cheap
// classifications, then the other six; where the last job of the best start so far holds at
// least 10% of the machines they run under Search's own time rule instead, so Hulk has every
// start Search has, and so does the second where the first left no room in the share), Hulk's
// classifications
// (add_classification: the GNN's proposal, the greedy rule, the region heuristic; descend_best
// after the cheap ones), each through
// Algorithm 1 and growth (grow_bottleneck, within the job's regions) and, when its groups are
// disjoint, grown further as Search grows its starts (closest idle machines, any region), and
// Search's greedy start by send time (add_send_time_start). On clusters of 1,000 machines and
// more every start's growth stops once the makespan is final (growth.h GrowUntil: the same
// makespans as Search's starts at less than half the time; the other jobs keep fewer idle
// machines than Search would give them), except the first growth of Search's greedy start,
// which is grown twice. A step after the first runs only
// while the time left in that share exceeds the longest step so far, or the step's own expected
// time when the caller knows it and it is longer (time_for_another_step).
// finish() spends the rest refining. Where the job that finishes last holds at least 10% of the
// machines, Search's own first walk comes first, for half of the time left (from Search's best
// start, grown as Search grows it, every move uniform, the same seed: it retraces Search's walk
// as far as it gets; see
// AnytimePlanner::finish). Then the job that finishes last is regrown from its free machines
// (csrc/plan/reseed.h: a descent on its time from each of the regions of most free compute,
// for a quarter of the time left; the best group replaces its own when shorter, one from a
// descent the clock cut only when at least 2% shorter). Then the
// descent on the machines of the job that finishes last
// (csrc/plan/descent.h: take, give back or swap one machine; 2-4 at once when none of those
// helps) from the best start (and from Search's best when that differs, and from Search's start
// "Hulk" when one of Hulk's own candidates is the best start), until
// half of the time left at most (so the walk always runs), then
// Search's annealing (opts.max_iterations > 0 caps the moves, and the same seed then gives the
// same plan on any machine) from the best of them (after Search's own walk) or a walk from
// the best and one from another of them when they differ, with half of Hulk's moves drawn on the job that finishes last (take,
// give back or swap a machine); then it offers the idle machines to the job that finishes last (closest first, in batches of
// 1, 2, 4, ..., all (at most 4 x its group + 16) and one replica's worth), keeping a batch only
// if the makespan drops, and descends once more (and checks the idle machines again if the
// descent moved any). Without a move cap, while most of the reserve kept for those two steps is
// left, the focused walk goes on from their result and both run again on anything shorter (at
// 3-10 s they took a few percent of it). The notes say which source won, what
// refinement gained, why machines stay idle, and each step's wall time in the order run. The
// jobs are copied; the cluster is shared, not copied (a copy of a 5,000-machine cluster took
// 8-20 ms, a fifth of a 0.1 s budget).
class AnytimePlanner {
 public:
  AnytimePlanner(std::shared_ptr<const Cluster> c, std::vector<ModelSpec> jobs, const SearchOptions& opts);
  AnytimePlanner(Cluster c, std::vector<ModelSpec> jobs, const SearchOptions& opts)
      : AnytimePlanner(std::make_shared<const Cluster>(std::move(c)), std::move(jobs), opts) {}
  ~AnytimePlanner();
  AnytimePlanner(const AnytimePlanner&) = delete;
  AnytimePlanner& operator=(const AnytimePlanner&) = delete;
  double elapsed_s() const;
  // Runs Search (plan_search) in a second thread for the budget left, with the same seed and
  // move cap; finish() waits for it and returns the shorter of the two plans (by makespan, then
  // the jobs' total time; Hulk's on a tie), its notes saying which. Hulk's plan is then never
  // longer than Search's at the same budget, at the price of a second core for the whole budget
  // (on a machine without a spare core the two threads slow each other). The destructor joins
  // the thread if finish() never ran. Throws std::logic_error unless called once, before any step.
  void start_search_thread();
  // Whether a further source fits in the sources' share of the budget: true before any step,
  // then while elapsed + max(longest step so far, expected_s) is within the share. expected_s:
  // the caller's estimate of this step's time (0: none), for a step unlike the ones before it.
  bool time_for_another_step(double expected_s = 0) const;
  // Search's starts at positions [from, to) of Hulk's order of its eight: plan_search's order
  // (cheapest first), but System A's start last (search.cpp kHulkOrderOfSearchStarts). Throws
  // std::invalid_argument unless from <= to <= kSearchStarts.
  void add_search_starts(size_t from, size_t to);
  static constexpr size_t kSearchStarts = 8;
  // The names of Search's starts that have run, in the order they ran.
  std::vector<std::string> search_starts_tried() const;
  void add_classification(const std::string& source, const std::vector<int64_t>& classes, int grow_rounds);
  // Search's greedy start (closest free machines until the job fits, then idle machines to the
  // bottleneck jobs) with distances in send time of a job's boundary activations, not latency.
  void add_send_time_start();
  // The descent on the last job (csrc/plan/descent.h) from the best start so far, until `share`
  // of the budget has passed; the result becomes one of Hulk's starts. Run early, it makes a good
  // plan exist before the slower sources, whatever they cost. Not run on clusters of under
  // 1,000 machines where the job that finishes last in Search's best start so far holds 10% of
  // the machines or more: finish() retraces Search's walk there, and that walk gets the time.
  void descend_best(double share);
  // Counts a step's time towards the longest one (work done outside, e.g. the GNN's inference),
  // charged in the notes to the classification added next; with `nothing_from`, a step that gave
  // no classification (the GNN's proposal when it is the rule's groups), named in the notes so.
  void record_step(double seconds, const std::string& nothing_from = "");
  void skip(const std::string& source);  // named in the notes as left out for lack of time
  Plan finish();
  bool skipped_any() const;

 private:
  Plan better_of_hulk_and_search_thread(Plan hulk);
  struct State;
  std::unique_ptr<State> s_;
};

// The paper's Algorithm 1 on a classification (machine -> job index or -1): jobs in order of
// memory need take their classified machines; a group short of memory takes the closest
// machines from idle ones, then from groups with surplus; groups that cannot be made to fit
// wait for the first group that frees enough memory; then best_pipeline per job.
Plan plan_hulk(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& classes);

// A classification without a trained GNN: regions (groups of machines) are handed to jobs
// in order of memory need, largest job first, each job taking the best-connected regions
// until its memory need is met. Stated here because Hulk uses it when no model is given.
std::vector<int64_t> heuristic_classes(const Cluster& c, const std::vector<ModelSpec>& jobs);

// ---- recovery and join ---------------------------------------------------------------------

struct Repair {
  Plan plan;
  Cluster cluster;                 // the cluster after the change
  std::vector<int64_t> moved;      // machines (new indices) whose job changed, dropped-to-idle included
  double seconds = 0;              // wall time of the repair
};
// Machine `failed` leaves: its job is re-planned on its remaining machines, taking the
// closest idle machines (then surplus machines of other jobs) if memory runs short; other
// jobs keep their machines. Then, for Hulk's and Search's plans (concurrent, no job waiting)
// whose makespan grew, and with `shorten`, the descent on the job that finishes last
// (descent.h, at most 1 s) takes idle or other jobs' machines while that shortens the
// makespan; a note says so. Without it, only the hit job changes.
Repair repair_without(const Cluster& c, const Plan& p, int64_t failed, bool shorten = true);
// A new machine joins: of the jobs it speeds up, it goes to the one that leaves the shortest
// makespan, then the one whose time it shortens most (or stays idle, and nothing changes). Then,
// with `shorten`, the same descent as after a failure (Hulk's and Search's concurrent plans, at
// most 1 s) moves machines to the job that finishes last while that shortens the makespan.
Repair repair_with(const Cluster& c, const Plan& p, const Machine& m, const std::vector<Link>& links_to_new,
                   bool shorten = true);

}  // namespace hulk::plan

// Recovery after a failure and the join of a new machine.
#include "csrc/plan/job_helpers.h"
#include "csrc/plan/assignment.h"
#include "csrc/plan/descent.h"
#include "csrc/plan/evaluator.h"
#include "csrc/plan/planners.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace hulk::plan {

using namespace detail;

// ---- recovery and join --------------------------------------------------------------------------

namespace {

// Costs a job again on a changed cluster with the same machines (routes may have changed).
void recost(const Cluster& c, JobPlan& jp) {
  if (jp.strategy == Strategy::TensorParallel) {
    if (!jp.tensor_group.empty()) jp.cost = tensor_parallel_cost(c, jp.model, jp.tensor_group);
  } else if (!jp.replicas.empty()) {
    jp.cost = pipeline_cost(c, jp.model, jp.replicas);
  }
}

std::vector<int64_t> sorted_machines(const JobPlan& jp) {
  std::vector<int64_t> g = jp.machines();
  std::sort(g.begin(), g.end());
  g.erase(std::unique(g.begin(), g.end()), g.end());
  return g;
}

// Machines (new indices) whose set of jobs differs between the plans: taken, given away or
// dropped to idle. old_to_new maps an old index to its new one (-1: the machine is gone).
template <class Map>
std::vector<int64_t> changed_machines(const Plan& before, const Plan& after, int64_t new_size, Map old_to_new) {
  std::vector<std::vector<size_t>> was(static_cast<size_t>(new_size)), is(static_cast<size_t>(new_size));
  for (size_t j = 0; j < before.jobs.size(); ++j)
    for (int64_t x : sorted_machines(before.jobs[j])) {
      const int64_t y = old_to_new(x);
      if (y >= 0) was[static_cast<size_t>(y)].push_back(j);
    }
  for (size_t j = 0; j < after.jobs.size(); ++j)
    for (int64_t x : sorted_machines(after.jobs[j])) is[static_cast<size_t>(x)].push_back(j);
  std::vector<int64_t> out;
  for (int64_t y = 0; y < new_size; ++y)
    if (was[static_cast<size_t>(y)] != is[static_cast<size_t>(y)]) out.push_back(y);
  return out;
}

// The descent after a repair stops by this wall time (it usually ends sooner: no move helps).
constexpr double kRepairDescentS = 1.0;

// For Hulk's and Search's plans (concurrent jobs on disjoint groups, each laid out by
// best_pipeline, none waiting): the descent on the job that finishes last (descent.h) from the
// repaired groups, which takes idle machines or other jobs' machines, one or a few at a time,
// while that shortens the makespan. After a failure only where the repair left the makespan
// longer than the plan's before (`only_if_longer`). Why: the repair only keeps the hit job
// feasible, so a job that lost one of its two machines runs on the other alone and can finish
// last by far (24 machines of four regions, T5-11B on one 8-GPU server: 29.5 h against 17.9 h
// before the failure, 19.8 h with one of OPT-175B's machines); and a joining machine alone
// rarely shortens the job that finishes last (fresh k = 511-513: the makespan unchanged in 170
// of 182 joins). Returns the number of the descent's steps.
int64_t shorten_repaired(const Cluster& nc, const Plan& before, Plan& np, const std::vector<int64_t>& waits,
                         bool only_if_longer) {
  if (before.sequential || (before.planner != "hulk" && before.planner != "search")) return 0;
  if (std::any_of(waits.begin(), waits.end(), [](int64_t w) { return w >= 0; })) return 0;
  for (const JobPlan& jp : np.jobs)
    if (jp.strategy != Strategy::Pipeline || !jp.cost.feasible) return 0;
  if (only_if_longer && !(score_of(before).makespan < score_of(np).makespan)) return 0;
  std::vector<int64_t> assign(static_cast<size_t>(nc.size()), -1);
  std::vector<ModelSpec> jobs;
  for (size_t j = 0; j < np.jobs.size(); ++j) {
    jobs.push_back(np.jobs[j].model);
    for (int64_t x : sorted_machines(np.jobs[j])) {
      if (assign[static_cast<size_t>(x)] >= 0) return 0;  // groups overlap: not a concurrent assignment
      assign[static_cast<size_t>(x)] = static_cast<int64_t>(j);
    }
  }
  const std::vector<int64_t> start = assign;
  Evaluator ev(nc, jobs);
  const auto t0 = Clock::now();
  const Descent d = descend_last_job(nc, jobs, ev, assign, [&] { return seconds_since(t0) >= kRepairDescentS; });
  if (assign == start) return 0;
  Plan out = np;
  for (size_t j = 0; j < out.jobs.size(); ++j) {
    std::vector<int64_t> g, g0;
    for (int64_t x = 0; x < nc.size(); ++x) {
      if (assign[static_cast<size_t>(x)] == static_cast<int64_t>(j)) g.push_back(x);
      if (start[static_cast<size_t>(x)] == static_cast<int64_t>(j)) g0.push_back(x);
    }
    if (g != g0) out.jobs[j] = best_pipeline(nc, jobs[j], g);
  }
  out.schedule();
  if (!(score_of(out) < score_of(np))) return 0;
  const double from = np.makespan_s;
  np = std::move(out);
  np.notes.push_back("then " + std::to_string(d.steps) + " move(s) of the machines of the job that finished last " +
                     "shortened the makespan from " + hours(from) + " to " + hours(np.makespan_s));
  return d.steps;
}

}  // namespace

Repair repair_without(const Cluster& c, const Plan& p, int64_t failed, bool shorten) {
  const auto t0 = Clock::now();
  if (failed < 0 || failed >= c.size())
    throw std::invalid_argument("repair_without: machine " + std::to_string(failed) + " out of range [0, " +
                                std::to_string(c.size()) + ")");
  Repair r{p, c.without(failed), {}, 0};
  Plan& np = r.plan;
  const Cluster& nc = r.cluster;
  const std::vector<int64_t> waits = infer_waits(p);
  const std::string failed_label = c.label(failed);
  np.notes.push_back(failed_label + " failed");
  auto shift = [&](int64_t x) { return x > failed ? x - 1 : x; };

  // Remap every job onto the new indices; remember which ones lost a machine.
  std::vector<bool> hit(np.jobs.size(), false);
  std::vector<std::vector<int64_t>> groups(np.jobs.size());
  for (size_t j = 0; j < np.jobs.size(); ++j) {
    JobPlan& jp = np.jobs[j];
    for (int64_t x : jp.machines()) hit[j] = hit[j] || x == failed;
    for (int64_t x : sorted_machines(jp))
      if (x != failed) groups[j].push_back(shift(x));
    if (hit[j]) continue;
    for (auto& rep : jp.replicas)
      for (auto& x : rep.machines) x = shift(x);
    for (auto& x : jp.tensor_group) x = shift(x);
    recost(nc, jp);
  }
  // Jobs sharing machines (sequential plans, waiting jobs) never lend to each other.
  auto shares = [&](size_t a, size_t b) {
    if (p.sequential) return true;
    for (int64_t x : groups[a])
      if (std::binary_search(groups[b].begin(), groups[b].end(), x)) return true;
    return false;
  };
  for (size_t j = 0; j < np.jobs.size(); ++j) {
    if (!hit[j]) continue;
    std::vector<int64_t>& g = groups[j];
    JobPlan jp = replan(nc, p.jobs[j], g);
    while (!jp.cost.feasible) {
      // Idle = used by no job that can run alongside this one; then surplus of other jobs.
      int64_t pick = -1, donor = -1;
      std::pair<int, double> best{2, kInf};  // (0 idle / 1 surplus, distance to the group)
      for (int64_t x = 0; x < nc.size(); ++x) {
        if (std::binary_search(g.begin(), g.end(), x)) continue;
        std::vector<int64_t> owners;  // jobs holding x that run alongside this one
        if (!p.sequential)
          for (size_t k = 0; k < np.jobs.size(); ++k)
            if (k != j && std::binary_search(groups[k].begin(), groups[k].end(), x)) owners.push_back(static_cast<int64_t>(k));
        if (owners.size() > 1 || (owners.size() == 1 && shares(j, static_cast<size_t>(owners[0])))) continue;
        double d = g.empty() ? -capacity_bytes(nc, x) : kInf;  // empty group: most memory first
        for (int64_t y : g) d = std::min(d, nc.latency_s(x, y));
        const std::pair<int, double> key{owners.empty() ? 0 : 1, d};
        if (!(key < best)) continue;
        if (!owners.empty()) {  // surplus only: the donor must stay feasible without x
          std::vector<int64_t> rest = groups[static_cast<size_t>(owners[0])];
          rest.erase(std::find(rest.begin(), rest.end(), x));
          if (!replan(nc, np.jobs[static_cast<size_t>(owners[0])], rest).cost.feasible) continue;
        }
        best = key;
        pick = x;
        donor = owners.empty() ? -1 : owners[0];
      }
      if (pick < 0) break;
      if (donor >= 0) {
        auto& dg = groups[static_cast<size_t>(donor)];
        dg.erase(std::find(dg.begin(), dg.end(), pick));
        np.jobs[static_cast<size_t>(donor)] = replan(nc, np.jobs[static_cast<size_t>(donor)], dg);
      }
      np.notes.push_back("moved " + nc.label(pick) + " from " +
                         (donor < 0 ? std::string("idle") : "job " + std::to_string(donor)) + " to job " +
                         std::to_string(j));
      g.insert(std::upper_bound(g.begin(), g.end(), pick), pick);
      jp = replan(nc, p.jobs[j], g);
    }
    if (!jp.cost.feasible) np.notes.push_back("job " + std::to_string(j) + " cannot be repaired: " + jp.cost.reason);
    np.jobs[j] = std::move(jp);
  }
  np.schedule(waits);
  if (shorten) shorten_repaired(nc, p, np, waits, /*only_if_longer=*/true);
  r.moved = changed_machines(p, np, nc.size(), [&](int64_t x) { return x == failed ? int64_t{-1} : shift(x); });
  np.schedule(waits);
  r.seconds = seconds_since(t0);
  np.planning_s = r.seconds;
  return r;
}

Repair repair_with(const Cluster& c, const Plan& p, const Machine& m, const std::vector<Link>& links_to_new, bool shorten) {
  const auto t0 = Clock::now();
  Repair r{p, c.with_machine(m, links_to_new), {}, 0};
  Plan& np = r.plan;
  const Cluster& nc = r.cluster;
  const int64_t x = c.size();
  const std::vector<int64_t> waits = infer_waits(p);
  for (auto& jp : np.jobs) recost(nc, jp);  // the newcomer may relay traffic

  // Gain of a job from x: how much its time (iterations x iteration time) drops.
  std::vector<JobPlan> with_x(np.jobs.size());
  std::vector<double> gain(np.jobs.size(), 0);
  for (size_t j = 0; j < np.jobs.size(); ++j) {
    std::vector<int64_t> g = sorted_machines(np.jobs[j]);
    g.push_back(x);
    with_x[j] = replan(nc, np.jobs[j], g);
    const std::vector<int64_t> uses = with_x[j].machines();
    if (std::find(uses.begin(), uses.end(), x) == uses.end()) continue;  // x would not get a stage
    const double before = job_time(np.jobs[j]), after = job_time(with_x[j]);
    gain[j] = after < before ? (std::isfinite(before) ? before - after : kInf) : 0;
  }
  // Concurrent plans: of the jobs that gain, the one that leaves the shortest makespan (the
  // job that finishes last, when the newcomer speeds it up), then the one that gains most.
  // Gain alone sent the newcomer to a job that then finished a little sooner, while the job that
  // decides the makespan kept its time. Sequential plans: every job runs on the whole cluster in
  // turn, so each job that gains takes it.
  std::vector<size_t> takers;
  if (p.sequential) {
    for (size_t j = 0; j < np.jobs.size(); ++j)
      if (gain[j] > 0) takers.push_back(j);
  } else {
    size_t best = np.jobs.size();
    double best_makespan = kInf;
    for (size_t j = 0; j < np.jobs.size(); ++j) {
      if (!(gain[j] > 0)) continue;
      Plan trial = np;
      trial.jobs[j] = with_x[j];
      trial.schedule(waits);
      const double makespan = trial.makespan_s;
      if (best == np.jobs.size() || makespan < best_makespan || (makespan == best_makespan && gain[j] > gain[best])) {
        best = j;
        best_makespan = makespan;
      }
    }
    if (best < np.jobs.size()) takers.push_back(best);
  }
  const std::string label = nc.label(x);
  for (size_t j : takers) {
    np.jobs[j] = std::move(with_x[j]);
    np.notes.push_back(label + " joined job " + std::to_string(j));
  }
  if (takers.empty()) np.notes.push_back(label + " joined and stays idle (no job gets faster with it)");
  np.schedule(waits);
  if (shorten && !takers.empty()) shorten_repaired(nc, p, np, waits, /*only_if_longer=*/false);  // an idle newcomer changes nothing
  r.moved = changed_machines(p, np, nc.size(), [](int64_t old) { return old; });
  np.schedule(waits);
  r.seconds = seconds_since(t0);
  np.planning_s = r.seconds;
  return r;
}

}  // namespace hulk::plan

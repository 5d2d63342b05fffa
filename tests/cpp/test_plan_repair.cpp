// Plan repair (repair.cpp): a machine leaves, a machine joins.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "csrc/plan/job_helpers.h"
#include "csrc/plan/planners.h"
#include "tests/cpp/plan_fixtures.h"

namespace {

using namespace hulk::plan;
using namespace plan_fixtures;
using hulk::plan::detail::job_time;

TEST(PlanRepair, WithoutKeepsOtherJobsMachines) {
  // Region A: 0..3, region B: 4..6. Job 0 on {0, 1}, job 1 on {4, 5}; 2, 3, 6 idle.
  const Cluster c = two_regions({4, 4, 4, 4}, {4, 4, 4});
  const std::vector<ModelSpec> jobs{model("m", 4), model("n", 4)};
  const Plan p = plan_assignment(c, jobs, {0, 0, -1, -1, 1, 1, -1});
  ASSERT_TRUE(p.feasible());
  const Repair r = repair_without(c, p, 1);
  EXPECT_EQ(r.cluster.size(), 6);
  ASSERT_TRUE(r.plan.feasible()) << r.plan.jobs[0].cost.reason;
  EXPECT_EQ(r.plan.jobs[1].machines(), (std::vector<int64_t>{3, 4}));  // 4, 5 shifted down
  // Job 0 keeps machine 0 and takes the closest idle machine (old 2 or 3: new 1 or 2).
  const auto g0 = r.plan.jobs[0].machines();
  EXPECT_TRUE(std::find(g0.begin(), g0.end(), 0) != g0.end());
  ASSERT_EQ(r.moved.size(), 1u);
  EXPECT_TRUE(r.moved[0] == 1 || r.moved[0] == 2);
  EXPECT_TRUE(std::find(g0.begin(), g0.end(), r.moved[0]) != g0.end());
  EXPECT_GE(r.seconds, 0);
  EXPECT_DOUBLE_EQ(r.plan.jobs[1].cost.iteration_s, p.jobs[1].cost.iteration_s);
  EXPECT_THROW(repair_without(c, p, 7), std::invalid_argument);
}

TEST(PlanRepair, WithoutTakesSurplusWhenNoMachineIsIdle) {
  const Cluster c = two_regions({4, 4}, {4, 4, 4});
  const std::vector<ModelSpec> jobs{model("m", 4), model("n", 4)};
  const Plan p = plan_assignment(c, jobs, {0, 0, 1, 1, 1});
  ASSERT_TRUE(p.feasible());
  const Repair r = repair_without(c, p, 0);
  ASSERT_TRUE(r.plan.feasible());
  ASSERT_EQ(r.moved.size(), 1u);
  EXPECT_EQ(r.plan.jobs[0].machines().size(), 2u);
  EXPECT_EQ(r.plan.jobs[1].machines().size(), 2u);
  std::vector<int64_t> both = r.plan.jobs[0].machines();
  for (int64_t x : r.plan.jobs[1].machines()) EXPECT_TRUE(std::find(both.begin(), both.end(), x) == both.end());
}

TEST(PlanRepair, WithAssignsTheNewMachine) {
  const Cluster c = two_regions({8, 8}, {8});
  const std::vector<ModelSpec> jobs{model("m", 4, 1e8, 16)};
  const Plan p = plan_assignment(c, jobs, {0, -1, -1});
  ASSERT_TRUE(p.feasible());
  // A fast machine next to machine 0.
  const Machine fresh{"new", "A", 16, 400};
  const Repair r = repair_with(c, p, fresh, {{0, 3, 1, 100}, {1, 3, 1, 100}, {2, 3, 50, 1}});
  EXPECT_EQ(r.cluster.size(), 4);
  EXPECT_EQ(r.moved, (std::vector<int64_t>{3}));
  const auto g = r.plan.jobs[0].machines();
  EXPECT_TRUE(std::find(g.begin(), g.end(), 3) != g.end());
  EXPECT_LT(r.plan.jobs[0].cost.iteration_s, p.jobs[0].cost.iteration_s);
  EXPECT_LT(r.plan.makespan_s, p.makespan_s);

  // A machine nobody can reach (no links, pairs forbidden) and too small to run the job on
  // its own stays idle. (One that holds the whole job may take it alone: sets of machines
  // that cannot reach each other are planned apart.)
  const Cluster f(c.machines(), c.links(), MissingLinkRule::Forbid);
  const Plan pf = plan_assignment(f, jobs, {0, -1, -1});
  const Repair rf = repair_with(f, pf, Machine{"new", "A", 4, 400, "", 1}, {});
  EXPECT_TRUE(rf.moved.empty());
  EXPECT_EQ(rf.plan.jobs[0].machines(), pf.jobs[0].machines());
}

TEST(PlanRepair, RepairsEveryKindOfPlan) {
  // Sequential baselines, a Hulk plan with a waiting job, and search: repair never throws
  // (schedule() rejects double-booked machines), keeps the job count, and stays feasible
  // where the cluster still has room.
  const Cluster c = two_regions({8, 8, 8}, {8, 8});
  const std::vector<ModelSpec> jobs{model("x", 8), model("y", 8)};  // 12.8 GB each
  SearchOptions o;
  o.time_limit_s = 0.1;
  const Plan hulk = plan_hulk(c, jobs, heuristic_classes(c, jobs));
  for (const Plan& p : {plan_system_a(c, jobs), plan_system_b(c, jobs), plan_system_c(c, jobs), hulk,
                        plan_search(c, jobs, o)}) {
    for (int64_t failed = 0; failed < c.size(); ++failed) {
      Repair r = repair_without(c, p, failed);
      EXPECT_EQ(r.plan.jobs.size(), jobs.size());
      for (const auto& j : r.plan.jobs)
        for (int64_t x : j.machines()) EXPECT_LT(x, r.cluster.size());
      if (p.feasible() && p.planner != "System A" && p.planner != "System C") {
        EXPECT_TRUE(r.plan.feasible()) << p.planner << " without machine " << failed;
      }
      const Repair w = repair_with(c, p, Machine{"n", "B", 8, 100, "", 1}, {{0, 5, 50, 1}, {3, 5, 1, 100}});
      EXPECT_EQ(w.cluster.size(), c.size() + 1);
    }
  }
}

// Disjoint groups, each machine in range: a concurrent plan's invariant.
void expect_disjoint(const Repair& r) {
  std::set<int64_t> seen;
  for (const auto& j : r.plan.jobs)
    for (int64_t x : j.machines()) {
      EXPECT_LT(x, r.cluster.size());
      EXPECT_TRUE(seen.insert(x).second) << "machine " << x << " in two jobs";
    }
}

TEST(PlanRepair, AJobLeftOnOneMachineTakesAnotherFromTheJobThatHasMany) {
  // Region A: 0..5 (fast links), region B: 6..7. Job "wide" on 0..5, job "pair" on 6, 7. When
  // machine 7 fails, "pair" runs on 6 alone and finishes last by far; one of "wide"'s machines
  // costs "wide" little.
  const Cluster c = two_regions({16, 16, 16, 16, 16, 16}, {16, 16});
  const std::vector<ModelSpec> jobs{model("wide", 12, 5e7, 32, 40), model("pair", 12, 5e7, 32, 40)};
  Plan p = plan_assignment(c, jobs, {0, 0, 0, 0, 0, 0, 1, 1});
  ASSERT_TRUE(p.feasible());
  p.planner = "search";  // shortened only for Hulk's and Search's plans
  const Repair kept = repair_without(c, p, 7, /*shorten=*/false);
  const Repair shortened = repair_without(c, p, 7);
  ASSERT_TRUE(kept.plan.feasible());
  ASSERT_TRUE(shortened.plan.feasible());
  EXPECT_EQ(kept.plan.jobs[1].machines(), (std::vector<int64_t>{6}));
  EXPECT_GT(kept.plan.makespan_s, p.makespan_s);
  EXPECT_LT(shortened.plan.makespan_s, kept.plan.makespan_s);
  EXPECT_GT(shortened.plan.jobs[1].machines().size(), 1u);
  EXPECT_TRUE(has_note(shortened.plan, "of the machines of the job that finished last shortened the makespan"));
  EXPECT_FALSE(has_note(kept.plan, "shortened the makespan"));
  expect_disjoint(shortened);
  // moved names the machines that changed job: the ones "pair" took, and no more than changed
  std::set<int64_t> took;
  for (int64_t x : shortened.plan.jobs[1].machines())
    if (x != 6) took.insert(x);
  for (int64_t x : took) EXPECT_TRUE(std::find(shortened.moved.begin(), shortened.moved.end(), x) != shortened.moved.end()) << x;
  // Each job's cost is its own layout's.
  for (const auto& j : shortened.plan.jobs)
    EXPECT_EQ(pipeline_cost(shortened.cluster, j.model, j.replicas).iteration_s, j.cost.iteration_s);
  // A plan of another planner is left as the hit job's repair made it.
  p.planner = "assignment";
  const Repair other = repair_without(c, p, 7);
  EXPECT_EQ(other.plan.makespan_s, kept.plan.makespan_s);
  EXPECT_EQ(other.moved, kept.moved);
}

TEST(PlanRepair, ShorteningNeverLengthensAndLeavesAPlanThatDidNotGrowAlone) {
  std::mt19937_64 rng(20261129);
  const std::vector<ModelSpec> jobs = two_small_jobs();
  int shortened = 0, untouched = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const Cluster c = random_regional(rng, 8 + static_cast<int>(rng() % 14), 2 + static_cast<int>(rng() % 3), trial % 3,
                                      MissingLinkRule::Route);
    const Plan p = plan_search(c, jobs, moves(300));
    if (!p.feasible()) continue;
    for (int64_t failed = 0; failed < c.size(); ++failed) {
      const Repair kept = repair_without(c, p, failed, false), r = repair_without(c, p, failed);
      ASSERT_EQ(r.plan.feasible(), kept.plan.feasible()) << trial << " " << failed;
      expect_disjoint(r);
      if (!kept.plan.feasible()) continue;
      EXPECT_LE(r.plan.makespan_s, kept.plan.makespan_s) << trial << " " << failed;
      if (kept.plan.makespan_s <= p.makespan_s) {  // did not grow: only the hit job changed
        EXPECT_EQ(r.plan.makespan_s, kept.plan.makespan_s);
        EXPECT_EQ(r.moved, kept.moved);
        ++untouched;
      } else if (r.plan.makespan_s < kept.plan.makespan_s) {
        ++shortened;
      }
    }
  }
  EXPECT_GE(shortened, 5);
  EXPECT_GE(untouched, 5);
}

TEST(PlanRepair, ANewMachineGoesWhereItLeavesTheShortestMakespan) {
  // Reference: each job that the newcomer speeds up (it gets a stage and the job's time drops)
  // is a candidate; the repair's makespan is the least a candidate leaves (then the larger
  // gain), or the plan's own when there is none.
  std::mt19937_64 rng(20261129);
  // Large batches: compute-bound jobs, which a fast machine speeds up.
  const std::vector<ModelSpec> jobs{model("j0", 4, 5e7, 512, 50), model("j1", 6, 2e7, 1024, 80), model("j2", 3, 4e7, 512, 200)};
  int joined_last = 0, checked = 0, shortened_joins = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const Cluster c = random_linked(rng, 6 + static_cast<int>(rng() % 8));
    const Plan p = plan_search(c, jobs, moves(200, static_cast<uint64_t>(trial)));
    if (!p.feasible() || p.sequential) continue;
    const int64_t x = c.size();
    std::vector<Link> links;
    for (int64_t i = 0; i < c.size(); ++i)
      links.push_back({i, x, 0.5 + 10.0 * static_cast<double>(rng() % 100) / 100.0, 1.0 + static_cast<double>(rng() % 100) / 5.0});
    // A fast machine, close to everyone: it speeds up most jobs, so the choice between them matters.
    const Machine m{"new", "R", 8.0 + static_cast<double>(rng() % 9), 200.0 + static_cast<double>(rng() % 400), "", 1};
    const Repair r = repair_with(c, p, m, links, /*shorten=*/false);
    double want = p.makespan_s;
    int64_t last = -1;
    for (size_t j = 0; j < jobs.size(); ++j) {
      if (last < 0 || job_time(p.jobs[j]) > job_time(p.jobs[static_cast<size_t>(last)])) last = static_cast<int64_t>(j);
      std::vector<int64_t> g = p.jobs[j].machines();
      g.push_back(x);
      std::sort(g.begin(), g.end());
      const JobPlan with = best_pipeline(r.cluster, jobs[j], g);
      const std::vector<int64_t> uses = with.machines();
      if (std::find(uses.begin(), uses.end(), x) == uses.end() || !(job_time(with) < job_time(p.jobs[j]))) continue;
      Plan trial_plan = r.plan;  // the joined cluster's indices: the old ones, x new
      for (size_t k = 0; k < jobs.size(); ++k) trial_plan.jobs[k] = p.jobs[k];
      trial_plan.jobs[j] = with;
      trial_plan.schedule();
      want = std::min(want, trial_plan.makespan_s);
    }
    ++checked;
    EXPECT_DOUBLE_EQ(r.plan.makespan_s, want) << trial;
    // Shortening then never lengthens the plan, and keeps the groups disjoint.
    const Repair s = repair_with(c, p, m, links);
    EXPECT_LE(s.plan.makespan_s, r.plan.makespan_s) << trial;
    expect_disjoint(s);
    shortened_joins += s.plan.makespan_s < r.plan.makespan_s;
    const std::vector<int64_t> last_uses = r.plan.jobs[static_cast<size_t>(last)].machines();
    joined_last += std::find(last_uses.begin(), last_uses.end(), x) != last_uses.end();
  }
  EXPECT_GE(checked, 15);
  EXPECT_GE(joined_last, 3);
  EXPECT_GE(shortened_joins, 3);
}

}  // namespace

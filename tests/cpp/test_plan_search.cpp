// The search planner and Hulk's refinement (search.cpp): never worse than the simple planners
// or its starts, deterministic under an iteration budget, honest about what it returns.
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

#include "csrc/plan/planners.h"
#include "csrc/plan/rules.h"
#include "tests/cpp/plan_fixtures.h"

namespace {

using namespace hulk::plan;
using namespace plan_fixtures;

TEST(PlanSearch, NoWorseThanAnySimplePlanner) {
  std::mt19937_64 rng(2024);
  for (int trial = 0; trial < 6; ++trial) {
    const Cluster c = random_cluster(rng);
    std::vector<ModelSpec> jobs{model("j0", 4, 5e7, 16, 50), model("j1", 6, 2e7, 32, 80)};
    if (trial % 2) jobs.push_back(model("j2", 3, 1e8, 8, 30));
    SearchOptions o;
    o.time_limit_s = 0.3;
    o.seed = static_cast<uint64_t>(trial);
    const Plan s = plan_search(c, jobs, o);
    double best = kInf;
    for (const Plan& q : {plan_system_a(c, jobs), plan_system_b(c, jobs), plan_system_c(c, jobs),
                          plan_hulk(c, jobs, heuristic_classes(c, jobs))})
      best = std::min(best, q.makespan_s);
    EXPECT_LE(s.makespan_s, best * (1 + 1e-12)) << "trial " << trial;
    if (std::isfinite(best)) {
      EXPECT_TRUE(s.feasible()) << "trial " << trial;
    }
    EXPECT_GE(s.planning_s, 0);
    EXPECT_EQ(s.planner, "search");
  }
}

// Two regions of three machines joined by a poor link, and two jobs that each fit in one region.
Cluster two_regions_poor_link() {
  Net net;
  net.inter_ms = 150;
  net.inter_gbps = 0.05;
  return two_regions({8, 8, 8}, {8, 8, 8}, net);
}
std::vector<ModelSpec> two_region_jobs() { return {model("j0", 6, 1e8, 16), model("j1", 6, 1e8, 16)}; }

TEST(PlanSearch, RunsJobsConcurrentlyOneRegionEach) {
  // Each job fits in one region; the inter-region link is poor. Concurrent jobs on their own
  // regions beat running them one after another on the whole cluster.
  const Cluster c = two_regions_poor_link();
  const std::vector<ModelSpec> jobs = two_region_jobs();
  SearchOptions o;
  o.time_limit_s = 0.5;
  const Plan s = plan_search(c, jobs, o);
  ASSERT_TRUE(s.feasible());
  EXPECT_FALSE(s.sequential);
  for (const auto& j : s.jobs) {
    std::set<std::string> regions;
    for (int64_t i : j.machines()) regions.insert(c.machine(i).region);
    EXPECT_EQ(regions.size(), 1u);
  }
  EXPECT_LT(s.makespan_s, plan_system_b(c, jobs).makespan_s);
}

TEST(PlanSearch, ABudgetTooSmallStillGivesThePlanOfTheFirstStart) {
  // A start cut short by the clock used to leave every job "no machines assigned"; the first
  // start now always ends, and the note says the limit was shorter than it.
  const Cluster c = two_regions_poor_link();
  const std::vector<ModelSpec> jobs = two_region_jobs();
  SearchOptions o;
  o.time_limit_s = 1e-12;
  const Plan s = plan_search(c, jobs, o);
  ASSERT_TRUE(s.feasible());
  ASSERT_FALSE(s.notes.empty());
  EXPECT_NE(s.notes[0].find("shorter than the first start, which ran to its end"), std::string::npos) << s.notes[0];
}

TEST(PlanSearch, DeterministicForASeedWithAnIterationBudget) {
  std::mt19937_64 rng(99);
  const Cluster c = random_cluster(rng);
  const std::vector<ModelSpec> jobs{model("j0", 4, 5e7, 16), model("j1", 6, 2e7, 32)};
  SearchOptions o;
  o.time_limit_s = 60;
  o.max_iterations = 400;
  o.seed = 5;
  const Plan a = plan_search(c, jobs, o);
  const Plan b = plan_search(c, jobs, o);
  ASSERT_EQ(a.jobs.size(), b.jobs.size());
  for (size_t j = 0; j < a.jobs.size(); ++j) EXPECT_EQ(a.jobs[j].machines(), b.jobs[j].machines());
  EXPECT_EQ(a.makespan_s, b.makespan_s);
  EXPECT_EQ(a.notes, b.notes);
  ASSERT_FALSE(a.notes.empty());
  EXPECT_NE(a.notes[0].find("400 local-search moves"), std::string::npos) << a.notes[0];
}

// The same network given as a regional cluster (two regions, no access latency) and as
// explicit links: every planner must give the same plan.
TEST(PlanSearch, RegionalAndExplicitClustersPlanAlike) {
  Net net;
  net.inter_ms = 70;
  net.inter_gbps = 0.4;
  const std::vector<double> mem_a{8, 6, 10, 5}, mem_b{9, 7, 4};
  const Cluster e = two_regions(mem_a, mem_b, net);
  RegionalNetwork rn;
  rn.regions = 2;
  rn.base_latency_ms = {net.intra_ms, net.inter_ms, net.inter_ms, net.intra_ms};
  rn.base_bandwidth_gbps = {net.intra_gbps, net.inter_gbps, net.inter_gbps, net.intra_gbps};
  rn.region_link = {1, 1, 1, 1};
  for (size_t k = 0; k < mem_a.size() + mem_b.size(); ++k) {
    rn.region.push_back(k < mem_a.size() ? 0 : 1);
    rn.access_ms.push_back(0.0);
  }
  const Cluster r = Cluster::from_network(e.machines(), rn);
  const std::vector<ModelSpec> jobs{model("j0", 6, 5e7, 16), model("j1", 4, 1e8, 8)};
  SearchOptions o;
  o.time_limit_s = 60;
  o.max_iterations = 300;
  auto same = [](const Plan& a, const Plan& b) {
    ASSERT_EQ(a.jobs.size(), b.jobs.size());
    for (size_t j = 0; j < a.jobs.size(); ++j) EXPECT_EQ(a.jobs[j].machines(), b.jobs[j].machines());
    EXPECT_EQ(a.makespan_s, b.makespan_s);
  };
  same(plan_search(e, jobs, o), plan_search(r, jobs, o));
  same(plan_hulk(e, jobs, heuristic_classes(e, jobs)), plan_hulk(r, jobs, heuristic_classes(r, jobs)));
  same(plan_system_b(e, jobs), plan_system_b(r, jobs));
  same(plan_system_c(e, jobs), plan_system_c(r, jobs));
}

// Refinement never makes a plan worse, is deterministic under an iteration budget, and
// leaves plans outside its move space (sequential ones) alone.
TEST(PlanSearch, RefinementNeverWorsensAPlan) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 5; ++trial) {
    const Cluster c = random_cluster(rng);
    const std::vector<ModelSpec> jobs = two_small_jobs();
    const SearchOptions o = moves(200, static_cast<uint64_t>(trial));
    const Plan h = plan_hulk(c, jobs, heuristic_classes(c, jobs));
    const Plan r1 = refine_plan(c, jobs, h, o), r2 = refine_plan(c, jobs, h, o);
    EXPECT_LE(r1.makespan_s, h.makespan_s) << "trial " << trial;
    EXPECT_EQ(r1.makespan_s, r2.makespan_s);
    EXPECT_EQ(r1.planner, "hulk");
    EXPECT_GE(r1.planning_s, h.planning_s);
    const Plan b = plan_system_b(c, jobs);
    const Plan rb = refine_plan(c, jobs, b, o);
    EXPECT_EQ(rb.makespan_s, b.makespan_s);
    EXPECT_EQ(rb.notes, b.notes);
  }
  // A deliberately poor start (everything on one job's group, the other job idle-less) improves.
  const Cluster c = two_regions({8, 8, 8}, {8, 8, 8}, Net{1, 100, 150, 0.05});
  const std::vector<ModelSpec> jobs{model("j0", 6, 1e8, 16), model("j1", 6, 1e8, 16)};
  const Plan poor = plan_assignment(c, jobs, {0, 1, 0, 1, 0, 1}, "hulk");
  SearchOptions o;
  o.max_iterations = 2000;
  o.time_limit_s = 60;
  const Plan better = refine_plan(c, jobs, poor, o);
  EXPECT_LT(better.makespan_s, poor.makespan_s);
  EXPECT_NE(better.notes.back().find("shortened the makespan"), std::string::npos) << better.notes.back();
}

// Hulk within a budget (AnytimePlanner): with the same move cap as Search it has Search's
// starts and walk plus its own candidates, so it is never behind Search when Search's start is
// its best; it is reproducible; and it never loses a candidate it was given.
TEST(PlanSearch, AnytimeHulkIsNoWorseThanSearchOrItsCandidates) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 5; ++trial) {
    const Cluster c = random_cluster(rng);
    std::vector<ModelSpec> jobs = two_small_jobs();
    if (trial % 2) jobs.push_back(model("j2", 3, 1e8, 8, 30));
    SearchOptions o = moves(60, static_cast<uint64_t>(trial));
    auto hulk = [&] {
      AnytimePlanner a(c, jobs, o);
      a.add_search_starts(0, 2);
      a.add_classification("the greedy rule's groups", greedy_classes(c, jobs), 8);
      a.descend_best(0.3);  // as plan(..., "hulk") does after its cheap sources
      a.add_classification("the region heuristic's groups", heuristic_classes(c, jobs), 8);
      a.add_search_starts(2, AnytimePlanner::kSearchStarts);
      return a.finish();
    };
    const Plan h1 = hulk(), h2 = hulk();
    EXPECT_EQ(h1.makespan_s, h2.makespan_s) << "trial " << trial;
    EXPECT_EQ(h1.planner, "hulk");
    const Plan s = plan_search(c, jobs, o);
    EXPECT_LE(h1.makespan_s, s.makespan_s * (1 + 1e-12)) << "trial " << trial;
    for (const auto& cl : {greedy_classes(c, jobs), heuristic_classes(c, jobs)})
      EXPECT_LE(h1.makespan_s, grow_bottleneck(c, jobs, cl, 8).plan.makespan_s * (1 + 1e-12)) << "trial " << trial;
    ASSERT_GE(h1.notes.size(), 2u);
    EXPECT_EQ(h1.notes[0].rfind("hulk: best candidate before refinement: ", 0), 0u) << h1.notes[0];
  }
  EXPECT_THROW(AnytimePlanner(random_cluster(rng), two_small_jobs(), SearchOptions{0.0, 0, 0}), std::invalid_argument);
}

// Hulk runs Search's starts in Search's order but System A's last (never Search's best start in
// the benchmarks' plans, and a third of a 0.1 s budget on 20,000 machines); a range outside the
// eight starts is refused.
TEST(PlanSearch, AnytimeHulkRunsSystemAsStartLast) {
  std::mt19937_64 rng(13);
  const Cluster c = random_cluster(rng);
  const std::vector<ModelSpec> jobs = two_small_jobs();
  AnytimePlanner a(c, jobs, moves(10, 1));
  a.add_search_starts(0, 2);
  a.add_search_starts(2, AnytimePlanner::kSearchStarts);
  const std::vector<std::string> expected = {"each job on the fewest machines", "fastest machines in one region",
                                             "System B's blocks", "System C's machines dealt round robin",
                                             "per region", "Hulk", "greedy", "System A's machines"};
  EXPECT_EQ(a.search_starts_tried(), expected);
  EXPECT_THROW(a.add_search_starts(3, 2), std::invalid_argument);
  EXPECT_THROW(a.add_search_starts(0, AnytimePlanner::kSearchStarts + 1), std::invalid_argument);
}

// The planner shares the cluster it is given (no copy): it keeps it alive after the caller lets
// go, and plans as it does from its own copy.
TEST(PlanSearch, AnytimeHulkSharesItsClusterAndKeepsItAlive) {
  std::mt19937_64 rng(12);
  const Cluster c = random_cluster(rng);
  const std::vector<ModelSpec> jobs = two_small_jobs();
  const SearchOptions o = moves(40, 3);
  auto run = [&](AnytimePlanner& a) {
    a.add_search_starts(0, AnytimePlanner::kSearchStarts);
    return a.finish();
  };
  AnytimePlanner copied(c, jobs, o);
  auto shared = std::make_shared<const Cluster>(c);
  AnytimePlanner sharing(shared, jobs, o);
  shared.reset();
  EXPECT_EQ(run(sharing).makespan_s, run(copied).makespan_s);
  EXPECT_THROW(AnytimePlanner(std::shared_ptr<const Cluster>{}, jobs, o), std::invalid_argument);
}

TEST(PlanSearch, AssignmentIsValidated) {
  const Cluster c = two_regions({8}, {8});
  EXPECT_THROW(plan_assignment(c, {model("m", 4)}, {0}), std::invalid_argument);
  EXPECT_THROW(plan_assignment(c, {model("m", 4)}, {0, 1}), std::invalid_argument);
  const Plan p = plan_assignment(c, {model("m", 4)}, {0, -1}, "table2");
  EXPECT_EQ(p.planner, "table2");
  EXPECT_EQ(p.jobs[0].machines(), (std::vector<int64_t>{0}));
}

TEST(PlanSearch, ReportsAJobThatFitsNowhere) {
  const Cluster c = two_regions({4, 4}, {4});
  const std::vector<ModelSpec> jobs{model("ok", 2), model("huge", 20)};  // 32 GB > 12 GB
  SearchOptions o;
  o.time_limit_s = 0.1;
  const Plan s = plan_search(c, jobs, o);
  EXPECT_FALSE(s.feasible());
  EXPECT_TRUE(s.jobs[0].cost.feasible);  // the job that fits still gets machines
  EXPECT_FALSE(s.jobs[1].cost.feasible);
  EXPECT_FALSE(s.jobs[1].cost.reason.empty());
  const Plan none = plan_search(c, {}, o);
  EXPECT_TRUE(none.jobs.empty());
  EXPECT_EQ(none.makespan_s, 0);
}

// Only System C can run the job (no machine holds one layer, but 1/8 tensor-parallel shares
// fit): Search says it found no feasible plan and names System C's, instead of returning
// System C's plan as its own.
TEST(PlanSearch, NeverPresentsSystemCAsItsOwn) {
  const Cluster c = two_regions({1.2, 1.2, 1.2, 1.2}, {1.2, 1.2, 1.2, 1.2});
  const std::vector<ModelSpec> jobs{model("m", 4, 1e8, 8)};
  ASSERT_TRUE(plan_system_c(c, jobs).feasible());
  SearchOptions o;
  o.time_limit_s = 0.2;
  const Plan s = plan_search(c, jobs, o);
  EXPECT_FALSE(s.feasible());
  EXPECT_EQ(s.planner, "search");
  EXPECT_FALSE(s.sequential);
  EXPECT_EQ(s.jobs[0].strategy, Strategy::Pipeline);
  EXPECT_TRUE(has_note(s, "search: no feasible plan found; feasible sequential plans: System C")) << s.notes.back();
}

// Search is never worse than its best start, even with one move: Hulk's plan is a start.
TEST(PlanSearch, NeverWorseThanItsStarts) {
  std::mt19937_64 rng(31);
  for (int trial = 0; trial < 5; ++trial) {
    const Cluster c = random_cluster(rng);
    const std::vector<ModelSpec> jobs = two_small_jobs();
    const Plan s = plan_search(c, jobs, moves(1));
    const Plan h = plan_hulk(c, jobs, heuristic_classes(c, jobs));
    EXPECT_LE(s.makespan_s, h.makespan_s * (1 + 1e-12)) << "trial " << trial;
    EXPECT_NE(s.notes[0].find("the best of 8 starts"), std::string::npos) << s.notes[0];
  }
}

}  // namespace

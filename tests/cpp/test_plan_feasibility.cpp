// Feasibility across planners: each machine's memory respected, machines that help taken,
// disconnected groups named.
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
#include "tests/cpp/plan_fixtures.h"

namespace {

using namespace hulk::plan;
using namespace plan_fixtures;

// 20 machines of 1 GB (none holds one 1.6 GB layer) in region A, 3 of 8 GB in region B: the
// job fits only on the big machines. Hulk (whose region heuristic picks A, the region with
// the most memory) and Search find the feasible plan, and no small machine gets a stage.
TEST(PlanFeasibility, TinyAndHugeMachinesHulkAndSearchFindThePlan) {
  const Cluster c = two_regions(std::vector<double>(20, 1.0), {8, 8, 8});
  const std::vector<ModelSpec> jobs{model("big", 8, 1e8, 16)};
  SearchOptions o;
  o.time_limit_s = 0.5;
  for (const Plan& p : {plan_hulk(c, jobs, heuristic_classes(c, jobs)), plan_search(c, jobs, o)}) {
    ASSERT_TRUE(p.feasible()) << p.planner << ": " << p.jobs[0].cost.reason;
    for (int64_t x : p.jobs[0].machines()) EXPECT_GE(x, 20) << p.planner << " gave a 1 GB machine a stage";
    EXPECT_TRUE(has_note(p, "20 machines cannot hold one layer of any job")) << p.planner;
  }
  // best_pipeline on the whole cluster leaves the small machines idle instead of failing.
  std::vector<int64_t> all(23);
  for (int64_t i = 0; i < 23; ++i) all[static_cast<size_t>(i)] = i;
  const JobPlan jp = best_pipeline(c, jobs[0], all);
  ASSERT_TRUE(jp.cost.feasible) << jp.cost.reason;
  for (int64_t x : jp.machines()) EXPECT_GE(x, 20);
}

// Algorithm 1's short-of-memory step takes machines that help, most useful first: the job is
// classified onto two 1 GB machines of region A; region A's other idle machines are closer
// but cannot hold a layer, so it takes region B's 8 GB machine.
TEST(PlanFeasibility, ShortOfMemoryTakesUsefulMachines) {
  const Cluster c = two_regions({1, 1, 1, 1}, {8, 2});
  const Plan p = plan_hulk(c, {model("m", 4)}, {0, 0, -1, -1, -1, -1});
  ASSERT_TRUE(p.feasible()) << p.jobs[0].cost.reason;
  EXPECT_EQ(p.jobs[0].machines(), (std::vector<int64_t>{4}));
  EXPECT_TRUE(has_note(p, "moved machine 4")) << p.notes[0];
  for (const auto& n : p.notes) EXPECT_EQ(n.find("moved machine 2"), std::string::npos) << n;
}

// Mixes of tiny and huge machines, random: whenever the job alone fits on the machines big
// enough for it (best_pipeline on them is feasible), Hulk and Search return a feasible plan,
// and no machine that cannot hold a layer is in a feasible job's pipeline.
TEST(PlanFeasibility, FeasibleWheneverTheBigMachinesFit) {
  std::mt19937_64 rng(5);
  int feasible_cases = 0;
  for (int trial = 0; trial < 12; ++trial) {
    std::uniform_int_distribution<int> tiny_n(3, 12), huge_n(1, 4);
    std::uniform_real_distribution<double> huge_mem(4.0, 14.0);
    std::vector<double> a(static_cast<size_t>(tiny_n(rng)), 1.0), b;
    for (int k = huge_n(rng); k > 0; --k) b.push_back(huge_mem(rng));
    if (trial % 2) std::swap(a, b);  // the big machines in either region
    const Cluster c = two_regions(a, b);
    std::vector<ModelSpec> jobs{model("j0", 6, 1e8, 16)};
    if (trial % 3 == 0) jobs.push_back(model("j1", 2, 1e8, 16));
    std::vector<int64_t> big;
    for (int64_t i = 0; i < c.size(); ++i)
      if (c.machine(i).memory_gb > 1.5) big.push_back(i);
    bool alone = true;  // every job fits alone on the big machines
    for (const auto& m : jobs) alone = alone && best_pipeline(c, m, big).cost.feasible;
    SearchOptions o;
    o.time_limit_s = 0.3;
    o.seed = static_cast<uint64_t>(trial);
    for (const Plan& p : {plan_hulk(c, jobs, heuristic_classes(c, jobs)), plan_search(c, jobs, o)}) {
      if (alone) {
        EXPECT_TRUE(p.feasible()) << p.planner << " trial " << trial;
      }
      for (const auto& j : p.jobs) {
        if (!j.cost.feasible) continue;
        for (int64_t x : j.machines()) EXPECT_GT(c.machine(x).memory_gb, 1.5) << p.planner << " trial " << trial;
      }
    }
    feasible_cases += alone;
  }
  EXPECT_GE(feasible_cases, 6);
}

// Two regions with no link between them (missing links routed: no path joins them). The
// small job runs inside one region; the big one fits neither region: it is reported
// infeasible without machines, naming the disconnected sets and the rule that applied.
TEST(PlanFeasibility, DisconnectedGroupsAreNamedAndInfeasibleJobsListNoMachines) {
  std::vector<Machine> ms;
  for (int k = 0; k < 3; ++k) ms.push_back({"a" + std::to_string(k), "A", 4, 100, "", 1});
  for (int k = 0; k < 3; ++k) ms.push_back({"b" + std::to_string(k), "B", 4, 100, "", 1});
  std::vector<Link> links;
  for (int64_t i = 0; i < 6; ++i)
    for (int64_t j = i + 1; j < 6; ++j)
      if ((i < 3) == (j < 3)) links.push_back({i, j, 1, 100});
  const Cluster c(ms, links, MissingLinkRule::Route);
  const std::vector<ModelSpec> jobs{model("huge", 10), model("small", 4)};  // 16 GB > 12 GB per region
  SearchOptions o;
  o.time_limit_s = 0.3;
  for (const Plan& p : {plan_hulk(c, jobs, heuristic_classes(c, jobs)), plan_search(c, jobs, o)}) {
    EXPECT_TRUE(has_note(p, "2 sets of machines cannot reach each other (no path joins them)")) << p.planner;
    EXPECT_TRUE(has_note(p, "relayed along the lowest-latency path")) << p.planner;
    ASSERT_EQ(p.jobs.size(), 2u);
    EXPECT_FALSE(p.jobs[0].cost.feasible);
    ASSERT_TRUE(p.jobs[1].cost.feasible) << p.planner << ": " << p.jobs[1].cost.reason;
    std::set<std::string> regions;
    for (int64_t x : p.jobs[1].machines()) regions.insert(c.machine(x).region);
    EXPECT_EQ(regions.size(), 1u);
    // An infeasible job never lists machines that other jobs use.
    const auto used = as_set(p.jobs[1].machines());
    for (int64_t x : p.jobs[0].machines()) EXPECT_EQ(used.count(x), 0u) << p.planner;
  }
  const Plan h = plan_hulk(c, jobs, heuristic_classes(c, jobs));
  EXPECT_TRUE(h.jobs[0].machines().empty());
  EXPECT_NE(h.jobs[0].cost.reason.find("cannot reach each other"), std::string::npos) << h.jobs[0].cost.reason;
  EXPECT_NE(h.jobs[0].cost.reason.find("missing links are routed"), std::string::npos) << h.jobs[0].cost.reason;
  EXPECT_EQ(h.jobs[0].cost.reason.find("Forbid"), std::string::npos) << h.jobs[0].cost.reason;
}

}  // namespace

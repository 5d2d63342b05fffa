// The paper's Systems A, B and C (baselines.cpp) on small hand-made clusters.
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

TEST(PlanSystem, AInfeasibleWhenNoMachineFitsTheWholeModel) {
  const Cluster c = two_regions({4, 4}, {4});
  const Plan p = plan_system_a(c, {model("m", 4)});  // 6.4 GB of state
  ASSERT_EQ(p.jobs.size(), 1u);
  EXPECT_FALSE(p.feasible());
  EXPECT_FALSE(p.jobs[0].cost.feasible);
  EXPECT_NE(p.jobs[0].cost.reason.find("System A"), std::string::npos) << p.jobs[0].cost.reason;
  EXPECT_GT(p.jobs[0].cost.memory_shortfall_bytes, 2e9);
  EXPECT_EQ(p.makespan_s, kInf);
  EXPECT_TRUE(p.sequential);
}

TEST(PlanSystem, AUsesExactlyTheMachinesThatFit) {
  const Cluster c = two_regions({8, 4}, {8, 4});
  const Plan p = plan_system_a(c, {model("m", 4), model("n", 2)});
  ASSERT_TRUE(p.feasible());
  EXPECT_EQ(p.jobs[0].machines(), (std::vector<int64_t>{0, 2}));  // 6.4 GB fits 8 GB only
  EXPECT_EQ(p.jobs[1].machines(), (std::vector<int64_t>{0, 1, 2, 3}));  // 3.2 GB fits all
  for (const auto& r : p.jobs[0].replicas) EXPECT_EQ(r.bounds, (std::vector<int64_t>{0, 4}));
  // Back to back.
  EXPECT_DOUBLE_EQ(p.jobs[1].start_s, p.jobs[0].finish_s);
  EXPECT_DOUBLE_EQ(p.makespan_s, p.jobs[1].finish_s);
}

TEST(PlanSystem, BInfeasibleWhenAStageDoesNotFit) {
  const Cluster c = two_regions({1, 1}, {1, 1});
  const Plan p = plan_system_b(c, {model("m", 4)});
  EXPECT_FALSE(p.feasible());
  ASSERT_EQ(p.jobs[0].replicas.size(), 1u);  // reported, not hidden
  EXPECT_GT(p.jobs[0].cost.memory_shortfall_bytes, 0);
  EXPECT_NE(p.jobs[0].cost.reason.find("System B"), std::string::npos);
  EXPECT_EQ(p.makespan_s, kInf);
}

TEST(PlanSystem, BIdOrderEvenSplitFirstLMachines) {
  const Cluster c = two_regions({8, 8, 8}, {8, 8, 8});
  const Plan p = plan_system_b(c, {model("m", 4), model("n", 7)});
  ASSERT_TRUE(p.feasible()) << p.jobs[0].cost.reason << p.jobs[1].cost.reason;
  EXPECT_EQ(p.jobs[0].replicas[0].machines, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_EQ(p.jobs[0].replicas[0].bounds, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(p.jobs[1].replicas[0].machines, (std::vector<int64_t>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(p.jobs[1].replicas[0].bounds, (std::vector<int64_t>{0, 2, 3, 4, 5, 6, 7}));
}

TEST(PlanSystem, CIsTensorParallelOverAllMachines) {
  const Cluster c = two_regions({8, 4}, {8});
  const ModelSpec m = model("m", 4);
  const Plan p = plan_system_c(c, {m});
  const JobCost want = tensor_parallel_cost(c, m, {0, 1, 2});
  ASSERT_EQ(p.jobs[0].strategy, Strategy::TensorParallel);
  EXPECT_EQ(p.jobs[0].tensor_group, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_EQ(p.jobs[0].cost.feasible, want.feasible);
  EXPECT_DOUBLE_EQ(p.jobs[0].cost.iteration_s, want.iteration_s);
  EXPECT_DOUBLE_EQ(p.jobs[0].cost.compute_s, want.compute_s);
  EXPECT_DOUBLE_EQ(p.makespan_s, 100 * want.iteration_s);
}

}  // namespace

// Hulk (hulk_assign.cpp): the paper's Algorithm 1 (moves and waits) and the region heuristic.
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

TEST(PlanHulk, ShortGroupTakesClosestIdleMachine) {
  // Job 0 needs 6.4 GB but is classified onto one 4 GB machine in region A; the idle
  // machines are 1 (region A) and 3 (region B): it must take machine 1.
  const Cluster c = two_regions({4, 4}, {4, 4});
  const Plan p = plan_hulk(c, {model("m", 4)}, {0, -1, -1, -1});
  ASSERT_TRUE(p.feasible()) << p.jobs[0].cost.reason;
  EXPECT_EQ(p.jobs[0].machines(), (std::vector<int64_t>{0, 1}));
  ASSERT_FALSE(p.notes.empty());
  EXPECT_NE(p.notes[0].find("moved machine 1"), std::string::npos) << p.notes[0];
}

TEST(PlanHulk, ShortGroupTakesSurplusOfAnotherGroup) {
  // No idle machines; job 1 (3.2 GB) holds three 4 GB machines, one of which it can spare.
  const Cluster c = two_regions({4, 4}, {4, 4});
  const std::vector<ModelSpec> jobs{model("big", 4), model("small", 2)};
  const Plan p = plan_hulk(c, jobs, {0, 1, 1, 1});
  ASSERT_TRUE(p.feasible());
  EXPECT_EQ(p.jobs[0].machines(), (std::vector<int64_t>{0, 1}));  // machine 1 is closest to 0
  bool moved = false;
  for (const auto& n : p.notes) moved = moved || n.find("from job 1 (small) to job 0 (big)") != std::string::npos;
  EXPECT_TRUE(moved);
  EXPECT_DOUBLE_EQ(p.jobs[0].start_s, 0);
  EXPECT_DOUBLE_EQ(p.jobs[1].start_s, 0);
}

TEST(PlanHulk, JobWaitsWhenNothingFits) {
  // 16 GB in all; two jobs of 9.6 GB cannot run at once: the second waits for the first.
  const Cluster c = two_regions({4, 4}, {4, 4});
  const std::vector<ModelSpec> jobs{model("x", 6), model("y", 6)};
  const Plan p = plan_hulk(c, jobs, heuristic_classes(c, jobs));
  ASSERT_TRUE(p.feasible()) << p.jobs[0].cost.reason << " / " << p.jobs[1].cost.reason;
  bool waited = false;
  for (const auto& n : p.notes) waited = waited || n.find("waits for") != std::string::npos;
  EXPECT_TRUE(waited);
  const JobPlan& first = p.jobs[0].start_s == 0 ? p.jobs[0] : p.jobs[1];
  const JobPlan& second = p.jobs[0].start_s == 0 ? p.jobs[1] : p.jobs[0];
  EXPECT_DOUBLE_EQ(second.start_s, first.finish_s);
  EXPECT_GT(second.start_s, 0);
  EXPECT_DOUBLE_EQ(p.makespan_s, second.finish_s);
}

TEST(PlanHulk, HeuristicClassesHandsWholeRegionsLargestJobFirst) {
  const Cluster c = two_regions({8, 8}, {6, 6, 6});
  const std::vector<ModelSpec> jobs{model("small", 2), model("big", 6)};
  const auto cls = heuristic_classes(c, jobs);
  ASSERT_EQ(cls.size(), 5u);
  EXPECT_EQ(cls[0], cls[1]);
  EXPECT_EQ(cls[2], cls[3]);
  EXPECT_EQ(cls[3], cls[4]);
  // The big job (9.6 GB) picks first: the region with the most memory (B, 18 GB).
  EXPECT_EQ(cls[2], 1);
  EXPECT_EQ(cls[0], 0);
  EXPECT_THROW(plan_hulk(c, jobs, {0, 0}), std::invalid_argument);
  EXPECT_THROW(plan_hulk(c, jobs, {0, 0, 0, 0, 2}), std::invalid_argument);
}

}  // namespace

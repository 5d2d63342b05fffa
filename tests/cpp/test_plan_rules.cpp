// The simple rules (rules.h): the greedy classification and the bottleneck growth, on
// clusters small enough to work out the expected groups by hand.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "csrc/plan/rules.h"
#include "tests/cpp/plan_fixtures.h"

namespace {

using namespace hulk::plan;
using namespace plan_fixtures;
using V = std::vector<int64_t>;

// Memory needs of model(name, L): 1.6 GB per layer of state plus 8 x 64 x L x 1e4 bytes of
// activations, i.e. 1 layer 1.61 GB, 2 layers 3.21 GB, 4 layers 6.42 GB.

TEST(PlanRules, GreedyTakesTheRegionWithTheMostThroughput) {
  // A: 2 + 2 GB at 100 + 90 TFLOPS covers 3.21 GB with 190; B: 4 GB at 80 alone.
  const Cluster c = two_regions({2, 2}, {4}, {}, {100, 90, 80});
  EXPECT_EQ(greedy_classes(c, {model("m", 2)}), (V{0, 0, -1}));
}

TEST(PlanRules, GreedyLargestJobFirstEachOnTheFewestFastestMachines) {
  // J0 (6.42 GB) takes A's 4 + 4 GB (200 TFLOPS) over B's 2 + 8 GB (90); J1 (1.61 GB) then
  // takes only B's fastest machine, b0 (2 GB is enough), and b1 stays idle.
  const Cluster c = two_regions({4, 4}, {2, 8}, {}, {100, 100, 50, 40});
  EXPECT_EQ(greedy_classes(c, {model("small", 1), model("big", 4)}), (V{1, 1, 0, -1}));
}

TEST(PlanRules, GreedyTiesGoToFewerMachinesThenTheLowestId) {
  // 200 TFLOPS either way: A needs two machines, B one.
  EXPECT_EQ(greedy_classes(two_regions({4, 4}, {8}, {}, {100, 100, 200}), {model("m", 4)}), (V{-1, -1, 0}));
  // One machine each at the same speed: A has the lower id.
  EXPECT_EQ(greedy_classes(two_regions({8}, {8}), {model("m", 4)}), (V{0, -1}));
}

TEST(PlanRules, GreedyAcrossRegionsWhenNoneHoldsTheJobAndNothingForAJobThatFitsNowhere) {
  // 6.42 GB: A has 4 GB, B 1 + 4 GB; fastest anywhere: b0 (200), a0 (100), b1 (50) = 9 GB.
  // The 100-layer job (160 GB) goes first and takes nothing.
  const Cluster c = two_regions({4}, {1, 4}, {}, {100, 200, 50});
  EXPECT_EQ(greedy_classes(c, {model("m", 4), model("huge", 100)}), (V{0, 0, 0}));
}

// One fast region of identical machines where data-parallel replicas pay: a large batch makes
// compute (seconds) dwarf the all-reduce (tens of ms at 100 Gbps).
Cluster growth_cluster() { return two_regions({8, 8, 8, 8}, {8}); }
ModelSpec growth_model() { return model("m", 1, 1e8, 4096); }

TEST(PlanRules, GrowthAddsTheRegionsIdleMachinesWhileThatHelps) {
  const Cluster c = growth_cluster();
  const std::vector<ModelSpec> jobs{growth_model()};
  const Growth g = grow_bottleneck(c, jobs, {0, -1, -1, -1, -1}, 8);
  EXPECT_EQ(g.start_makespan_s, plan_hulk(c, jobs, {0, -1, -1, -1, -1}).makespan_s);
  // Round 1: 3 candidates, steps 1 and 2 fit, 2 is better; round 2: the last one. B's
  // machine is in another region and never a candidate.
  EXPECT_EQ(g.classes, (V{0, 0, 0, 0, -1}));
  EXPECT_LT(g.plan.makespan_s, g.start_makespan_s);
  EXPECT_EQ(g.plan.makespan_s, plan_hulk(c, jobs, g.classes).makespan_s);
}

TEST(PlanRules, GrowthRoundsAndStepsBoundIt) {
  const Cluster c = growth_cluster();
  const std::vector<ModelSpec> jobs{growth_model()};
  const Growth none = grow_bottleneck(c, jobs, {0, -1, -1, -1, -1}, 0);
  EXPECT_EQ(none.classes, (V{0, -1, -1, -1, -1}));
  EXPECT_EQ(none.plan.makespan_s, none.start_makespan_s);
  EXPECT_EQ(grow_bottleneck(c, jobs, {0, -1, -1, -1, -1}, 1, {1}).classes, (V{0, 0, -1, -1, -1}));
  EXPECT_EQ(grow_bottleneck(c, jobs, {0, -1, -1, -1, -1}, 1, {4}).classes, (V{0, -1, -1, -1, -1}));  // 4 > 3 idle
}

TEST(PlanRules, GrowthStopsWhenNothingCanHelp) {
  const Cluster c = growth_cluster();
  const std::vector<ModelSpec> jobs{growth_model()};
  // No idle machine in the job's region; a job without machines; no machine idle at all.
  for (const V& classes : {V{0, 0, 0, 0, -1}, V{-1, -1, -1, -1, -1}, V{0, 0, 0, 0, 0}}) {
    const Growth g = grow_bottleneck(c, jobs, classes, 8);
    EXPECT_EQ(g.classes, classes);
    EXPECT_EQ(g.plan.makespan_s, g.start_makespan_s);
  }
  // Idle machines too small for a layer of the job do not shorten it: nothing changes.
  const Cluster tiny = two_regions({8, 0.5, 0.5}, {8});
  const Growth g = grow_bottleneck(tiny, jobs, {0, -1, -1, -1}, 8);
  EXPECT_EQ(g.classes, (V{0, -1, -1, -1}));
}

TEST(PlanRules, GrowthNeverLengthensAPlan) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> mem(1.0, 12.0), fl(20.0, 200.0);
  std::uniform_int_distribution<int> n_dist(3, 9), cls(-1, 1);
  for (int trial = 0; trial < 20; ++trial) {
    const int n = n_dist(rng);
    std::vector<double> a, b, t;
    for (int k = 0; k < n; ++k) {
      (k % 2 ? b : a).push_back(mem(rng));
      t.push_back(fl(rng));
    }
    const Cluster c = two_regions(a, b, {}, t);
    const std::vector<ModelSpec> jobs{model("x", 2, 1e8, 512), model("y", 3, 1e8, 256)};
    V classes(static_cast<size_t>(c.size()));
    for (auto& x : classes) x = cls(rng);
    const Growth g = grow_bottleneck(c, jobs, classes, 8);
    EXPECT_EQ(g.start_makespan_s, plan_hulk(c, jobs, classes).makespan_s);
    if (std::isfinite(g.start_makespan_s)) {
      EXPECT_LE(g.plan.makespan_s, g.start_makespan_s) << "trial " << trial;
    }
    for (size_t x = 0; x < classes.size(); ++x) {  // growth only hands out idle machines
      if (classes[x] >= 0) {
        EXPECT_EQ(g.classes[x], classes[x]);
      }
    }
  }
}

TEST(PlanRules, GrowthArgumentsAreValidated) {
  const Cluster c = growth_cluster();
  const std::vector<ModelSpec> jobs{growth_model()};
  const V ok{0, -1, -1, -1, -1};
  const auto message = [&](const V& classes, int rounds, const V& steps) {
    try {
      grow_bottleneck(c, jobs, classes, rounds, steps);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  EXPECT_NE(message(ok, -1, {1}).find("rounds must be >= 0, got -1"), std::string::npos);
  EXPECT_NE(message(ok, 1, {0}).find("steps[0] = 0"), std::string::npos);
  EXPECT_NE(message(ok, 1, {2, 2}).find("steps must be increasing"), std::string::npos);
  EXPECT_NE(message({0, -1}, 1, {1}).find("classes: has 2 entries"), std::string::npos);
  EXPECT_NE(message({0, 1, -1, -1, -1}, 1, {1}).find("classes[1] = 1"), std::string::npos);
}

}  // namespace

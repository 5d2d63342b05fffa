// The planners' Evaluator (evaluator.h) against best_pipeline, its reference: a job's time,
// feasibility and the machines of its group that the layout leaves without a stage (the idle
// check counts those as idle in its note).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "csrc/plan/evaluator.h"
#include "tests/cpp/plan_fixtures.h"

namespace {

using namespace hulk::plan;
using namespace hulk::plan::detail;
using namespace plan_fixtures;

TEST(PlanEvaluator, AJobsEvaluationIsItsBestPipelinesAndCountsTheMachinesWithoutAStage) {
  std::mt19937_64 rng(20261127);
  int stageless = 0, infeasible = 0;  // trials of each kind, so that neither case is vacuous
  for (int trial = 0; trial < 80; ++trial) {
    const int n = 8 + static_cast<int>(rng() % 60);
    const Cluster c = trial % 2 ? random_linked(rng, n)
                                : random_regional(rng, n, 1 + static_cast<int>(rng() % 6), 2, MissingLinkRule::Route);
    // a large job where few machines cannot hold it, a small one that leaves machines unused
    const std::vector<ModelSpec> jobs{model("big", 24, 4e8, 32, 50), model("small", 2, 1e7, 8, 30)};
    Evaluator ev(c, jobs);
    for (size_t j = 0; j < jobs.size(); ++j) {
      std::vector<int64_t> g;
      for (int64_t x = 0; x < c.size(); ++x)
        if (rng() % 3 == 0) g.push_back(x);
      if (g.empty()) g.push_back(0);
      const JobPlan jp = best_pipeline(c, jobs[j], g);
      const Evaluator::JobEval e = ev.job(j, g);
      ASSERT_EQ(e.feasible, jp.cost.feasible) << trial << " " << j;
      if (!jp.cost.feasible) {
        ++infeasible;
        EXPECT_EQ(e.stageless, 0);
        EXPECT_GT(e.shortfall, 0);
        continue;
      }
      EXPECT_DOUBLE_EQ(e.time, job_time(jp));
      EXPECT_EQ(e.stageless, static_cast<int64_t>(g.size() - jp.machines().size())) << trial << " " << j;
      stageless += e.stageless > 0;
      const Evaluator::JobEval again = ev.job(j, g);  // from the cache: the same
      EXPECT_EQ(again.stageless, e.stageless);
      EXPECT_EQ(again.time, e.time);
    }
  }
  EXPECT_GE(stageless, 5);
  EXPECT_GE(infeasible, 5);
}

}  // namespace

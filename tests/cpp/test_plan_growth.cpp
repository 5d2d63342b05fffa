// Growth (growth.cpp): stopped once the makespan is final, it gives the makespan of the full
// growth, a part of its machines, and the full growth when resumed (AnytimePlanner::finish
// relies on that to walk Search's start as Search grows it).
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "csrc/plan/growth.h"
#include "tests/cpp/plan_fixtures.h"

namespace {

using namespace hulk::plan;
using namespace hulk::plan::detail;
using namespace plan_fixtures;

// Each machine on a random job with probability `taken`, else idle.
std::vector<int64_t> random_start(std::mt19937_64& rng, int64_t n, size_t jobs, double taken) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<int64_t> a(static_cast<size_t>(n), -1);
  for (auto& x : a)
    if (unit(rng) < taken) x = static_cast<int64_t>(rng() % jobs);
  return a;
}

TEST(PlanGrowth, StoppedAtTheFinalMakespanItIsAPartOfTheFullGrowthWithItsMakespan) {
  std::mt19937_64 rng(20261127);
  const auto never = [] { return false; };
  int fewer = 0;  // trials where the full growth handed out more machines
  for (int trial = 0; trial < 60; ++trial) {
    const int n = 20 + static_cast<int>(rng() % 100);
    const Cluster c = trial % 3 == 2 ? random_linked(rng, n)
                                      : random_regional(rng, n, 1 + static_cast<int>(rng() % 9), 2, MissingLinkRule::Route);
    std::vector<ModelSpec> jobs{model("j0", 8, 3e7, 32, 50), model("j1", 12, 2e7, 64, 80), model("j2", 6, 6e7, 16, 30)};
    jobs.resize(2 + static_cast<size_t>(trial % 2));
    const std::vector<int64_t> start = random_start(rng, c.size(), jobs.size(), 0.05 + 0.3 * (trial % 4) / 3.0);
    const JobDistance distance = trial % 2 ? latency_distance(c) : send_time_distance(c, jobs);
    std::vector<int64_t> full = start, early = start;
    Evaluator ev_full(c, jobs), ev_early(c, jobs);
    grow_groups(c, jobs, ev_full, full, never, distance, GrowUntil::EveryJobDone);
    grow_groups(c, jobs, ev_early, early, never, distance, GrowUntil::MakespanFixed);
    const Score sf = ev_full.score(full), se = ev_early.score(early);
    const std::string where = "trial " + std::to_string(trial) + ", " + std::to_string(n) + " machines";
    EXPECT_EQ(se.infeasible, sf.infeasible) << where;
    EXPECT_EQ(se.makespan, sf.makespan) << where;
    EXPECT_GE(se.total, sf.total) << where;
    int64_t more = 0;
    for (size_t x = 0; x < full.size(); ++x) {
      if (early[x] >= 0) {
        EXPECT_EQ(early[x], full[x]) << where << ", machine " << x;
      }
      more += early[x] < 0 && full[x] >= 0;
    }
    fewer += more > 0;
    // Resumed to the end, it is the full growth, machine for machine.
    Evaluator ev_resumed(c, jobs);
    grow_groups(c, jobs, ev_resumed, early, never, distance, GrowUntil::EveryJobDone);
    EXPECT_EQ(early, full) << where;
  }
  EXPECT_GE(fewer, 10);  // the early stop leaves out real work, not only on degenerate trials
}

TEST(PlanGrowth, StopsWithTheClock) {
  std::mt19937_64 rng(7);
  const Cluster c = random_regional(rng, 80, 5, 2, MissingLinkRule::Route);
  const std::vector<ModelSpec> jobs{model("j0", 8, 3e7, 32, 50), model("j1", 12, 2e7, 64, 80)};
  const std::vector<int64_t> start = random_start(rng, c.size(), jobs.size(), 0.1);
  for (const GrowUntil until : {GrowUntil::EveryJobDone, GrowUntil::MakespanFixed}) {
    std::vector<int64_t> a = start;
    Evaluator ev(c, jobs);
    grow_groups(c, jobs, ev, a, [] { return true; }, latency_distance(c), until);
    EXPECT_EQ(a, start);
  }
}

}  // namespace

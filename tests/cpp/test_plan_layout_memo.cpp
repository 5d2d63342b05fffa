// The splits kept across best_pipeline calls (layout_memo.h): with a memo, best_pipeline gives
// the very plan it gives without one, on walks of groups that revisit layouts; the memo tells
// layouts apart by every id, its replica split and the exhaustive limit; and it bounds its size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "csrc/plan/layout_memo.h"
#include "tests/cpp/plan_fixtures.h"

namespace {

using namespace hulk::plan;
using namespace hulk::plan::detail;
using namespace plan_fixtures;

void expect_same_plan(const JobPlan& a, const JobPlan& b, const std::string& where) {
  ASSERT_EQ(a.cost.feasible, b.cost.feasible) << where;
  EXPECT_EQ(a.cost.iteration_s, b.cost.iteration_s) << where;  // bit for bit: the same work, or its kept outcome
  EXPECT_EQ(a.cost.memory_shortfall_bytes, b.cost.memory_shortfall_bytes) << where;
  EXPECT_EQ(a.cost.reason, b.cost.reason) << where;
  ASSERT_EQ(a.replicas.size(), b.replicas.size()) << where;
  for (size_t r = 0; r < a.replicas.size(); ++r) {
    EXPECT_EQ(a.replicas[r].machines, b.replicas[r].machines) << where << " replica " << r;
    EXPECT_EQ(a.replicas[r].bounds, b.replicas[r].bounds) << where << " replica " << r;
  }
}

// Walks of groups (a machine in or out per step, as the local searches move) on random
// regional and explicit clusters: every step's plan with the memo is the plan without it,
// and the memo is used (a vacuous pass would hide a key that never matches).
TEST(PlanLayoutMemo, BestPipelineWithAMemoIsThePlanWithout) {
  std::mt19937_64 rng(20261129);
  size_t hits = 0, infeasible = 0;
  for (int trial = 0; trial < 24; ++trial) {
    const int n = 10 + static_cast<int>(rng() % 40);
    const Cluster c = trial % 2 ? random_linked(rng, n)
                                : random_regional(rng, n, 1 + static_cast<int>(rng() % 5), 2, MissingLinkRule::Route);
    const ModelSpec m = trial % 3 == 0 ? model("big", 24, 4e8, 32, 50) : model("small", 12, 5e7, 16, 30);
    LayoutMemo memo;
    std::vector<char> in(static_cast<size_t>(n), 0);
    for (int64_t x = 0; x < n; ++x) in[static_cast<size_t>(x)] = rng() % 2;
    for (int step = 0; step < 40; ++step) {
      std::vector<int64_t> g;
      for (int64_t x = 0; x < n; ++x)
        if (in[static_cast<size_t>(x)]) g.push_back(x);
      if (!g.empty()) {
        const JobPlan plain = best_pipeline(c, m, g);
        infeasible += !plain.cost.feasible;
        expect_same_plan(best_pipeline(c, m, g, memo), plain,
                         "trial " + std::to_string(trial) + " step " + std::to_string(step));
      }
      const size_t flip = static_cast<size_t>(rng() % static_cast<uint64_t>(n));
      in[flip] = !in[flip];
    }
    hits += memo.hits();
  }
  EXPECT_GE(hits, 200u);
  EXPECT_GE(infeasible, 3u);  // groups too small for the big job: the least-short layout, kept alike
}

TEST(PlanLayoutMemo, KeysTellLayoutsApart) {
  LayoutMemo memo;
  const LayoutMemo::Outcome kept{{0, 3, 8}, true, 1.5, 0};
  memo.add({{1, 2}, {3, 4}}, 4096, kept);
  LayoutMemo::Found found;
  ASSERT_TRUE(memo.find({{1, 2}, {3, 4}}, 4096, found));
  EXPECT_EQ(found.bounds_vector(), kept.bounds);
  EXPECT_TRUE(found.feasible);
  EXPECT_EQ(found.iteration_s, 1.5);
  EXPECT_FALSE(memo.find({{1, 2, 3, 4}}, 4096, found));    // the same ids as one replica
  EXPECT_FALSE(memo.find({{1, 3}, {2, 4}}, 4096, found));  // stage-major instead of replica-major
  EXPECT_FALSE(memo.find({{2, 1}, {3, 4}}, 4096, found));  // another stage order
  EXPECT_FALSE(memo.find({{1, 2}, {3, 4}}, 256, found));   // another exhaustive limit
  EXPECT_EQ(memo.hits(), 1u);
}

TEST(PlanLayoutMemo, EmptiesItselfOnceItHoldsAMillionIds) {
  LayoutMemo memo;
  std::vector<int64_t> ids(1000);
  for (int64_t k = 0; k < 1100; ++k) {  // 1.1M ids in all
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = k * 1000 + static_cast<int64_t>(i);
    memo.add({ids}, 4096, {{0, 4}, true, static_cast<double>(k), 0});
  }
  EXPECT_LT(memo.size(), 1100u);
  LayoutMemo::Found last;
  ASSERT_TRUE(memo.find({ids}, 4096, last));  // the newest layout survives the emptying
  EXPECT_EQ(last.iteration_s, 1099.0);
  EXPECT_EQ(last.bounds_vector(), (std::vector<int64_t>{0, 4}));
}

// Thousands of layouts (the table grows many times over), each found again with its own
// outcome, and a layout never added is not found.
TEST(PlanLayoutMemo, KeepsEveryLayoutThroughItsGrowth) {
  LayoutMemo memo;
  std::mt19937_64 rng(5);
  std::vector<std::vector<std::vector<int64_t>>> layouts;
  for (int k = 0; k < 5000; ++k) {
    const size_t D = 1 + rng() % 3, S = 1 + rng() % 6;
    std::vector<std::vector<int64_t>> reps(D, std::vector<int64_t>(S));
    int64_t next = static_cast<int64_t>(k) * 32;  // ids no other layout has
    for (auto& r : reps)
      for (auto& x : r) x = next++;
    std::shuffle(reps.front().begin(), reps.front().end(), rng);
    layouts.push_back(reps);
    memo.add(reps, 4096, {{0, static_cast<int64_t>(k)}, k % 2 == 0, static_cast<double>(k), static_cast<double>(k % 7)});
  }
  EXPECT_EQ(memo.size(), 5000u);
  for (int k = 0; k < 5000; ++k) {
    LayoutMemo::Found f;
    ASSERT_TRUE(memo.find(layouts[static_cast<size_t>(k)], 4096, f)) << k;
    EXPECT_EQ(f.iteration_s, static_cast<double>(k));
    EXPECT_EQ(f.feasible, k % 2 == 0);
    EXPECT_EQ(f.shortfall_bytes, static_cast<double>(k % 7));
    EXPECT_EQ(f.bounds_vector(), (std::vector<int64_t>{0, k}));
  }
  LayoutMemo::Found f;
  EXPECT_FALSE(memo.find({{5000 * 32, 5000 * 32 + 1}}, 4096, f));
}

}  // namespace

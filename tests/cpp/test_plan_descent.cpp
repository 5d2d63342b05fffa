// Hulk's refinement step (csrc/plan/descent.h): the descent on the job that finishes last.
#include <gtest/gtest.h>

#include <random>

#include "csrc/plan/descent.h"
#include "csrc/plan/planners.h"
#include "tests/cpp/plan_fixtures.h"

namespace {

using namespace plan_fixtures;
using hulk::plan::detail::descend_last_job;
using hulk::plan::detail::Evaluator;
using hulk::plan::detail::Score;

const auto never = [] { return false; };

// Every single move the descent may make from `a` (take one machine from outside, give one
// back, or both), scored by brute force: the best score among them.
Score best_neighbour(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev, const std::vector<int64_t>& a) {
  const auto groups = hulk::plan::detail::groups_of(a, jobs.size());
  size_t last = 0;
  for (size_t j = 1; j < jobs.size(); ++j)
    if (ev.job(j, groups[j]).time > ev.job(last, groups[last]).time) last = j;
  Score best = ev.score(a);
  const int64_t N = c.size();
  for (int64_t in = -1; in < N; ++in)
    for (int64_t out = -1; out < N; ++out) {
      if (in < 0 && out < 0) continue;
      if (in >= 0 && a[static_cast<size_t>(in)] == static_cast<int64_t>(last)) continue;
      if (out >= 0 && a[static_cast<size_t>(out)] != static_cast<int64_t>(last)) continue;
      std::vector<int64_t> b = a;
      if (in >= 0) b[static_cast<size_t>(in)] = static_cast<int64_t>(last);
      if (out >= 0) b[static_cast<size_t>(out)] = -1;
      const Score s = ev.score(b);
      if (s < best) best = s;
    }
  return best;
}

// On small random clusters, where the pool covers every machine, the descent never makes the
// score worse, keeps every job feasible, and stops where no single move of the last job helps
// (checked against all of them).
TEST(PlanDescent, EndsWhereNoMoveOfTheLastJobHelps) {
  std::mt19937_64 rng(23);
  int improved = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const Cluster c = random_cluster(rng);
    const std::vector<ModelSpec> jobs = two_small_jobs();
    Evaluator ev(c, jobs);
    // A start that fits: Search's fewest-machines idea, by hand: every machine to a random job.
    std::vector<int64_t> a = random_assignment(c, rng);
    const Score start = ev.score(a);
    if (start.infeasible > 0) {  // left as it is
      std::vector<int64_t> b = a;
      descend_last_job(c, jobs, ev, b, never, 64);
      EXPECT_EQ(b, a);
      continue;
    }
    const auto d = descend_last_job(c, jobs, ev, a, never, 64);
    const Score end = ev.score(a);
    EXPECT_EQ(end.infeasible, 0) << "trial " << trial;
    EXPECT_FALSE(start < end) << "trial " << trial;
    EXPECT_FALSE(best_neighbour(c, jobs, ev, a) < end) << "trial " << trial;
    if (d.steps > 0) {
      ++improved;
      EXPECT_LT(end.makespan + end.total, start.makespan + start.total + 1e-9) << "trial " << trial;
    }
  }
  EXPECT_GT(improved, 0);  // the case where it moves is exercised
}

// No batch the descent tries helps either: each outside machine with its 1 to batch_max - 1
// nearest outside machines (in the time to send the last job's boundary activations) joining
// the last job at once, donors losing them (brute force, as descent.h states it).
Score best_batch_by_brute_force(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev,
                                const std::vector<int64_t>& a, size_t batch_max) {
  const Score start = ev.score(a);
  const auto last = static_cast<size_t>(start.last);
  const double bytes = jobs[last].boundary_bytes(hulk::plan::detail::micro_batch(jobs[last], 1));
  std::vector<int64_t> outside;
  for (int64_t x = 0; x < c.size(); ++x)
    if (a[static_cast<size_t>(x)] != start.last) outside.push_back(x);
  Score best = start;
  for (int64_t x : outside) {
    std::vector<int64_t> near;
    for (int64_t y : outside)
      if (y != x) near.push_back(y);
    std::stable_sort(near.begin(), near.end(), [&](int64_t p, int64_t q) { return c.send_time(x, p, bytes) < c.send_time(x, q, bytes); });
    std::vector<int64_t> b = a;
    b[static_cast<size_t>(x)] = start.last;
    for (size_t k = 0; k + 1 < batch_max && k < near.size(); ++k) {
      b[static_cast<size_t>(near[k])] = start.last;
      const Score s = ev.score(b);
      if (s.infeasible == 0 && s < best) best = s;
    }
  }
  return best;
}

// With batches, the descent also ends where no batch of the last job's helps.
// Clusters of identical 8 GB machines in two regions, with a job that needs several of them,
// where batches matter (with single moves only, the batch check below fails on 4 of them).
TEST(PlanDescent, BatchesEndWhereNoBatchHelps) {
  std::mt19937_64 rng(29);
  std::uniform_int_distribution<int> per_region(2, 5);
  std::uniform_real_distribution<double> u(0, 1);
  const std::vector<ModelSpec> jobs{model("big", 12, 1e8, 32), model("small", 4, 5e7, 16)};
  for (int trial = 0; trial < 40; ++trial) {
    Net net;
    net.inter_ms = 5 + 100 * u(rng);
    net.inter_gbps = 0.5 + 20 * u(rng);
    const Cluster c = two_regions(std::vector<double>(static_cast<size_t>(per_region(rng)), 8.0),
                                  std::vector<double>(static_cast<size_t>(per_region(rng)), 8.0), net);
    Evaluator ev(c, jobs);
    std::vector<int64_t> a(static_cast<size_t>(c.size()));
    for (auto& x : a) x = static_cast<int64_t>(rng() % 3) - 1;
    const Score start = ev.score(a);
    if (start.infeasible > 0) continue;
    descend_last_job(c, jobs, ev, a, never, 64, 4);
    const Score end = ev.score(a);
    EXPECT_EQ(end.infeasible, 0) << "trial " << trial;
    EXPECT_FALSE(start < end) << "trial " << trial;
    EXPECT_FALSE(best_neighbour(c, jobs, ev, a) < end) << "trial " << trial;
    EXPECT_FALSE(best_batch_by_brute_force(c, jobs, ev, a, 4) < end) << "trial " << trial;
  }
}

// A job of 12 layers (19.2 GB of state) on 4 of 6 identical 8 GB machines: 5 machines lay it
// out worse than 4, 6 better (a layout for 6 needs both idle machines at once). Single moves
// and swaps stop at 4; the batch takes both.
TEST(PlanDescent, TakesTwoMachinesAtOnceWhereOneMakesItWorse) {
  const Cluster c = two_regions({8, 8, 8, 8, 8, 8}, {});
  const std::vector<ModelSpec> jobs{model("m", 12, 1e8, 32)};
  Evaluator ev(c, jobs);
  const auto time_on = [&](size_t k) {
    std::vector<int64_t> g(k);
    for (size_t i = 0; i < k; ++i) g[i] = static_cast<int64_t>(i);
    return ev.job(0, g).time;
  };
  ASSERT_GT(time_on(5), time_on(4));  // the premise
  ASSERT_LT(time_on(6), time_on(4));
  std::vector<int64_t> singles{0, 0, 0, 0, -1, -1};
  descend_last_job(c, jobs, ev, singles, never, 8, 1);
  EXPECT_EQ(singles, (std::vector<int64_t>{0, 0, 0, 0, -1, -1}));
  std::vector<int64_t> a{0, 0, 0, 0, -1, -1};
  const auto d = descend_last_job(c, jobs, ev, a, never);
  EXPECT_EQ(a, (std::vector<int64_t>{0, 0, 0, 0, 0, 0})) << "steps " << d.steps;
  EXPECT_EQ(d.steps, 1);
}

// One job on a slow machine in region A while a fast idle machine waits in A: the descent ends
// on the fast one alone (taking it first, then giving the slow one back, since the pair's
// pipeline waits on the slow machine).
TEST(PlanDescent, SwapsASlowMachineForAFastIdleOne) {
  const Cluster c = two_regions({8, 8}, {8}, Net{}, {50, 200, 100});
  const std::vector<ModelSpec> jobs{model("m", 4)};  // 6.4 GB: one machine holds it
  Evaluator ev(c, jobs);
  std::vector<int64_t> a{0, -1, -1};
  const auto d = descend_last_job(c, jobs, ev, a, never);
  EXPECT_EQ(a, (std::vector<int64_t>{-1, 0, -1})) << "steps " << d.steps;
  EXPECT_GE(d.steps, 1);
  EXPECT_LE(d.steps, 2);
}

// No re-split the descent tries helps at its end: for each other job, the two jobs' machines
// in the last job's chain order, the last job on a prefix of every size resplit_cuts names,
// the other job on the rest (brute force, as descent.h states it); none where the last job
// holds less than 1 / kResplitShareInverse of the machines.
Score best_resplit_by_brute_force(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev,
                                  const std::vector<int64_t>& a) {
  const Score start = ev.score(a);
  const auto groups = hulk::plan::detail::groups_of(a, jobs.size());
  const auto last = static_cast<size_t>(start.last);
  Score best = start;
  if (groups[last].size() * hulk::plan::detail::kResplitShareInverse < static_cast<size_t>(c.size())) return best;
  for (size_t j = 0; j < jobs.size(); ++j) {
    if (j == last || groups[j].empty()) continue;
    std::vector<int64_t> pool = groups[last];
    pool.insert(pool.end(), groups[j].begin(), groups[j].end());
    const std::vector<int64_t> chain = hulk::plan::chain_order(c, jobs[last], pool);
    for (size_t t : hulk::plan::detail::resplit_cuts(groups[last].size(), chain.size())) {
      std::vector<int64_t> b = a;
      for (size_t k = 0; k < chain.size(); ++k) b[static_cast<size_t>(chain[k])] = static_cast<int64_t>(k < t ? last : j);
      const Score s = ev.score(b);
      if (s.infeasible == 0 && s < best) best = s;
    }
  }
  return best;
}

TEST(PlanDescent, ResplitCutsAreTheWindowAroundTheLastJobsSize) {
  using hulk::plan::detail::resplit_cuts;
  EXPECT_EQ(resplit_cuts(3, 10), (std::vector<size_t>{1, 2, 3, 4, 5, 6, 7}));  // within 4 of 3, from 1
  EXPECT_EQ(resplit_cuts(20, 25), (std::vector<size_t>{10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24}));
  EXPECT_EQ(resplit_cuts(1, 2), (std::vector<size_t>{1}));
  EXPECT_TRUE(resplit_cuts(1, 1).empty());
}

// Three jobs on random two-region clusters: the descent also ends where no re-split helps, and
// it re-splits on some of them (so the check above is exercised).
TEST(PlanDescent, EndsWhereNoResplitHelps) {
  std::mt19937_64 rng(31);
  std::uniform_int_distribution<int> per_region(2, 6);
  std::uniform_real_distribution<double> u(0, 1);
  const std::vector<ModelSpec> jobs{model("big", 12, 1e8, 32), model("mid", 8, 8e7, 24), model("small", 4, 5e7, 16)};
  int checked = 0, resplit = 0;
  for (int trial = 0; trial < 60; ++trial) {
    Net net;
    net.inter_ms = 5 + 100 * u(rng);
    net.inter_gbps = 0.5 + 20 * u(rng);
    std::vector<double> ra, rb;
    for (int k = per_region(rng); k > 0; --k) ra.push_back(u(rng) < 0.5 ? 8.0 : 16.0);
    for (int k = per_region(rng); k > 0; --k) rb.push_back(u(rng) < 0.5 ? 8.0 : 16.0);
    std::vector<double> tflops;
    for (size_t k = 0; k < ra.size() + rb.size(); ++k) tflops.push_back(20 + 200 * u(rng));
    const Cluster c = two_regions(ra, rb, net, tflops);
    Evaluator ev(c, jobs);
    std::vector<int64_t> a(static_cast<size_t>(c.size()));
    for (auto& x : a) x = static_cast<int64_t>(rng() % 4) - 1;
    const Score start = ev.score(a);
    if (start.infeasible > 0) continue;
    const auto d = descend_last_job(c, jobs, ev, a, never, 64, 4);
    const Score end = ev.score(a);
    ++checked;
    resplit += d.resplits > 0;
    EXPECT_EQ(end.infeasible, 0) << "trial " << trial;
    EXPECT_FALSE(start < end) << "trial " << trial;
    EXPECT_FALSE(best_neighbour(c, jobs, ev, a) < end) << "trial " << trial;
    EXPECT_FALSE(best_resplit_by_brute_force(c, jobs, ev, a) < end) << "trial " << trial;
  }
  EXPECT_GE(checked, 10);
  EXPECT_GT(resplit, 0);
}

// Out of time before the first step: nothing changes.
TEST(PlanDescent, StopsAtTheDeadline) {
  const Cluster c = two_regions({8, 8}, {8}, Net{}, {50, 200, 100});
  const std::vector<ModelSpec> jobs{model("m", 4)};
  Evaluator ev(c, jobs);
  std::vector<int64_t> a{0, -1, -1};
  const auto d = descend_last_job(c, jobs, ev, a, [] { return true; });
  EXPECT_EQ(a, (std::vector<int64_t>{0, -1, -1}));
  EXPECT_EQ(d.steps, 0);
}

}  // namespace

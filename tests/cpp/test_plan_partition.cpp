// The planners' building blocks (partition.cpp, split.cpp): the layer split against brute
// force, stage order, chain order and best_pipeline's choice of replicas.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "csrc/plan/job_helpers.h"
#include "csrc/plan/split.h"
#include "csrc/plan/planners.h"
#include "tests/cpp/plan_fixtures.h"

namespace {

using namespace hulk::plan;
using namespace plan_fixtures;

TEST(PlanPartition, CoversAllLayersAndRespectsMemory) {
  // Capacities hold 2, 1, 1, 3 layers of 1.6 GB (plus a little activation memory).
  const Cluster c = two_regions({3.5, 2.0}, {2.0, 5.0});
  const ModelSpec m = model("m", 6);
  const std::vector<int64_t> chain{0, 1, 2, 3};
  const auto bounds = partition_layers(c, m, chain, 1);
  ASSERT_EQ(bounds.size(), 5u);
  EXPECT_EQ(bounds.front(), 0);
  EXPECT_EQ(bounds.back(), 6);
  for (size_t s = 0; s + 1 < bounds.size(); ++s) EXPECT_LT(bounds[s], bounds[s + 1]);
  const JobCost jc = pipeline_cost(c, m, {Replica{chain, bounds}});
  EXPECT_TRUE(jc.feasible) << jc.reason;
  for (const auto& st : jc.stages[0]) EXPECT_LE(st.memory_bytes, st.memory_capacity_bytes);
  // Seven layers exceed the 2 + 1 + 1 + 3 that fit.
  EXPECT_TRUE(partition_layers(c, model("m", 8), chain, 1).empty());
  // More stages than layers cannot give every stage a layer.
  EXPECT_TRUE(partition_layers(c, model("m", 3), chain, 1).empty());
  EXPECT_THROW(partition_layers(c, m, chain, 0), std::invalid_argument);
}

// Every split of L layers over the replicas' S stages (each stage holding a layer), costed
// by pipeline_cost: the least iteration time, +inf when none fits.
double brute_force_split(const Cluster& c, const ModelSpec& m, const std::vector<std::vector<int64_t>>& reps,
                         std::vector<int64_t>* best_bounds = nullptr) {
  const int64_t S = static_cast<int64_t>(reps.front().size()), L = m.layers;
  double best = kInf;
  std::vector<int64_t> bounds{0};
  std::function<void(int64_t)> rec = [&](int64_t s) {
    if (s == S - 1) {
      bounds.push_back(L);
      std::vector<Replica> rs;
      for (const auto& r : reps) rs.push_back(Replica{r, bounds});
      const JobCost jc = pipeline_cost(c, m, rs);
      if (jc.feasible && jc.iteration_s < best) {
        best = jc.iteration_s;
        if (best_bounds) *best_bounds = bounds;
      }
      bounds.pop_back();
      return;
    }
    for (int64_t b = bounds.back() + 1; b <= L - (S - 1 - s); ++b) {
      bounds.push_back(b);
      rec(s + 1);
      bounds.pop_back();
    }
  };
  rec(0);
  return best;
}


// The split minimises the whole iteration time (pipeline sum and bottleneck, all-reduce,
// optimiser step), not the slowest stage alone: equal to brute force over every split, for
// one pipeline (partition_layers) and for D = 2, 3 replicas sharing the split (best_pipeline's
// split via optimise_split). Both the exact path and the DP + bounded search path are held to
// brute force; the DP path may miss the optimum only by its bounded search (<= 1%) and is
// never worse than the even split.
TEST(PlanPartition, SplitOptimalOnTheWholeObjectiveAgainstBruteForce) {
  std::mt19937_64 rng(7);
  int checked = 0, dp_exact = 0, dp_checked = 0;
  for (int trial = 0; trial < 90; ++trial) {
    const int S = 2 + trial % 3;  // 2..4 stages
    const int D = 1 + (trial / 3) % 3;  // 1..3 replicas
    const int64_t L = 5 + trial % 5;
    const Cluster c = random_linked(rng, S * D);
    ModelSpec m = model("m", L, 1e8, 96);
    m.micro_batches = 1 + trial % 4;  // small m: the sum term matters
    std::vector<std::vector<int64_t>> reps(static_cast<size_t>(D));
    for (int r = 0; r < D; ++r)
      for (int s = 0; s < S; ++s) reps[static_cast<size_t>(r)].push_back(r * S + s);
    const double best = brute_force_split(c, m, reps);
    const auto p = hulk::plan::detail::split_problem(c, m, reps);
    const auto exact = hulk::plan::detail::optimise_split(p);
    const auto dp = hulk::plan::detail::optimise_split(p, 0);  // force the DP path
    if (D == 1) {
      EXPECT_EQ(partition_layers(c, m, reps[0], 1), exact) << "trial " << trial;
    }
    if (best == kInf) {
      EXPECT_TRUE(exact.empty()) << "trial " << trial;
      EXPECT_TRUE(dp.empty()) << "trial " << trial;
      continue;
    }
    ASSERT_FALSE(exact.empty()) << "trial " << trial;
    ASSERT_FALSE(dp.empty()) << "trial " << trial;
    auto cost = [&](const std::vector<int64_t>& bounds) {
      std::vector<Replica> rs;
      for (const auto& r : reps) rs.push_back(Replica{r, bounds});
      const JobCost jc = pipeline_cost(c, m, rs);
      EXPECT_TRUE(jc.feasible) << jc.reason;
      EXPECT_NEAR(hulk::plan::detail::split_objective(p, bounds), jc.iteration_s, 1e-9 * jc.iteration_s);
      return jc.iteration_s;
    };
    EXPECT_NEAR(cost(exact), best, 1e-12 * best) << "trial " << trial;
    const double t_dp = cost(dp);
    EXPECT_LE(t_dp, best * 1.01) << "trial " << trial;
    const auto even = hulk::plan::detail::even_bounds(S, L);
    std::vector<Replica> rs;
    for (const auto& r : reps) rs.push_back(Replica{r, even});
    const JobCost ev = pipeline_cost(c, m, rs);
    if (ev.feasible) {
      EXPECT_LE(t_dp, ev.iteration_s * (1 + 1e-12)) << "trial " << trial;
    }
    ++dp_checked;
    if (t_dp <= best * (1 + 1e-12)) ++dp_exact;
    ++checked;
  }
  EXPECT_GE(checked, 25);
  EXPECT_GE(dp_exact * 10, dp_checked * 8);  // the DP path finds the optimum in most cases
}

// A case where the slowest stage alone is the wrong target: with 4 replicas the gradient
// all-reduce grows with the layers a stage holds, so piling layers onto the last stage (no
// send after it) costs more than it saves. The split equals brute force here and differs from
// the split of least bottleneck, which the planner used before.
TEST(PlanPartition, SplitAccountsForTheAllReduce) {
  Net net;
  net.inter_ms = 60;
  net.inter_gbps = 0.5;
  const Cluster c = two_regions({16, 16, 16, 16}, {16, 16, 16, 16}, net);
  ModelSpec m = model("m", 12, 1e8, 64);
  m.micro_batches = 8;
  // Stage-major: stage s's replicas are machines {s, s + 4} in both regions.
  const std::vector<std::vector<int64_t>> reps{{0, 1, 2, 3}, {4, 5, 6, 7}};
  std::vector<int64_t> bounds;
  const double best = brute_force_split(c, m, reps, &bounds);
  const auto got = hulk::plan::detail::optimise_split(hulk::plan::detail::split_problem(c, m, reps));
  std::vector<Replica> rs;
  for (const auto& r : reps) rs.push_back(Replica{r, got});
  EXPECT_NEAR(pipeline_cost(c, m, rs).iteration_s, best, 1e-12 * best);
  // The least-bottleneck split (brute force over the slowest stage alone) is slower.
  double least_bottleneck = kInf, its_time = kInf;
  for (int64_t a = 1; a < 12; ++a)
    for (int64_t b = a + 1; b < 12; ++b)
      for (int64_t d = b + 1; d < 12; ++d) {
        std::vector<Replica> q;
        for (const auto& r : reps) q.push_back(Replica{r, {0, a, b, d, 12}});
        const JobCost jc = pipeline_cost(c, m, q);
        if (jc.feasible && bottleneck(jc) < least_bottleneck * (1 - 1e-12)) {
          least_bottleneck = bottleneck(jc);
          its_time = jc.iteration_s;
        }
      }
  EXPECT_GT(its_time, best * 1.001);
}

// n random linked machines (ids 0..n-1) and a model of `layers` layers with m micro-batches.
struct Case {
  Cluster c;
  ModelSpec m;
  std::vector<int64_t> ids;
};
Case random_case(std::mt19937_64& rng, int n, int64_t layers, double params_per_layer, int64_t batch, int64_t micro) {
  Case k{random_linked(rng, n), model("m", layers, params_per_layer, batch), std::vector<int64_t>(static_cast<size_t>(n))};
  k.m.micro_batches = micro;
  for (int i = 0; i < n; ++i) k.ids[static_cast<size_t>(i)] = i;
  return k;
}

// Stage order: on 3 and 4 machines best_pipeline is no worse than brute force over every
// order of the machines and every split (one pipeline using them all); on 5 machines it is
// no worse than an even split with any stage order.
TEST(PlanPartition, StageOrderAgainstBruteForce) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 24; ++trial) {
    const int n = 3 + trial % 3;
    const Case k = random_case(rng, n, 6 + trial % 3, 1e8, 8, 1 + trial % 3);
    const Cluster& c = k.c;
    const ModelSpec& m = k.m;
    std::vector<int64_t> perm = k.ids;
    double brute = kInf, even_any = kInf;
    do {
      if (n <= 4) brute = std::min(brute, brute_force_split(c, m, {perm}));
      const JobCost ev = pipeline_cost(c, m, {Replica{perm, hulk::plan::detail::even_bounds(n, m.layers)}});
      if (ev.feasible) even_any = std::min(even_any, ev.iteration_s);
    } while (std::next_permutation(perm.begin(), perm.end()));
    const JobPlan jp = best_pipeline(c, m, perm);
    const double got = jp.cost.feasible ? jp.cost.iteration_s : kInf;
    if (n <= 4) {
      EXPECT_LE(got, brute * (1 + 1e-12)) << "trial " << trial;
    }
    EXPECT_LE(got, even_any * (1 + 1e-12)) << "trial " << trial;
  }
}

// With replicas too: best_pipeline's layout is never worse than the even split on its own
// machines, in its stage order or the reverse one.
TEST(PlanPartition, NeverWorseThanTheEvenSplitInEitherOrder) {
  std::mt19937_64 rng(23);
  int compared = 0;
  for (int trial = 0; trial < 16; ++trial) {
    const Case k = random_case(rng, 6 + trial % 7, 8 + trial % 5, 2e7, 64, 2 + trial % 6);
    const Cluster& c = k.c;
    const ModelSpec& m = k.m;
    const JobPlan jp = best_pipeline(c, m, k.ids);
    if (!jp.cost.feasible) continue;
    for (bool reverse : {false, true}) {
      std::vector<Replica> even;
      for (const Replica& r : jp.replicas) {
        std::vector<int64_t> ms = r.machines;
        if (reverse) std::reverse(ms.begin(), ms.end());
        even.push_back(Replica{ms, hulk::plan::detail::even_bounds(static_cast<int64_t>(ms.size()), m.layers)});
      }
      const JobCost ev = pipeline_cost(c, m, even);
      if (!ev.feasible) continue;
      EXPECT_LE(jp.cost.iteration_s, ev.iteration_s * (1 + 1e-12)) << "trial " << trial << " reverse " << reverse;
      ++compared;
    }
  }
  EXPECT_GE(compared, 10);
}

TEST(PlanPartition, ChainOrderStartsAtMostMemoryAndStaysInRegion) {
  const Cluster c = two_regions({4, 4, 4}, {8, 4, 4});
  const ModelSpec m = model("m", 8);
  const auto chain = chain_order(c, m, {0, 1, 2, 3, 4, 5});
  ASSERT_EQ(chain.size(), 6u);
  EXPECT_EQ(chain[0], 3);  // the 8 GB machine
  // Region B first (3, 4, 5), then region A: one slow crossing only.
  EXPECT_EQ(as_set({chain[0], chain[1], chain[2]}), (std::set<int64_t>{3, 4, 5}));
}

TEST(PlanPartition, ChainOrderOnRegionalClustersMatchesThePlainWalk) {
  // chain_order's regional shortcuts (one candidate per region and step; staying home
  // without a scan when no other region can be closer) against the plain walk: the same
  // chain, ties and unreachable machines included, on random subsets. Half the trials have
  // regions closer to another region than to themselves, where the walk must scan.
  std::mt19937_64 rng(20261125);
  const ModelSpec m = model("m", 8);
  int compared = 0;
  for (int trial = 0; trial < 120; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 120);
    const int R = 1 + static_cast<int>(rng() % 12);
    const Cluster c = random_regional(rng, n, R, trial % 3, trial % 4 == 3 ? MissingLinkRule::Forbid : MissingLinkRule::Route,
                                      trial % 2 == 1);
    ASSERT_TRUE(c.regional());
    std::vector<int64_t> group;
    for (int64_t i = 0; i < n; ++i)
      if (rng() % 4 != 0) group.push_back(i);
    std::shuffle(group.begin(), group.end(), rng);
    const auto fast = chain_order(c, m, group);
    ASSERT_EQ(fast, chain_order_reference(c, m, group)) << "trial " << trial << ", " << n << " machines, " << R << " regions";
    compared += fast.size() > 2;
  }
  EXPECT_GE(compared, 80);
}

TEST(PlanPartition, OtherRegionBoundIsBelowEverySendTimeToAnotherRegion) {
  // chain_order stays in its region when no other region can be closer; the bound it uses
  // must hold for every pair across regions, routed and unreachable pairs included.
  std::mt19937_64 rng(20261126);
  int across = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const Cluster c = random_regional(rng, 2 + static_cast<int>(rng() % 60), 1 + static_cast<int>(rng() % 8), trial % 3,
                                      trial % 2 ? MissingLinkRule::Forbid : MissingLinkRule::Route, trial % 4 >= 2);
    const RegionalNetwork& net = c.network();
    for (const double bytes : {0.0, 1e6, 3e8}) {
      for (int64_t r = 0; r < net.regions; ++r) {
        double least = std::numeric_limits<double>::infinity();  // over the machines of other regions
        for (int64_t i = 0; i < c.size(); ++i)
          for (int64_t j = 0; j < c.size(); ++j) {
            if (net.region[static_cast<size_t>(i)] != r || net.region[static_cast<size_t>(j)] == r) continue;
            const double t = c.send_time(i, j, bytes), floor = c.access_s(i) + c.access_s(j) + c.other_region_bound(r, bytes);
            EXPECT_LE(floor * (1 - 1e-12), t) << "trial " << trial << ", machines " << i << " -> " << j;
            least = std::min(least, t - c.access_s(i) - c.access_s(j));
            ++across;
          }
        // +inf only when no machine of another region can be reached.
        if (!std::isfinite(c.other_region_bound(r, bytes))) EXPECT_FALSE(std::isfinite(least)) << "trial " << trial;
      }
    }
  }
  EXPECT_GT(across, 1000);
}

TEST(PlanPartition, ClosestPerRegionGivesTheSameDistanceToAGroup) {
  // The closest machine of a group, by latency and by send time, from every machine outside
  // it: the minimum over closest_per_region(g) is the minimum over g, to the last bit.
  std::mt19937_64 rng(7);
  int compared = 0;
  for (int trial = 0; trial < 30; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 80);
    const Cluster c = random_regional(rng, n, 1 + static_cast<int>(rng() % 10), trial % 3,
                                      trial % 4 == 3 ? MissingLinkRule::Forbid : MissingLinkRule::Route);
    std::vector<int64_t> g, outside;
    for (int64_t i = 0; i < n; ++i) (rng() % 3 == 0 ? g : outside).push_back(i);
    const std::vector<int64_t> near = hulk::plan::detail::closest_per_region(c, g);
    EXPECT_LE(near.size(), g.size());
    for (int64_t x : outside)
      for (double bytes : {0.0, 1e6}) {
        double all = kInf, some = kInf;
        for (int64_t y : g) all = std::min(all, c.send_time(x, y, bytes));
        for (int64_t y : near) some = std::min(some, c.send_time(x, y, bytes));
        ASSERT_EQ(some, all) << "trial " << trial << ", machine " << x << ", bytes " << bytes;
        compared += !g.empty() && std::isfinite(all);
      }
  }
  EXPECT_GE(compared, 500);
}

TEST(PlanPartition, ClosestThenOrderedMatchesTheDirectMinimum) {
  // closest_then_ordered on a regional cluster shortlists per region; the candidates (and their
  // order) are those of the direct minimum of send_time over the group, to the last bit.
  std::mt19937_64 rng(17);
  int compared = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 2 + static_cast<int>(rng() % 120);
    const Cluster c = random_regional(rng, n, 1 + static_cast<int>(rng() % 12), trial % 3,
                                      trial % 4 == 3 ? MissingLinkRule::Forbid : MissingLinkRule::Route);
    ASSERT_TRUE(c.regional());
    std::vector<int64_t> g;
    std::vector<uint8_t> eligible(static_cast<size_t>(n), 0);
    for (int64_t i = 0; i < n; ++i) {
      if (rng() % 3 == 0) g.push_back(i);
      else eligible[static_cast<size_t>(i)] = rng() % 4 != 0;
    }
    std::vector<int64_t> by_id(static_cast<size_t>(n));
    std::iota(by_id.rbegin(), by_id.rend(), 0);  // an order: highest id first
    for (double bytes : {0.0, 3e7})
      for (size_t pool : {size_t{1}, size_t{5}, size_t{500}}) {
        // The reference: the direct minimum over the whole group, then the same pool and order.
        std::vector<std::pair<double, int64_t>> d;
        for (int64_t x = 0; x < n; ++x) {
          if (!eligible[static_cast<size_t>(x)]) continue;
          double best = kInf;
          for (int64_t y : g) best = std::min(best, c.send_time(x, y, bytes));
          d.push_back({best, x});
        }
        const size_t k = std::min(pool, d.size());
        std::partial_sort(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(k), d.end());
        std::vector<int64_t> want;
        for (size_t i = 0; i < k; ++i) want.push_back(d[i].second);
        size_t taken = 0;
        for (int64_t x : by_id) {
          if (taken == pool) break;
          if (!eligible[static_cast<size_t>(x)]) continue;
          ++taken;
          if (std::find(want.begin(), want.end(), x) == want.end()) want.push_back(x);
        }
        ASSERT_EQ(hulk::plan::detail::closest_then_ordered(c, g, eligible, bytes, pool, {&by_id}), want)
            << "trial " << trial << ", bytes " << bytes << ", pool " << pool;
        compared += !g.empty() && k > 1;
      }
  }
  EXPECT_GE(compared, 100);
}

TEST(PlanPartition, BestPipelineUsesReplicasWhenRegionsAreFarApart) {
  // A small model (1e5 parameters per layer) whose activations are large: crossing the slow
  // inter-region link with activations every micro-batch costs far more than all-reducing
  // its tiny gradients, so data-parallel replicas beat one long pipeline. Compute is made
  // heavy (slow machines) so that using both regions pays.
  Net net;
  net.inter_ms = 100;
  net.inter_gbps = 0.1;
  const Cluster c = two_regions({16, 16}, {16, 16}, net, {0.01, 0.01, 0.01, 0.01});
  ModelSpec m = model("small", 4, 1e5, 64);
  m.hidden = 4096;
  m.seq_len = 1024;
  const JobPlan jp = best_pipeline(c, m, {0, 1, 2, 3});
  ASSERT_TRUE(jp.cost.feasible) << jp.cost.reason;
  EXPECT_GT(jp.replicas.size(), 1u);
  // Each replica stays inside one region.
  for (const auto& r : jp.replicas) {
    std::set<std::string> regions;
    for (int64_t i : r.machines) regions.insert(c.machine(i).region);
    EXPECT_EQ(regions.size(), 1u);
  }
  // And it is no worse than the single pipeline over the same machines.
  const auto chain = chain_order(c, m, {0, 1, 2, 3});
  const JobCost one = pipeline_cost(c, m, {Replica{chain, partition_layers(c, m, chain, 1)}});
  EXPECT_LT(jp.cost.iteration_s, one.iteration_s);
}

// best_pipeline splits its layouts in order of a lower bound and skips those that cannot win;
// the reference splits every one in the order tried. Same plan, bit for bit: on random linked
// clusters (mixed machines) and on uniform two-region clusters, where many layouts tie and the
// first one tried must win.
TEST(PlanPartition, BestPipelineIsItsReferenceThatSplitsEveryLayout) {
  std::mt19937_64 rng(29);
  int feasible = 0, infeasible = 0;
  for (int trial = 0; trial < 160; ++trial) {
    const int n = 4 + static_cast<int>(rng() % 27);
    Net net;
    net.inter_ms = 10 + static_cast<double>(rng() % 200);
    net.inter_gbps = 0.05 + 0.1 * static_cast<double>(rng() % 50);
    const Cluster c = trial % 2 == 0 ? random_linked(rng, n)
                                     : two_regions(std::vector<double>(static_cast<size_t>(n / 2), 6.0),
                                                   std::vector<double>(static_cast<size_t>(n - n / 2), 6.0), net);
    const int64_t layers = std::vector<int64_t>{4, 12, 24, 48, 96}[rng() % 5];
    const int64_t batch = std::vector<int64_t>{4, 8, 32, 64}[rng() % 4];
    const ModelSpec m = model("m", layers, std::vector<double>{2e7, 5e7, 1e8, 3e8}[rng() % 4], batch);
    std::vector<int64_t> group;
    for (int64_t i = 0; i < c.size(); ++i)
      if (rng() % 4 != 0) group.push_back(i);
    const JobPlan got = best_pipeline(c, m, group), want = best_pipeline_reference(c, m, group);
    ASSERT_EQ(got.cost.feasible, want.cost.feasible) << "trial " << trial;
    EXPECT_EQ(got.cost.iteration_s, want.cost.iteration_s) << "trial " << trial;
    EXPECT_EQ(got.cost.memory_shortfall_bytes, want.cost.memory_shortfall_bytes) << "trial " << trial;
    ASSERT_EQ(got.replicas.size(), want.replicas.size()) << "trial " << trial;
    for (size_t r = 0; r < got.replicas.size(); ++r) {
      EXPECT_EQ(got.replicas[r].machines, want.replicas[r].machines) << "trial " << trial << " replica " << r;
      EXPECT_EQ(got.replicas[r].bounds, want.replicas[r].bounds) << "trial " << trial << " replica " << r;
    }
    (got.cost.feasible ? feasible : infeasible)++;
  }
  EXPECT_GE(feasible, 80);
  EXPECT_GE(infeasible, 5);
}

TEST(PlanPartition, BestPipelineReportsShortfallWhenNothingFits) {
  const Cluster c = two_regions({2}, {2});
  const JobPlan jp = best_pipeline(c, model("big", 4), {0, 1});
  EXPECT_FALSE(jp.cost.feasible);
  EXPECT_GT(jp.cost.memory_shortfall_bytes, 0);
  EXPECT_NE(jp.cost.reason.find("no feasible pipeline"), std::string::npos) << jp.cost.reason;
  const JobPlan none = best_pipeline(c, model("big", 4), {});
  EXPECT_FALSE(none.cost.feasible);
  EXPECT_FALSE(none.cost.reason.empty());
}

}  // namespace

// A split problem built with the per-machine terms kept across layouts (MachineTerms, what
// best_pipeline's layout search uses) is the one built without them, bit for bit, and one kept
// table serves layouts of several replica counts (micro-batches) and machine orders; a problem
// reused for a smaller layout (the search's pool) is that layout's own.
TEST(PlanPartition, SplitProblemWithKeptMachineTermsIsTheSame) {
  std::mt19937_64 rng(53);
  int compared = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const Cluster c = random_regional(rng, 6 + trial % 30, 1 + trial % 5, trial % 3, MissingLinkRule::Route);
    ModelSpec m = model("m", 8 + trial % 40, 1e8 * (1 + trial % 3), 64);
    m.micro_batches = 1 + trial % 8;
    hulk::plan::detail::MachineTerms terms(c, m, CostOptions{});
    hulk::plan::detail::SplitProblem reused;
    for (int layout = 0; layout < 12; ++layout) {
      std::vector<int64_t> ids(static_cast<size_t>(c.size()));
      for (int64_t i = 0; i < c.size(); ++i) ids[static_cast<size_t>(i)] = i;
      std::shuffle(ids.begin(), ids.end(), rng);
      const int64_t D = 1 + static_cast<int64_t>(rng() % 4);
      const int64_t S = std::max<int64_t>(1, static_cast<int64_t>(rng() % static_cast<uint64_t>(c.size() / D + 1)));
      if (D * S > c.size()) continue;
      std::vector<std::vector<int64_t>> reps(static_cast<size_t>(D));
      for (int64_t r = 0; r < D; ++r) reps[static_cast<size_t>(r)].assign(ids.begin() + r * S, ids.begin() + (r + 1) * S);
      const int64_t batch_replicas = layout % 3 == 0 ? 1 + static_cast<int64_t>(rng() % 6) : 0;
      const auto want = hulk::plan::detail::split_problem(c, m, reps, CostOptions{}, batch_replicas);
      hulk::plan::detail::fill_split_problem(reused, c, m, reps, CostOptions{}, batch_replicas, &terms);
      EXPECT_EQ(reused.layers, want.layers);
      EXPECT_EQ(reused.micro_batches, want.micro_batches);
      EXPECT_EQ(reused.replicas, want.replicas);
      EXPECT_EQ(reused.c, want.c) << "trial " << trial << ", layout " << layout;
      EXPECT_EQ(reused.x, want.x) << "trial " << trial << ", layout " << layout;
      EXPECT_EQ(reused.o, want.o) << "trial " << trial << ", layout " << layout;
      EXPECT_EQ(reused.ar_a, want.ar_a) << "trial " << trial << ", layout " << layout;
      EXPECT_EQ(reused.ar_b, want.ar_b) << "trial " << trial << ", layout " << layout;
      EXPECT_EQ(reused.max_layers, want.max_layers) << "trial " << trial << ", layout " << layout;
      ++compared;
    }
  }
  EXPECT_GE(compared, 500);
}

// The 2-opt on a table of send times (two_opt) gives the path the same 2-opt asking the
// cluster for every send time gives (the reference below, the code before the table), on
// regional clusters with ties and on explicit links, paths of 3-70 machines.
std::vector<int64_t> reference_two_opt(const Cluster& c, std::vector<int64_t> path, double bytes) {
  const size_t n = path.size();
  if (n < 3 || n > 256) return path;
  auto w = [&](size_t a, size_t b) { return c.send_time(path[a], path[b], bytes); };
  for (int pass = 0; pass < 4; ++pass) {
    bool improved = false;
    for (size_t i = 0; i + 1 < n; ++i)
      for (size_t j = i + 1; j < n; ++j) {
        double before = 0, after = 0;
        if (i > 0) { before += w(i - 1, i); after += w(i - 1, j); }
        if (j + 1 < n) { before += w(j, j + 1); after += w(i, j + 1); }
        if (after < before * (1 - 1e-12)) {
          std::reverse(path.begin() + static_cast<std::ptrdiff_t>(i), path.begin() + static_cast<std::ptrdiff_t>(j + 1));
          improved = true;
        }
      }
    if (!improved) break;
  }
  return path;
}

TEST(PlanPartition, TwoOptOnATableIsTheTwoOptAskingEachSendTime) {
  std::mt19937_64 rng(59);
  int changed = 0;
  for (int trial = 0; trial < 80; ++trial) {
    const int n = 3 + trial % 68;
    const Cluster c = trial % 2 ? random_linked(rng, n)
                                : random_regional(rng, n, 1 + trial % 7, trial % 3, MissingLinkRule::Route);
    std::vector<int64_t> path(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) path[static_cast<size_t>(i)] = i;
    std::shuffle(path.begin(), path.end(), rng);
    const double bytes = 1e6 * (1 + trial % 5);
    std::vector<int64_t> got = path;
    two_opt(c, got, bytes);
    const std::vector<int64_t> want = reference_two_opt(c, path, bytes);
    ASSERT_EQ(got, want) << "trial " << trial;
    changed += got != path;
  }
  EXPECT_GE(changed, 40);  // the 2-opt did move stages (a no-op would pass the comparison)
}

// Planners (planners.h) on small hand-made clusters: the layer-split DP against brute
// force, best_pipeline's choice of replicas, the paper's Systems A/B/C, the search planner
// against every simple planner, Algorithm 1's moves and waits, and plan repair.
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

#include "csrc/plan/job_helpers.h"
#include "csrc/plan/split.h"
#include "csrc/plan/planners.h"

namespace {

using namespace hulk::plan;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Two regions of machines; every pair linked, with intra- or inter-region parameters.
struct Net {
  double intra_ms = 1, intra_gbps = 100, inter_ms = 50, inter_gbps = 1;
};

Cluster two_regions(const std::vector<double>& mem_a, const std::vector<double>& mem_b, Net net = {},
                    std::vector<double> tflops = {}) {
  std::vector<Machine> ms;
  for (size_t k = 0; k < mem_a.size(); ++k) ms.push_back({"a" + std::to_string(k), "A", mem_a[k], 100});
  for (size_t k = 0; k < mem_b.size(); ++k) ms.push_back({"b" + std::to_string(k), "B", mem_b[k], 100});
  for (size_t k = 0; k < tflops.size() && k < ms.size(); ++k) ms[k].tflops = tflops[k];
  std::vector<Link> links;
  for (int64_t i = 0; i < static_cast<int64_t>(ms.size()); ++i)
    for (int64_t j = i + 1; j < static_cast<int64_t>(ms.size()); ++j) {
      const bool same = ms[static_cast<size_t>(i)].region == ms[static_cast<size_t>(j)].region;
      links.push_back({i, j, same ? net.intra_ms : net.inter_ms, same ? net.intra_gbps : net.inter_gbps});
    }
  return Cluster(ms, links);
}

// A model whose state is 1.6 GB per layer (1e8 parameters x 16 bytes), activations small.
ModelSpec model(const std::string& name, int64_t layers, double params_per_layer = 1e8, int64_t batch = 8,
                int64_t iterations = 100) {
  ModelSpec m;
  m.name = name;
  m.layers = layers;
  m.hidden = 256;
  m.seq_len = 64;
  m.params = params_per_layer * static_cast<double>(layers);
  m.flops_per_token = 6 * m.params;
  m.activation_bytes_per_token = 1e4;
  m.global_batch = batch;
  m.micro_batches = 4;
  m.iterations = iterations;
  return m;
}

double bottleneck(const JobCost& jc) {
  double b = 0;
  for (const auto& rep : jc.stages)
    for (const auto& st : rep) b = std::max(b, st.compute_s + st.send_s);
  return b;
}

std::set<int64_t> as_set(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

// Random two-region cluster of 3..8 machines with mixed memory and speed.
Cluster random_cluster(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> n_dist(3, 8);
  std::uniform_real_distribution<double> mem(2.0, 12.0), fl(20.0, 200.0), inter(20.0, 200.0);
  const int n = n_dist(rng);
  const int na = std::max(1, n / 2);
  std::vector<double> a, b, t;
  for (int k = 0; k < n; ++k) {
    (k < na ? a : b).push_back(mem(rng));
    t.push_back(fl(rng));
  }
  Net net;
  net.inter_ms = inter(rng);
  net.inter_gbps = 0.2 + 2.0 * std::uniform_real_distribution<double>(0, 1)(rng);
  return two_regions(a, b, net, t);
}

// ---- partition ---------------------------------------------------------------------------------

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

// Random machines with mixed memory and speed, every pair linked with random bandwidth.
Cluster random_linked(std::mt19937_64& rng, int n) {
  std::uniform_real_distribution<double> mem(1.7, 8.0), fl(10.0, 300.0), bw(0.01, 10.0), lat(1.0, 80.0);
  std::vector<Machine> ms;
  for (int s = 0; s < n; ++s) ms.push_back({"", "R", mem(rng), fl(rng)});
  std::vector<Link> links;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) links.push_back({i, j, lat(rng), bw(rng)});
  return Cluster(ms, links);
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

// ---- Systems A, B, C -----------------------------------------------------------------------------

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

// ---- search ----------------------------------------------------------------------------------------

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

TEST(PlanSearch, RunsJobsConcurrentlyOneRegionEach) {
  // Each job fits in one region; the inter-region link is poor. Concurrent jobs on their own
  // regions beat running them one after another on the whole cluster.
  Net net;
  net.inter_ms = 150;
  net.inter_gbps = 0.05;
  const Cluster c = two_regions({8, 8, 8}, {8, 8, 8}, net);
  const std::vector<ModelSpec> jobs{model("j0", 6, 1e8, 16), model("j1", 6, 1e8, 16)};
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

// Two small jobs, and a search budget of `n` moves (the clock far away), as several tests use.
std::vector<ModelSpec> two_small_jobs() { return {model("j0", 4, 5e7, 16, 50), model("j1", 6, 2e7, 32, 80)}; }
SearchOptions moves(int64_t n, uint64_t seed = 0) {
  SearchOptions o;
  o.time_limit_s = 60;
  o.max_iterations = n;
  o.seed = seed;
  return o;
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

TEST(PlanSearch, AssignmentIsValidated) {
  const Cluster c = two_regions({8}, {8});
  EXPECT_THROW(plan_assignment(c, {model("m", 4)}, {0}), std::invalid_argument);
  EXPECT_THROW(plan_assignment(c, {model("m", 4)}, {0, 1}), std::invalid_argument);
  const Plan p = plan_assignment(c, {model("m", 4)}, {0, -1}, "table2");
  EXPECT_EQ(p.planner, "table2");
  EXPECT_EQ(p.jobs[0].machines(), (std::vector<int64_t>{0}));
}

// ---- Hulk (Algorithm 1) ------------------------------------------------------------------------

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

// ---- repair ------------------------------------------------------------------------------------

TEST(PlanRepair, WithoutKeepsOtherJobsMachines) {
  // Region A: 0..3, region B: 4..6. Job 0 on {0, 1}, job 1 on {4, 5}; 2, 3, 6 idle.
  const Cluster c = two_regions({4, 4, 4, 4}, {4, 4, 4});
  const std::vector<ModelSpec> jobs{model("m", 4), model("n", 4)};
  const Plan p = plan_assignment(c, jobs, {0, 0, -1, -1, 1, 1, -1});
  ASSERT_TRUE(p.feasible());
  const Repair r = repair_without(c, p, 1);
  EXPECT_EQ(r.cluster.size(), 6);
  ASSERT_TRUE(r.plan.feasible()) << r.plan.jobs[0].cost.reason;
  EXPECT_EQ(r.plan.jobs[1].machines(), (std::vector<int64_t>{3, 4}));  // 4, 5 shifted down
  // Job 0 keeps machine 0 and takes the closest idle machine (old 2 or 3: new 1 or 2).
  const auto g0 = r.plan.jobs[0].machines();
  EXPECT_TRUE(std::find(g0.begin(), g0.end(), 0) != g0.end());
  ASSERT_EQ(r.moved.size(), 1u);
  EXPECT_TRUE(r.moved[0] == 1 || r.moved[0] == 2);
  EXPECT_TRUE(std::find(g0.begin(), g0.end(), r.moved[0]) != g0.end());
  EXPECT_GE(r.seconds, 0);
  EXPECT_DOUBLE_EQ(r.plan.jobs[1].cost.iteration_s, p.jobs[1].cost.iteration_s);
  EXPECT_THROW(repair_without(c, p, 7), std::invalid_argument);
}

TEST(PlanRepair, WithoutTakesSurplusWhenNoMachineIsIdle) {
  const Cluster c = two_regions({4, 4}, {4, 4, 4});
  const std::vector<ModelSpec> jobs{model("m", 4), model("n", 4)};
  const Plan p = plan_assignment(c, jobs, {0, 0, 1, 1, 1});
  ASSERT_TRUE(p.feasible());
  const Repair r = repair_without(c, p, 0);
  ASSERT_TRUE(r.plan.feasible());
  ASSERT_EQ(r.moved.size(), 1u);
  EXPECT_EQ(r.plan.jobs[0].machines().size(), 2u);
  EXPECT_EQ(r.plan.jobs[1].machines().size(), 2u);
  std::vector<int64_t> both = r.plan.jobs[0].machines();
  for (int64_t x : r.plan.jobs[1].machines()) EXPECT_TRUE(std::find(both.begin(), both.end(), x) == both.end());
}

TEST(PlanRepair, WithAssignsTheNewMachine) {
  const Cluster c = two_regions({8, 8}, {8});
  const std::vector<ModelSpec> jobs{model("m", 4, 1e8, 16)};
  const Plan p = plan_assignment(c, jobs, {0, -1, -1});
  ASSERT_TRUE(p.feasible());
  // A fast machine next to machine 0.
  const Machine fresh{"new", "A", 16, 400};
  const Repair r = repair_with(c, p, fresh, {{0, 3, 1, 100}, {1, 3, 1, 100}, {2, 3, 50, 1}});
  EXPECT_EQ(r.cluster.size(), 4);
  EXPECT_EQ(r.moved, (std::vector<int64_t>{3}));
  const auto g = r.plan.jobs[0].machines();
  EXPECT_TRUE(std::find(g.begin(), g.end(), 3) != g.end());
  EXPECT_LT(r.plan.jobs[0].cost.iteration_s, p.jobs[0].cost.iteration_s);
  EXPECT_LT(r.plan.makespan_s, p.makespan_s);

  // A machine nobody can reach (no links, pairs forbidden) and too small to run the job on
  // its own stays idle. (One that holds the whole job may take it alone: sets of machines
  // that cannot reach each other are planned apart.)
  const Cluster f(c.machines(), c.links(), MissingLinkRule::Forbid);
  const Plan pf = plan_assignment(f, jobs, {0, -1, -1});
  const Repair rf = repair_with(f, pf, Machine{"new", "A", 4, 400}, {});
  EXPECT_TRUE(rf.moved.empty());
  EXPECT_EQ(rf.plan.jobs[0].machines(), pf.jobs[0].machines());
}

TEST(PlanRepair, RepairsEveryKindOfPlan) {
  // Sequential baselines, a Hulk plan with a waiting job, and search: repair never throws
  // (schedule() rejects double-booked machines), keeps the job count, and stays feasible
  // where the cluster still has room.
  const Cluster c = two_regions({8, 8, 8}, {8, 8});
  const std::vector<ModelSpec> jobs{model("x", 8), model("y", 8)};  // 12.8 GB each
  SearchOptions o;
  o.time_limit_s = 0.1;
  const Plan hulk = plan_hulk(c, jobs, heuristic_classes(c, jobs));
  for (const Plan& p : {plan_system_a(c, jobs), plan_system_b(c, jobs), plan_system_c(c, jobs), hulk,
                        plan_search(c, jobs, o)}) {
    for (int64_t failed = 0; failed < c.size(); ++failed) {
      Repair r = repair_without(c, p, failed);
      EXPECT_EQ(r.plan.jobs.size(), jobs.size());
      for (const auto& j : r.plan.jobs)
        for (int64_t x : j.machines()) EXPECT_LT(x, r.cluster.size());
      if (p.feasible() && p.planner != "System A" && p.planner != "System C") {
        EXPECT_TRUE(r.plan.feasible()) << p.planner << " without machine " << failed;
      }
      const Repair w = repair_with(c, p, Machine{"n", "B", 8, 100}, {{0, 5, 50, 1}, {3, 5, 1, 100}});
      EXPECT_EQ(w.cluster.size(), c.size() + 1);
    }
  }
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

// ---- feasibility that respects each machine ----------------------------------------------------

bool has_note(const Plan& p, const std::string& text) {
  for (const auto& n : p.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

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
  for (int k = 0; k < 3; ++k) ms.push_back({"a" + std::to_string(k), "A", 4, 100});
  for (int k = 0; k < 3; ++k) ms.push_back({"b" + std::to_string(k), "B", 4, 100});
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

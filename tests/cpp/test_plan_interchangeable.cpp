// Interchangeable machines (Cluster::machine_class, interchangeable.h): the classes against
// what the cost model reads of a machine, and best_pipeline on groups that differ only by
// interchangeable machines against its reference and the cost model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>
#include <set>
#include <tuple>
#include <vector>

#include "csrc/plan/evaluator.h"
#include "csrc/plan/interchangeable.h"
#include "tests/cpp/plan_fixtures.h"

namespace {

using namespace hulk::plan;
using namespace hulk::plan::detail;
using namespace plan_fixtures;

// What the cost model reads of a regional cluster's machine i: its fields and its place in the
// network.
auto cost_inputs(const Cluster& c, int64_t i) {
  const Machine& m = c.machine(i);
  return std::make_tuple(c.network().region[static_cast<size_t>(i)], c.access_s(i), m.memory_gb, m.tflops, m.gpus, m.gpu,
                         m.region);
}

// An explicit cluster's machines i and j by brute force: the same fields, and the same latency,
// bandwidth and direct link to every third machine.
bool alike_explicit(const Cluster& c, int64_t i, int64_t j) {
  const Machine &a = c.machine(i), &b = c.machine(j);
  if (std::tie(a.memory_gb, a.tflops, a.gpus, a.gpu, a.region) != std::tie(b.memory_gb, b.tflops, b.gpus, b.gpu, b.region))
    return false;
  for (int64_t k = 0; k < c.size(); ++k)
    if (k != i && k != j &&
        (c.latency_s(i, k) != c.latency_s(j, k) || c.bandwidth_Bps(i, k) != c.bandwidth_Bps(j, k) ||
         c.direct(i, k) != c.direct(j, k)))
      return false;
  return true;
}

// The same machines with every directly connected pair of `c` as an explicit link, as a
// networkx graph built from region-level measurements gives them: pairs of unlinked regions
// are routed (or forbidden) by the explicit cluster's own rule.
Cluster as_explicit(const Cluster& c) {
  std::vector<Link> links;
  for (int64_t i = 0; i < c.size(); ++i)
    for (int64_t j = i + 1; j < c.size(); ++j)
      if (c.direct(i, j)) links.push_back({i, j, c.latency_s(i, j) * 1e3, c.bandwidth_Bps(i, j) * 8 / 1e9});
  return Cluster(c.machines(), links, c.rule());
}

// A random cluster whose machines tie often (access latencies from three values or all zero),
// as generated measured clusters do: regional, or (odd trials) the same as explicit links.
Cluster tying_cluster(std::mt19937_64& rng, int trial) {
  const int n = 6 + static_cast<int>(rng() % 40);
  const Cluster regional = random_regional(rng, n, 1 + static_cast<int>(rng() % 5), (trial / 2) % 2,
                                           trial % 4 == 3 ? MissingLinkRule::Forbid : MissingLinkRule::Route);
  return trial % 2 ? as_explicit(regional) : regional;
}

// `g` with each machine replaced by a random other member of its class (distinct), so that the
// group holds as many machines of each class.
std::vector<int64_t> shuffled_within_classes(const Cluster& c, const std::vector<int64_t>& g, std::mt19937_64& rng) {
  std::map<int64_t, int64_t> count;
  for (int64_t x : g) ++count[c.machine_class(x)];
  std::vector<int64_t> out;
  for (const auto& [k, n] : count) {
    std::vector<int64_t> members = c.class_members(k);
    std::shuffle(members.begin(), members.end(), rng);
    out.insert(out.end(), members.begin(), members.begin() + n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// Each machine with probability 1/2 (at least one), ascending.
std::vector<int64_t> random_half(const Cluster& c, std::mt19937_64& rng) {
  std::vector<int64_t> g;
  for (int64_t x = 0; x < c.size(); ++x)
    if (rng() % 2) g.push_back(x);
  if (g.empty()) g.push_back(0);
  return g;
}

TEST(PlanInterchangeable, ClassesHoldTheMachinesWithTheSameCostInputsAndPartitionTheCluster) {
  std::mt19937_64 rng(20261129);
  int with_ties[2] = {0, 0};  // regional, explicit
  for (int trial = 0; trial < 80; ++trial) {
    const Cluster c = tying_cluster(rng, trial);
    ASSERT_EQ(c.regional(), trial % 2 == 0);
    std::vector<int64_t> seen;
    for (int64_t k = 0; k < c.classes(); ++k) {
      const std::vector<int64_t>& members = c.class_members(k);
      ASSERT_FALSE(members.empty());
      EXPECT_TRUE(std::is_sorted(members.begin(), members.end()));
      if (k > 0) {  // numbered by first member
        EXPECT_LT(c.class_members(k - 1).front(), members.front());
      }
      for (int64_t x : members) EXPECT_EQ(c.machine_class(x), k);
      seen.insert(seen.end(), members.begin(), members.end());
    }
    std::sort(seen.begin(), seen.end());
    ASSERT_EQ(static_cast<int64_t>(seen.size()), c.size());
    for (int64_t x = 0; x < c.size(); ++x) EXPECT_EQ(seen[static_cast<size_t>(x)], x);
    with_ties[trial % 2] += c.has_interchangeable();
    for (int64_t i = 0; i < c.size(); ++i)
      for (int64_t j = 0; j < c.size(); ++j) {
        const bool alike = c.regional() ? cost_inputs(c, i) == cost_inputs(c, j) : alike_explicit(c, i, j);
        ASSERT_EQ(c.machine_class(i) == c.machine_class(j), alike) << trial << " " << i << " " << j;
        if (i == j || c.machine_class(i) != c.machine_class(j)) continue;
        EXPECT_EQ(c.send_time(i, j, 3e7), c.send_time(j, i, 3e7));
        for (int64_t k = 0; k < c.size(); ++k)  // the same send time to and from every third machine
          if (k != i && k != j) {
            ASSERT_EQ(c.send_time(i, k, 3e7), c.send_time(j, k, 3e7));
            ASSERT_EQ(c.send_time(k, i, 3e7), c.send_time(k, j, 3e7));
          }
      }
  }
  EXPECT_GE(with_ties[0], 30);
  EXPECT_GE(with_ties[1], 30);
}

TEST(PlanInterchangeable, AnExplicitClusterBuiltFromRegionLevelLinksHasOneClassPerRegionAndGpu) {
  // Three regions of four machines, links from region-level latency and bandwidth, as a user's
  // networkx graph would give them; machine 5 has an H100, machine 9's link to machine 0 differs.
  std::vector<Machine> ms;
  for (int i = 0; i < 12; ++i) ms.push_back({"m" + std::to_string(i), "R" + std::to_string(i / 4), 80, 100, "A100", 1});
  ms[5].gpu = "H100";
  const double lat[3][3] = {{0.2, 30, 80}, {30, 0.2, 60}, {80, 60, 0.2}};
  const double gbps[3][3] = {{100, 2, 0.5}, {2, 100, 5}, {0.5, 5, 100}};
  std::vector<Link> links;
  for (int64_t i = 0; i < 12; ++i)
    for (int64_t j = i + 1; j < 12; ++j)
      links.push_back({i, j, lat[i / 4][j / 4], (i == 0 && j == 9) ? 4.0 : gbps[i / 4][j / 4]});
  const Cluster c(ms, links);
  ASSERT_TRUE(c.has_interchangeable());
  EXPECT_EQ(c.classes(), 6);
  EXPECT_EQ(c.class_members(c.machine_class(0)), (std::vector<int64_t>{0}));  // its link to 9 is its own
  EXPECT_EQ(c.class_members(c.machine_class(1)), (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(c.class_members(c.machine_class(4)), (std::vector<int64_t>{4, 6, 7}));
  EXPECT_EQ(c.class_members(c.machine_class(5)), (std::vector<int64_t>{5}));
  EXPECT_EQ(c.class_members(c.machine_class(8)), (std::vector<int64_t>{8, 10, 11}));
  EXPECT_EQ(c.class_members(c.machine_class(9)), (std::vector<int64_t>{9}));
  // Without the odd link, machines 0-3 are alike again; a copy with one more region-0 machine
  // joins them.
  links.erase(std::find_if(links.begin(), links.end(), [](const Link& l) { return l.a == 0 && l.b == 9; }));
  links.push_back({0, 9, lat[0][2], gbps[0][2]});
  const Cluster even(ms, links);
  EXPECT_EQ(even.class_members(even.machine_class(0)), (std::vector<int64_t>{0, 1, 2, 3}));
  std::vector<Link> to_new;
  for (int64_t i = 0; i < 12; ++i) to_new.push_back({i, 12, lat[i / 4][0], gbps[i / 4][0]});
  const Cluster grown = even.with_machine(ms[0], to_new);
  EXPECT_EQ(grown.class_members(grown.machine_class(12)), (std::vector<int64_t>{0, 1, 2, 3, 12}));
  const Cluster shrunk = even.without(2);
  EXPECT_EQ(shrunk.class_members(shrunk.machine_class(0)), (std::vector<int64_t>{0, 1, 2}));
}

TEST(PlanInterchangeable, MachinesWhosePairsHoldTheSameValuesInAnotherOrderAreNotAlike) {
  // A ring of six equal links, the other pairs routed: every machine's pairs hold the same
  // latencies (two at 1 hop, two at 2, one at 3), so the hash of its pairs is the same, but no
  // two machines have them to the same third machines. Only the exact comparison tells.
  const Machine m{"", "R", 80, 100, "A100", 1};
  std::vector<Link> ring;
  for (int64_t i = 0; i < 6; ++i) ring.push_back({std::min<int64_t>(i, (i + 1) % 6), std::max<int64_t>(i, (i + 1) % 6), 10, 1});
  const Cluster c(std::vector<Machine>(6, m), ring);
  EXPECT_FALSE(c.has_interchangeable());
  // A ring of four: opposite machines are 1 hop from both of the other two, so they are alike.
  std::vector<Link> four{{0, 1, 10, 1}, {1, 2, 10, 1}, {2, 3, 10, 1}, {0, 3, 10, 1}};
  const Cluster d(std::vector<Machine>(4, m), four);
  EXPECT_EQ(d.classes(), 2);
  EXPECT_EQ(d.class_members(d.machine_class(0)), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(d.class_members(d.machine_class(1)), (std::vector<int64_t>{1, 3}));
}

TEST(PlanInterchangeable, AMachineDifferingInOneCostInputIsItsOwnClassAndClustersOfDrawnValuesHaveNone) {
  RegionalNetwork net;
  net.regions = 1;
  net.base_latency_ms = {1};
  net.base_bandwidth_gbps = {100};
  net.region_link = {1};
  const Machine base{"", "R0", 80, 100, "A100", 8};
  std::vector<Machine> ms(7, base);
  ms[1].memory_gb = 40;
  ms[2].tflops = 90;
  ms[3].gpu = "H100";
  ms[4].gpus = 4;
  ms[5].name = "named";  // a name only labels: still interchangeable with machine 0
  net.region.assign(ms.size(), 0);
  net.access_ms.assign(ms.size(), 0);
  net.access_ms[6] = 0.5;
  const Cluster c = Cluster::from_network(ms, net, MissingLinkRule::Route);
  ASSERT_TRUE(c.has_interchangeable());
  EXPECT_EQ(c.classes(), 6);
  EXPECT_EQ(c.class_members(c.machine_class(0)), (std::vector<int64_t>{0, 5}));
  for (int64_t i = 1; i < 7; ++i)
    if (i != 5) {
      EXPECT_EQ(c.class_members(c.machine_class(i)).size(), 1u) << i;
    }

  std::mt19937_64 rng(7);
  const Cluster linked = random_linked(rng, 9);
  EXPECT_FALSE(linked.has_interchangeable());
  for (int64_t i = 0; i < linked.size(); ++i) EXPECT_EQ(linked.machine_class(i), i);
}

TEST(PlanInterchangeable, TheCanonicalGroupHoldsEachClassesLowestIdsAndMapsOntoTheGroup) {
  std::mt19937_64 rng(11);
  int moved = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const Cluster c = tying_cluster(rng, trial);
    std::vector<int64_t> g = random_half(c, rng);
    std::shuffle(g.begin(), g.end(), rng);
    const CanonicalGroup cg = canonical_group(c, g);
    std::vector<int64_t> sorted = g;
    std::sort(sorted.begin(), sorted.end());
    if (cg.same) {  // none alike: as given; else every machine onto itself, ascending
      EXPECT_EQ(cg.group, c.has_interchangeable() ? sorted : g);
      continue;
    }
    ++moved;
    ASSERT_EQ(cg.group.size(), g.size());
    EXPECT_TRUE(std::is_sorted(cg.group.begin(), cg.group.end()));
    std::map<int64_t, int64_t> count;
    for (int64_t x : g) ++count[c.machine_class(x)];
    std::map<int64_t, std::vector<int64_t>> by_class;
    for (int64_t x : cg.group) by_class[c.machine_class(x)].push_back(x);
    for (const auto& [k, n] : count) {
      const std::vector<int64_t>& members = c.class_members(k);
      EXPECT_EQ(by_class[k], std::vector<int64_t>(members.begin(), members.begin() + n)) << trial;
    }
    // to_given: a bijection from the canonical group onto the group, within classes
    std::set<int64_t> given;
    for (const auto& [from, to] : cg.to_given) {
      EXPECT_EQ(c.machine_class(from), c.machine_class(to));
      given.insert(to);
    }
    EXPECT_EQ(given, std::set<int64_t>(g.begin(), g.end()));
    EXPECT_EQ(canonical_group(c, shuffled_within_classes(c, g, rng)).group, cg.group);
  }
  EXPECT_GE(moved, 20);
  // A machine named twice is left as given (best_pipeline words it).
  const Cluster c = tying_cluster(rng, 0);
  EXPECT_TRUE(canonical_group(c, {0, 0}).same);
}

TEST(PlanInterchangeable, GroupsWithTheSameClassCountsGetTheSameCostOnTheirOwnMachines) {
  std::mt19937_64 rng(20261130);
  const std::vector<ModelSpec> jobs{model("big", 24, 4e8, 32, 50), model("small", 6, 1e7, 8, 30)};
  int feasible = 0, infeasible = 0;
  for (int trial = 0; trial < 50; ++trial) {
    const Cluster c = tying_cluster(rng, trial);
    Evaluator ev(c, jobs);
    for (size_t j = 0; j < jobs.size(); ++j) {
      const std::vector<int64_t> g = random_half(c, rng);
      const std::vector<int64_t> h = shuffled_within_classes(c, g, rng);
      const JobPlan a = best_pipeline(c, jobs[j], g), b = best_pipeline(c, jobs[j], h);
      ASSERT_EQ(a.cost.feasible, b.cost.feasible) << trial << " " << j;
      const Evaluator::JobEval ea = ev.job(j, g), eb = ev.job(j, h);
      EXPECT_EQ(ea.feasible, a.cost.feasible);
      EXPECT_EQ(eb.time, ea.time);
      if (!a.cost.feasible) {
        ++infeasible;
        continue;
      }
      ++feasible;
      EXPECT_EQ(job_time(a), job_time(b)) << trial << " " << j;  // bit for bit
      EXPECT_EQ(ea.time, job_time(a));
      for (const auto& [jp, group] : {std::pair<const JobPlan*, const std::vector<int64_t>*>{&a, &g}, {&b, &h}}) {
        for (int64_t x : jp->machines()) EXPECT_TRUE(std::binary_search(group->begin(), group->end(), x)) << x;
        // the layout's cost is its own: the cost model on its machines gives it again
        const JobCost again = pipeline_cost(c, jobs[j], jp->replicas);
        EXPECT_EQ(again.iteration_s, jp->cost.iteration_s);
        for (size_t r = 0; r < again.stages.size(); ++r)
          for (size_t s = 0; s < again.stages[r].size(); ++s)
            EXPECT_EQ(again.stages[r][s].machine, jp->cost.stages[r][s].machine);
      }
      const JobPlan ref = best_pipeline_reference(c, jobs[j], h);
      EXPECT_EQ(job_time(ref), job_time(b));
    }
  }
  EXPECT_GE(feasible, 30);
  EXPECT_GE(infeasible, 3);
}

TEST(PlanInterchangeable, TheEvaluatorLeavesAGroupWithAMachineTwiceUncachedAndItsCountsClean) {
  std::mt19937_64 rng(5);
  const std::vector<ModelSpec> jobs{model("small", 6, 1e7, 8, 30)};
  int checked = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const Cluster c = tying_cluster(rng, trial);
    if (!c.has_interchangeable() || c.size() < 4) continue;
    Evaluator ev(c, jobs);
    const std::vector<int64_t> g = random_half(c, rng);
    const Evaluator::JobEval before = ev.job(0, g);
    std::vector<int64_t> twice = g;
    twice.push_back(g.front());
    try {
      (void)ev.job(0, twice);  // whatever best_pipeline makes of it, nothing is kept
    } catch (const std::exception&) {
    }
    const Evaluator::JobEval after = ev.job(0, g);
    EXPECT_EQ(after.feasible, before.feasible);
    EXPECT_EQ(after.time, before.time);
    const JobPlan jp = best_pipeline(c, jobs[0], g);
    EXPECT_EQ(after.time, jp.cost.feasible ? job_time(jp) : after.time);
    ++checked;
  }
  EXPECT_GE(checked, 10);
}

}  // namespace

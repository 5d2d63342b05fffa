// Hulk's refinement step (csrc/plan/reseed.h): the last job's group grown afresh from seed regions.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "csrc/plan/reseed.h"
#include "tests/cpp/plan_fixtures.h"

namespace {

using namespace plan_fixtures;
using hulk::plan::detail::Evaluator;
using hulk::plan::detail::kCutGroupMargin;
using hulk::plan::detail::groups_of;
using hulk::plan::detail::region_index;
using hulk::plan::detail::region_then_closest;
using hulk::plan::detail::reseed_last_job;
using hulk::plan::detail::Score;
using hulk::plan::detail::seed_regions;
using hulk::plan::detail::smallest_fitting_prefix;

const auto never = [] { return false; };

TEST(PlanReseed, RegionIndexNumbersNamesInOrderOfFirstAppearance) {
  const Cluster c = two_regions({4, 4}, {4});
  EXPECT_EQ(region_index(c), (std::vector<int64_t>{0, 0, 1}));
}

// The seeds are the regions of most free compute, most first (ties: lower index), against
// sorting every region by hand; regions with no free machine are never seeds.
TEST(PlanReseed, SeedRegionsHaveTheMostFreeCompute) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 40; ++trial) {
    const Cluster c = random_regions(rng);
    const std::vector<int64_t> region = region_index(c);
    std::vector<uint8_t> free(static_cast<size_t>(c.size()));
    for (auto& f : free) f = static_cast<uint8_t>(rng() % 3 != 0);
    const int64_t R = *std::max_element(region.begin(), region.end()) + 1;
    std::vector<std::pair<double, int64_t>> by_hand;  // (-compute, region)
    for (int64_t r = 0; r < R; ++r) {
      double sum = 0;
      bool any = false;
      for (int64_t x = 0; x < c.size(); ++x)
        if (free[static_cast<size_t>(x)] && region[static_cast<size_t>(x)] == r) {
          sum += c.machine(x).tflops;
          any = true;
        }
      if (any) by_hand.push_back({-sum, r});
    }
    std::sort(by_hand.begin(), by_hand.end());
    for (size_t k : {size_t{1}, size_t{2}, size_t{8}}) {
      std::vector<int64_t> want;
      for (size_t i = 0; i < std::min(k, by_hand.size()); ++i) want.push_back(by_hand[i].second);
      EXPECT_EQ(seed_regions(c, region, free, k), want) << "trial " << trial << " k " << k;
    }
  }
}

// The bottom-up seed: the shortest prefix of a machine list that holds the job. On random
// clusters and random machine orders: what it returns is that prefix (sorted), it fits, the
// prefix one shorter does not (the bisection's boundary), and a list that cannot hold the job
// gives nothing. Cut at once by the clock, it still returns a prefix that fits.
TEST(PlanReseed, SmallestFittingPrefixIsTheBoundaryOfFitting) {
  std::mt19937_64 rng(17);
  const std::vector<ModelSpec> jobs = {model("big", 12, 2e8, 8, 60)};
  int found = 0, none = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const Cluster c = random_regions(rng);
    Evaluator ev(c, jobs);
    std::vector<int64_t> order(static_cast<size_t>(c.size()));
    for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
    std::shuffle(order.begin(), order.end(), rng);
    order.resize(1 + rng() % order.size());
    const auto sorted_prefix = [&](size_t k) {
      std::vector<int64_t> h(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k));
      std::sort(h.begin(), h.end());
      return h;
    };
    int64_t evaluations = 0;
    const std::vector<int64_t> got = smallest_fitting_prefix(ev, 0, order, never, evaluations);
    EXPECT_GT(evaluations, 0);
    if (!ev.job(0, sorted_prefix(order.size())).feasible) {
      EXPECT_TRUE(got.empty()) << "trial " << trial;
      ++none;
      continue;
    }
    ++found;
    ASSERT_FALSE(got.empty()) << "trial " << trial;
    EXPECT_EQ(got, sorted_prefix(got.size())) << "trial " << trial;
    EXPECT_TRUE(ev.job(0, got).feasible) << "trial " << trial;
    if (got.size() > 1) EXPECT_FALSE(ev.job(0, sorted_prefix(got.size() - 1)).feasible) << "trial " << trial;
    const auto cut = smallest_fitting_prefix(ev, 0, order, [] { return true; }, evaluations);
    EXPECT_TRUE(ev.job(0, cut).feasible) << "trial " << trial;
  }
  EXPECT_GT(found, 0);  // both cases are exercised
  EXPECT_GT(none, 0);
}

// On small random clusters, with every free machine a candidate (pool >= machines) and every
// region a seed: the other jobs keep their machines, every job stays feasible, the makespan never
// grows, and where the last job's group changed its time fell and no single free machine taken
// or given back shortens it further (the descent from its seed ended at a local optimum).
TEST(PlanReseed, NeverLengthensAndEndsWhereNoSingleFreeMachineHelps) {
  std::mt19937_64 rng(31);
  int improved = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const Cluster c = random_regions(rng);
    const std::vector<ModelSpec> jobs = two_small_jobs();
    Evaluator ev(c, jobs);
    std::vector<int64_t> a = random_assignment(c, rng);
    const Score start = ev.score(a);
    std::vector<int64_t> b = a;
    const auto r = reseed_last_job(c, jobs, ev, b, never, 16, 64);
    if (start.infeasible > 0) {  // left as it is
      EXPECT_EQ(b, a) << "trial " << trial;
      continue;
    }
    const Score end = ev.score(b);
    EXPECT_EQ(end.infeasible, 0) << "trial " << trial;
    EXPECT_LE(end.makespan, start.makespan) << "trial " << trial;
    const auto last = static_cast<size_t>(start.last);
    for (size_t x = 0; x < a.size(); ++x) {
      if (a[x] >= 0 && a[x] != start.last) {
        EXPECT_EQ(b[x], a[x]) << "trial " << trial << " machine " << x;
      }
    }
    if (!r.improved) {
      EXPECT_EQ(b, a) << "trial " << trial;
      continue;
    }
    ++improved;
    const auto g = groups_of(b, jobs.size())[last];
    const double t = ev.job(last, g).time;
    EXPECT_LT(t, ev.job(last, groups_of(a, jobs.size())[last]).time) << "trial " << trial;
    for (int64_t x = 0; x < c.size(); ++x) {
      if (a[static_cast<size_t>(x)] >= 0 && a[static_cast<size_t>(x)] != start.last) continue;  // not free
      std::vector<int64_t> h = g;
      const auto it = std::lower_bound(h.begin(), h.end(), x);
      if (it != h.end() && *it == x)
        h.erase(it);
      else
        h.insert(it, x);
      if (h.empty()) continue;
      const auto e = ev.job(last, h);
      EXPECT_FALSE(e.feasible && e.time < t) << "trial " << trial << " machine " << x;
    }
  }
  EXPECT_GT(improved, 0);  // the case where it moves is exercised
}

// A job on slow machines of its own region regrows among the fast idle machines of another.
TEST(PlanReseed, MovesTheLastJobToAFastIdleRegion) {
  Net net;
  net.inter_gbps = 0.05;
  const Cluster c = two_regions({8, 8}, {8, 8}, net, {10, 10, 400, 400});
  const std::vector<ModelSpec> jobs = {model("big", 8, 1e8, 8, 100)};
  Evaluator ev(c, jobs);
  std::vector<int64_t> a{0, 0, -1, -1};
  const auto r = reseed_last_job(c, jobs, ev, a, never);
  EXPECT_TRUE(r.improved);
  EXPECT_EQ(a, (std::vector<int64_t>{-1, -1, 0, 0}));
}

// Four regions of two machines: A and B fast and joined by a fast link, C and D slow and far.
Cluster four_pairs() {
  std::vector<Machine> ms;
  const std::vector<std::string> names = {"A", "A", "B", "B", "C", "C", "D", "D"};
  for (size_t k = 0; k < names.size(); ++k)
    ms.push_back({"m" + std::to_string(k), names[k], 6.0, k < 4 ? 400.0 : 10.0, "", 1});
  std::vector<Link> links;
  for (size_t i = 0; i < ms.size(); ++i)
    for (size_t j = i + 1; j < ms.size(); ++j) {
      const bool same = ms[i].region == ms[j].region, ab = i < 4 && j < 4;
      links.push_back({static_cast<int64_t>(i), static_cast<int64_t>(j), same ? 1.0 : ab ? 5.0 : 150.0,
                       same ? 100.0 : ab ? 10.0 : 0.05});
    }
  return Cluster(ms, links);
}

// The list a seed region too small for the job grows from: its own machines as given, then the
// free machines outside it, closest in send time first (B before C and D), at most `pool`.
TEST(PlanReseed, RegionThenClosestListsTheRegionThenItsClosestFreeMachines) {
  const Cluster c = four_pairs();
  std::vector<uint8_t> free(8, 1);
  free[7] = 0;  // another job's
  const std::vector<int64_t> region = {1, 0};  // A, fastest first as the caller orders it
  const std::vector<int64_t> all = region_then_closest(c, region, free, 1e8, 100);
  ASSERT_EQ(all.size(), 7u);  // A's two, then the five other free machines once each
  EXPECT_EQ(std::vector<int64_t>(all.begin(), all.begin() + 4), (std::vector<int64_t>{1, 0, 2, 3}));
  std::vector<int64_t> rest(all.begin() + 4, all.end());
  std::sort(rest.begin(), rest.end());
  EXPECT_EQ(rest, (std::vector<int64_t>{4, 5, 6}));
  const std::vector<int64_t> capped = region_then_closest(c, region, free, 1e8, 2);
  EXPECT_EQ(capped, (std::vector<int64_t>{1, 0, 2, 3}));
}

// No region holds the job alone: the seed region grows by its closest machines. The job sits on
// machines of C and D and regrows within A and B.
TEST(PlanReseed, GrowsASeedRegionTooSmallForTheJobFromItsClosestMachines) {
  const Cluster c = four_pairs();
  const std::vector<ModelSpec> jobs = {model("big", 8, 1e8, 8, 100)};
  Evaluator ev(c, jobs);
  for (int64_t r = 0; r < 4; ++r)  // the case: no region's two machines hold the job
    ASSERT_FALSE(ev.job(0, {2 * r, 2 * r + 1}).feasible) << "region " << r;
  std::vector<int64_t> a{-1, -1, -1, -1, 0, 0, 0, -1};
  ASSERT_TRUE(ev.job(0, groups_of(a, 1)[0]).feasible);
  const double before = ev.job(0, groups_of(a, 1)[0]).time;
  const auto r = reseed_last_job(c, jobs, ev, a, never);
  EXPECT_TRUE(r.improved);
  const auto g = groups_of(a, 1)[0];
  EXPECT_GE(g.size(), 3u);
  for (int64_t x : g) EXPECT_LT(x, 4) << "machine " << x << " outside A and B";
  EXPECT_TRUE(ev.job(0, g).feasible);
  EXPECT_LT(ev.job(0, g).time, before);
}

// A clock that says "out of time" from its (after + 1)-th question on: cuts a reseed at a chosen
// point, the same on every run.
struct CutAfter {
  int64_t after;
  int64_t asked = 0;
  bool operator()() { return ++asked > after; }
};

// The job on A's two machines; B's two idle machines are a little (1%) or much (20%) faster. At
// every point the clock can cut the reseed, a group from a cut descent is taken only when it is
// at least kCutGroupMargin shorter than the job's; a descent that ends takes any shorter group.
TEST(PlanReseed, ACutDescentTakesOnlyAClearlyShorterGroup) {
  Net net;
  net.inter_gbps = 0.05;
  int64_t changed_little = -1;
  for (const double faster : {1.01, 1.2}) {
    const Cluster c = two_regions({8, 8}, {8, 8}, net, {100, 100, 100 * faster, 100 * faster});
    const std::vector<ModelSpec> jobs = {model("big", 8, 1e8, 8, 100)};
    Evaluator ev(c, jobs);
    const std::vector<int64_t> start{0, 0, -1, -1}, on_b{-1, -1, 0, 0};
    const double t_a = ev.job(0, {0, 1}).time, t_b = ev.job(0, {2, 3}).time;
    ASSERT_LT(t_b, t_a);  // the case: B shorter, by less than the margin or by more
    ASSERT_EQ(t_b > (1 - kCutGroupMargin) * t_a, faster < 1.1) << t_b / t_a;
    std::vector<int64_t> a = start;
    int64_t asked = 0;
    const auto r = reseed_last_job(c, jobs, ev, a, [&] { return ++asked < 0; });
    EXPECT_TRUE(r.improved) << faster;  // never cut: B taken
    EXPECT_EQ(a, on_b) << faster;
    EXPECT_EQ(r.cut_dismissed, 0) << faster;
    int64_t dismissed = 0, changed = 0;
    for (int64_t after = 0; after < asked; ++after) {
      a = start;
      const auto rc = reseed_last_job(c, jobs, ev, a, CutAfter{after});
      if (rc.cut_dismissed > 0) {
        ++dismissed;
        EXPECT_EQ(a, start) << faster << " cut after " << after;  // B's was the only shorter group
      }
      if (a != start) {
        ++changed;
        EXPECT_EQ(a, on_b) << faster << " cut after " << after;
      }
    }
    if (faster < 1.1) {
      EXPECT_GT(dismissed, 0);  // some cut falls in B's descent
      changed_little = changed;
    } else {
      EXPECT_EQ(dismissed, 0);
      EXPECT_GT(changed, changed_little);  // the same cuts take B's clearly shorter group
    }
  }
}
}  // namespace

// Hulk's refinement step (csrc/plan/aligned_chain.h): the last job on replica-aligned region chains.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "csrc/plan/aligned_chain.h"
#include "csrc/plan/job_helpers.h"
#include "csrc/plan/reseed.h"
#include "tests/cpp/plan_fixtures.h"

namespace {

using namespace plan_fixtures;
using hulk::plan::detail::align_last_job;
using hulk::plan::detail::aligned_chain;
using hulk::plan::detail::AlignedChain;
using hulk::plan::detail::capacity_bytes;
using hulk::plan::detail::Evaluator;
using hulk::plan::detail::fastest_first;
using hulk::plan::detail::groups_of;
using hulk::plan::detail::kAlignedGrowth;
using hulk::plan::detail::kAlignedPromise;
using hulk::plan::detail::kAlignedReplicas;
using hulk::plan::detail::memory_need;
using hulk::plan::detail::micro_batch;
using hulk::plan::detail::region_index;
using hulk::plan::detail::Score;

const auto never = [] { return false; };

// A job large enough that several machines hold it and replicas pay off.
std::vector<ModelSpec> jobs_for_chains() { return {model("big", 24, 2e8, 64, 200), model("small", 4, 2e7, 16, 50)}; }

// Each region's machines fastest first (all machines free).
std::vector<std::vector<int64_t>> members_of(const Cluster& c) {
  const std::vector<int64_t> region = region_index(c);
  std::vector<std::vector<int64_t>> m(static_cast<size_t>(*std::max_element(region.begin(), region.end()) + 1));
  for (int64_t x : fastest_first(c)) m[static_cast<size_t>(region[static_cast<size_t>(x)])].push_back(x);
  return m;
}

// The chain by hand: the next region is the open one (D machines or more, not yet taken) whose
// first machine is closest to the last region's first machine in send time; each region gives
// its first floor(n / D) * D machines.
TEST(PlanAlignedChain, ChainsTheNearestRegionsAndTakesMultiplesOfD) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 40; ++trial) {
    const Cluster c = random_regions(rng, 6, 8, trial % 2 == 0);
    const auto members = members_of(c);
    const size_t R = members.size();
    const double bytes = 3e7;
    std::vector<double> dist(R * R, kInf);
    for (size_t a = 0; a < R; ++a)
      for (size_t b = 0; b < R; ++b)
        if (a != b) dist[a * R + b] = c.send_time(members[a][0], members[b][0], bytes);
    for (int64_t d : kAlignedReplicas) {
      for (size_t start = 0; start < R; ++start) {
        if (members[start].size() < static_cast<size_t>(d)) continue;
        const AlignedChain ch =
            aligned_chain(members, [&](size_t a) { return dist.data() + a * R; }, static_cast<int64_t>(start), d, c.size());
        std::vector<int64_t> order;
        std::vector<size_t> ends;
        std::vector<bool> taken(R, false);
        size_t at = start;
        for (;;) {
          taken[at] = true;
          const size_t take = members[at].size() / static_cast<size_t>(d) * static_cast<size_t>(d);
          EXPECT_GT(take, 0u);
          for (size_t k = 0; k < take; ++k) order.push_back(members[at][k]);
          ends.push_back(order.size());
          double best = kInf;
          size_t next = R;
          for (size_t r = 0; r < R; ++r) {
            if (taken[r] || members[r].size() < static_cast<size_t>(d)) continue;
            const double t = c.send_time(members[at][0], members[r][0], bytes);
            if (t < best) {
              best = t;
              next = r;
            }
          }
          if (next == R) break;
          at = next;
        }
        EXPECT_EQ(ch.order, order) << "trial " << trial << " d " << d << " start " << start;
        EXPECT_EQ(ch.ends, ends) << "trial " << trial << " d " << d << " start " << start;
        for (size_t i = 0; i < ch.ends.size(); ++i) EXPECT_EQ(ch.ends[i] % static_cast<size_t>(d), 0u);
      }
    }
  }
}

// A chain ends where its row of distances cannot be given (out of time): with rows for its
// first k regions only, it is the first k + 1 regions of the whole chain.
TEST(PlanAlignedChain, EndsWhereNoRowOfDistancesIsGiven) {
  std::mt19937_64 rng(5);
  int cut = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const Cluster c = random_regions(rng, 6, 8, trial % 2 == 0);
    const auto members = members_of(c);
    const size_t R = members.size();
    std::vector<double> dist(R * R, kInf);
    for (size_t a = 0; a < R; ++a)
      for (size_t b = 0; b < R; ++b)
        if (a != b) dist[a * R + b] = c.send_time(members[a][0], members[b][0], 3e7);
    const AlignedChain whole = aligned_chain(members, [&](size_t a) { return dist.data() + a * R; }, 0, 1, c.size());
    for (size_t k = 0; k + 1 < whole.ends.size(); ++k) {
      size_t rows = 0;
      const AlignedChain ch = aligned_chain(
          members, [&](size_t a) { return rows++ < k ? dist.data() + a * R : nullptr; }, 0, 1, c.size());
      ASSERT_EQ(ch.ends.size(), k + 1) << "trial " << trial << " k " << k;
      EXPECT_EQ(ch.order, std::vector<int64_t>(whole.order.begin(), whole.order.begin() + static_cast<std::ptrdiff_t>(ch.ends.back())));
      ++cut;
    }
  }
  EXPECT_GT(cut, 20);
}

// On clusters small enough that every chain and every prefix is laid out (at most 6 regions:
// every region a start, every prefix among the 8 of the first round; each chain up to its cap;
// a D's other starts where its first chain is promising), the job's new time is the least over all of them by
// hand (an independent enumeration through best_pipeline), when that is shorter than its own;
// the other job keeps its machines and the makespan never grows.
TEST(PlanAlignedChain, TakesTheShortestAlignedPrefixAndNeverLengthens) {
  std::mt19937_64 rng(11);
  int improved = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const Cluster c = random_regions(rng, 6, 8, trial % 2 == 0);
    const std::vector<ModelSpec> jobs = jobs_for_chains();
    Evaluator ev(c, jobs);
    std::vector<int64_t> a = random_assignment(c, rng);
    const Score start = ev.score(a);
    std::vector<int64_t> b = a;
    const auto r = align_last_job(c, jobs, ev, b, never);
    if (start.infeasible > 0) {  // left as it is
      EXPECT_EQ(b, a) << "trial " << trial;
      EXPECT_FALSE(r.improved);
      continue;
    }
    const auto last = static_cast<size_t>(start.last);
    const ModelSpec& job = jobs[last];
    // Free machines by region, fastest first, and every prefix of every chain by hand.
    const std::vector<int64_t> region = region_index(c);
    std::vector<std::vector<int64_t>> members(static_cast<size_t>(*std::max_element(region.begin(), region.end()) + 1));
    for (int64_t x : fastest_first(c))
      if (a[static_cast<size_t>(x)] < 0 || a[static_cast<size_t>(x)] == start.last)
        members[static_cast<size_t>(region[static_cast<size_t>(x)])].push_back(x);
    const double bytes = job.boundary_bytes(micro_batch(job, 1));
    const double before = ev.job(last, groups_of(a, jobs.size())[last]).time;
    // The least time over every prefix of the chain from region s, for D = d.
    const auto chain_least = [&](size_t s, size_t D) {
      double least = kInf;
      std::vector<bool> taken(members.size(), false);
      std::vector<int64_t> g;
      size_t at = s;
      while (at < members.size()) {
        taken[at] = true;
        g.insert(g.end(), members[at].begin(), members[at].begin() + static_cast<std::ptrdiff_t>(members[at].size() / D * D));
        std::vector<int64_t> sorted = g;
        std::sort(sorted.begin(), sorted.end());
        double mem = 0;
        for (int64_t x : sorted) mem += capacity_bytes(c, x);
        if (mem >= memory_need(job)) {
          const auto e = ev.job(last, sorted);
          if (e.feasible) least = std::min(least, e.time);
        }
        if (g.size() >= kAlignedGrowth * groups_of(a, jobs.size())[last].size()) break;  // the chain's cap
        size_t next = members.size();
        double best = kInf;
        for (size_t q = 0; q < members.size(); ++q) {
          if (taken[q] || members[q].size() < D) continue;
          const double t = c.send_time(members[at][0], members[q][0], bytes);
          if (t < best) {
            best = t;
            next = q;
          }
        }
        at = next;
      }
      return least;
    };
    // Every D from its first start (the region with the most multiples of D machines, ties the
    // lower index), and from every other start where that came within kAlignedPromise.
    double least = kInf;
    for (int64_t d : kAlignedReplicas) {
      const size_t D = static_cast<size_t>(d);
      size_t first = members.size();
      for (size_t s = 0; s < members.size(); ++s)
        if (members[s].size() >= D && (first == members.size() || members[s].size() / D > members[first].size() / D)) first = s;
      if (first == members.size()) continue;
      const double from_first = chain_least(first, D);
      least = std::min(least, from_first);
      if (!(from_first < kAlignedPromise * before)) continue;
      for (size_t s = 0; s < members.size(); ++s)
        if (s != first && members[s].size() >= D) least = std::min(least, chain_least(s, D));
    }
    const Score end = ev.score(b);
    EXPECT_EQ(end.infeasible, 0) << "trial " << trial;
    EXPECT_LE(end.makespan, start.makespan) << "trial " << trial;
    for (size_t x = 0; x < a.size(); ++x) {
      if (a[x] >= 0 && a[x] != start.last) {
        EXPECT_EQ(b[x], a[x]) << "trial " << trial << " machine " << x;
      }
    }
    const double after = ev.job(last, groups_of(b, jobs.size())[last]).time;
    if (least < before) {
      ++improved;
      EXPECT_TRUE(r.improved) << "trial " << trial;
      EXPECT_DOUBLE_EQ(after, least) << "trial " << trial;
      EXPECT_EQ(r.machines, static_cast<int64_t>(groups_of(b, jobs.size())[last].size()));
      EXPECT_GT(r.replicas, 0);
    } else {
      EXPECT_FALSE(r.improved) << "trial " << trial;
      EXPECT_EQ(b, a) << "trial " << trial;
    }
  }
  EXPECT_GT(improved, 0);  // the case where it moves is exercised
}

// Out of time before it starts, it changes nothing and lays nothing out.
TEST(PlanAlignedChain, OutOfTimeChangesNothing) {
  std::mt19937_64 rng(3);
  const Cluster c = random_regions(rng, 6, 8, true);
  const std::vector<ModelSpec> jobs = jobs_for_chains();
  Evaluator ev(c, jobs);
  std::vector<int64_t> a = random_assignment(c, rng);
  const std::vector<int64_t> b = a;
  const auto r = align_last_job(c, jobs, ev, a, [] { return true; });
  EXPECT_EQ(a, b);
  EXPECT_EQ(r.evaluations, 0);
  EXPECT_FALSE(r.improved);
}

// Two regions of four alike machines, far apart: a job on two machines of each region (its
// stages' replicas split across the WAN) moves to a group aligned to its replicas, which is
// shorter.
TEST(PlanAlignedChain, AlignsAJobSplitAcrossTwoRegions) {
  Net net;
  net.inter_ms = 120;
  net.inter_gbps = 0.2;
  const Cluster c = two_regions({8, 8, 8, 8}, {8, 8, 8, 8}, net);
  const std::vector<ModelSpec> jobs = {model("big", 16, 1e8, 64, 100)};
  Evaluator ev(c, jobs);
  std::vector<int64_t> a{0, 0, -1, -1, 0, 0, -1, -1};
  const double before = ev.score(a).makespan;
  const auto r = align_last_job(c, jobs, ev, a, never);
  ASSERT_TRUE(r.improved);
  EXPECT_LT(ev.score(a).makespan, before);
}

}  // namespace

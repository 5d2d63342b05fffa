// The idle check that ends Hulk's refinement (csrc/plan/idle_check.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>

#include "csrc/plan/idle_check.h"
#include "tests/cpp/plan_fixtures.h"

namespace {

using namespace plan_fixtures;
using hulk::plan::detail::Evaluator;
using hulk::plan::detail::offer_idle_to_last_job;

const auto never = [] { return false; };

bool has(const std::vector<std::string>& notes, const std::string& what) {
  return std::any_of(notes.begin(), notes.end(), [&](const std::string& n) { return n.find(what) != std::string::npos; });
}

// One job on one machine of region A; three more machines in A on a fast LAN, four in B behind
// a slow link: the close ones shorten the job, the far ones lengthen it.
struct OneJobNearAndFar {
  Cluster c = two_regions({40, 40, 40, 40}, {40, 40, 40, 40}, Net{1, 100, 200, 0.01});
  std::vector<ModelSpec> jobs{model("J", 8)};
  std::vector<int64_t> start() const {
    std::vector<int64_t> a(8, -1);
    a[0] = 0;
    return a;
  }
};

// Without a deadline: the check gives the job the machines that shorten it, never lengthens it,
// and the machines it leaves idle get the cost model's figures, not the clock.
TEST(PlanIdleCheck, GivesMachinesThatShortenTheJobAndExplainsTheRest) {
  OneJobNearAndFar f;
  Evaluator ev(f.c, f.jobs);
  std::vector<int64_t> a = f.start();
  const double before = ev.score(a).makespan;
  const auto out = offer_idle_to_last_job(f.c, f.jobs, ev, a, never);
  EXPECT_GT(out.given, 0);
  EXPECT_LT(ev.score(a).makespan, before);
  EXPECT_EQ(std::count(a.begin(), a.end(), 0), 1 + out.given);
  for (int64_t x = 4; x < 8; ++x) EXPECT_EQ(a[static_cast<size_t>(x)], -1) << "far machine " << x;
  ASSERT_EQ(out.notes.size(), 1u);
  EXPECT_TRUE(has(out.notes, "would take")) << out.notes[0];
  EXPECT_FALSE(has(out.notes, "time limit")) << out.notes[0];
}

// The deadline comes right after a round that gave the job machines: the note says what that
// round took and weighed, not that the job was never offered them.
TEST(PlanIdleCheck, CutAfterAGiftSaysWhatWasWeighed) {
  OneJobNearAndFar f;
  Evaluator ev(f.c, f.jobs);
  std::vector<int64_t> a = f.start();
  const std::vector<int64_t> first = a;
  const auto out = offer_idle_to_last_job(f.c, f.jobs, ev, a, [&] { return a != first; });
  ASSERT_GT(out.given, 0);
  ASSERT_EQ(out.notes.size(), 1u);
  // batches 1, 2, 4 and 7 (all seven idle machines: under the cap of 4 x 1 + 16) were weighed
  EXPECT_TRUE(has(out.notes, "took the batch of the closest idle ones that shortened it most (" +
                                  std::to_string(out.given) + " more, of batches of up to 7 weighed"))
      << out.notes[0];
  EXPECT_FALSE(has(out.notes, "was not offered them")) << out.notes[0];
}

// Out of time before any batch: nothing moves and the note says the clock came first.
TEST(PlanIdleCheck, OutOfTimeAtOnceMovesNothing) {
  OneJobNearAndFar f;
  Evaluator ev(f.c, f.jobs);
  std::vector<int64_t> a = f.start();
  const auto out = offer_idle_to_last_job(f.c, f.jobs, ev, a, [] { return true; });
  EXPECT_EQ(out.given, 0);
  EXPECT_EQ(a, f.start());
  ASSERT_EQ(out.notes.size(), 1u);
  EXPECT_TRUE(has(out.notes, "7 machine(s) stay idle")) << out.notes[0];
  EXPECT_TRUE(has(out.notes, "was not offered them: the time limit came first")) << out.notes[0];
}

// On random two-region clusters with two jobs: the check never lengthens the makespan, and a
// note comes exactly when machines stay idle.
TEST(PlanIdleCheck, NeverLengthensTheMakespan) {
  std::mt19937_64 rng(41);
  int gave = 0, noted = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const Cluster c = random_cluster(rng);
    const std::vector<ModelSpec> jobs = two_small_jobs();
    Evaluator ev(c, jobs);
    std::vector<int64_t> a = random_assignment(c, rng);
    const auto before = ev.score(a);
    if (before.infeasible > 0) continue;
    const auto out = offer_idle_to_last_job(c, jobs, ev, a, never);
    EXPECT_LE(ev.score(a).makespan, before.makespan * (1 + 1e-12)) << "trial " << trial;
    EXPECT_EQ(ev.score(a).infeasible, 0) << "trial " << trial;
    const bool idle_left = std::count(a.begin(), a.end(), -1) > 0;
    EXPECT_EQ(out.notes.size(), idle_left ? 1u : 0u) << "trial " << trial;
    EXPECT_FALSE(has(out.notes, "time limit")) << "trial " << trial;
    gave += out.given > 0;
    noted += !out.notes.empty();
  }
  EXPECT_GT(gave, 0);  // the cases are not all trivial
  EXPECT_GT(noted, 0);
}

}  // namespace

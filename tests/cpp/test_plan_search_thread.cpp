// Hulk with Search in a second thread (AnytimePlanner::start_search_thread): under move caps
// both planners are deterministic, so the plan returned is exactly the better of Hulk's alone
// and Search's alone (by makespan, then the jobs' total time; Hulk's on a tie), and its notes
// say which; the thread is joined however
// the planner ends.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "csrc/plan/assignment.h"
#include "csrc/plan/planners.h"
#include "csrc/plan/rules.h"
#include "tests/cpp/plan_fixtures.h"

namespace {

using namespace hulk::plan;
using namespace plan_fixtures;

// Hulk as plan(..., "hulk") runs it on the full set of sources, or with one poor
// classification only (every machine to job 0: Algorithm 1 must move machines to the other
// jobs), a planner Search often beats.
Plan plan_hulk_anytime(const Cluster& c, const std::vector<ModelSpec>& jobs, const SearchOptions& o, bool full, bool thread) {
  AnytimePlanner a(c, jobs, o);
  if (thread) a.start_search_thread();
  if (full) {
    a.add_search_starts(0, 2);
    a.add_classification("the greedy rule's groups", greedy_classes(c, jobs), 8);
    a.descend_best(0.3);
    a.add_classification("the region heuristic's groups", heuristic_classes(c, jobs), 8);
    a.add_search_starts(2, AnytimePlanner::kSearchStarts);
  } else {
    a.add_classification("every machine to job 0", std::vector<int64_t>(static_cast<size_t>(c.size()), 0), 0);
  }
  return a.finish();
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

}  // namespace

TEST(PlanSearchThread, ReturnsTheShorterOfHulksAndSearchsPlans) {
  std::mt19937_64 rng(29);
  int search_returned = 0, hulk_returned = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const Cluster c = random_cluster(rng);
    std::vector<ModelSpec> jobs = two_small_jobs();
    if (trial % 3 == 1) jobs.push_back(model("j2", 3, 1e8, 8, 30));
    const bool full = trial % 2 == 0;
    const SearchOptions o = moves(full ? 40 : 2, static_cast<uint64_t>(trial));
    const Plan alone = plan_hulk_anytime(c, jobs, o, full, false);
    const Plan search = plan_search(c, jobs, o);
    const Plan both = plan_hulk_anytime(c, jobs, o, full, true);
    EXPECT_EQ(both.planner, "hulk");
    ASSERT_GE(both.notes.size(), 2u);
    if (hulk::plan::detail::score_of(search) < hulk::plan::detail::score_of(alone)) {
      ++search_returned;
      EXPECT_EQ(both.makespan_s, search.makespan_s) << "trial " << trial;
      EXPECT_TRUE(starts_with(both.notes[0], "hulk: Search in a second thread (the same budget, seed and move cap) "
                                             "found the shorter plan, returned: "))
          << both.notes[0];
      EXPECT_EQ(both.notes[1], search.notes[0]);  // then Search's own notes
    } else {
      ++hulk_returned;
      EXPECT_EQ(both.makespan_s, alone.makespan_s) << "trial " << trial;
      EXPECT_EQ(both.notes[0], alone.notes[0]);  // Hulk's story, then the thread's line
      EXPECT_TRUE(starts_with(both.notes[1], "hulk: Search in a second thread (the same budget, seed and move cap) gave "))
          << both.notes[1];
      EXPECT_NE(both.notes[1].find("Hulk's own plan"), std::string::npos) << both.notes[1];
    }
  }
  // Both outcomes occur, so both branches above were checked.
  EXPECT_GT(search_returned, 0);
  EXPECT_GT(hulk_returned, 0);
}

TEST(PlanSearchThread, StartsOnceBeforeAnyStepAndIsJoinedWithoutFinish) {
  std::mt19937_64 rng(31);
  const Cluster c = random_cluster(rng);
  const std::vector<ModelSpec> jobs = two_small_jobs();
  {
    AnytimePlanner a(c, jobs, moves(20, 1));
    a.start_search_thread();
    EXPECT_THROW(a.start_search_thread(), std::logic_error);
  }  // destroyed while the thread may still run: the destructor joins it (the sanitizer build checks)
  AnytimePlanner b(c, jobs, moves(20, 1));
  b.add_search_starts(0, 1);
  EXPECT_THROW(b.start_search_thread(), std::logic_error);
}

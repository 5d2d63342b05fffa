// Scoring of assignments for the planners' local searches (Search's annealing, Hulk's
// refinement): each job laid out by best_pipeline, memoised per job and group (groups with the
// same count of each class of interchangeable machines as one).
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "csrc/plan/assignment.h"
#include "csrc/plan/interchangeable.h"
#include "csrc/plan/job_helpers.h"

namespace hulk::plan::detail {

// Scores assignments with best_pipeline, memoised per job and group (the annealing walk
// revisits groups often).
class Evaluator {
 public:
  Evaluator(const Cluster& c, const std::vector<ModelSpec>& jobs) : c_(c), jobs_(jobs), cache_(jobs.size()) {}

  struct JobEval {
    bool feasible = false;
    double time = kInf;
    double shortfall = 0;
    int64_t stageless = 0;  // machines of the group its layout leaves without a stage
  };

  // Groups with the same count of each class of interchangeable machines (Cluster::machine_class)
  // share one entry: best_pipeline lays them out alike, at the same cost.
  JobEval job(size_t j, const std::vector<int64_t>& given) {
    const std::vector<int64_t> g = canonical_ids(c_, given);
    auto& cache = cache_[j];
    const auto it = cache.find(g);
    if (it != cache.end()) return it->second;
    if (cached_ids_ > kMaxCachedIds) {  // bound memory on long runs (keys are whole groups)
      for (auto& m : cache_) m.clear();
      cached_ids_ = 0;
    }
    const JobPlan jp = best_pipeline(c_, jobs_[j], g);
    JobEval e{jp.cost.feasible, job_time(jp), jp.cost.feasible ? 0.0 : std::max(jp.cost.memory_shortfall_bytes, 1.0),
              jp.cost.feasible ? static_cast<int64_t>(g.size() - jp.machines().size()) : 0};
    cache.emplace(g, e);
    cached_ids_ += g.size() + 8;
    return e;
  }

  Score score(const std::vector<int64_t>& assign) {
    Score s;
    const auto groups = groups_of(assign, jobs_.size());
    for (size_t j = 0; j < jobs_.size(); ++j) {
      const JobEval e = job(j, groups[j]);
      if (!e.feasible) {
        ++s.infeasible;
        s.shortfall += e.shortfall;
      } else {
        if (s.last < 0 || e.time > s.makespan) s.last = static_cast<int64_t>(j);
        s.makespan = std::max(s.makespan, e.time);
        s.total += e.time;
      }
    }
    return s;
  }

 private:
  const Cluster& c_;
  const std::vector<ModelSpec>& jobs_;
  std::vector<std::map<std::vector<int64_t>, JobEval>> cache_;
  static constexpr size_t kMaxCachedIds = size_t{1} << 25;  // 32M machine ids, 256 MB
  size_t cached_ids_ = 0;
};

// The job with the longest iteration time on its group (groups not empty, jobs not `done`) and
// that time; {-1, -1} when there is none. Ties: the lower job index.
std::pair<int64_t, double> slowest_job(Evaluator& ev, const std::vector<std::vector<int64_t>>& g,
                                       const std::vector<uint8_t>& done);

}  // namespace hulk::plan::detail

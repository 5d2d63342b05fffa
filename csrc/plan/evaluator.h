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
#include "csrc/plan/layout_memo.h"

namespace hulk::plan::detail {

// Scores assignments with best_pipeline, memoised per job and group (the annealing walk
// revisits groups often).
class Evaluator {
 public:
  Evaluator(const Cluster& c, const std::vector<ModelSpec>& jobs)
      : c_(c), jobs_(jobs), cache_(jobs.size()), memo_(jobs.size()) {}

  struct JobEval {
    bool feasible = false;
    double time = kInf;
    double shortfall = 0;
    int64_t stageless = 0;  // machines of the group its layout leaves without a stage
  };

  // Groups with the same count of each class of interchangeable machines (Cluster::machine_class)
  // share one entry: best_pipeline lays them out alike, at the same cost.
  JobEval job(size_t j, const std::vector<int64_t>& given) {
    if (!class_key(given)) return evaluate(j, given);  // a machine twice (or out of range): laid out as given, uncached
    const std::vector<int64_t>& key = c_.has_interchangeable() ? key_ : given;
    auto& cache = cache_[j];
    const auto it = cache.find(key);
    if (it != cache.end()) return it->second;
    if (cached_ids_ > kMaxCachedIds) {  // bound memory on long runs (keys are whole groups)
      for (auto& m : cache_) m.clear();
      cached_ids_ = 0;
    }
    const JobEval e = evaluate(j, canonical_group(c_, given).group);  // what key_ stands for (or the group)
    cache.emplace(key, e);
    cached_ids_ += key.size() + 8;
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
  JobEval evaluate(size_t j, const std::vector<int64_t>& g) {
    const JobPlan jp = best_pipeline(c_, jobs_[j], g, memo_[j]);
    return {jp.cost.feasible, job_time(jp), jp.cost.feasible ? 0.0 : std::max(jp.cost.memory_shortfall_bytes, 1.0),
            jp.cost.feasible ? static_cast<int64_t>(g.size() - jp.machines().size()) : 0};
  }
  // key_ = the group's (class, count) pairs by class, where the cluster has interchangeable
  // machines: a count per class and a sort of the classes present, not of the whole group
  // (groups of thousands at 20,000 machines). False for a group that names a machine twice
  // or one out of range (left uncached).
  bool class_key(const std::vector<int64_t>& g) {
    if (!c_.has_interchangeable()) return true;
    if (count_.empty()) {
      count_.assign(static_cast<size_t>(c_.classes()), 0);
      stamp_.assign(static_cast<size_t>(c_.size()), 0);
    }
    ++generation_;
    present_.clear();
    bool ok = true;
    for (int64_t x : g) {
      if (x < 0 || x >= c_.size() || stamp_[static_cast<size_t>(x)] == generation_) {
        ok = false;
        continue;
      }
      stamp_[static_cast<size_t>(x)] = generation_;
      const int64_t k = c_.machine_class(x);
      if (count_[static_cast<size_t>(k)]++ == 0) present_.push_back(k);
    }
    std::sort(present_.begin(), present_.end());
    key_.clear();
    for (int64_t k : present_) {
      key_.push_back(k);
      key_.push_back(count_[static_cast<size_t>(k)]);
      count_[static_cast<size_t>(k)] = 0;
    }
    return ok;
  }
  const Cluster& c_;
  const std::vector<ModelSpec>& jobs_;
  std::vector<std::map<std::vector<int64_t>, JobEval>> cache_;
  std::vector<LayoutMemo> memo_;  // per job: layouts split in earlier calls (a miss of cache_ often repeats them)
  static constexpr size_t kMaxCachedIds = size_t{1} << 25;  // 32M machine ids, 256 MB
  size_t cached_ids_ = 0;
  std::vector<int64_t> key_, present_, count_, stamp_;  // class_key's scratch
  int64_t generation_ = 0;
};

// The job with the longest iteration time on its group (groups not empty, jobs not `done`) and
// that time; {-1, -1} when there is none. Ties: the lower job index.
std::pair<int64_t, double> slowest_job(Evaluator& ev, const std::vector<std::vector<int64_t>>& g,
                                       const std::vector<uint8_t>& done);

// The job that finishes last with these groups (one per job) and its time, the lower index on a
// tie; {-1, -1} when some job is infeasible on its group. Adds its layouts to `evaluations`.
std::pair<int64_t, double> last_job_if_all_feasible(Evaluator& ev, const std::vector<std::vector<int64_t>>& groups,
                                                    int64_t& evaluations);

}  // namespace hulk::plan::detail

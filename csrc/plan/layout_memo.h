// The splits best_pipeline made for one job on one cluster, kept across calls. A local search
// lays out groups that differ by a machine or two; their chains mostly agree, so the same
// layouts (D replicas' machines in stage order) are split again and again: 35-63% of the
// splits of a Search run on 47-1,000 measured machines repeat one made earlier in the run. A
// split and its cost depend only on the cluster, the model and the layout, so the memo hands
// back exactly what optimise_split and pipeline_cost would have given.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace hulk::plan::detail {

class LayoutMemo {
 public:
  struct Outcome {
    std::vector<int64_t> bounds;  // [S + 1] optimise_split's split; empty when none fits the caps
    bool feasible = false;        // pipeline_cost of that split
    double iteration_s = 0;
    double shortfall_bytes = 0;
  };

  // The outcome of layout `reps` ([D][S] machine ids) split with `exhaustive_limit`; nullptr
  // when it has not been split (or its slot went to another layout of the same hash).
  const Outcome* find(const std::vector<std::vector<int64_t>>& reps, double exhaustive_limit);
  // Keeps the outcome of a layout find() did not know. Once the memo holds more than kMaxIds
  // machine ids it is emptied first (bounds its memory on long runs over large groups).
  void add(const std::vector<std::vector<int64_t>>& reps, double exhaustive_limit, Outcome outcome);
  std::size_t size() const { return map_.size(); }
  std::size_t hits() const { return hits_; }  // finds that returned an outcome

 private:
  struct Stored {
    std::vector<int64_t> key;  // D, S, then the ids replica by replica
    double exhaustive_limit;
    Outcome outcome;
  };
  static uint64_t hash(const std::vector<std::vector<int64_t>>& reps, double exhaustive_limit);
  static bool same(const Stored& s, const std::vector<std::vector<int64_t>>& reps, double exhaustive_limit);

  static constexpr std::size_t kMaxIds = std::size_t{1} << 20;  // 1M ids (8 MB of keys) per job
  std::unordered_map<uint64_t, Stored> map_;  // by hash; of two layouts with one hash, the first is kept
  std::size_t ids_ = 0, hits_ = 0;
};

}  // namespace hulk::plan::detail

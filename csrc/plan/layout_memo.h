// The splits best_pipeline made for one job on one cluster, kept across calls. A local search
// lays out groups that differ by a machine or two; their chains mostly agree, so the same
// layouts (D replicas' machines in stage order) are split again and again: 35-63% of the
// splits of a Search run on 47-1,000 measured machines repeat one made earlier in the run. A
// split and its cost depend only on the cluster, the model and the layout, so the memo hands
// back exactly what optimise_split and pipeline_cost would have given.
//
// Flat storage: every layout's ids and split in one array, the entries in one open-addressing
// table. A memo of a node and two vectors per kept layout cost 87-101 ms to free after a 1 s
// plan of the bundled cluster (paper4), time the caller waited past the budget; now it is a few
// arrays (6-8 ms for the whole planner's state).
#pragma once

#include <cstddef>
#include <cstdint>
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
  // A kept outcome as find() hands it back: `bounds` points into the memo (valid until the next
  // add()).
  struct Found {
    const int64_t* bounds = nullptr;  // [bounds_size]
    size_t bounds_size = 0;
    bool feasible = false;
    double iteration_s = 0;
    double shortfall_bytes = 0;
    std::vector<int64_t> bounds_vector() const { return {bounds, bounds + bounds_size}; }
  };

  // Whether layout `reps` ([D][S] machine ids) was split with `exhaustive_limit`, and then its
  // outcome in `out` (false also when its slot went to another layout of the same hash).
  bool find(const std::vector<std::vector<int64_t>>& reps, double exhaustive_limit, Found& out);
  // Keeps the outcome of a layout find() did not know. Once the memo holds more than kMaxIds
  // ids (machines and bounds) it is emptied first (bounds its memory on long runs over large groups).
  void add(const std::vector<std::vector<int64_t>>& reps, double exhaustive_limit, const Outcome& outcome);
  std::size_t size() const { return used_; }
  std::size_t hits() const { return hits_; }  // finds that returned an outcome

 private:
  struct Slot {
    uint64_t hash = 0;
    bool used = false;
    bool feasible = false;
    uint32_t key_size = 0;     // 2 + D S: D, S, then the ids replica by replica
    uint32_t bounds_size = 0;  // right after the key in ids_
    std::size_t at = 0;        // where the key starts in ids_
    double exhaustive_limit = 0;
    double iteration_s = 0;
    double shortfall_bytes = 0;
  };
  static uint64_t hash(const std::vector<std::vector<int64_t>>& reps, double exhaustive_limit);
  bool same(const Slot& s, const std::vector<std::vector<int64_t>>& reps, double exhaustive_limit) const;
  // The slot holding `h`, or the empty slot where it would go.
  Slot& slot_of(uint64_t h);
  void clear();

  static constexpr std::size_t kMaxIds = std::size_t{1} << 20;  // 1M ids (8 MB) per job
  static constexpr std::size_t kFirstSlots = 1024;
  std::vector<int64_t> ids_;  // every kept layout's key, then its bounds
  std::vector<Slot> slots_;   // a power of two, at most half used; of two layouts with one hash, the first is kept
  std::size_t used_ = 0, hits_ = 0;
};

}  // namespace hulk::plan::detail

// A group's layout on its classes' first members (Cluster::machine_class): groups that differ
// only by interchangeable machines get one layout, so the planners' caches see them as one.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "csrc/plan/cluster.h"
#include "csrc/plan/plan.h"

namespace hulk::plan {

// `group` [n] with each machine replaced by a member of its class: a class holding k machines
// of the group gives its k lowest ids, ascending. The group as given (same = true, to_given
// empty) when the cluster has no interchangeable machines, or the group names a machine twice
// or one out of range (best_pipeline words those).
struct CanonicalGroup {
  std::vector<int64_t> group;                          // [n] ascending (but as given, above)
  std::vector<std::pair<int64_t, int64_t>> to_given;   // [n] (canonical id, the group's id), by canonical id
  bool same = true;                                    // every machine maps onto itself
};
CanonicalGroup canonical_group(const Cluster& c, const std::vector<int64_t>& group);

// jp's machines (replicas, stages, tensor ring) mapped from canonical ids to the group's.
void relabel(JobPlan& jp, const CanonicalGroup& g);

}  // namespace hulk::plan

// What the planners need to know about a cluster beyond its links: which machines can reach
// each other, and what a reader of a plan should be told about the cluster. Internal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "csrc/plan/planners.h"

namespace hulk::plan::detail {

// Machines split into sets that can reach each other: each set is the machines reachable
// from its first one (under MissingLinkRule::Route, the cluster's connected components;
// under Forbid, those with a direct link to it). O(n x sets).
std::vector<std::vector<int64_t>> reach_groups(const Cluster& c, std::vector<int64_t> machines);
// What a reader of a plan should know about the cluster for these jobs: sets of machines
// that cannot reach each other, machines too small for every job, pairs without a direct
// link and the rule that applies to them. Empty when there is nothing to say.
std::vector<std::string> cluster_facts(const Cluster& c, const std::vector<ModelSpec>& jobs);

}  // namespace hulk::plan::detail

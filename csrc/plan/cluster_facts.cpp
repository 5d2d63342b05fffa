// Reachability and the facts about a cluster a plan reports (cluster_facts.h).
#include "csrc/plan/cluster_facts.h"

#include <algorithm>
#include <numeric>
#include <sstream>

#include "csrc/plan/job_helpers.h"
#include "csrc/plan/split.h"

namespace hulk::plan::detail {

std::vector<std::vector<int64_t>> reach_groups(const Cluster& c, std::vector<int64_t> ms) {
  std::vector<std::vector<int64_t>> out;
  while (!ms.empty()) {
    std::vector<int64_t> in, rest;
    const int64_t h = ms.front();
    for (int64_t x : ms) (c.reachable(h, x) ? in : rest).push_back(x);
    out.push_back(std::move(in));
    ms.swap(rest);
  }
  return out;
}

std::vector<std::string> cluster_facts(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  std::vector<std::string> out;
  const int64_t N = c.size();
  if (N == 0) return out;
  const bool forbid = c.rule() == MissingLinkRule::Forbid;
  // Pairs without a direct link, and the rule that applies to them.
  std::ostringstream links;
  if (c.regional()) {
    const RegionalNetwork& net = c.network();
    int64_t missing = 0;
    for (int64_t a = 0; a < net.regions; ++a)
      for (int64_t b = a + 1; b < net.regions; ++b) missing += net.region_link[static_cast<size_t>(a * net.regions + b)] == 0;
    if (missing > 0)
      links << missing << " of " << net.regions * (net.regions - 1) / 2 << " region pairs have no direct link";
  } else {
    int64_t missing = 0;
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = i + 1; j < N; ++j) missing += !c.direct(i, j);
    if (missing > 0) links << missing << " of " << N * (N - 1) / 2 << " machine pairs have no direct link";
  }
  if (!links.str().empty())
    out.push_back("cluster: " + links.str() +
                  (forbid ? "; such pairs cannot communicate (missing links forbidden)"
                          : "; they are relayed along the lowest-latency path (missing links routed)"));
  // Sets of machines that cannot reach each other.
  std::vector<int64_t> all(static_cast<size_t>(N));
  std::iota(all.begin(), all.end(), 0);
  const auto parts = reach_groups(c, all);
  if (parts.size() > 1) {
    std::ostringstream o;
    o << "cluster: " << parts.size() << " sets of machines cannot reach each other ("
      << (forbid ? "no direct link, missing links forbidden" : "no path joins them") << "); sizes";
    for (size_t k = 0; k < parts.size() && k < 8; ++k) o << (k ? ", " : " ") << parts[k].size();
    if (parts.size() > 8) o << ", ...";
    o << "; a job runs inside one set";
    out.push_back(o.str());
  }
  // Machines that cannot hold one layer of any job (at the smallest micro-batch).
  int64_t useless = 0;
  for (int64_t i = 0; i < N; ++i) {
    bool helps = false;
    for (const ModelSpec& m : jobs) {
      const int64_t max_d = std::max<int64_t>(1, std::min<int64_t>(N, m.global_batch / std::max<int64_t>(1, m.micro_batches)));
      if (layers_that_fit(m, micro_batch(m, max_d), capacity_bytes(c, i)) >= 1) {
        helps = true;
        break;
      }
    }
    useless += !helps;
  }
  if (useless > 0 && !jobs.empty())
    out.push_back("cluster: " + std::to_string(useless) + " machines cannot hold one layer of any job and stay idle");
  return out;
}

}  // namespace hulk::plan::detail

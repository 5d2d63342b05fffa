#include "csrc/plan/interchangeable.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace hulk::plan {

CanonicalGroup canonical_group(const Cluster& c, const std::vector<int64_t>& group) {
  CanonicalGroup out;
  out.group = group;
  if (!c.has_interchangeable()) return out;
  std::vector<std::pair<int64_t, int64_t>> by_class;  // (class, id)
  by_class.reserve(group.size());
  for (int64_t x : group) {
    if (x < 0 || x >= c.size()) return out;  // best_pipeline words the bad index
    by_class.push_back({c.machine_class(x), x});
  }
  std::sort(by_class.begin(), by_class.end());
  if (std::adjacent_find(by_class.begin(), by_class.end()) != by_class.end()) return out;  // a machine twice
  out.to_given.reserve(by_class.size());
  for (size_t i = 0; i < by_class.size();) {
    const int64_t k = by_class[i].first;
    const std::vector<int64_t>& members = c.class_members(k);
    for (size_t r = 0; i < by_class.size() && by_class[i].first == k; ++i, ++r) {
      out.to_given.push_back({members[r], by_class[i].second});
      if (members[r] != by_class[i].second) out.same = false;
    }
  }
  std::sort(out.to_given.begin(), out.to_given.end());
  for (size_t i = 0; i < out.to_given.size(); ++i) out.group[i] = out.to_given[i].first;
  return out;
}

void relabel(JobPlan& jp, const CanonicalGroup& g) {
  if (g.same) return;
  const auto given = [&](int64_t x) {
    const auto it = std::lower_bound(g.to_given.begin(), g.to_given.end(), std::make_pair(x, int64_t{-1}));
    if (it == g.to_given.end() || it->first != x)
      throw std::logic_error("relabel: machine " + std::to_string(x) + " is not in the canonical group");
    return it->second;
  };
  for (Replica& r : jp.replicas)
    for (int64_t& x : r.machines) x = given(x);
  for (auto& replica : jp.cost.stages)
    for (StageCost& st : replica)
      if (st.machine >= 0) st.machine = given(st.machine);
  for (int64_t& x : jp.tensor_group) x = given(x);
}

}  // namespace hulk::plan

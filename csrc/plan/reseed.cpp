#include "csrc/plan/reseed.h"

#include <algorithm>
#include <map>
#include <string>

#include "csrc/plan/job_helpers.h"

namespace hulk::plan::detail {

namespace {

// A group's standing while it grows: feasible ones by time, the rest by memory shortfall.
struct Standing {
  bool feasible = false;
  double value = kInf;  // time when feasible, else shortfall
};

bool better(const Standing& a, const Standing& b) {
  if (a.feasible != b.feasible) return a.feasible;
  return a.value < b.value;
}

Standing standing_of(const Evaluator::JobEval& e) { return {e.feasible, e.feasible ? e.time : e.shortfall}; }

std::vector<int64_t> toggled(const std::vector<int64_t>& g, int64_t x) {
  std::vector<int64_t> out = g;
  const auto it = std::lower_bound(out.begin(), out.end(), x);
  if (it != out.end() && *it == x)
    out.erase(it);
  else
    out.insert(it, x);
  return out;
}

// The candidates of one step: the group's own machines (when it has two or more), then the
// `pool` free outside machines closest to it in send time of `bytes` and the `pool` fastest
// free outside machines (`by_speed`: fastest_first).
std::vector<int64_t> step_candidates(const Cluster& c, const std::vector<int64_t>& g, std::vector<uint8_t> free,
                                     const std::vector<int64_t>& by_speed, double bytes, size_t pool) {
  std::vector<int64_t> cand;
  if (g.size() > 1) cand = g;
  for (int64_t x : g) free[static_cast<size_t>(x)] = 0;  // outside machines only
  const std::vector<int64_t> out = closest_then_ordered(c, g, free, bytes, pool, {&by_speed});
  cand.insert(cand.end(), out.begin(), out.end());
  return cand;
}

}  // namespace

std::vector<int64_t> region_index(const Cluster& c) {
  std::vector<int64_t> r(static_cast<size_t>(c.size()));
  if (c.regional()) {
    r = c.network().region;
    return r;
  }
  std::map<std::string, int64_t> id;
  for (int64_t x = 0; x < c.size(); ++x) {
    const auto it = id.emplace(c.machine(x).region, static_cast<int64_t>(id.size())).first;
    r[static_cast<size_t>(x)] = it->second;
  }
  return r;
}

std::vector<int64_t> seed_regions(const Cluster& c, const std::vector<int64_t>& region, const std::vector<uint8_t>& free,
                                  size_t seeds) {
  const int64_t R = region.empty() ? 0 : *std::max_element(region.begin(), region.end()) + 1;
  std::vector<double> tflops(static_cast<size_t>(R), 0.0);
  std::vector<uint8_t> any(static_cast<size_t>(R), 0);
  for (int64_t x = 0; x < c.size(); ++x)
    if (free[static_cast<size_t>(x)]) {
      tflops[static_cast<size_t>(region[static_cast<size_t>(x)])] += c.machine(x).tflops;
      any[static_cast<size_t>(region[static_cast<size_t>(x)])] = 1;
    }
  std::vector<int64_t> order;
  for (int64_t r = 0; r < R; ++r)
    if (any[static_cast<size_t>(r)]) order.push_back(r);
  const size_t k = std::min(seeds, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(), [&](int64_t a, int64_t b) {
    return tflops[static_cast<size_t>(a)] > tflops[static_cast<size_t>(b)] ||
           (tflops[static_cast<size_t>(a)] == tflops[static_cast<size_t>(b)] && a < b);
  });
  order.resize(k);
  return order;
}

Reseed reseed_last_job(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev, std::vector<int64_t>& assign,
                       const std::function<bool()>& out_of_time, size_t seeds, size_t pool) {
  Reseed r;
  const size_t J = jobs.size();
  if (J == 0 || c.size() == 0 || out_of_time()) return r;
  const auto groups = groups_of(assign, J);
  size_t last = 0;
  double t_last = -1;
  for (size_t j = 0; j < J; ++j) {
    const Evaluator::JobEval e = ev.job(j, groups[j]);
    ++r.evaluations;
    if (!e.feasible) return r;  // the walk deals with infeasible jobs
    if (e.time > t_last) {
      t_last = e.time;
      last = j;
    }
  }
  std::vector<uint8_t> free(static_cast<size_t>(c.size()), 0);
  for (int64_t x = 0; x < c.size(); ++x) {
    const int64_t a = assign[static_cast<size_t>(x)];
    free[static_cast<size_t>(x)] = a < 0 || a == static_cast<int64_t>(last);
  }
  const std::vector<int64_t> region = region_index(c);
  const std::vector<int64_t> by_speed = fastest_first(c);
  const double bytes = jobs[last].boundary_bytes(micro_batch(jobs[last], 1));
  std::vector<int64_t> best_group;
  double best_time = t_last;
  for (int64_t seed : seed_regions(c, region, free, seeds)) {
    if (out_of_time()) break;
    ++r.seeds;
    std::vector<int64_t> g;
    for (int64_t x = 0; x < c.size(); ++x)
      if (free[static_cast<size_t>(x)] && region[static_cast<size_t>(x)] == seed) g.push_back(x);
    Standing cur = standing_of(ev.job(last, g));
    ++r.evaluations;
    while (!out_of_time()) {
      Standing step = cur;
      int64_t pick = -1;
      for (int64_t x : step_candidates(c, g, free, by_speed, bytes, pool)) {
        if (out_of_time()) break;
        const Standing s = standing_of(ev.job(last, toggled(g, x)));
        ++r.evaluations;
        if (better(s, step)) {
          step = s;
          pick = x;
        }
      }
      if (pick < 0) break;
      g = toggled(g, pick);
      cur = step;
    }
    if (cur.feasible && cur.value < best_time) {
      best_time = cur.value;
      best_group = g;
    }
  }
  if (best_group.empty()) return r;
  for (size_t x = 0; x < assign.size(); ++x)
    if (assign[x] == static_cast<int64_t>(last)) assign[x] = -1;
  for (int64_t x : best_group) assign[static_cast<size_t>(x)] = static_cast<int64_t>(last);
  r.improved = true;
  return r;
}

}  // namespace hulk::plan::detail

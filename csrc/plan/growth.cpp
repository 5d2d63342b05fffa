#include "csrc/plan/growth.h"

#include <algorithm>

#include "csrc/plan/job_helpers.h"

namespace hulk::plan::detail {

JobDistance latency_distance(const Cluster& c) {
  return [&c](size_t, int64_t x, int64_t y) { return c.latency_s(x, y); };
}
JobDistance send_time_distance(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  std::vector<double> bytes;
  for (const ModelSpec& m : jobs) bytes.push_back(m.boundary_bytes(micro_batch(m, 1)));
  return [&c, bytes](size_t j, int64_t x, int64_t y) { return c.send_time(x, y, bytes[j]); };
}

void grow_groups(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev, std::vector<int64_t>& assign,
                 const std::function<bool()>& out_of_time, const JobDistance& distance, GrowUntil until) {
  const int64_t N = c.size();
  const size_t J = jobs.size();
  std::vector<std::vector<int64_t>> g = groups_of(assign, J);
  std::vector<std::vector<double>> dist(J);
  std::vector<uint8_t> done(J, 0);
  // Distances to the added machines' closest per region (both distances grow with access
  // latency within a region): O(R N) calls; on an explicit cluster (every machine its own
  // "region", up to 4,096) that is still O(|added| N), so the clock is read every 64 rows;
  // false when it ran out (growth stops).
  auto add_distances = [&](size_t j, const std::vector<int64_t>& added) {
    auto& d = dist[j];
    if (d.empty()) d.assign(static_cast<size_t>(N), kInf);
    const std::vector<int64_t> near = closest_per_region(c, added);
    for (size_t i = 0; i < near.size(); ++i) {
      if (i % 64 == 63 && out_of_time()) return false;
      for (int64_t x = 0; x < N; ++x) d[static_cast<size_t>(x)] = std::min(d[static_cast<size_t>(x)], distance(j, x, near[i]));
    }
    return true;
  };
  for (;;) {
    if (out_of_time()) break;
    const auto [pick, worst] = slowest_job(ev, g, done);
    if (pick < 0) break;
    const size_t j = static_cast<size_t>(pick);
    std::vector<int64_t> free;
    for (int64_t x = 0; x < N; ++x)
      if (assign[static_cast<size_t>(x)] < 0) free.push_back(x);
    // Machines are only ever taken here: with none idle no job can grow (and the distances,
    // the costly part, are not needed; System A's start on 20,000 machines leaves none idle).
    if (free.empty()) break;
    if (dist[j].empty() && !add_distances(j, g[j])) break;
    const auto& d = dist[j];
    size_t take = std::min(free.size(), g[j].size());
    // Only the `take` closest are needed: partial sort, ties by id for determinism.
    const auto closer = [&](int64_t a, int64_t b) {
      return d[static_cast<size_t>(a)] < d[static_cast<size_t>(b)] || (d[static_cast<size_t>(a)] == d[static_cast<size_t>(b)] && a < b);
    };
    std::partial_sort(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(take), free.end(), closer);
    bool grew = false;
    for (; take >= 1 && !out_of_time(); take /= 2) {
      std::vector<int64_t> trial = g[j];
      trial.insert(trial.end(), free.begin(), free.begin() + static_cast<std::ptrdiff_t>(take));
      std::sort(trial.begin(), trial.end());
      if (ev.job(j, trial).time < worst * (1 - 1e-9)) {
        const std::vector<int64_t> added(free.begin(), free.begin() + static_cast<std::ptrdiff_t>(take));
        for (int64_t x : added) assign[static_cast<size_t>(x)] = static_cast<int64_t>(j);
        g[j] = std::move(trial);
        add_distances(j, added);  // a partial update only when out of time, and the loop then ends
        grew = true;
        break;
      }
    }
    if (grew) continue;
    done[j] = 1;
    if (until == GrowUntil::MakespanFixed) break;  // j is the slowest job and stays so
  }
}

}  // namespace hulk::plan::detail

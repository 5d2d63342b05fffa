// Small helpers the planner files share (job_helpers.h).
#include "csrc/plan/job_helpers.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

namespace hulk::plan::detail {

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double capacity_bytes(const Cluster& c, int64_t i) { return c.machine(i).memory_gb * 1e9; }

// The least memory a job needs in total: every layer's state once and the activations one
// pipeline over all layers keeps (cost.h). A lower bound for any pipeline plan.
double memory_need(const ModelSpec& m) {
  return m.state_bytes(m.layers) +
         m.stage_activation_bytes(m.layers, static_cast<double>(m.global_batch) / static_cast<double>(m.micro_batches),
                                  m.micro_batches);
}

double group_memory(const Cluster& c, const std::vector<int64_t>& g) {
  double s = 0;
  for (int64_t i : g) s += capacity_bytes(c, i);
  return s;
}

// Wall time the job occupies its machines (+inf when it cannot run).
double job_time(const JobPlan& j) {
  return j.cost.feasible ? static_cast<double>(j.model.iterations) * j.cost.iteration_s : kInf;
}


std::string job_label(const std::vector<ModelSpec>& jobs, int64_t j) {
  std::ostringstream o;
  o << "job " << j;
  if (!jobs[static_cast<size_t>(j)].name.empty()) o << " (" << jobs[static_cast<size_t>(j)].name << ")";
  return o.str();
}


// Jobs in decreasing order of memory need (stable: equal needs keep the given order).
std::vector<int64_t> jobs_by_need(const std::vector<ModelSpec>& jobs) {
  std::vector<int64_t> order(jobs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
    return memory_need(jobs[static_cast<size_t>(a)]) > memory_need(jobs[static_cast<size_t>(b)]);
  });
  return order;
}

double micro_batch(const ModelSpec& m, int64_t replicas) {
  return static_cast<double>(m.global_batch) / (static_cast<double>(replicas) * static_cast<double>(m.micro_batches));
}

JobPlan infeasible_job(const ModelSpec& m, const std::string& reason, double shortfall) {
  JobPlan jp;
  jp.model = m;
  jp.cost.feasible = false;
  jp.cost.reason = reason;
  jp.cost.memory_shortfall_bytes = shortfall;
  return jp;
}

// Even split, the remainder going to the first stages (System B).
std::vector<int64_t> even_bounds(int64_t S, int64_t L) {
  std::vector<int64_t> b(static_cast<size_t>(S + 1), 0);
  for (int64_t s = 0; s < S; ++s) b[static_cast<size_t>(s + 1)] = b[static_cast<size_t>(s)] + L / S + (s < L % S ? 1 : 0);
  return b;
}

std::vector<int64_t> closest_per_region(const Cluster& c, const std::vector<int64_t>& g) {
  if (!c.regional()) return g;
  const RegionalNetwork& net = c.network();
  std::vector<int64_t> pick(static_cast<size_t>(net.regions), -1);  // per region
  for (int64_t y : g) {
    int64_t& p = pick[static_cast<size_t>(net.region[static_cast<size_t>(y)])];
    const double a = net.access_ms[static_cast<size_t>(y)];
    if (p < 0 || a < net.access_ms[static_cast<size_t>(p)] || (a == net.access_ms[static_cast<size_t>(p)] && y < p)) p = y;
  }
  std::vector<int64_t> out;
  for (int64_t p : pick)
    if (p >= 0) out.push_back(p);
  return out;
}

std::vector<int64_t> fastest_first(const Cluster& c) {
  std::vector<int64_t> order(static_cast<size_t>(c.size()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int64_t a, int64_t b) { return c.machine(a).tflops > c.machine(b).tflops; });
  return order;
}

std::vector<int64_t> closest_then_ordered(const Cluster& c, const std::vector<int64_t>& g,
                                          const std::vector<uint8_t>& eligible, double bytes, size_t pool,
                                          const std::vector<const std::vector<int64_t>*>& orders) {
  const std::vector<int64_t> near = closest_per_region(c, g);  // the same minimum, O(N R) not O(N |g|)
  std::vector<std::pair<double, int64_t>> d;  // (send time to the group, machine)
  if (c.regional()) {
    // send_time(x, y) = access(x) + access(y) + (region pair terms), so which y of `near` is
    // closest to x depends on x's region alone, up to rounding: per region of the eligible
    // machines, the y within rounding of the least access(y) + pair terms, and the exact
    // minimum over those. O(R |near| + N) instead of O(N |near|): for a group of 6,144 of
    // 20,000 measured machines (~700 regions) 41 ms -> a few ms, which a descent at 0.3 s
    // spent past its deadline before its first layout.
    const std::vector<int64_t>& region = c.network().region;
    std::vector<std::vector<int64_t>> shortlist(static_cast<size_t>(c.network().regions));
    std::vector<uint8_t> listed(shortlist.size(), 0);
    std::vector<double> v(near.size());
    for (int64_t x = 0; x < c.size(); ++x) {
      if (!eligible[static_cast<size_t>(x)]) continue;
      const auto rx = static_cast<size_t>(region[static_cast<size_t>(x)]);
      std::vector<int64_t>& ys = shortlist[rx];
      if (!listed[rx]) {
        listed[rx] = 1;
        double least = kInf;
        for (size_t k = 0; k < near.size(); ++k) {
          const int64_t y = near[k];
          v[k] = c.regional_send_time(0.0, c.access_s(y), static_cast<int64_t>(rx), region[static_cast<size_t>(y)], bytes);
          least = std::min(least, v[k]);
        }
        if (std::isfinite(least)) {
          const double slack = 1e-9 * (least + 1e-3);  // far above rounding (ulps of seconds)
          for (size_t k = 0; k < near.size(); ++k)
            if (v[k] <= least + slack) ys.push_back(near[k]);
        }
      }
      double best = kInf;
      for (int64_t y : ys) best = std::min(best, c.send_time(x, y, bytes));
      d.push_back({best, x});
    }
  } else {
    for (int64_t x = 0; x < c.size(); ++x) {
      if (!eligible[static_cast<size_t>(x)]) continue;
      double best = kInf;
      for (int64_t y : near) best = std::min(best, c.send_time(x, y, bytes));
      d.push_back({best, x});
    }
  }
  const size_t k = std::min(pool, d.size());
  std::partial_sort(d.begin(), d.begin() + static_cast<std::ptrdiff_t>(k), d.end());
  std::vector<int64_t> cand;
  for (size_t i = 0; i < k; ++i) cand.push_back(d[i].second);
  for (const std::vector<int64_t>* o : orders) {
    size_t taken = 0;
    for (int64_t x : *o) {
      if (taken == pool) break;
      if (!eligible[static_cast<size_t>(x)]) continue;
      ++taken;
      if (std::find(cand.begin(), cand.end(), x) == cand.end()) cand.push_back(x);
    }
  }
  return cand;
}

std::string hours(double s) {
  if (!std::isfinite(s)) return "infeasible";
  std::ostringstream o;
  o.precision(4);
  o << s / 3600 << " h";
  return o.str();
}

}  // namespace hulk::plan::detail

// Small hand-made clusters, models and search budgets shared by the planner tests
// (tests/cpp/test_plan_*.cpp).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "csrc/plan/planners.h"

namespace plan_fixtures {

using namespace hulk::plan;
constexpr double kInf = std::numeric_limits<double>::infinity();

// Two regions of machines; every pair linked, with intra- or inter-region parameters.
struct Net {
  double intra_ms = 1, intra_gbps = 100, inter_ms = 50, inter_gbps = 1;
};

inline Cluster two_regions(const std::vector<double>& mem_a, const std::vector<double>& mem_b, Net net = {},
                           std::vector<double> tflops = {}) {
  std::vector<Machine> ms;
  for (size_t k = 0; k < mem_a.size(); ++k) ms.push_back({"a" + std::to_string(k), "A", mem_a[k], 100, "", 1});
  for (size_t k = 0; k < mem_b.size(); ++k) ms.push_back({"b" + std::to_string(k), "B", mem_b[k], 100, "", 1});
  for (size_t k = 0; k < tflops.size() && k < ms.size(); ++k) ms[k].tflops = tflops[k];
  std::vector<Link> links;
  for (int64_t i = 0; i < static_cast<int64_t>(ms.size()); ++i)
    for (int64_t j = i + 1; j < static_cast<int64_t>(ms.size()); ++j) {
      const bool same = ms[static_cast<size_t>(i)].region == ms[static_cast<size_t>(j)].region;
      links.push_back({i, j, same ? net.intra_ms : net.inter_ms, same ? net.intra_gbps : net.inter_gbps});
    }
  return Cluster(ms, links);
}

// A model whose state is 1.6 GB per layer (1e8 parameters x 16 bytes), activations small.
inline ModelSpec model(const std::string& name, int64_t layers, double params_per_layer = 1e8, int64_t batch = 8,
                       int64_t iterations = 100) {
  ModelSpec m;
  m.name = name;
  m.layers = layers;
  m.hidden = 256;
  m.seq_len = 64;
  m.params = params_per_layer * static_cast<double>(layers);
  m.flops_per_token = 6 * m.params;
  m.activation_bytes_per_token = 1e4;
  m.global_batch = batch;
  m.micro_batches = 4;
  m.iterations = iterations;
  return m;
}

inline std::set<int64_t> as_set(const std::vector<int64_t>& v) { return {v.begin(), v.end()}; }

inline double bottleneck(const JobCost& jc) {
  double b = 0;
  for (const auto& rep : jc.stages)
    for (const auto& st : rep) b = std::max(b, st.compute_s + st.send_s);
  return b;
}

// Random two-region cluster of 3..8 machines with mixed memory and speed.
inline Cluster random_cluster(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> n_dist(3, 8);
  std::uniform_real_distribution<double> mem(2.0, 12.0), fl(20.0, 200.0), inter(20.0, 200.0);
  const int n = n_dist(rng);
  const int na = std::max(1, n / 2);
  std::vector<double> a, b, t;
  for (int k = 0; k < n; ++k) {
    (k < na ? a : b).push_back(mem(rng));
    t.push_back(fl(rng));
  }
  Net net;
  net.inter_ms = inter(rng);
  net.inter_gbps = 0.2 + 2.0 * std::uniform_real_distribution<double>(0, 1)(rng);
  return two_regions(a, b, net, t);
}

// A random regional cluster: R regions with random (symmetric) latency and bandwidth, some
// region pairs unlinked; access latencies all zero, drawn from three values (ties within a
// region), or continuous. With `far_homes`, a region's own latency is drawn from 0.5-50 ms,
// so some regions are closer to another region than to themselves.
inline Cluster random_regional(std::mt19937_64& rng, int n, int R, int access_kind, MissingLinkRule rule, bool far_homes = false) {
  std::uniform_real_distribution<double> unit(0, 1);
  RegionalNetwork net;
  net.regions = R;
  net.base_latency_ms.assign(static_cast<size_t>(R * R), 0);
  net.base_bandwidth_gbps.assign(static_cast<size_t>(R * R), 1);
  net.region_link.assign(static_cast<size_t>(R * R), 1);
  for (int r = 0; r < R; ++r)
    for (int q = r; q < R; ++q) {
      // A few repeated values, so that different region pairs tie too.
      const double home = far_homes ? std::floor(1 + 100 * unit(rng)) * 0.5 : 0.5;
      const double lat = r == q ? home : std::floor(1 + 4 * unit(rng)) * 10;
      const double bw = r == q ? 100 : std::floor(1 + 3 * unit(rng));
      const bool link = r == q || unit(rng) < 0.8;
      for (auto [a, b] : {std::pair{r, q}, std::pair{q, r}}) {
        net.base_latency_ms[static_cast<size_t>(a * R + b)] = lat;
        net.base_bandwidth_gbps[static_cast<size_t>(a * R + b)] = bw;
        net.region_link[static_cast<size_t>(a * R + b)] = link;
      }
    }
  std::vector<Machine> ms;
  for (int i = 0; i < n; ++i) {
    net.region.push_back(static_cast<int64_t>(rng() % static_cast<uint64_t>(R)));
    net.access_ms.push_back(access_kind == 0 ? 0.0 : access_kind == 1 ? 0.25 * static_cast<double>(rng() % 3) : 0.001 + unit(rng));
    ms.push_back({"", "R" + std::to_string(net.region.back()), 8.0 * static_cast<double>(1 + rng() % 3), 50.0 + 50.0 * static_cast<double>(rng() % 2), "", 1});
  }
  return Cluster::from_network(ms, net, rule);
}

// 3 to max_regions regions of 1 to max_per_region machines of mixed memory and speed (or all
// alike: `uniform`), pairs within a region on a fast LAN, each pair of regions its own random
// latency and bandwidth.
inline Cluster random_regions(std::mt19937_64& rng, int max_regions = 5, int max_per_region = 4, bool uniform = false) {
  std::uniform_int_distribution<int> regions(3, max_regions), per(1, max_per_region);
  std::uniform_real_distribution<double> mem(2.0, 12.0), fl(20.0, 200.0), lat(5.0, 150.0), bw(0.1, 5.0);
  std::vector<Machine> ms;
  const int R = regions(rng);
  for (int r = 0; r < R; ++r)
    for (int k = per(rng); k > 0; --k)
      ms.push_back({"m" + std::to_string(ms.size()), "R" + std::to_string(r), uniform ? 8.0 : mem(rng),
                    uniform ? 150.0 : fl(rng), "", 1});
  std::vector<std::vector<double>> pair_ms(static_cast<size_t>(R), std::vector<double>(static_cast<size_t>(R))),
      pair_gbps = pair_ms;
  for (int r = 0; r < R; ++r)
    for (int s = r + 1; s < R; ++s) {
      pair_ms[r][s] = pair_ms[s][r] = lat(rng);
      pair_gbps[r][s] = pair_gbps[s][r] = bw(rng);
    }
  std::vector<Link> links;
  for (size_t i = 0; i < ms.size(); ++i)
    for (size_t j = i + 1; j < ms.size(); ++j) {
      const int r = std::stoi(ms[i].region.substr(1)), s = std::stoi(ms[j].region.substr(1));
      links.push_back({static_cast<int64_t>(i), static_cast<int64_t>(j), r == s ? 1.0 : pair_ms[r][s], r == s ? 100.0 : pair_gbps[r][s]});
    }
  return Cluster(ms, links);
}

// Random machines with mixed memory and speed, every pair linked with random bandwidth.
inline Cluster random_linked(std::mt19937_64& rng, int n) {
  std::uniform_real_distribution<double> mem(1.7, 8.0), fl(10.0, 300.0), bw(0.01, 10.0), lat(1.0, 80.0);
  std::vector<Machine> ms;
  for (int s = 0; s < n; ++s) ms.push_back({"", "R", mem(rng), fl(rng), "", 1});
  std::vector<Link> links;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) links.push_back({i, j, lat(rng), bw(rng)});
  return Cluster(ms, links);
}

// Each machine to job 0 or 1 or idle (-1) at random: a start for the local searches' tests.
inline std::vector<int64_t> random_assignment(const Cluster& c, std::mt19937_64& rng) {
  std::vector<int64_t> a(static_cast<size_t>(c.size()));
  for (auto& x : a) x = static_cast<int64_t>(rng() % 3) - 1;
  return a;
}

// Two small jobs, and a search budget of `n` moves (the clock far away), as several tests use.
inline std::vector<ModelSpec> two_small_jobs() { return {model("j0", 4, 5e7, 16, 50), model("j1", 6, 2e7, 32, 80)}; }
inline SearchOptions moves(int64_t n, uint64_t seed = 0) {
  SearchOptions o;
  o.time_limit_s = 60;
  o.max_iterations = n;
  o.seed = seed;
  return o;
}

inline bool has_note(const Plan& p, const std::string& text) {
  for (const auto& n : p.notes)
    if (n.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace plan_fixtures

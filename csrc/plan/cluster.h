// A geo-distributed cluster as the planner sees it: machines with compute and memory,
// and the alpha-beta parameters (latency, bandwidth) of every ordered pair.
//
// A machine is one server; its GPUs are treated as one device with their summed memory
// and throughput (intra-server links are far faster than the WAN links planned here).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace hulk::plan {

struct Machine {
  std::string name;      // free text, e.g. "beijing-0"
  std::string region;    // e.g. "Beijing"
  double memory_gb = 0;  // total GPU memory of the server, GB (1e9 bytes)
  double tflops = 0;     // sustained training throughput of the server, TFLOP/s (1e12 FLOP/s)
  std::string gpu;       // GPU type, e.g. "GeForce RTX 3090": picks a job's measured profile ("" = none)
  double gpus = 1;       // GPUs in the server (may be fractional, see cluster_spec.py rule a), > 0
};

struct Link {
  int64_t a = 0, b = 0;         // machine indices; links are undirected
  double latency_ms = 0;        // one-way time of a small message (the paper's "ms to send 64 bytes")
  double bandwidth_gbps = 0;    // gigabits per second
};

// How a pair without a direct link is costed (paper section 6.1: network policy may forbid
// direct connections).
enum class MissingLinkRule {
  Route,   // relay along the path of least total latency: latency adds up, bandwidth is
           // the path's narrowest link (store-and-forward of whole messages is not modelled)
  Forbid,  // the pair cannot communicate: any plan needing it is infeasible
};

// A hierarchical network for large clusters, stored in O(N + R^2) instead of O(N^2):
// machines sit in R regions; two different machines i, j in regions r, s talk with
//   latency   = access_ms[i] + access_ms[j] + base_latency_ms[r][s]
//   bandwidth = base_bandwidth_gbps[r][s]
// where the diagonal r == s is the region's LAN. region_link[r][s] == 0 means regions r and
// s have no direct connection (network policy); the cluster's MissingLinkRule then relays
// along the region path of least base latency (Route, relays add their base latencies, not
// the access latency of a relay machine) or forbids the pair (Forbid).
struct RegionalNetwork {
  int64_t regions = 0;                       // R
  std::vector<int64_t> region;               // [N] in [0, R)
  std::vector<double> access_ms;             // [N] >= 0
  std::vector<double> base_latency_ms;       // [R * R] row-major, symmetric, >= 0 where linked
  std::vector<double> base_bandwidth_gbps;   // [R * R] row-major, symmetric, > 0 where linked
  std::vector<uint8_t> region_link;          // [R * R] symmetric, diagonal 1
};

class Cluster {
 public:
  // Explicit clusters (every link listed) keep N x N tables; above this size use a
  // RegionalNetwork.
  static constexpr int64_t kMaxExplicitMachines = 4096;

  // Validates (finite, positive memory and tflops, latency >= 0, bandwidth > 0, indices in
  // range, no self loops, no duplicate pairs) and throws std::invalid_argument naming the
  // field and value. Computes all-pairs routes once (Floyd-Warshall, O(N^3), skipped when
  // every pair has a link): at most kMaxExplicitMachines machines.
  Cluster(std::vector<Machine> machines, std::vector<Link> links, MissingLinkRule rule = MissingLinkRule::Route);
  // A regional cluster (see RegionalNetwork); validated the same way, O(N + R^3) to build.
  static Cluster from_network(std::vector<Machine> machines, RegionalNetwork net,
                              MissingLinkRule rule = MissingLinkRule::Route);

  int64_t size() const { return static_cast<int64_t>(machines_.size()); }
  const Machine& machine(int64_t i) const { return machines_[static_cast<size_t>(i)]; }
  const std::vector<Machine>& machines() const { return machines_; }
  const std::vector<Link>& links() const { return links_; }  // empty for a regional cluster
  MissingLinkRule rule() const { return rule_; }
  bool regional() const { return regional_; }
  const RegionalNetwork& network() const { return net_; }  // regional clusters only

  // Alpha-beta parameters of the (possibly routed) pair; 0 latency and infinite bandwidth
  // for i == j. latency_s is +inf for a pair that cannot communicate.
  double latency_s(int64_t i, int64_t j) const {
    if (!regional_) return latency_s_[index(i, j)];
    if (i == j) return 0.0;
    return access_s_[static_cast<size_t>(i)] + access_s_[static_cast<size_t>(j)] + latency_s_[rindex(i, j)];
  }
  double bandwidth_Bps(int64_t i, int64_t j) const {  // bytes/s
    if (!regional_) return bandwidth_Bps_[index(i, j)];
    if (i == j) return std::numeric_limits<double>::infinity();
    return bandwidth_Bps_[rindex(i, j)];
  }
  bool direct(int64_t i, int64_t j) const {
    if (!regional_) return direct_[index(i, j)] != 0;
    return i != j && direct_[rindex(i, j)] != 0;
  }
  bool reachable(int64_t i, int64_t j) const {
    if (i < 0 || i >= size() || j < 0 || j >= size()) throw_out_of_range("reachable", i, j);
    return i == j || std::isfinite(latency_s(i, j));
  }
  // "machine 3 ('Beijing-3')", or "machine 3" for an unnamed machine: how messages name it.
  std::string label(int64_t i) const;

  // Time to send `bytes` from i to j: latency + bytes / bandwidth (0 when i == j). Inline: the
  // layouts' chains and splits call it for every pair they consider.
  double send_time(int64_t i, int64_t j, double bytes) const {
    if (i < 0 || i >= size() || j < 0 || j >= size()) throw_out_of_range("send_time", i, j);
    if (!(bytes >= 0)) throw_bad_bytes(bytes);
    if (i == j) return 0.0;
    if (regional_)
      return regional_send_time(access_s_[static_cast<size_t>(i)], access_s_[static_cast<size_t>(j)],
                                net_.region[static_cast<size_t>(i)], net_.region[static_cast<size_t>(j)], bytes);
    const double lat = latency_s(i, j);
    if (!std::isfinite(lat)) return std::numeric_limits<double>::infinity();
    return lat + bytes / bandwidth_Bps(i, j);
  }

  // Regional clusters only (unchecked, for inner loops). send_time(i, j) for machines i != j
  // from their access latencies and regions, by the same arithmetic.
  double regional_send_time(double access_i_s, double access_j_s, int64_t ri, int64_t rj, double bytes) const {
    const size_t p = static_cast<size_t>(ri * net_.regions + rj);
    const double lat = access_i_s + access_j_s + latency_s_[p];
    if (!std::isfinite(lat)) return std::numeric_limits<double>::infinity();
    return lat + bytes / bandwidth_Bps_[p];
  }
  double access_s(int64_t i) const { return access_s_[static_cast<size_t>(i)]; }
  // A lower bound on latency + bytes / bandwidth from region r to every other region (+inf if
  // none is reachable): the nearest other region's latency plus bytes over the widest link.
  double other_region_bound(int64_t r, double bytes) const {
    const size_t k = static_cast<size_t>(r);
    if (!std::isfinite(nearest_other_latency_s_[k])) return std::numeric_limits<double>::infinity();
    return nearest_other_latency_s_[k] + bytes / widest_other_Bps_[k];
  }

  // Machines no layout can tell apart: two machines with the same memory, throughput, GPU type
  // and count and region name, and the same place in the network, have the same send time to
  // every other machine and the same cost for every stage, so any layout on one maps onto the
  // other at the same cost (best_pipeline lays a group out on its classes' first members, the
  // Evaluator caches per class count). The same place: on a regional cluster the same region and
  // access latency; on an explicit one the same latency, bandwidth and direct link to every third
  // machine, after routing (where the pair tables are not symmetric, every machine is its own
  // class). machine_class(i) in [0, classes()), numbered in order of first member;
  // class_members(k) ascending.
  int64_t machine_class(int64_t i) const { return class_of_[static_cast<size_t>(i)]; }
  int64_t classes() const { return static_cast<int64_t>(class_members_.size()); }
  const std::vector<int64_t>& class_members(int64_t k) const { return class_members_[static_cast<size_t>(k)]; }
  bool has_interchangeable() const { return classes() < size(); }  // some class holds two or more machines

  // A copy without machine `i` (indices above it shift down by one), and with one more
  // machine and its links (the new machine's index is size()). A regional cluster takes a
  // new machine with its region and access latency instead of links.
  Cluster without(int64_t i) const;
  Cluster with_machine(const Machine& m, const std::vector<Link>& links_to_new) const;
  Cluster with_machine(const Machine& m, int64_t region, double access_ms) const;

 private:
  struct RegionalTag {};
  Cluster(RegionalTag, std::vector<Machine> machines, RegionalNetwork net, MissingLinkRule rule);
  size_t index(int64_t i, int64_t j) const { return static_cast<size_t>(i * size() + j); }
  size_t rindex(int64_t i, int64_t j) const {
    return static_cast<size_t>(net_.region[static_cast<size_t>(i)] * net_.regions + net_.region[static_cast<size_t>(j)]);
  }
  [[noreturn]] void throw_out_of_range(const char* what, int64_t i, int64_t j) const;
  [[noreturn]] static void throw_bad_bytes(double bytes);
  void route(int64_t n, std::vector<double>& lat, std::vector<double>& bw, const std::vector<uint8_t>& direct) const;
  void find_interchangeable();  // after the pair tables are built (explicit) or routed
  std::vector<Machine> machines_;
  std::vector<Link> links_;
  MissingLinkRule rule_;
  bool regional_ = false;
  RegionalNetwork net_;
  std::vector<double> access_s_;  // regional: per machine, seconds
  // Explicit: N x N pair tables. Regional: R x R region-pair tables (routed).
  std::vector<double> latency_s_, bandwidth_Bps_;
  std::vector<uint8_t> direct_;
  // Regional: per region, over the other regions (after routing), for other_region_bound.
  std::vector<double> nearest_other_latency_s_, widest_other_Bps_;
  std::vector<int64_t> class_of_;  // [N] (find_interchangeable)
  std::vector<std::vector<int64_t>> class_members_;
};

}  // namespace hulk::plan

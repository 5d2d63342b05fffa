// A geo-distributed cluster as the planner sees it: machines with compute and memory,
// and the alpha-beta parameters (latency, bandwidth) of every ordered pair.
//
// A machine is one server; its GPUs are treated as one device with their summed memory
// and throughput (intra-server links are far faster than the WAN links planned here).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hulk::plan {

struct Machine {
  std::string name;      // free text, e.g. "beijing-0"
  std::string region;    // e.g. "Beijing"
  double memory_gb = 0;  // total GPU memory of the server, GB (1e9 bytes)
  double tflops = 0;     // sustained training throughput of the server, TFLOP/s (1e12 FLOP/s)
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

class Cluster {
 public:
  // Validates (finite, positive memory and tflops, latency >= 0, bandwidth > 0, indices in
  // range, no self loops, no duplicate pairs) and throws std::invalid_argument naming the
  // field and value. Computes all-pairs routes once (Floyd-Warshall, O(N^3): meant for
  // clusters of up to a few thousand machines).
  Cluster(std::vector<Machine> machines, std::vector<Link> links, MissingLinkRule rule = MissingLinkRule::Route);

  int64_t size() const { return static_cast<int64_t>(machines_.size()); }
  const Machine& machine(int64_t i) const { return machines_[static_cast<size_t>(i)]; }
  const std::vector<Machine>& machines() const { return machines_; }
  const std::vector<Link>& links() const { return links_; }
  MissingLinkRule rule() const { return rule_; }

  // Alpha-beta parameters of the (possibly routed) pair; 0 latency and infinite bandwidth
  // for i == j. latency_s is +inf for a pair that cannot communicate.
  double latency_s(int64_t i, int64_t j) const { return latency_s_[index(i, j)]; }
  double bandwidth_Bps(int64_t i, int64_t j) const { return bandwidth_Bps_[index(i, j)]; }  // bytes/s
  bool direct(int64_t i, int64_t j) const { return direct_[index(i, j)] != 0; }
  bool reachable(int64_t i, int64_t j) const;
  // "machine 3 ('Beijing-3')", or "machine 3" for an unnamed machine: how messages name it.
  std::string label(int64_t i) const;

  // Time to send `bytes` from i to j: latency + bytes / bandwidth (0 when i == j).
  double send_time(int64_t i, int64_t j, double bytes) const;

  // A copy without machine `i` (indices above it shift down by one), and with one more
  // machine and its links (the new machine's index is size()).
  Cluster without(int64_t i) const;
  Cluster with_machine(const Machine& m, const std::vector<Link>& links_to_new) const;

 private:
  size_t index(int64_t i, int64_t j) const { return static_cast<size_t>(i * size() + j); }
  std::vector<Machine> machines_;
  std::vector<Link> links_;
  MissingLinkRule rule_;
  std::vector<double> latency_s_, bandwidth_Bps_;
  std::vector<uint8_t> direct_;
};

}  // namespace hulk::plan

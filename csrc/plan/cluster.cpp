// Cluster: validation, all-pairs alpha-beta parameters (direct links, then routed or
// forbidden pairs), and the copies used by recovery and join.
//
// Choices the header leaves open, stated once here:
// - Units: latency_ms / 1e3 -> seconds; bandwidth_gbps * 1e9 / 8 -> bytes per second.
// - A pair with a direct link always uses that link, even when a relay path has lower total
//   latency (the header's rule is about pairs *without* a direct link).
// - Route: Floyd-Warshall over the direct links on total latency. Ties in latency (exact
//   equality) keep the path with the wider bottleneck bandwidth; remaining ties keep the
//   path found first (relays tried in increasing index order). The routed bandwidth is the
//   minimum over the links of the chosen path.
// - Forbid: a pair without a direct link has latency +inf and bandwidth 0.
// - The diagonal is latency 0, bandwidth +inf, direct() false (there is no link).
// - An empty cluster (no machines) is allowed: without() may remove the last machine.
// - Regional clusters route on the R x R region table with the same rule and tie-breaks;
//   a region's diagonal entry is its LAN and is never routed.
// - with_machine(): every link in links_to_new must touch the new machine (index size()).
#include "csrc/plan/cluster.h"

#include "csrc/plan/plausible.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace hulk::plan {

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

[[noreturn]] void fail(const std::string& msg) { throw std::invalid_argument("Cluster: " + msg); }

std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string machine_label(const std::vector<Machine>& ms, size_t i) {
  std::string s = "machine " + std::to_string(i);
  if (!ms[i].name.empty()) s += " ('" + ms[i].name + "')";
  return s;
}

void validate(const std::vector<Machine>& machines, const std::vector<Link>& links) {
  for (size_t i = 0; i < machines.size(); ++i) {
    const Machine& m = machines[i];
    if (!std::isfinite(m.memory_gb) || m.memory_gb <= 0)
      fail(machine_label(machines, i) + ": memory_gb must be finite and > 0, got " + num(m.memory_gb));
    if (!std::isfinite(m.tflops) || m.tflops <= 0)
      fail(machine_label(machines, i) + ": tflops must be finite and > 0, got " + num(m.tflops));
    if (!std::isfinite(m.gpus) || m.gpus <= 0)
      fail(machine_label(machines, i) + ": gpus must be finite and > 0, got " + num(m.gpus));
    const auto where = [&] { return "Cluster: " + machine_label(machines, i); };
    check_plausible_lazy(kMemoryGbRange, m.memory_gb, where);
    check_plausible_lazy(kTflopsRange, m.tflops, where);
  }
  const int64_t n = static_cast<int64_t>(machines.size());
  if (links.empty()) return;  // (a regional cluster: no N x N table, which would be 3.2 GB at 20,000 machines)
  // first link index seen for each unordered pair (a < b)
  std::vector<int64_t> seen(static_cast<size_t>(n) * static_cast<size_t>(n), -1);
  for (size_t k = 0; k < links.size(); ++k) {
    const Link& l = links[k];
    const auto lk = [k] { return "link " + std::to_string(k); };
    if (l.a < 0 || l.a >= n)
      fail(lk() + ": machine index a = " + std::to_string(l.a) + " out of range [0, " + std::to_string(n) + ")");
    if (l.b < 0 || l.b >= n)
      fail(lk() + ": machine index b = " + std::to_string(l.b) + " out of range [0, " + std::to_string(n) + ")");
    const auto pair = [&] { return lk() + " (" + std::to_string(l.a) + "-" + std::to_string(l.b) + ")"; };
    if (l.a == l.b) fail(pair() + ": self loop on machine " + std::to_string(l.a));
    if (!std::isfinite(l.latency_ms) || l.latency_ms < 0)
      fail(pair() + ": latency_ms must be finite and >= 0, got " + num(l.latency_ms));
    if (!std::isfinite(l.bandwidth_gbps) || l.bandwidth_gbps <= 0)
      fail(pair() + ": bandwidth_gbps must be finite and > 0, got " + num(l.bandwidth_gbps));
    const auto where = [&] { return "Cluster: " + pair(); };
    check_plausible_lazy(kLatencyMsRange, l.latency_ms, where);
    check_plausible_lazy(kBandwidthGbpsRange, l.bandwidth_gbps, where);
    const int64_t lo = std::min(l.a, l.b), hi = std::max(l.a, l.b);
    int64_t& first = seen[static_cast<size_t>(lo * n + hi)];
    if (first >= 0)
      fail(pair() + ": duplicate pair, already given by link " + std::to_string(first) + " (" +
           std::to_string(links[static_cast<size_t>(first)].a) + "-" +
           std::to_string(links[static_cast<size_t>(first)].b) + ")");
    first = static_cast<int64_t>(k);
  }
}

}  // namespace

Cluster::Cluster(std::vector<Machine> machines, std::vector<Link> links, MissingLinkRule rule)
    : machines_(std::move(machines)), links_(std::move(links)), rule_(rule) {
  if (rule_ != MissingLinkRule::Route && rule_ != MissingLinkRule::Forbid)
    fail("unknown MissingLinkRule " + std::to_string(static_cast<int>(rule_)));
  if (size() > kMaxExplicitMachines)
    fail(std::to_string(size()) + " machines with explicit links: the N x N pair tables are limited to " +
         std::to_string(kMaxExplicitMachines) + " machines; describe larger clusters with a RegionalNetwork");
  validate(machines_, links_);
  const int64_t n = size();
  const size_t nn = static_cast<size_t>(n) * static_cast<size_t>(n);
  latency_s_.assign(nn, kInf);
  bandwidth_Bps_.assign(nn, 0.0);
  direct_.assign(nn, 0);
  for (int64_t i = 0; i < n; ++i) {
    latency_s_[index(i, i)] = 0.0;
    bandwidth_Bps_[index(i, i)] = kInf;
  }
  for (const Link& l : links_) {
    const double lat = l.latency_ms / 1e3;
    const double bw = l.bandwidth_gbps * 1e9 / 8.0;
    for (auto [x, y] : {std::pair{l.a, l.b}, std::pair{l.b, l.a}}) {
      latency_s_[index(x, y)] = lat;
      bandwidth_Bps_[index(x, y)] = bw;
      direct_[index(x, y)] = 1;
    }
  }
  // A complete graph has nothing to route (direct links keep their own parameters).
  const bool complete = static_cast<int64_t>(links_.size()) == n * (n - 1) / 2;
  if (rule_ == MissingLinkRule::Route && n >= 3 && !complete) route(n, latency_s_, bandwidth_Bps_, direct_);
  find_interchangeable();  // on the routed tables: what send_time reads
}

Cluster Cluster::from_network(std::vector<Machine> machines, RegionalNetwork net, MissingLinkRule rule) {
  return Cluster(RegionalTag{}, std::move(machines), std::move(net), rule);
}

Cluster::Cluster(RegionalTag, std::vector<Machine> machines, RegionalNetwork net, MissingLinkRule rule)
    : machines_(std::move(machines)), rule_(rule), regional_(true), net_(std::move(net)) {
  if (rule_ != MissingLinkRule::Route && rule_ != MissingLinkRule::Forbid)
    fail("unknown MissingLinkRule " + std::to_string(static_cast<int>(rule_)));
  validate(machines_, {});
  const int64_t n = size(), R = net_.regions;
  const size_t rr = static_cast<size_t>(std::max<int64_t>(R, 0)) * static_cast<size_t>(std::max<int64_t>(R, 0));
  if (R < 1) fail("regional network: regions must be >= 1, got " + std::to_string(R));
  if (static_cast<int64_t>(net_.region.size()) != n || static_cast<int64_t>(net_.access_ms.size()) != n)
    fail("regional network: region and access_ms need one entry per machine (" + std::to_string(n) + "), got " +
         std::to_string(net_.region.size()) + " and " + std::to_string(net_.access_ms.size()));
  if (net_.base_latency_ms.size() != rr || net_.base_bandwidth_gbps.size() != rr || net_.region_link.size() != rr)
    fail("regional network: base_latency_ms, base_bandwidth_gbps and region_link need R * R = " + std::to_string(rr) +
         " entries, got " + std::to_string(net_.base_latency_ms.size()) + ", " +
         std::to_string(net_.base_bandwidth_gbps.size()) + " and " + std::to_string(net_.region_link.size()));
  for (int64_t i = 0; i < n; ++i) {
    const int64_t r = net_.region[static_cast<size_t>(i)];
    const double a = net_.access_ms[static_cast<size_t>(i)];
    if (r < 0 || r >= R)
      fail(machine_label(machines_, static_cast<size_t>(i)) + ": region " + std::to_string(r) + " out of range [0, " +
           std::to_string(R) + ")");
    if (!std::isfinite(a) || a < 0)
      fail(machine_label(machines_, static_cast<size_t>(i)) + ": access_ms must be finite and >= 0, got " + num(a));
    check_plausible_lazy(kLatencyMsRange, a, [&] { return "Cluster: " + machine_label(machines_, static_cast<size_t>(i)); }, "access_ms");
  }
  const auto check_pair = [&](int64_t r, int64_t s) {
    const size_t p = static_cast<size_t>(r * R + s), q = static_cast<size_t>(s * R + r);
    // Named only on a failure: R^2 names cost more than the checks (0.1 s at 1,668 regions).
    const auto pair = [&] { return "region pair (" + std::to_string(r) + ", " + std::to_string(s) + ")"; };
    const uint8_t link = net_.region_link[p];
    if (r == s && !link) fail(pair() + ": region_link must be 1 on the diagonal (a region's own LAN)");
    if (link != net_.region_link[q]) fail(pair() + ": region_link must be symmetric");
    if (!link) return;
    const double lat = net_.base_latency_ms[p], bw = net_.base_bandwidth_gbps[p];
    if (!std::isfinite(lat) || lat < 0) fail(pair() + ": base_latency_ms must be finite and >= 0, got " + num(lat));
    if (!std::isfinite(bw) || bw <= 0) fail(pair() + ": base_bandwidth_gbps must be finite and > 0, got " + num(bw));
    const auto where = [&] { return "Cluster: " + pair(); };
    check_plausible_lazy(kLatencyMsRange, lat, where, "base_latency_ms");
    check_plausible_lazy(kBandwidthGbpsRange, bw, where, "base_bandwidth_gbps");
    if (lat != net_.base_latency_ms[q] || bw != net_.base_bandwidth_gbps[q])
      fail(pair() + ": base_latency_ms and base_bandwidth_gbps must be symmetric");
  };
  // In tiles: each check reads the transposed entry too, a cache miss per pair row by row.
  constexpr int64_t kTile = 64;
  for (int64_t r0 = 0; r0 < R; r0 += kTile)
    for (int64_t s0 = 0; s0 < R; s0 += kTile)
      for (int64_t r = r0; r < std::min(R, r0 + kTile); ++r)
        for (int64_t s = s0; s < std::min(R, s0 + kTile); ++s) check_pair(r, s);
  access_s_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) access_s_[static_cast<size_t>(i)] = net_.access_ms[static_cast<size_t>(i)] / 1e3;
  latency_s_.assign(rr, kInf);
  bandwidth_Bps_.assign(rr, 0.0);
  direct_.assign(net_.region_link.begin(), net_.region_link.end());
  for (size_t p = 0; p < rr; ++p) {
    if (!direct_[p]) continue;
    latency_s_[p] = net_.base_latency_ms[p] / 1e3;
    bandwidth_Bps_[p] = net_.base_bandwidth_gbps[p] * 1e9 / 8.0;
  }
  // A complete region table has nothing to route (every pair keeps its own link), as with
  // machines: generated measured clusters link every region pair, and routing their 1,682
  // regions at 20,000 machines was 4.7e9 relaxations (seconds) that changed no entry.
  const bool complete = std::all_of(direct_.begin(), direct_.end(), [](uint8_t d) { return d != 0; });
  if (rule_ == MissingLinkRule::Route && R >= 3 && !complete) route(R, latency_s_, bandwidth_Bps_, direct_);
  nearest_other_latency_s_.assign(static_cast<size_t>(R), kInf);
  widest_other_Bps_.assign(static_cast<size_t>(R), 0.0);
  for (int64_t r = 0; r < R; ++r)
    for (int64_t q = 0; q < R; ++q) {
      const size_t p = static_cast<size_t>(r * R + q), k = static_cast<size_t>(r);
      if (q == r || !std::isfinite(latency_s_[p])) continue;
      nearest_other_latency_s_[k] = std::min(nearest_other_latency_s_[k], latency_s_[p]);
      widest_other_Bps_[k] = std::max(widest_other_Bps_[k], bandwidth_Bps_[p]);
    }
  find_interchangeable();
}

namespace {

// splitmix64's finaliser: spreads a word's bits, so that a sum of mixed words is a usable
// order-free hash of a multiset.
uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

uint64_t bits_of(double v) {
  if (v == 0) v = 0.0;  // -0.0 and 0.0 compare equal: one bit pattern
  uint64_t b = 0;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

// An explicit cluster's machines compared with at most this many classes of the same fields
// and the same hash of their pairs: a cluster whose rows hold the same values in other orders
// (a ring of equal links) would otherwise cost O(N) comparisons of O(N) each per machine.
// Leaving two alike machines apart only forgoes a shared layout.
constexpr size_t kMaxClassesCompared = 8;

}  // namespace

void Cluster::find_interchangeable() {
  const size_t n = machines_.size();
  // What the cost model reads of a machine (cost.cpp, job_helpers.cpp) and of its place in the
  // network (send_time): two machines with the same key are interchangeable. The name only labels.
  // Regional: the network key is the region and access latency. Explicit: a hash of the
  // machine's pairs as a multiset, then an exact comparison of the two rows (below).
  using Key = std::tuple<int64_t, double, uint64_t, double, double, double, std::string, std::string>;
  std::vector<uint64_t> pairs_hash(n, 0);
  bool comparable = true;  // explicit: rows decide only where the tables are symmetric
  if (!regional_) {
    for (size_t i = 0; i < n && comparable; ++i)
      for (size_t j = i + 1; j < n && comparable; ++j) {
        const size_t ij = i * n + j, ji = j * n + i;
        comparable = latency_s_[ij] == latency_s_[ji] && bandwidth_Bps_[ij] == bandwidth_Bps_[ji] &&
                     direct_[ij] == direct_[ji];
      }
    for (size_t i = 0; i < n && comparable; ++i)
      for (size_t k = 0; k < n; ++k)
        if (k != i)
          pairs_hash[i] += mix64(bits_of(latency_s_[i * n + k]) ^ mix64(bits_of(bandwidth_Bps_[i * n + k]) + direct_[i * n + k]));
  }
  // Explicit i and r with the same key: the same latency, bandwidth and link to every third
  // machine. With symmetric tables that makes swapping them change no pair's parameters.
  const auto same_pairs = [&](size_t i, size_t r) {
    for (size_t k = 0; k < n; ++k) {
      if (k == i || k == r) continue;
      const size_t a = i * n + k, b = r * n + k;
      if (latency_s_[a] != latency_s_[b] || bandwidth_Bps_[a] != bandwidth_Bps_[b] || direct_[a] != direct_[b]) return false;
    }
    return true;
  };
  std::map<Key, std::vector<int64_t>> by_key;  // -> the classes with that key
  std::vector<int64_t> cls(n);
  std::vector<std::vector<int64_t>> members;
  for (size_t i = 0; i < n; ++i) {
    const Machine& m = machines_[i];
    std::vector<int64_t>& candidates =
        by_key[regional_ ? Key{net_.region[i], access_s_[i], 0, m.memory_gb, m.tflops, m.gpus, m.gpu, m.region}
                         : Key{comparable ? 0 : static_cast<int64_t>(i) + 1, 0.0, pairs_hash[i], m.memory_gb, m.tflops,
                               m.gpus, m.gpu, m.region}];
    int64_t k = -1;
    for (int64_t cand : candidates)
      if (regional_ || same_pairs(i, static_cast<size_t>(members[static_cast<size_t>(cand)].front()))) {
        k = cand;
        break;
      }
    if (k < 0) {
      k = static_cast<int64_t>(members.size());
      members.emplace_back();
      if (candidates.size() < kMaxClassesCompared) candidates.push_back(k);
    }
    cls[i] = k;
    members[static_cast<size_t>(k)].push_back(static_cast<int64_t>(i));
  }
  class_of_ = std::move(cls);
  class_members_ = std::move(members);
}

// Floyd-Warshall on latency over the direct entries of an n x n table, tie-break on the
// wider bottleneck; direct entries and the diagonal keep their own values.
void Cluster::route(int64_t n, std::vector<double>& latency, std::vector<double>& bandwidth,
                    const std::vector<uint8_t>& direct) const {
  const auto at = [n](int64_t i, int64_t j) { return static_cast<size_t>(i * n + j); };
  std::vector<double> lat = latency, bw = bandwidth;
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t i = 0; i < n; ++i) {
      if (i == k) continue;
      const double lik = lat[at(i, k)];
      if (!std::isfinite(lik)) continue;
      const double bik = bw[at(i, k)];
      for (int64_t j = 0; j < n; ++j) {
        if (j == i || j == k) continue;
        const double cand = lik + lat[at(k, j)];
        const size_t ij = at(i, j);
        if (cand < lat[ij]) {
          lat[ij] = cand;
          bw[ij] = std::min(bik, bw[at(k, j)]);
        } else if (cand == lat[ij] && std::isfinite(cand)) {
          const double cb = std::min(bik, bw[at(k, j)]);
          if (cb > bw[ij]) bw[ij] = cb;
        }
      }
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const size_t p = at(i, j);
      if (i == j || direct[p]) continue;
      latency[p] = lat[p];
      bandwidth[p] = bw[p];
    }
  }
}

void Cluster::throw_out_of_range(const char* what, int64_t i, int64_t j) const {
  throw std::out_of_range(std::string("Cluster::") + what + ": machine index (" + std::to_string(i) + ", " +
                          std::to_string(j) + ") out of range [0, " + std::to_string(size()) + ")");
}

void Cluster::throw_bad_bytes(double bytes) {
  throw std::invalid_argument("Cluster::send_time: bytes must be >= 0, got " + num(bytes));
}

Cluster Cluster::without(int64_t i) const {
  if (i < 0 || i >= size())
    throw std::out_of_range("Cluster::without: machine index " + std::to_string(i) + " out of range [0, " +
                            std::to_string(size()) + ")");
  std::vector<Machine> ms;
  ms.reserve(machines_.size() - 1);
  for (int64_t k = 0; k < size(); ++k)
    if (k != i) ms.push_back(machines_[static_cast<size_t>(k)]);
  if (regional_) {
    RegionalNetwork net = net_;
    net.region.erase(net.region.begin() + i);
    net.access_ms.erase(net.access_ms.begin() + i);
    return from_network(std::move(ms), std::move(net), rule_);
  }
  std::vector<Link> ls;
  ls.reserve(links_.size());
  for (Link l : links_) {
    if (l.a == i || l.b == i) continue;
    if (l.a > i) --l.a;
    if (l.b > i) --l.b;
    ls.push_back(l);
  }
  return Cluster(std::move(ms), std::move(ls), rule_);
}

Cluster Cluster::with_machine(const Machine& m, const std::vector<Link>& links_to_new) const {
  if (regional_)
    throw std::invalid_argument("Cluster::with_machine: a regional cluster takes a new machine with its region and "
                                "access latency, not with links");
  const int64_t nid = size();
  for (size_t k = 0; k < links_to_new.size(); ++k) {
    const Link& l = links_to_new[k];
    if (l.a != nid && l.b != nid)
      throw std::invalid_argument("Cluster::with_machine: new link " + std::to_string(k) + " (" +
                                  std::to_string(l.a) + "-" + std::to_string(l.b) +
                                  ") does not touch the new machine (index " + std::to_string(nid) + ")");
  }
  std::vector<Machine> ms = machines_;
  ms.push_back(m);
  std::vector<Link> ls = links_;
  ls.insert(ls.end(), links_to_new.begin(), links_to_new.end());
  try {
    return Cluster(std::move(ms), std::move(ls), rule_);
  } catch (const std::invalid_argument& e) {
    // Link indices in the message count the existing links first.
    throw std::invalid_argument(std::string(e.what()) + " [with_machine: the new machine is index " +
                                std::to_string(nid) + ", new links start at link " + std::to_string(links_.size()) + "]");
  }
}

Cluster Cluster::with_machine(const Machine& m, int64_t region, double access_ms) const {
  if (!regional_)
    throw std::invalid_argument("Cluster::with_machine: an explicit cluster takes a new machine with its links");
  std::vector<Machine> ms = machines_;
  ms.push_back(m);
  RegionalNetwork net = net_;
  net.region.push_back(region);
  net.access_ms.push_back(access_ms);
  return from_network(std::move(ms), std::move(net), rule_);
}

std::string Cluster::label(int64_t i) const { return machine_label(machines_, static_cast<size_t>(i)); }

}  // namespace hulk::plan

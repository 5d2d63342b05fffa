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
// - with_machine(): every link in links_to_new must touch the new machine (index size()).
#include "plan/cluster.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
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
  }
  const int64_t n = static_cast<int64_t>(machines.size());
  // first link index seen for each unordered pair (a < b)
  std::vector<int64_t> seen(static_cast<size_t>(n) * static_cast<size_t>(n), -1);
  for (size_t k = 0; k < links.size(); ++k) {
    const Link& l = links[k];
    const std::string lk = "link " + std::to_string(k);
    if (l.a < 0 || l.a >= n)
      fail(lk + ": machine index a = " + std::to_string(l.a) + " out of range [0, " + std::to_string(n) + ")");
    if (l.b < 0 || l.b >= n)
      fail(lk + ": machine index b = " + std::to_string(l.b) + " out of range [0, " + std::to_string(n) + ")");
    const std::string pair = " (" + std::to_string(l.a) + "-" + std::to_string(l.b) + ")";
    if (l.a == l.b) fail(lk + pair + ": self loop on machine " + std::to_string(l.a));
    if (!std::isfinite(l.latency_ms) || l.latency_ms < 0)
      fail(lk + pair + ": latency_ms must be finite and >= 0, got " + num(l.latency_ms));
    if (!std::isfinite(l.bandwidth_gbps) || l.bandwidth_gbps <= 0)
      fail(lk + pair + ": bandwidth_gbps must be finite and > 0, got " + num(l.bandwidth_gbps));
    const int64_t lo = std::min(l.a, l.b), hi = std::max(l.a, l.b);
    int64_t& first = seen[static_cast<size_t>(lo * n + hi)];
    if (first >= 0)
      fail(lk + pair + ": duplicate pair, already given by link " + std::to_string(first) + " (" +
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
  if (rule_ == MissingLinkRule::Forbid || n < 3) return;

  // Floyd-Warshall on latency over the direct links, tie-break on the wider bottleneck.
  std::vector<double> lat = latency_s_, bw = bandwidth_Bps_;
  for (int64_t k = 0; k < n; ++k) {
    for (int64_t i = 0; i < n; ++i) {
      if (i == k) continue;
      const double lik = lat[index(i, k)];
      if (!std::isfinite(lik)) continue;
      const double bik = bw[index(i, k)];
      for (int64_t j = 0; j < n; ++j) {
        if (j == i || j == k) continue;
        const double cand = lik + lat[index(k, j)];
        const size_t ij = index(i, j);
        if (cand < lat[ij]) {
          lat[ij] = cand;
          bw[ij] = std::min(bik, bw[index(k, j)]);
        } else if (cand == lat[ij] && std::isfinite(cand)) {
          const double cb = std::min(bik, bw[index(k, j)]);
          if (cb > bw[ij]) bw[ij] = cb;
        }
      }
    }
  }
  for (size_t p = 0; p < nn; ++p) {
    if (direct_[p]) continue;  // direct links keep their own parameters
    latency_s_[p] = lat[p];
    bandwidth_Bps_[p] = bw[p];
  }
  for (int64_t i = 0; i < n; ++i) {  // the diagonal stays (0, +inf)
    latency_s_[index(i, i)] = 0.0;
    bandwidth_Bps_[index(i, i)] = kInf;
  }
}

bool Cluster::reachable(int64_t i, int64_t j) const {
  if (i < 0 || i >= size() || j < 0 || j >= size())
    throw std::out_of_range("Cluster::reachable: machine index (" + std::to_string(i) + ", " + std::to_string(j) +
                            ") out of range [0, " + std::to_string(size()) + ")");
  return i == j || std::isfinite(latency_s_[index(i, j)]);
}

double Cluster::send_time(int64_t i, int64_t j, double bytes) const {
  if (i < 0 || i >= size() || j < 0 || j >= size())
    throw std::out_of_range("Cluster::send_time: machine index (" + std::to_string(i) + ", " + std::to_string(j) +
                            ") out of range [0, " + std::to_string(size()) + ")");
  if (!(bytes >= 0)) throw std::invalid_argument("Cluster::send_time: bytes must be >= 0, got " + num(bytes));
  if (i == j) return 0.0;
  const size_t p = index(i, j);
  if (!std::isfinite(latency_s_[p])) return kInf;
  return latency_s_[p] + bytes / bandwidth_Bps_[p];
}

Cluster Cluster::without(int64_t i) const {
  if (i < 0 || i >= size())
    throw std::out_of_range("Cluster::without: machine index " + std::to_string(i) + " out of range [0, " +
                            std::to_string(size()) + ")");
  std::vector<Machine> ms;
  ms.reserve(machines_.size() - 1);
  for (int64_t k = 0; k < size(); ++k)
    if (k != i) ms.push_back(machines_[static_cast<size_t>(k)]);
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

std::string Cluster::label(int64_t i) const { return machine_label(machines_, static_cast<size_t>(i)); }

}  // namespace hulk::plan

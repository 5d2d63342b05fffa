// Cluster: units, validation errors (field, index and value in the message), routing of
// missing pairs through relays (least total latency, narrowest link), Forbid, send_time,
// without / with_machine index shifting. Every expected number is worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/cpp/reference.h"
#include "csrc/plan/cluster.h"

namespace {

using ref::throws_invalid_argument_with;

using hulk::plan::Cluster;
using hulk::plan::Link;
using hulk::plan::Machine;
using hulk::plan::MissingLinkRule;

constexpr double kTol = 1e-12;
constexpr double kInf = std::numeric_limits<double>::infinity();


Machine mach(const std::string& name, double mem = 80, double tf = 100) { return Machine{name, "r", mem, tf, "", 1}; }

std::vector<Machine> machines(int n) {
  std::vector<Machine> ms;
  for (int i = 0; i < n; ++i) ms.push_back(mach("m" + std::to_string(i)));
  return ms;
}

// Four machines, two relay paths between 0 and 3 (and between 1 and 2):
//   0-1: 10 ms,  8 Gbps (1e9 B/s)      0-2:  5 ms, 80 Gbps (1e10 B/s)
//   1-3: 20 ms,  4 Gbps (5e8 B/s)      2-3: 40 ms, 80 Gbps (1e10 B/s)
// 0-3 missing: via 1 = 30 ms (bw min(1e9, 5e8) = 5e8), via 2 = 45 ms -> via 1.
// 1-2 missing: via 0 = 15 ms (bw min(1e9, 1e10) = 1e9), via 3 = 60 ms -> via 0.
std::vector<Link> diamond_links() {
  return {{0, 1, 10, 8}, {1, 3, 20, 4}, {0, 2, 5, 80}, {2, 3, 40, 80}};
}

TEST(Cluster, UnitsOfDirectLinks) {
  // 25 ms -> 0.025 s; 16 Gbps -> 16e9 / 8 = 2e9 B/s.
  Cluster c(machines(2), {{0, 1, 25, 16}});
  EXPECT_EQ(c.size(), 2);
  EXPECT_NEAR(c.latency_s(0, 1), 0.025, kTol);
  EXPECT_NEAR(c.latency_s(1, 0), 0.025, kTol);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(0, 1), 2e9);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(1, 0), 2e9);
  EXPECT_TRUE(c.direct(0, 1));
  EXPECT_TRUE(c.direct(1, 0));
  EXPECT_FALSE(c.direct(0, 0));
  // Diagonal: 0 latency, infinite bandwidth, send_time 0.
  EXPECT_EQ(c.latency_s(1, 1), 0.0);
  EXPECT_EQ(c.bandwidth_Bps(1, 1), kInf);
  EXPECT_EQ(c.send_time(1, 1, 1e12), 0.0);
  // send 1e9 bytes: 0.025 + 1e9 / 2e9 = 0.525 s.
  EXPECT_NEAR(c.send_time(0, 1, 1e9), 0.525, kTol);
  EXPECT_NEAR(c.send_time(1, 0, 0), 0.025, kTol);
  EXPECT_TRUE(c.reachable(0, 1));
  EXPECT_EQ(c.rule(), MissingLinkRule::Route);
}

TEST(Cluster, RoutesMissingPairThroughCheaperRelay) {
  Cluster c(machines(4), diamond_links(), MissingLinkRule::Route);
  EXPECT_FALSE(c.direct(0, 3));
  EXPECT_TRUE(c.reachable(0, 3));
  EXPECT_NEAR(c.latency_s(0, 3), 0.030, kTol);
  EXPECT_NEAR(c.latency_s(3, 0), 0.030, kTol);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(0, 3), 5e8);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(3, 0), 5e8);
  EXPECT_NEAR(c.latency_s(1, 2), 0.015, kTol);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(1, 2), 1e9);
  // send 1e6 bytes 0 -> 3: 0.030 + 1e6 / 5e8 = 0.032 s.
  EXPECT_NEAR(c.send_time(0, 3, 1e6), 0.032, kTol);
  // 1 -> 2: 0.015 + 1e6 / 1e9 = 0.016 s.
  EXPECT_NEAR(c.send_time(2, 1, 1e6), 0.016, kTol);
  // Direct pairs are unchanged.
  EXPECT_NEAR(c.latency_s(2, 3), 0.040, kTol);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(2, 3), 1e10);
}

TEST(Cluster, RouteChainOfThreeRelaysAddsLatency) {
  // Path 0-1-2-3, 1 + 2 + 3 ms, bandwidths 8, 4, 16 Gbps -> 0-3: 6 ms, 4 Gbps = 5e8 B/s;
  // 0-2: 3 ms, 5e8; 1-3: 5 ms, 5e8.
  Cluster c(machines(4), {{0, 1, 1, 8}, {1, 2, 2, 4}, {3, 2, 3, 16}});
  EXPECT_NEAR(c.latency_s(0, 3), 0.006, kTol);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(0, 3), 5e8);
  EXPECT_NEAR(c.latency_s(0, 2), 0.003, kTol);
  EXPECT_NEAR(c.latency_s(3, 1), 0.005, kTol);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(3, 1), 5e8);
}

TEST(Cluster, DirectLinkKeptEvenWhenRelayIsFaster) {
  // 0-1 direct at 100 ms; 0-2-1 would be 2 ms. The direct link is the pair's parameters.
  Cluster c(machines(3), {{0, 1, 100, 8}, {0, 2, 1, 8}, {2, 1, 1, 8}});
  EXPECT_NEAR(c.latency_s(0, 1), 0.1, kTol);
  EXPECT_TRUE(c.direct(0, 1));
}

TEST(Cluster, RouteTieOnLatencyTakesWiderPath) {
  // 0-3 via 1: 10 + 10 ms, min(8, 8) Gbps; via 2: 10 + 10 ms, min(80, 16) = 16 Gbps = 2e9 B/s.
  Cluster c(machines(4), {{0, 1, 10, 8}, {1, 3, 10, 8}, {0, 2, 10, 80}, {2, 3, 10, 16}});
  EXPECT_NEAR(c.latency_s(0, 3), 0.020, kTol);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(0, 3), 2e9);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(3, 0), 2e9);
}

// The plain Floyd-Warshall the routing rule describes (least total latency; on an exact tie the
// wider bottleneck; then the path found first), on the direct-link tables; direct pairs and the
// diagonal keep their own values. The reference for Cluster's route.
void reference_route(int n, std::vector<double>& lat, std::vector<double>& bw, const std::vector<bool>& direct) {
  std::vector<double> l = lat, b = bw;
  for (int k = 0; k < n; ++k)
    for (int i = 0; i < n; ++i) {
      if (i == k || !std::isfinite(l[i * n + k])) continue;
      for (int j = 0; j < n; ++j) {
        if (j == i || j == k) continue;
        const double cand = l[i * n + k] + l[k * n + j], cb = std::min(b[i * n + k], b[k * n + j]);
        if (cand < l[i * n + j]) {
          l[i * n + j] = cand;
          b[i * n + j] = cb;
        } else if (cand == l[i * n + j] && std::isfinite(cand) && cb > b[i * n + j]) {
          b[i * n + j] = cb;
        }
      }
    }
  for (int p = 0; p < n * n; ++p)
    if (p % (n + 1) != 0 && !direct[static_cast<size_t>(p)]) {
      lat[static_cast<size_t>(p)] = l[static_cast<size_t>(p)];
      bw[static_cast<size_t>(p)] = b[static_cast<size_t>(p)];
    }
}

TEST(Cluster, RoutesLikeThePlainFloydWarshallOnRandomGraphs) {
  // Sparse random graphs, latencies on a coarse grid (many ties between relay paths), some
  // graphs disconnected: every pair's latency and bandwidth equal the reference's exactly.
  std::mt19937_64 rng(5);
  int routed = 0, ties = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int n = 3 + trial % 23;
    const double keep = trial % 5 == 0 ? 0.12 : 0.35;
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<Link> links;
    std::vector<double> lat(static_cast<size_t>(n * n), kInf), bw(static_cast<size_t>(n * n), 0.0);
    std::vector<bool> direct(static_cast<size_t>(n * n), false);
    for (int i = 0; i < n; ++i) {
      lat[static_cast<size_t>(i * n + i)] = 0;
      bw[static_cast<size_t>(i * n + i)] = kInf;
      for (int j = i + 1; j < n; ++j) {
        if (u(rng) > keep) continue;
        const double ms = 5.0 * static_cast<double>(1 + rng() % 8), gbps = static_cast<double>(1 + rng() % 6) * 8;
        links.push_back({i, j, ms, gbps});
        for (const int p : {i * n + j, j * n + i}) {
          lat[static_cast<size_t>(p)] = ms / 1e3;
          bw[static_cast<size_t>(p)] = gbps * 1e9 / 8.0;
          direct[static_cast<size_t>(p)] = true;
        }
      }
    }
    reference_route(n, lat, bw, direct);
    const Cluster c(machines(n), links, MissingLinkRule::Route);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        const size_t p = static_cast<size_t>(i * n + j);
        ASSERT_EQ(c.latency_s(i, j), lat[p]) << "trial " << trial << " pair " << i << "," << j;
        ASSERT_EQ(c.bandwidth_Bps(i, j), bw[p]) << "trial " << trial << " pair " << i << "," << j;
        if (!direct[p] && i != j && std::isfinite(lat[p])) ++routed;
      }
    for (int i = 0; i < n; ++i)  // routed pairs reached through two relays at the same least latency
      for (int j = 0; j < n; ++j) {
        const size_t p = static_cast<size_t>(i * n + j);
        if (i == j || direct[p] || !std::isfinite(lat[p])) continue;
        int relays = 0;
        for (int k = 0; k < n; ++k)
          if (k != i && k != j && lat[static_cast<size_t>(i * n + k)] + lat[static_cast<size_t>(k * n + j)] == lat[p])
            ++relays;
        ties += relays >= 2;
      }
  }
  EXPECT_GT(routed, 500);
  EXPECT_GT(ties, 100);
}

TEST(Cluster, ForbidLeavesMissingPairsUnreachable) {
  Cluster c(machines(4), diamond_links(), MissingLinkRule::Forbid);
  EXPECT_FALSE(c.reachable(0, 3));
  EXPECT_FALSE(c.reachable(3, 0));
  EXPECT_FALSE(c.reachable(1, 2));
  EXPECT_EQ(c.latency_s(0, 3), kInf);
  EXPECT_EQ(c.bandwidth_Bps(0, 3), 0.0);
  EXPECT_EQ(c.send_time(0, 3, 1e6), kInf);
  EXPECT_EQ(c.send_time(0, 3, 0), kInf);  // not NaN
  EXPECT_TRUE(c.reachable(0, 1));
  EXPECT_TRUE(c.reachable(2, 2));
  EXPECT_NEAR(c.send_time(0, 1, 1e9), 0.01 + 1.0, kTol);
}

TEST(Cluster, DisconnectedComponentsUnreachableUnderRoute) {
  Cluster c(machines(4), {{0, 1, 1, 8}, {2, 3, 1, 8}});
  EXPECT_FALSE(c.reachable(0, 2));
  EXPECT_FALSE(c.reachable(1, 3));
  EXPECT_EQ(c.send_time(1, 3, 5), kInf);
  EXPECT_EQ(c.bandwidth_Bps(1, 3), 0.0);
  EXPECT_TRUE(c.reachable(2, 3));
}

TEST(Cluster, ValidationMachines) {
  auto with = [](Machine m) {
    return [m] {
      std::vector<Machine> ms = machines(3);
      ms[2] = m;
      Cluster c(ms, {});
    };
  };
  EXPECT_TRUE(throws_invalid_argument_with(with(mach("bad", -4, 10)), {"machine 2", "bad", "memory_gb", "-4"}));
  EXPECT_TRUE(throws_invalid_argument_with(with(mach("z", 0, 10)), {"machine 2", "memory_gb", "0"}));
  EXPECT_TRUE(throws_invalid_argument_with(with(mach("n", std::nan(""), 10)), {"memory_gb", "nan"}));
  EXPECT_TRUE(throws_invalid_argument_with(with(mach("i", kInf, 10)), {"memory_gb", "inf"}));
  EXPECT_TRUE(throws_invalid_argument_with(with(mach("t", 80, 0)), {"machine 2", "tflops", "0"}));
  EXPECT_TRUE(throws_invalid_argument_with(with(mach("t", 80, -1.5)), {"tflops", "-1.5"}));
  EXPECT_TRUE(throws_invalid_argument_with(with(mach("t", 80, std::nan(""))), {"tflops", "nan"}));
}

TEST(Cluster, ValidationLinks) {
  auto with = [](Link l) {
    return [l] { Cluster c(machines(3), {{0, 1, 1, 1}, l}); };
  };
  EXPECT_TRUE(throws_invalid_argument_with(with({0, 2, -1, 8}), {"link 1", "latency_ms", "-1"}));
  EXPECT_TRUE(throws_invalid_argument_with(with({0, 2, std::nan(""), 8}), {"link 1", "latency_ms", "nan"}));
  EXPECT_TRUE(throws_invalid_argument_with(with({0, 2, kInf, 8}), {"link 1", "latency_ms", "inf"}));
  EXPECT_TRUE(throws_invalid_argument_with(with({0, 2, 1, 0}), {"link 1", "bandwidth_gbps", "0"}));
  EXPECT_TRUE(throws_invalid_argument_with(with({0, 2, 1, -3}), {"link 1", "bandwidth_gbps", "-3"}));
  EXPECT_TRUE(throws_invalid_argument_with(with({0, 2, 1, kInf}), {"link 1", "bandwidth_gbps", "inf"}));
  EXPECT_TRUE(throws_invalid_argument_with(with({0, 3, 1, 1}), {"link 1", "b = 3", "out of range"}));
  EXPECT_TRUE(throws_invalid_argument_with(with({-1, 2, 1, 1}), {"link 1", "a = -1", "out of range"}));
  EXPECT_TRUE(throws_invalid_argument_with(with({2, 2, 1, 1}), {"link 1", "self loop", "machine 2"}));
  EXPECT_TRUE(throws_invalid_argument_with(with({0, 1, 5, 5}), {"link 1", "duplicate", "link 0"}));
  EXPECT_TRUE(throws_invalid_argument_with(with({1, 0, 5, 5}), {"link 1", "duplicate", "link 0"}));
  // Zero latency is allowed.
  EXPECT_NO_THROW(Cluster(machines(3), {{0, 1, 0, 1}}));
}

// Finite but absurd values (a unit mistake, a typo) are refused by name, at both ends of each
// range of csrc/plan/plausible.h; the largest real machines and links pass.
TEST(Cluster, ValidationPlausibleRanges) {
  auto machine = [](double mem, double tf) {
    return [=] {
      std::vector<Machine> ms = machines(2);
      ms[1] = mach("odd", mem, tf);
      Cluster c(ms, {});
    };
  };
  EXPECT_TRUE(throws_invalid_argument_with(machine(80, 1e308), {"machine 1", "odd", "tflops = 1e+308", "plausible"}));
  EXPECT_TRUE(throws_invalid_argument_with(machine(80, 1e-300), {"tflops = 1e-300", "plausible"}));
  EXPECT_TRUE(throws_invalid_argument_with(machine(2e5, 100), {"memory_gb = 200000", "plausible"}));
  EXPECT_TRUE(throws_invalid_argument_with(machine(1e-9, 100), {"memory_gb = 1e-09", "plausible"}));
  EXPECT_NO_THROW(machine(13500, 180000)());  // GB200 NVL72 as one machine
  auto link = [](double lat, double bw) {
    return [=] { Cluster c(machines(3), {{0, 1, lat, bw}}); };
  };
  EXPECT_TRUE(throws_invalid_argument_with(link(1e-300, 8), {"link 0", "latency_ms = 1e-300", "plausible"}));
  EXPECT_TRUE(throws_invalid_argument_with(link(1e9, 8), {"link 0", "latency_ms = 1e+09", "plausible"}));
  EXPECT_TRUE(throws_invalid_argument_with(link(1, 1e308), {"link 0", "bandwidth_gbps = 1e+308", "plausible"}));
  EXPECT_TRUE(throws_invalid_argument_with(link(1, 1e-12), {"bandwidth_gbps = 1e-12", "plausible"}));
  EXPECT_NO_THROW(link(0.001, 6400)());  // one RDMA hop between 8 x 800 Gbit/s servers
  EXPECT_NO_THROW(link(300, 0.07)());     // a slow intercontinental path
}

TEST(Cluster, IndexChecks) {
  Cluster c(machines(2), {{0, 1, 1, 8}});
  EXPECT_THROW(c.send_time(0, 2, 1), std::out_of_range);
  EXPECT_THROW(c.reachable(-1, 0), std::out_of_range);
  EXPECT_THROW(c.without(2), std::out_of_range);
  EXPECT_THROW(c.send_time(0, 1, -1), std::invalid_argument);
}

TEST(Cluster, WithoutShiftsIndicesAndReroutes) {
  Cluster c(machines(4), diamond_links());
  Cluster d = c.without(1);  // old 0, 2, 3 -> new 0, 1, 2
  ASSERT_EQ(d.size(), 3);
  EXPECT_EQ(d.machine(0).name, "m0");
  EXPECT_EQ(d.machine(1).name, "m2");
  EXPECT_EQ(d.machine(2).name, "m3");
  ASSERT_EQ(d.links().size(), 2u);  // 0-1 and 1-3 dropped; 0-2 -> 0-1, 2-3 -> 1-2
  EXPECT_EQ(d.links()[0].a, 0);
  EXPECT_EQ(d.links()[0].b, 1);
  EXPECT_EQ(d.links()[1].a, 1);
  EXPECT_EQ(d.links()[1].b, 2);
  EXPECT_NEAR(d.latency_s(0, 1), 0.005, kTol);
  // Old 0-3 (30 ms via the removed relay 1) is now new 0-2 via new 1: 5 + 40 = 45 ms, 1e10 B/s.
  EXPECT_NEAR(d.latency_s(0, 2), 0.045, kTol);
  EXPECT_DOUBLE_EQ(d.bandwidth_Bps(0, 2), 1e10);
  EXPECT_FALSE(d.direct(0, 2));
  EXPECT_EQ(d.rule(), MissingLinkRule::Route);
  // Original untouched.
  EXPECT_EQ(c.size(), 4);
  // Removing down to nothing is allowed.
  Cluster one(machines(1), {});
  EXPECT_EQ(one.without(0).size(), 0);
}

TEST(Cluster, WithoutUnderForbidKeepsRule) {
  Cluster c(machines(4), diamond_links(), MissingLinkRule::Forbid);
  Cluster d = c.without(3);
  EXPECT_EQ(d.rule(), MissingLinkRule::Forbid);
  EXPECT_FALSE(d.reachable(1, 2));
  EXPECT_TRUE(d.reachable(0, 2));
}

TEST(Cluster, WithMachineAppendsAndRoutes) {
  Cluster c(machines(4), diamond_links());
  // New machine 4 linked to 3 only: 2 ms, 8 Gbps.
  Cluster d = c.with_machine(mach("new", 40, 10), {{3, 4, 2, 8}});
  ASSERT_EQ(d.size(), 5);
  EXPECT_EQ(d.machine(4).name, "new");
  EXPECT_EQ(d.links().size(), 5u);
  EXPECT_NEAR(d.latency_s(4, 3), 0.002, kTol);
  // 0 -> 4: 0-1-3 (30 ms, 5e8) + 3-4 (2 ms, 1e9) = 32 ms, 5e8 B/s.
  EXPECT_NEAR(d.latency_s(0, 4), 0.032, kTol);
  EXPECT_DOUBLE_EQ(d.bandwidth_Bps(0, 4), 5e8);
  // 2 -> 4: via 3 directly 40 + 2 = 42 ms vs via 0,1,3: 5 + 10 + 20 + 2 = 37 ms -> 37 ms, 5e8.
  EXPECT_NEAR(d.latency_s(2, 4), 0.037, kTol);
  EXPECT_DOUBLE_EQ(d.bandwidth_Bps(2, 4), 5e8);
}

TEST(Cluster, WithMachineValidates) {
  Cluster c(machines(2), {{0, 1, 1, 8}});
  EXPECT_TRUE(throws_invalid_argument_with([&] { c.with_machine(mach("x", -1, 1), {}); },
                                           {"machine 2", "memory_gb", "-1"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { c.with_machine(mach("x"), {{2, 2, 1, 1}}); }, {"self loop"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { c.with_machine(mach("x"), {{0, 1, 1, 1}}); },
                                           {"does not touch the new machine", "index 2"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { c.with_machine(mach("x"), {{0, 2, 1, 1}, {2, 0, 1, 1}}); },
                                           {"duplicate"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { c.with_machine(mach("x"), {{0, 2, -1, 1}}); },
                                           {"latency_ms", "-1"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { c.with_machine(mach("x"), {{0, 3, 1, 1}}); },
                                           {"does not touch"}));
  // A new machine without links is allowed: it is unreachable.
  Cluster d = c.with_machine(mach("alone"), {});
  EXPECT_FALSE(d.reachable(0, 2));
}

}  // namespace

// ---- regional clusters ----------------------------------------------------------------------

namespace regional {

using hulk::plan::RegionalNetwork;

// Four regions on a diamond like diamond_links() (region pairs 0-3 and 1-2 have no direct
// connection), LAN latencies 0.5..2 ms on the diagonal, machines spread over the regions.
RegionalNetwork diamond(int n, bool with_access, uint64_t seed) {
  RegionalNetwork net;
  net.regions = 4;
  const double lat[4][4] = {{0.5, 10, 5, 0}, {10, 1.0, 0, 20}, {5, 0, 1.5, 40}, {0, 20, 40, 2.0}};
  const double bw[4][4] = {{10, 8, 80, 1}, {8, 10, 1, 4}, {80, 1, 10, 80}, {1, 4, 80, 10}};
  for (int r = 0; r < 4; ++r)
    for (int s = 0; s < 4; ++s) {
      net.base_latency_ms.push_back(lat[r][s]);
      net.base_bandwidth_gbps.push_back(bw[r][s]);
      net.region_link.push_back(!((r == 0 && s == 3) || (r == 3 && s == 0) || (r == 1 && s == 2) || (r == 2 && s == 1)));
    }
  uint64_t state = seed;
  for (int i = 0; i < n; ++i) {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    net.region.push_back(static_cast<int64_t>((state >> 33) % 4));
    net.access_ms.push_back(with_access ? static_cast<double>((state >> 20) % 1000) / 1000.0 : 0.0);
  }
  return net;
}

// The same network written out as explicit links (one per directly connected pair).
std::vector<Link> explicit_links(const RegionalNetwork& net) {
  std::vector<Link> links;
  const int64_t n = static_cast<int64_t>(net.region.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = i + 1; j < n; ++j) {
      const size_t p = static_cast<size_t>(net.region[static_cast<size_t>(i)] * net.regions + net.region[static_cast<size_t>(j)]);
      if (!net.region_link[p]) continue;
      links.push_back({i, j, net.access_ms[static_cast<size_t>(i)] + net.access_ms[static_cast<size_t>(j)] + net.base_latency_ms[p],
                       net.base_bandwidth_gbps[p]});
    }
  return links;
}

}  // namespace regional

TEST(ClusterRegional, MatchesExplicitLinksWithoutAccessLatency) {
  // With zero access latency a relay machine adds nothing, so machine-level routing of the
  // explicit cluster and region-level routing must give the same tables.
  for (MissingLinkRule rule : {MissingLinkRule::Route, MissingLinkRule::Forbid}) {
    for (uint64_t seed : {1u, 2u, 3u}) {
      const auto net = regional::diamond(23, false, seed);
      const Cluster rc = Cluster::from_network(machines(23), net, rule);
      const Cluster ec(machines(23), regional::explicit_links(net), rule);
      ASSERT_TRUE(rc.regional());
      ASSERT_FALSE(ec.regional());
      for (int64_t i = 0; i < 23; ++i)
        for (int64_t j = 0; j < 23; ++j) {
          if (std::isinf(ec.latency_s(i, j)))
            EXPECT_EQ(rc.latency_s(i, j), ec.latency_s(i, j)) << i << "," << j;
          else
            EXPECT_NEAR(rc.latency_s(i, j), ec.latency_s(i, j), kTol) << i << "," << j;
          EXPECT_EQ(rc.bandwidth_Bps(i, j), ec.bandwidth_Bps(i, j)) << i << "," << j;
          EXPECT_EQ(rc.direct(i, j), ec.direct(i, j)) << i << "," << j;
          EXPECT_EQ(rc.reachable(i, j), ec.reachable(i, j)) << i << "," << j;
        }
    }
  }
}

TEST(ClusterRegional, AccessLatencyAddsToRoutedRegionLatency) {
  auto net = regional::diamond(0, true, 0);
  net.region = {0, 3, 1, 1};
  net.access_ms = {0.25, 0.5, 1.0, 2.0};
  const Cluster c = Cluster::from_network(machines(4), net);
  // 0 (region 0) - 1 (region 3): routed via region 1, 10 + 20 = 30 ms, bw min(8, 4) = 4 Gbps.
  EXPECT_NEAR(c.latency_s(0, 1), (0.25 + 0.5 + 30) / 1e3, kTol);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(0, 1), 4e9 / 8);
  EXPECT_FALSE(c.direct(0, 1));
  // 2 - 3 share region 1: LAN 1.0 ms, 10 Gbps.
  EXPECT_NEAR(c.latency_s(2, 3), (1.0 + 2.0 + 1.0) / 1e3, kTol);
  EXPECT_DOUBLE_EQ(c.bandwidth_Bps(2, 3), 10e9 / 8);
  EXPECT_TRUE(c.direct(2, 3));
  EXPECT_EQ(c.latency_s(2, 2), 0.0);
  EXPECT_EQ(c.bandwidth_Bps(2, 2), kInf);
  EXPECT_NEAR(c.send_time(0, 2, 1e9), (0.25 + 1.0 + 10) / 1e3 + 1e9 / (8e9 / 8), kTol);
  // Forbid: the missing region pair cannot talk.
  const Cluster f = Cluster::from_network(machines(4), net, MissingLinkRule::Forbid);
  EXPECT_FALSE(f.reachable(0, 1));
  EXPECT_EQ(f.send_time(0, 1, 1.0), kInf);
}

TEST(ClusterRegional, WithoutAndWithMachineKeepTheNetwork) {
  const auto net = regional::diamond(9, true, 7);
  const Cluster c = Cluster::from_network(machines(9), net);
  const Cluster w = c.without(4);
  ASSERT_EQ(w.size(), 8);
  for (int64_t i = 0; i < 8; ++i)
    for (int64_t j = 0; j < 8; ++j)
      EXPECT_EQ(w.latency_s(i, j), c.latency_s(i < 4 ? i : i + 1, j < 4 ? j : j + 1));
  const Cluster a = c.with_machine(mach("new"), 2, 0.125);
  ASSERT_EQ(a.size(), 10);
  EXPECT_NEAR(a.latency_s(9, 0), 0.125e-3 + net.access_ms[0] / 1e3 + (net.region[0] == 2 ? 1.5 : net.region[0] == 0 ? 5.0 : net.region[0] == 3 ? 40.0 : 15.0) / 1e3, kTol);
  EXPECT_TRUE(throws_invalid_argument_with([&] { c.with_machine(mach("x"), {}); }, {"regional cluster"}));
  EXPECT_TRUE(throws_invalid_argument_with([&] { c.with_machine(mach("x"), 4, 0.0); }, {"region 4 out of range"}));
}

TEST(ClusterRegional, Validation) {
  auto bad = [](auto edit, const std::string& what) {
    auto net = regional::diamond(5, true, 3);
    edit(net);
    return throws_invalid_argument_with([&] { Cluster::from_network(machines(5), net); }, {what});
  };
  using N = hulk::plan::RegionalNetwork;
  EXPECT_TRUE(bad([](N& n) { n.regions = 0; }, "regions must be >= 1"));
  EXPECT_TRUE(bad([](N& n) { n.region.pop_back(); }, "one entry per machine"));
  EXPECT_TRUE(bad([](N& n) { n.base_latency_ms.pop_back(); }, "R * R = 16"));
  EXPECT_TRUE(bad([](N& n) { n.region[2] = 7; }, "machine 2 ('m2'): region 7 out of range"));
  EXPECT_TRUE(bad([](N& n) { n.access_ms[1] = -1; }, "access_ms must be finite and >= 0, got -1"));
  EXPECT_TRUE(bad([](N& n) { n.region_link[5] = 0; }, "diagonal"));
  EXPECT_TRUE(bad([](N& n) { n.base_latency_ms[1] = 11; }, "symmetric"));
  EXPECT_TRUE(bad([](N& n) { n.base_bandwidth_gbps[1] = n.base_bandwidth_gbps[4] = 0; }, "base_bandwidth_gbps must be finite and > 0"));
  EXPECT_TRUE(bad([](N& n) { n.base_latency_ms[2] = n.base_latency_ms[8] = std::nan(""); }, "base_latency_ms must be finite"));
  // Unlinked pairs may hold anything: they are never read.
  auto net = regional::diamond(5, true, 3);
  net.base_latency_ms[3] = net.base_latency_ms[12] = -5;
  EXPECT_NO_THROW(Cluster::from_network(machines(5), net));
}

TEST(ClusterRegional, ExplicitClustersHaveASizeLimit) {
  EXPECT_TRUE(throws_invalid_argument_with([] { Cluster c(machines(Cluster::kMaxExplicitMachines + 1), {}); },
                                           {"RegionalNetwork"}));
}

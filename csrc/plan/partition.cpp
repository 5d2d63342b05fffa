// Chain order and the layer split by dynamic programming (planners.h building blocks).
#include "detail.h"
#include "planners.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

namespace hulk::plan {

using namespace detail;

namespace {

// ---- layer split by dynamic programming -------------------------------------------------

// What the DP needs to know about one stage position: compute time per layer, the send
// time after it (X_s) and how many layers fit in its memory.
struct StageParams {
  double compute_per_layer = 0;
  double send = 0;
  int64_t max_layers = 0;
};

// Largest n such that a stage of n layers fits in `cap` bytes (cost.h's stage memory:
// state_bytes(n) + stage_activation_bytes(n, b, m)).
int64_t layers_that_fit(const ModelSpec& m, double b, double cap) {
  int64_t n = 0;
  while (n < m.layers) {
    // Same expression, same evaluation order as pipeline_cost, so both agree at the edge.
    const double need = m.state_bytes(n + 1) + m.stage_activation_bytes(n + 1, b, m.micro_batches);
    if (need > cap) break;
    ++n;
  }
  return n;
}

// Stage parameters for D replicas that share one layer split: each position takes its
// worst replica (slowest machine, slowest link, least memory), so any split the DP accepts
// fits every replica and its bottleneck bounds every replica's.
std::vector<StageParams> stage_params(const Cluster& c, const ModelSpec& m,
                                      const std::vector<std::vector<int64_t>>& chains, int64_t replicas) {
  const size_t S = chains.front().size();
  const double b = micro_batch(m, replicas);
  const double flops_per_layer =
      m.flops_per_token / static_cast<double>(m.layers) * m.recompute_factor() * b * static_cast<double>(m.seq_len);
  const double bytes = m.boundary_bytes(b);
  std::vector<StageParams> p(S);
  for (size_t s = 0; s < S; ++s) {
    double cap = kInf;
    for (const auto& ch : chains) {
      const int64_t i = ch[s];
      p[s].compute_per_layer = std::max(p[s].compute_per_layer, flops_per_layer / (c.machine(i).tflops * 1e12));
      if (s + 1 < S) p[s].send = std::max(p[s].send, 2.0 * c.send_time(i, ch[s + 1], bytes));
      cap = std::min(cap, capacity_bytes(c, i));
    }
    p[s].max_layers = layers_that_fit(m, b, cap);
  }
  // An unreachable pair makes every split infeasible (each stage holds a layer, so every
  // X_s is paid); plan the memory anyway and let pipeline_cost report the reason.
  for (auto& q : p)
    if (!std::isfinite(q.send)) q.send = 0;
  return p;
}

// Minimises the bottleneck max_s (n_s c_s + x_s), then, among splits reaching it, the sum
// (the fill/drain part of T_pipe). Two passes keep both exact. O(S L^2).
std::vector<int64_t> split_dp(const std::vector<StageParams>& p, int64_t L) {
  const int64_t S = static_cast<int64_t>(p.size());
  if (S == 0 || S > L) return {};
  auto cost = [&](int64_t s, int64_t n) { return static_cast<double>(n) * p[static_cast<size_t>(s)].compute_per_layer + p[static_cast<size_t>(s)].send; };
  auto at = [&](std::vector<double>& v, int64_t s, int64_t l) -> double& { return v[static_cast<size_t>(s * (L + 1) + l)]; };
  // Stage s may end at layer l' only if the S - s - 1 later stages can still get a layer each.
  std::vector<double> f(static_cast<size_t>((S + 1) * (L + 1)), kInf);
  at(f, 0, 0) = 0;
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t l = s; l <= L - (S - s); ++l) {
      const double here = at(f, s, l);
      if (here == kInf) continue;
      const int64_t n_hi = std::min(p[static_cast<size_t>(s)].max_layers, L - l - (S - s - 1));
      for (int64_t n = 1; n <= n_hi; ++n) {
        double& dst = at(f, s + 1, l + n);
        dst = std::min(dst, std::max(here, cost(s, n)));
      }
    }
  }
  const double bottleneck = at(f, S, L);
  if (bottleneck == kInf) return {};
  const double limit = bottleneck * (1 + 1e-12) + 1e-300;
  std::vector<double> g(f.size(), kInf);
  std::vector<int64_t> from(f.size(), -1);
  at(g, 0, 0) = 0;
  for (int64_t s = 0; s < S; ++s) {
    for (int64_t l = s; l <= L - (S - s); ++l) {
      const double here = at(g, s, l);
      if (here == kInf) continue;
      const int64_t n_hi = std::min(p[static_cast<size_t>(s)].max_layers, L - l - (S - s - 1));
      for (int64_t n = 1; n <= n_hi; ++n) {
        const double cst = cost(s, n);
        if (cst > limit) break;  // cost grows with n
        const size_t k = static_cast<size_t>((s + 1) * (L + 1) + l + n);
        if (here + cst < g[k]) {
          g[k] = here + cst;
          from[k] = l;
        }
      }
    }
  }
  std::vector<int64_t> bounds(static_cast<size_t>(S + 1));
  bounds[static_cast<size_t>(S)] = L;
  for (int64_t s = S; s > 0; --s) {
    bounds[static_cast<size_t>(s - 1)] = from[static_cast<size_t>(s * (L + 1) + bounds[static_cast<size_t>(s)])];
  }
  return bounds;
}

// S stages over L layers, sizes proportional to weights, each stage at least one layer.
std::vector<int64_t> proportional_bounds(const std::vector<double>& w, int64_t L) {
  const int64_t S = static_cast<int64_t>(w.size());
  const double total = std::accumulate(w.begin(), w.end(), 0.0);
  std::vector<int64_t> b(static_cast<size_t>(S + 1), 0);
  double acc = 0;
  for (int64_t s = 1; s < S; ++s) {
    acc += w[static_cast<size_t>(s - 1)];
    int64_t x = total > 0 ? std::llround(static_cast<double>(L) * acc / total) : s;
    x = std::max(x, b[static_cast<size_t>(s - 1)] + 1);
    x = std::min(x, L - (S - s));
    b[static_cast<size_t>(s)] = x;
  }
  b[static_cast<size_t>(S)] = L;
  return b;
}


}  // namespace

// ---- building blocks --------------------------------------------------------------------------

std::vector<int64_t> chain_order(const Cluster& c, const ModelSpec& m, std::vector<int64_t> machines) {
  if (machines.size() <= 1) return machines;
  const double bytes = m.boundary_bytes(micro_batch(m, 1));
  // Start where the memory is (the chain's head is kept by every D); ties: faster, lower id.
  size_t start = 0;
  for (size_t k = 1; k < machines.size(); ++k) {
    const Machine& a = c.machine(machines[k]);
    const Machine& b = c.machine(machines[start]);
    if (std::make_tuple(a.memory_gb, a.tflops, -machines[k]) > std::make_tuple(b.memory_gb, b.tflops, -machines[start]))
      start = k;
  }
  std::vector<int64_t> out{machines[start]};
  machines.erase(machines.begin() + static_cast<std::ptrdiff_t>(start));
  while (!machines.empty()) {
    size_t next = 0;
    double best = kInf;
    for (size_t k = 0; k < machines.size(); ++k) {
      const double t = c.send_time(out.back(), machines[k], bytes);
      if (t < best || (t == best && machines[k] < machines[next])) {
        best = t;
        next = k;
      }
    }
    out.push_back(machines[next]);
    machines[next] = machines.back();  // O(1) removal; ties go to the lower id, so order is irrelevant
    machines.pop_back();
  }
  return out;
}

std::vector<int64_t> partition_layers(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& chain,
                                      int64_t replicas) {
  if (replicas < 1) throw std::invalid_argument("partition_layers: replicas = " + std::to_string(replicas) + " (must be >= 1)");
  for (int64_t i : chain)
    if (i < 0 || i >= c.size()) throw std::invalid_argument("partition_layers: machine " + std::to_string(i) + " out of range");
  if (chain.empty()) return {};
  return split_dp(stage_params(c, m, {chain}, replicas), m.layers);
}

JobPlan best_pipeline(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& group) {
  if (group.empty()) return infeasible_job(m, "no machines assigned", memory_need(m));
  const std::vector<int64_t> chain = chain_order(c, m, group);
  const int64_t n = static_cast<int64_t>(chain.size());
  // A replica needs at least one sequence per micro-batch.
  const int64_t max_d = std::min<int64_t>(n, std::max<int64_t>(1, m.global_batch / std::max<int64_t>(1, m.micro_batches)));

  JobPlan best, least_bad;
  bool have = false, have_bad = false;
  for (int64_t D = 1; D <= max_d; ++D) {
    // Replicas are consecutive pieces of one chain, so each is geographically compact;
    // the chain's tail (the machines farthest from its head) is what is left out.
    const int64_t k = std::min(n / D, m.layers);
    std::vector<std::vector<int64_t>> pieces(static_cast<size_t>(D));
    for (int64_t r = 0; r < D; ++r)
      pieces[static_cast<size_t>(r)].assign(chain.begin() + r * k, chain.begin() + (r + 1) * k);
    const std::vector<int64_t> bounds = split_dp(stage_params(c, m, pieces, D), m.layers);
    if (bounds.empty()) continue;
    JobPlan jp;
    jp.model = m;
    for (auto& pc : pieces) jp.replicas.push_back(Replica{std::move(pc), bounds});
    jp.cost = pipeline_cost(c, m, jp.replicas);
    if (jp.cost.feasible) {
      if (!have || jp.cost.iteration_s < best.cost.iteration_s) {
        best = std::move(jp);
        have = true;
      }
    } else if (!have_bad || jp.cost.memory_shortfall_bytes < least_bad.cost.memory_shortfall_bytes) {
      least_bad = std::move(jp);
      have_bad = true;
    }
  }
  if (have) return best;
  if (!have_bad) {
    // No split fits in memory: report one pipeline over the chain, layers in proportion to
    // memory, so the cost model states the shortfall.
    const int64_t k = std::min(n, m.layers);
    std::vector<int64_t> ms(chain.begin(), chain.begin() + k);
    std::vector<double> w;
    for (int64_t i : ms) w.push_back(capacity_bytes(c, i));
    least_bad.model = m;
    least_bad.replicas.push_back(Replica{ms, proportional_bounds(w, m.layers)});
    least_bad.cost = pipeline_cost(c, m, least_bad.replicas);
    if (least_bad.cost.feasible) {  // cannot happen when the DP is exact; stay honest if it does
      least_bad.cost.feasible = false;
    }
  }
  std::ostringstream why;
  why << "no feasible pipeline on " << n << " machines (" << format_gb(group_memory(c, group)) << " of memory for a model needing at least "
      << format_gb(memory_need(m)) << ")";
  if (!least_bad.cost.reason.empty()) why << ": " << least_bad.cost.reason;
  least_bad.cost.reason = why.str();
  return least_bad;
}

}  // namespace hulk::plan

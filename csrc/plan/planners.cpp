// The planners of planners.h. Every plan is costed by pipeline_cost / tensor_parallel_cost
// (cost.h), so the numbers a planner optimises are the numbers it reports.
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

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using Clock = std::chrono::steady_clock;

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

std::string machine_label(const Cluster& c, int64_t i) {
  std::ostringstream o;
  o << "machine " << i;
  if (!c.machine(i).name.empty()) o << " (" << c.machine(i).name << ")";
  return o.str();
}

std::string job_label(const std::vector<ModelSpec>& jobs, int64_t j) {
  std::ostringstream o;
  o << "job " << j;
  if (!jobs[static_cast<size_t>(j)].name.empty()) o << " (" << jobs[static_cast<size_t>(j)].name << ")";
  return o.str();
}

std::string gb(double bytes) {
  std::ostringstream o;
  o.precision(4);
  o << bytes / 1e9 << " GB";
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

void check_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& a,
                      const char* what) {
  if (static_cast<int64_t>(a.size()) != c.size()) {
    throw std::invalid_argument(std::string(what) + ": has " + std::to_string(a.size()) +
                                " entries, the cluster has " + std::to_string(c.size()) + " machines");
  }
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i] < -1 || a[i] >= static_cast<int64_t>(jobs.size())) {
      throw std::invalid_argument(std::string(what) + "[" + std::to_string(i) + "] = " + std::to_string(a[i]) +
                                  " is not -1 (idle) or a job index below " + std::to_string(jobs.size()));
    }
  }
}

std::vector<std::vector<int64_t>> groups_of(const std::vector<int64_t>& assign, size_t n_jobs) {
  std::vector<std::vector<int64_t>> g(n_jobs);
  for (size_t i = 0; i < assign.size(); ++i)
    if (assign[i] >= 0) g[static_cast<size_t>(assign[i])].push_back(static_cast<int64_t>(i));
  return g;
}

// ---- layer split by dynamic programming -------------------------------------------------

// What the DP needs to know about one stage position: compute time per layer, the send
// time after it (X_s) and how many layers fit in its memory.
struct StageParams {
  double compute_per_layer = 0;
  double send = 0;
  int64_t max_layers = 0;
};

double micro_batch(const ModelSpec& m, int64_t replicas) {
  return static_cast<double>(m.global_batch) / (static_cast<double>(replicas) * static_cast<double>(m.micro_batches));
}

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

// Even split, the remainder going to the first stages (System B).
std::vector<int64_t> even_bounds(int64_t S, int64_t L) {
  std::vector<int64_t> b(static_cast<size_t>(S + 1), 0);
  for (int64_t s = 0; s < S; ++s) b[static_cast<size_t>(s + 1)] = b[static_cast<size_t>(s)] + L / S + (s < L % S ? 1 : 0);
  return b;
}

JobPlan infeasible_job(const ModelSpec& m, const std::string& reason, double shortfall) {
  JobPlan jp;
  jp.model = m;
  jp.cost.feasible = false;
  jp.cost.reason = reason;
  jp.cost.memory_shortfall_bytes = shortfall;
  return jp;
}

// Re-plans a job on a new group keeping its strategy (tensor parallel stays tensor parallel).
JobPlan replan(const Cluster& c, const JobPlan& old, const std::vector<int64_t>& group) {
  if (old.strategy == Strategy::TensorParallel) {
    if (group.empty()) return infeasible_job(old.model, "no machines left", memory_need(old.model));
    JobPlan jp;
    jp.model = old.model;
    jp.strategy = Strategy::TensorParallel;
    jp.tensor_group = group;
    jp.cost = tensor_parallel_cost(c, old.model, group);
    return jp;
  }
  return best_pipeline(c, old.model, group);
}

// ---- comparing plans ------------------------------------------------------------------------

// Lexicographic: fewer infeasible jobs, less memory shortfall, then makespan, then the sum
// of job times. Among fully feasible plans this is exactly (makespan, sum).
struct Score {
  int64_t infeasible = 0;
  double shortfall = 0;
  double makespan = 0;
  double total = 0;
};

bool operator<(const Score& a, const Score& b) {
  if (a.infeasible != b.infeasible) return a.infeasible < b.infeasible;
  if (a.shortfall != b.shortfall) return a.shortfall < b.shortfall;
  if (a.makespan != b.makespan) return a.makespan < b.makespan;
  return a.total < b.total;
}

Score score_of(const Plan& p) {
  Score s;
  for (const auto& j : p.jobs) {
    if (!j.cost.feasible) {
      ++s.infeasible;
      s.shortfall += j.cost.memory_shortfall_bytes;
    } else {
      s.makespan = std::max(s.makespan, j.finish_s);
      s.total += j.finish_s - j.start_s;
    }
  }
  return s;
}

// A job that starts later than 0 in a concurrent plan waited for the job that finished
// when it started (Plan keeps start/finish, not the waits themselves).
std::vector<int64_t> infer_waits(const Plan& p) {
  std::vector<int64_t> w(p.jobs.size(), -1);
  if (p.sequential) return w;
  for (size_t j = 0; j < p.jobs.size(); ++j) {
    if (!(p.jobs[j].start_s > 0)) continue;
    double best = kInf;
    for (size_t k = 0; k < p.jobs.size(); ++k) {
      if (k == j) continue;
      const double d = std::fabs(p.jobs[k].finish_s - p.jobs[j].start_s);
      if (d < best) {
        best = d;
        w[j] = static_cast<int64_t>(k);
      }
    }
  }
  return w;
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
    machines.erase(machines.begin() + static_cast<std::ptrdiff_t>(next));
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
  why << "no feasible pipeline on " << n << " machines (" << gb(group_memory(c, group)) << " of memory for a model needing at least "
      << gb(memory_need(m)) << ")";
  if (!least_bad.cost.reason.empty()) why << ": " << least_bad.cost.reason;
  least_bad.cost.reason = why.str();
  return least_bad;
}

// ---- the paper's baselines ------------------------------------------------------------------------

namespace {

JobPlan system_a_job(const Cluster& c, const ModelSpec& m) {
  // Memory of a data-parallel replica holding the whole model and B / D sequences.
  auto need = [&](int64_t D) {
    const double b = micro_batch(m, D);
    return m.state_bytes(m.layers) + m.stage_activation_bytes(m.layers, b, m.micro_batches);
  };
  // D and the set of machines that fit depend on each other: fewer replicas means a bigger
  // share of the batch each. Shrink D until it equals the number of machines that fit.
  int64_t D = c.size();
  std::vector<int64_t> fit;
  while (D > 0) {
    fit.clear();
    for (int64_t i = 0; i < c.size(); ++i)
      if (need(D) <= capacity_bytes(c, i)) fit.push_back(i);
    if (static_cast<int64_t>(fit.size()) == D || fit.empty()) break;
    D = static_cast<int64_t>(fit.size());
  }
  if (fit.empty()) {
    double largest = 0;
    for (int64_t i = 0; i < c.size(); ++i) largest = std::max(largest, capacity_bytes(c, i));
    return infeasible_job(m,
                          "System A: no machine fits the whole model (needs " + gb(need(1)) +
                              " with the whole batch; the largest machine has " + gb(largest) + ")",
                          need(1) - largest);
  }
  JobPlan jp;
  jp.model = m;
  for (int64_t i : fit) jp.replicas.push_back(Replica{{i}, {0, m.layers}});
  jp.cost = pipeline_cost(c, m, jp.replicas);
  return jp;
}

JobPlan system_b_job(const Cluster& c, const ModelSpec& m) {
  if (c.size() == 0) return infeasible_job(m, "System B: the cluster has no machines", memory_need(m));
  const int64_t S = std::min(c.size(), m.layers);
  std::vector<int64_t> ms(static_cast<size_t>(S));
  std::iota(ms.begin(), ms.end(), 0);
  JobPlan jp;
  jp.model = m;
  jp.replicas.push_back(Replica{ms, even_bounds(S, m.layers)});
  jp.cost = pipeline_cost(c, m, jp.replicas);
  if (!jp.cost.feasible) jp.cost.reason = "System B: " + jp.cost.reason;
  return jp;
}

JobPlan system_c_job(const Cluster& c, const ModelSpec& m) {
  if (c.size() == 0) return infeasible_job(m, "System C: the cluster has no machines", memory_need(m));
  JobPlan jp;
  jp.model = m;
  jp.strategy = Strategy::TensorParallel;
  jp.tensor_group.resize(static_cast<size_t>(c.size()));
  std::iota(jp.tensor_group.begin(), jp.tensor_group.end(), 0);
  jp.cost = tensor_parallel_cost(c, m, jp.tensor_group);
  if (!jp.cost.feasible) jp.cost.reason = "System C: " + jp.cost.reason;
  return jp;
}

template <class F>
Plan sequential_plan(const char* name, const Cluster& c, const std::vector<ModelSpec>& jobs, F job) {
  const auto t0 = Clock::now();
  Plan p;
  p.planner = name;
  p.sequential = true;
  for (size_t j = 0; j < jobs.size(); ++j) {
    p.jobs.push_back(job(c, jobs[j]));
    if (!p.jobs.back().cost.feasible)
      p.notes.push_back(job_label(jobs, static_cast<int64_t>(j)) + " infeasible: " + p.jobs.back().cost.reason);
  }
  p.schedule();
  p.planning_s = seconds_since(t0);
  return p;
}

Plan plan_from_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& a,
                          const char* name) {
  Plan p;
  p.planner = name;
  const auto groups = groups_of(a, jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j) {
    p.jobs.push_back(best_pipeline(c, jobs[j], groups[j]));
    if (!p.jobs.back().cost.feasible)
      p.notes.push_back(job_label(jobs, static_cast<int64_t>(j)) + " infeasible: " + p.jobs.back().cost.reason);
  }
  p.schedule();
  return p;
}

}  // namespace

Plan plan_system_a(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  return sequential_plan("System A", c, jobs, system_a_job);
}
Plan plan_system_b(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  return sequential_plan("System B", c, jobs, system_b_job);
}
Plan plan_system_c(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  return sequential_plan("System C", c, jobs, system_c_job);
}

Plan plan_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& assignment,
                     const char* name) {
  const auto t0 = Clock::now();
  check_assignment(c, jobs, assignment, "assignment");
  Plan p = plan_from_assignment(c, jobs, assignment, name ? name : "assignment");
  p.planning_s = seconds_since(t0);
  return p;
}

// ---- Hulk: heuristic classification and Algorithm 1 -------------------------------------------

std::vector<int64_t> heuristic_classes(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  // Regions in order of first appearance.
  std::vector<std::string> names;
  std::vector<std::vector<int64_t>> regions;
  for (int64_t i = 0; i < c.size(); ++i) {
    const auto it = std::find(names.begin(), names.end(), c.machine(i).region);
    if (it == names.end()) {
      names.push_back(c.machine(i).region);
      regions.push_back({i});
    } else {
      regions[static_cast<size_t>(it - names.begin())].push_back(i);
    }
  }
  const size_t R = regions.size();
  // Region distance: the lowest latency between any of their machines.
  std::vector<double> dist(R * R, kInf);
  for (size_t a = 0; a < R; ++a)
    for (size_t b = 0; b < R; ++b)
      for (int64_t x : regions[a])
        for (int64_t y : regions[b]) dist[a * R + b] = std::min(dist[a * R + b], c.latency_s(x, y));
  std::vector<double> mem(R);
  for (size_t r = 0; r < R; ++r) mem[r] = group_memory(c, regions[r]);

  std::vector<int64_t> owner(R, -1);  // region -> job
  auto closest_free = [&](const std::vector<size_t>& taken) {
    size_t pick = R;
    for (size_t r = 0; r < R; ++r) {
      if (owner[r] >= 0) continue;
      if (pick == R) { pick = r; continue; }
      if (taken.empty()) {  // a job's first region: the one with the most memory
        if (mem[r] > mem[pick]) pick = r;
        continue;
      }
      double dr = kInf, dp = kInf;
      for (size_t t : taken) {
        dr = std::min(dr, dist[t * R + r]);
        dp = std::min(dp, dist[t * R + pick]);
      }
      if (dr < dp || (dr == dp && mem[r] > mem[pick])) pick = r;
    }
    return pick;
  };
  std::vector<std::vector<size_t>> taken(jobs.size());
  for (int64_t j : jobs_by_need(jobs)) {
    double have = 0;
    const double need = memory_need(jobs[static_cast<size_t>(j)]);
    while (have < need) {
      const size_t r = closest_free(taken[static_cast<size_t>(j)]);
      if (r == R) break;
      owner[r] = j;
      taken[static_cast<size_t>(j)].push_back(r);
      have += mem[r];
    }
  }
  // Regions nobody needed go to the job owning the closest region: more machines let
  // best_pipeline add replicas, and Algorithm 1 can hand surplus on.
  for (size_t r = 0; r < R; ++r) {
    if (owner[r] >= 0) continue;
    double best = kInf;
    for (size_t t = 0; t < R; ++t)
      if (owner[t] >= 0 && dist[t * R + r] < best) {
        best = dist[t * R + r];
        owner[r] = owner[t];
      }
  }
  std::vector<int64_t> classes(static_cast<size_t>(c.size()), -1);
  for (size_t r = 0; r < R; ++r)
    for (int64_t i : regions[r]) classes[static_cast<size_t>(i)] = owner[r];
  return classes;
}

Plan plan_hulk(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& classes) {
  const auto t0 = Clock::now();
  check_assignment(c, jobs, classes, "classes");
  Plan p;
  p.planner = "hulk";
  const size_t J = jobs.size();
  std::vector<int64_t> assign = classes;

  auto group = [&](int64_t j) {
    std::vector<int64_t> g;
    for (int64_t i = 0; i < c.size(); ++i)
      if (assign[static_cast<size_t>(i)] == j) g.push_back(i);
    return g;
  };
  // Cheap memory test first; best_pipeline decides (layer granularity, activations).
  auto fits = [&](int64_t j, const std::vector<int64_t>& g) {
    const ModelSpec& m = jobs[static_cast<size_t>(j)];
    return !g.empty() && group_memory(c, g) >= memory_need(m) && best_pipeline(c, m, g).cost.feasible;
  };
  auto distance = [&](int64_t x, const std::vector<int64_t>& g) {
    double d = kInf;
    for (int64_t y : g) d = std::min(d, c.latency_s(x, y));
    return d;
  };

  std::vector<bool> waiting(J, false);
  for (int64_t j : jobs_by_need(jobs)) {
    std::vector<int64_t> g = group(j);
    while (!fits(j, g)) {
      // Candidates: idle machines first, then machines of other groups; closest first.
      std::vector<std::pair<std::pair<int, double>, int64_t>> cand;
      for (int64_t x = 0; x < c.size(); ++x) {
        const int64_t o = assign[static_cast<size_t>(x)];
        if (o == j || (o >= 0 && waiting[static_cast<size_t>(o)])) continue;
        const double d = g.empty() ? -capacity_bytes(c, x) : distance(x, g);  // empty group: most memory first
        cand.push_back({{o < 0 ? 0 : 1, d}, x});
      }
      std::sort(cand.begin(), cand.end());
      int64_t taken = -1;
      for (const auto& cd : cand) {
        const int64_t x = cd.second, o = assign[static_cast<size_t>(x)];
        if (o >= 0) {  // only surplus: the donor must still fit without x
          std::vector<int64_t> rest = group(o);
          rest.erase(std::find(rest.begin(), rest.end(), x));
          if (!fits(o, rest)) continue;
        }
        taken = x;
        break;
      }
      if (taken < 0) break;
      const int64_t from = assign[static_cast<size_t>(taken)];
      p.notes.push_back("moved " + machine_label(c, taken) + " from " +
                        (from < 0 ? std::string("idle") : job_label(jobs, from)) + " to " + job_label(jobs, j) +
                        " (short of memory)");
      assign[static_cast<size_t>(taken)] = j;
      g.push_back(taken);
      std::sort(g.begin(), g.end());
    }
    if (!fits(j, g)) {
      waiting[static_cast<size_t>(j)] = true;
      for (int64_t x : g) assign[static_cast<size_t>(x)] = -1;  // released for the others
    }
  }

  p.jobs.resize(J);
  for (size_t j = 0; j < J; ++j)
    if (!waiting[j]) p.jobs[j] = best_pipeline(c, jobs[j], group(static_cast<int64_t>(j)));

  // Waiting jobs queue on a running group ("slot"): the one that frees a fitting set of
  // machines first. If no single group fits, every group is merged after all finish.
  struct Slot {
    std::vector<int64_t> machines;
    double free_at;
    int64_t last;
  };
  std::vector<Slot> slots;
  for (size_t j = 0; j < J; ++j)
    if (!waiting[j]) slots.push_back({group(static_cast<int64_t>(j)), job_time(p.jobs[j]), static_cast<int64_t>(j)});
  std::vector<int64_t> waits(J, -1);
  std::vector<int64_t> all(static_cast<size_t>(c.size()));
  std::iota(all.begin(), all.end(), 0);
  for (int64_t j : jobs_by_need(jobs)) {
    if (!waiting[static_cast<size_t>(j)]) continue;
    const ModelSpec& m = jobs[static_cast<size_t>(j)];
    int64_t pick = -1;
    JobPlan jp;
    for (size_t s = 0; s < slots.size(); ++s) {
      if (pick >= 0 && slots[s].free_at >= slots[static_cast<size_t>(pick)].free_at) continue;
      JobPlan trial = best_pipeline(c, m, slots[s].machines);
      if (trial.cost.feasible) {
        pick = static_cast<int64_t>(s);
        jp = std::move(trial);
      }
    }
    if (pick >= 0) {
      Slot& s = slots[static_cast<size_t>(pick)];
      waits[static_cast<size_t>(j)] = s.last;
      p.notes.push_back(job_label(jobs, j) + " waits for " + job_label(jobs, s.last) + ", then runs on its " +
                        std::to_string(s.machines.size()) + " machines");
      s.free_at += job_time(jp);
      s.last = j;
      p.jobs[static_cast<size_t>(j)] = std::move(jp);
      continue;
    }
    jp = best_pipeline(c, m, all);
    if (!jp.cost.feasible) {
      p.notes.push_back(job_label(jobs, j) + " does not fit even on the whole cluster: " + jp.cost.reason);
      p.jobs[static_cast<size_t>(j)] = std::move(jp);
      continue;
    }
    Slot merged{all, 0, -1};
    for (const Slot& s : slots)
      if (s.free_at >= merged.free_at) {
        merged.free_at = s.free_at;
        merged.last = s.last;
      }
    waits[static_cast<size_t>(j)] = merged.last;
    p.notes.push_back(job_label(jobs, j) + " fits no single group: all groups merged, it runs on the whole cluster" +
                      (merged.last >= 0 ? " after " + job_label(jobs, merged.last) : std::string()));
    merged.free_at += job_time(jp);
    merged.last = j;
    slots.assign(1, merged);
    p.jobs[static_cast<size_t>(j)] = std::move(jp);
  }
  for (size_t j = 0; j < J; ++j)
    if (!p.jobs[j].cost.feasible && !waiting[j])
      p.notes.push_back(job_label(jobs, static_cast<int64_t>(j)) + " infeasible: " + p.jobs[j].cost.reason);
  p.schedule(waits);
  p.planning_s = seconds_since(t0);
  return p;
}

// ---- search ----------------------------------------------------------------------------------------

namespace {

// Scores assignments with best_pipeline, memoised per job and group (the annealing walk
// revisits groups often).
class Evaluator {
 public:
  Evaluator(const Cluster& c, const std::vector<ModelSpec>& jobs) : c_(c), jobs_(jobs), cache_(jobs.size()) {}

  struct JobEval {
    bool feasible = false;
    double time = kInf;
    double shortfall = 0;
  };

  JobEval job(size_t j, const std::vector<int64_t>& g) {
    auto& cache = cache_[j];
    const auto it = cache.find(g);
    if (it != cache.end()) return it->second;
    if (cache.size() > 200000) cache.clear();  // bound memory on long runs
    const JobPlan jp = best_pipeline(c_, jobs_[j], g);
    JobEval e{jp.cost.feasible, job_time(jp), jp.cost.feasible ? 0.0 : std::max(jp.cost.memory_shortfall_bytes, 1.0)};
    cache.emplace(g, e);
    return e;
  }

  Score score(const std::vector<int64_t>& assign) {
    Score s;
    const auto groups = groups_of(assign, jobs_.size());
    for (size_t j = 0; j < jobs_.size(); ++j) {
      const JobEval e = job(j, groups[j]);
      if (!e.feasible) {
        ++s.infeasible;
        s.shortfall += e.shortfall;
      } else {
        s.makespan = std::max(s.makespan, e.time);
        s.total += e.time;
      }
    }
    return s;
  }

 private:
  const Cluster& c_;
  const std::vector<ModelSpec>& jobs_;
  std::vector<std::map<std::vector<int64_t>, JobEval>> cache_;
};

// Greedy start: jobs by decreasing memory need each grow a group from the free machine with
// the most memory, adding the free machine closest to the group, until best_pipeline fits.
// A job that cannot fit on every free machine takes none (so the others still can). Left-over
// machines go one by one to the job whose time they cut most.
std::vector<int64_t> greedy_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev) {
  std::vector<int64_t> assign(static_cast<size_t>(c.size()), -1);
  for (int64_t j : jobs_by_need(jobs)) {
    const ModelSpec& m = jobs[static_cast<size_t>(j)];
    std::vector<int64_t> g;
    bool ok = false;
    while (!ok) {
      int64_t pick = -1;
      double best = kInf;
      for (int64_t x = 0; x < c.size(); ++x) {
        if (assign[static_cast<size_t>(x)] >= 0 || std::find(g.begin(), g.end(), x) != g.end()) continue;
        double d = -capacity_bytes(c, x);
        if (!g.empty()) {
          d = kInf;
          for (int64_t y : g) d = std::min(d, c.latency_s(x, y));
        }
        if (pick < 0 || d < best) {
          pick = x;
          best = d;
        }
      }
      if (pick < 0) break;
      g.push_back(pick);
      std::sort(g.begin(), g.end());
      ok = group_memory(c, g) >= memory_need(m) && ev.job(static_cast<size_t>(j), g).feasible;
    }
    if (ok)
      for (int64_t x : g) assign[static_cast<size_t>(x)] = j;
  }
  std::vector<std::vector<int64_t>> g = groups_of(assign, jobs.size());
  for (int64_t x = 0; x < c.size(); ++x) {
    if (assign[static_cast<size_t>(x)] >= 0) continue;
    int64_t pick = -1;
    double gain = 0;
    for (size_t j = 0; j < jobs.size(); ++j) {
      if (g[j].empty()) continue;
      const double before = ev.job(j, g[j]).time;
      std::vector<int64_t> h = g[j];
      h.insert(std::upper_bound(h.begin(), h.end(), x), x);
      const double after = ev.job(j, h).time;
      if (after < before && before - after > gain) {
        gain = before - after;
        pick = static_cast<int64_t>(j);
      }
    }
    if (pick >= 0) {
      assign[static_cast<size_t>(x)] = pick;
      auto& h = g[static_cast<size_t>(pick)];
      h.insert(std::upper_bound(h.begin(), h.end(), x), x);
    }
  }
  return assign;
}

// System-B-like start: machines in id order cut into contiguous blocks, one per job,
// sized in proportion to memory need.
std::vector<int64_t> block_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  std::vector<int64_t> assign(static_cast<size_t>(c.size()), -1);
  if (jobs.empty()) return assign;
  double total = 0;
  for (const auto& m : jobs) total += memory_need(m);
  std::vector<int64_t> all(static_cast<size_t>(c.size()));
  std::iota(all.begin(), all.end(), 0);
  const double cluster_mem = group_memory(c, all);
  double acc = 0;
  size_t j = 0;
  double limit = memory_need(jobs[0]) / total * cluster_mem;
  for (int64_t x = 0; x < c.size(); ++x) {
    while (j + 1 < jobs.size() && acc >= limit) limit += memory_need(jobs[++j]) / total * cluster_mem;
    assign[static_cast<size_t>(x)] = static_cast<int64_t>(j);
    acc += capacity_bytes(c, x);
  }
  return assign;
}

// System-A-like start: every machine that fits some job's whole model goes to such a job
// (the one with the fewest machines so far, larger jobs first); the rest stay idle.
std::vector<int64_t> whole_model_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  std::vector<int64_t> assign(static_cast<size_t>(c.size()), -1);
  std::vector<int64_t> count(jobs.size(), 0);
  const auto order = jobs_by_need(jobs);
  for (int64_t x = 0; x < c.size(); ++x) {
    int64_t pick = -1;
    for (int64_t j : order)
      if (memory_need(jobs[static_cast<size_t>(j)]) <= capacity_bytes(c, x) &&
          (pick < 0 || count[static_cast<size_t>(j)] < count[static_cast<size_t>(pick)]))
        pick = j;
    if (pick >= 0) {
      assign[static_cast<size_t>(x)] = pick;
      ++count[static_cast<size_t>(pick)];
    }
  }
  return assign;
}

}  // namespace

Plan plan_search(const Cluster& c, const std::vector<ModelSpec>& jobs, const SearchOptions& opts) {
  const auto t0 = Clock::now();
  Evaluator ev(c, jobs);
  const int64_t N = c.size();
  const int64_t J = static_cast<int64_t>(jobs.size());

  // Starting candidates; the best one seeds the local search.
  const Plan hulk = plan_hulk(c, jobs, heuristic_classes(c, jobs));
  std::vector<std::pair<std::string, std::vector<int64_t>>> starts = {
      {"greedy", greedy_assignment(c, jobs, ev)},
      {"contiguous blocks", block_assignment(c, jobs)},
      {"whole-model machines", whole_model_assignment(c, jobs)},
  };
  {  // Hulk's groups are a start too when no job waits (waiting jobs share machines).
    std::vector<int64_t> a(static_cast<size_t>(N), -1);
    bool disjoint = true;
    for (int64_t j = 0; j < J && disjoint; ++j)
      for (int64_t x : hulk.jobs[static_cast<size_t>(j)].machines()) {
        if (a[static_cast<size_t>(x)] >= 0) disjoint = false;
        a[static_cast<size_t>(x)] = j;
      }
    if (disjoint) starts.push_back({"hulk", a});
  }
  std::vector<int64_t> cur;
  Score cur_s;
  std::string start_name;
  for (auto& st : starts) {
    const Score s = ev.score(st.second);
    if (cur.empty() || s < cur_s) {
      cur = st.second;
      cur_s = s;
      start_name = st.first;
    }
  }
  std::vector<int64_t> best = cur;
  Score best_s = cur_s;

  // Simulated annealing on the makespan. The temperature follows the iteration count (not
  // the clock), so a fixed iteration budget gives the same walk for the same seed. Every
  // `period` moves the walk restarts from the best assignment seen, hot again.
  std::mt19937_64 rng(opts.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const int64_t period = 1000;
  const double t_start = std::isfinite(best_s.makespan) && best_s.makespan > 0 ? 0.02 * best_s.makespan : 0.0;
  int64_t it = 0;
  if (N > 0 && J > 0) {
    for (;; ++it) {
      if (opts.max_iterations > 0 && it >= opts.max_iterations) break;
      if (seconds_since(t0) >= opts.time_limit_s) break;
      if (it > 0 && it % period == 0) {
        cur = best;
        cur_s = best_s;
      }
      const double temp = t_start * std::pow(1e-4, static_cast<double>(it % period) / static_cast<double>(period));
      std::vector<int64_t> next = cur;
      const int64_t x = static_cast<int64_t>(rng() % static_cast<uint64_t>(N));
      if (unit(rng) < 0.5) {  // move x to another job or to idle
        int64_t to = static_cast<int64_t>(rng() % static_cast<uint64_t>(J + 1)) - 1;
        if (to == next[static_cast<size_t>(x)]) to = to + 1 < J ? to + 1 : -1;
        next[static_cast<size_t>(x)] = to;
      } else {  // swap x with a machine of another job (or idle)
        const int64_t y = static_cast<int64_t>(rng() % static_cast<uint64_t>(N));
        if (next[static_cast<size_t>(x)] == next[static_cast<size_t>(y)]) continue;
        std::swap(next[static_cast<size_t>(x)], next[static_cast<size_t>(y)]);
      }
      const Score s = ev.score(next);
      bool accept = s < cur_s;
      if (!accept && s.infeasible == 0 && cur_s.infeasible == 0 && temp > 0) {
        const double delta = (s.makespan - cur_s.makespan) + 0.01 * (s.total - cur_s.total) / static_cast<double>(J);
        accept = unit(rng) < std::exp(-delta / temp);
      }
      if (accept) {
        cur = std::move(next);
        cur_s = s;
        if (cur_s < best_s) {
          best = cur;
          best_s = cur_s;
        }
      }
    }
  }

  Plan p = plan_from_assignment(c, jobs, best, "search");
  const std::string summary =
      "search: started from the " + start_name + " assignment, " + std::to_string(it) + " local-search moves";
  // Safeguard: the paper's sequential baselines and Hulk's plan (which may make jobs wait)
  // are outside the space of concurrent assignments; return whichever is best.
  Score s = score_of(p);
  for (const Plan* other : {&hulk}) {
    if (score_of(*other) < s) {
      s = score_of(*other);
      p = *other;
    }
  }
  for (Plan q : {plan_system_a(c, jobs), plan_system_b(c, jobs), plan_system_c(c, jobs)}) {
    if (score_of(q) < s) {
      s = score_of(q);
      p = std::move(q);
    }
  }
  if (p.planner != "search") {
    p.notes.push_back("search: the " + p.planner + " plan beat every concurrent assignment found; returned as is");
    p.planner = "search";
  }
  p.notes.insert(p.notes.begin(), summary);
  p.planning_s = seconds_since(t0);
  return p;
}

// ---- recovery and join --------------------------------------------------------------------------

namespace {

// Costs a job again on a changed cluster with the same machines (routes may have changed).
void recost(const Cluster& c, JobPlan& jp) {
  if (jp.strategy == Strategy::TensorParallel) {
    if (!jp.tensor_group.empty()) jp.cost = tensor_parallel_cost(c, jp.model, jp.tensor_group);
  } else if (!jp.replicas.empty()) {
    jp.cost = pipeline_cost(c, jp.model, jp.replicas);
  }
}

std::vector<int64_t> sorted_machines(const JobPlan& jp) {
  std::vector<int64_t> g = jp.machines();
  std::sort(g.begin(), g.end());
  g.erase(std::unique(g.begin(), g.end()), g.end());
  return g;
}

// Machines (new indices) whose set of jobs differs between the plans: taken, given away or
// dropped to idle. old_to_new maps an old index to its new one (-1: the machine is gone).
template <class Map>
std::vector<int64_t> changed_machines(const Plan& before, const Plan& after, int64_t new_size, Map old_to_new) {
  std::vector<std::vector<size_t>> was(static_cast<size_t>(new_size)), is(static_cast<size_t>(new_size));
  for (size_t j = 0; j < before.jobs.size(); ++j)
    for (int64_t x : sorted_machines(before.jobs[j])) {
      const int64_t y = old_to_new(x);
      if (y >= 0) was[static_cast<size_t>(y)].push_back(j);
    }
  for (size_t j = 0; j < after.jobs.size(); ++j)
    for (int64_t x : sorted_machines(after.jobs[j])) is[static_cast<size_t>(x)].push_back(j);
  std::vector<int64_t> out;
  for (int64_t y = 0; y < new_size; ++y)
    if (was[static_cast<size_t>(y)] != is[static_cast<size_t>(y)]) out.push_back(y);
  return out;
}

}  // namespace

Repair repair_without(const Cluster& c, const Plan& p, int64_t failed) {
  const auto t0 = Clock::now();
  if (failed < 0 || failed >= c.size())
    throw std::invalid_argument("repair_without: machine " + std::to_string(failed) + " out of range [0, " +
                                std::to_string(c.size()) + ")");
  Repair r{p, c.without(failed), {}, 0};
  Plan& np = r.plan;
  const Cluster& nc = r.cluster;
  const std::vector<int64_t> waits = infer_waits(p);
  const std::string failed_label = machine_label(c, failed);
  np.notes.push_back(failed_label + " failed");
  auto shift = [&](int64_t x) { return x > failed ? x - 1 : x; };

  // Remap every job onto the new indices; remember which ones lost a machine.
  std::vector<bool> hit(np.jobs.size(), false);
  std::vector<std::vector<int64_t>> groups(np.jobs.size());
  for (size_t j = 0; j < np.jobs.size(); ++j) {
    JobPlan& jp = np.jobs[j];
    for (int64_t x : jp.machines()) hit[j] = hit[j] || x == failed;
    for (int64_t x : sorted_machines(jp))
      if (x != failed) groups[j].push_back(shift(x));
    if (hit[j]) continue;
    for (auto& rep : jp.replicas)
      for (auto& x : rep.machines) x = shift(x);
    for (auto& x : jp.tensor_group) x = shift(x);
    recost(nc, jp);
  }
  // Jobs sharing machines (sequential plans, waiting jobs) never lend to each other.
  auto shares = [&](size_t a, size_t b) {
    if (p.sequential) return true;
    for (int64_t x : groups[a])
      if (std::binary_search(groups[b].begin(), groups[b].end(), x)) return true;
    return false;
  };
  for (size_t j = 0; j < np.jobs.size(); ++j) {
    if (!hit[j]) continue;
    std::vector<int64_t>& g = groups[j];
    JobPlan jp = replan(nc, p.jobs[j], g);
    while (!jp.cost.feasible) {
      // Idle = used by no job that can run alongside this one; then surplus of other jobs.
      int64_t pick = -1, donor = -1;
      std::pair<int, double> best{2, kInf};  // (0 idle / 1 surplus, distance to the group)
      for (int64_t x = 0; x < nc.size(); ++x) {
        if (std::binary_search(g.begin(), g.end(), x)) continue;
        std::vector<int64_t> owners;  // jobs holding x that run alongside this one
        if (!p.sequential)
          for (size_t k = 0; k < np.jobs.size(); ++k)
            if (k != j && std::binary_search(groups[k].begin(), groups[k].end(), x)) owners.push_back(static_cast<int64_t>(k));
        if (owners.size() > 1 || (owners.size() == 1 && shares(j, static_cast<size_t>(owners[0])))) continue;
        double d = g.empty() ? -capacity_bytes(nc, x) : kInf;  // empty group: most memory first
        for (int64_t y : g) d = std::min(d, nc.latency_s(x, y));
        const std::pair<int, double> key{owners.empty() ? 0 : 1, d};
        if (!(key < best)) continue;
        if (!owners.empty()) {  // surplus only: the donor must stay feasible without x
          std::vector<int64_t> rest = groups[static_cast<size_t>(owners[0])];
          rest.erase(std::find(rest.begin(), rest.end(), x));
          if (!replan(nc, np.jobs[static_cast<size_t>(owners[0])], rest).cost.feasible) continue;
        }
        best = key;
        pick = x;
        donor = owners.empty() ? -1 : owners[0];
      }
      if (pick < 0) break;
      if (donor >= 0) {
        auto& dg = groups[static_cast<size_t>(donor)];
        dg.erase(std::find(dg.begin(), dg.end(), pick));
        np.jobs[static_cast<size_t>(donor)] = replan(nc, np.jobs[static_cast<size_t>(donor)], dg);
      }
      np.notes.push_back("moved " + machine_label(nc, pick) + " from " +
                         (donor < 0 ? std::string("idle") : "job " + std::to_string(donor)) + " to job " +
                         std::to_string(j));
      g.insert(std::upper_bound(g.begin(), g.end(), pick), pick);
      jp = replan(nc, p.jobs[j], g);
    }
    if (!jp.cost.feasible) np.notes.push_back("job " + std::to_string(j) + " cannot be repaired: " + jp.cost.reason);
    np.jobs[j] = std::move(jp);
  }
  r.moved = changed_machines(p, np, nc.size(), [&](int64_t x) { return x == failed ? int64_t{-1} : shift(x); });
  np.schedule(waits);
  r.seconds = seconds_since(t0);
  np.planning_s = r.seconds;
  return r;
}

Repair repair_with(const Cluster& c, const Plan& p, const Machine& m, const std::vector<Link>& links_to_new) {
  const auto t0 = Clock::now();
  Repair r{p, c.with_machine(m, links_to_new), {}, 0};
  Plan& np = r.plan;
  const Cluster& nc = r.cluster;
  const int64_t x = c.size();
  const std::vector<int64_t> waits = infer_waits(p);
  for (auto& jp : np.jobs) recost(nc, jp);  // the newcomer may relay traffic

  // Gain of a job from x: how much its time (iterations x iteration time) drops.
  std::vector<JobPlan> with_x(np.jobs.size());
  std::vector<double> gain(np.jobs.size(), 0);
  for (size_t j = 0; j < np.jobs.size(); ++j) {
    std::vector<int64_t> g = sorted_machines(np.jobs[j]);
    g.push_back(x);
    with_x[j] = replan(nc, np.jobs[j], g);
    const double before = job_time(np.jobs[j]), after = job_time(with_x[j]);
    gain[j] = after < before ? (std::isfinite(before) ? before - after : kInf) : 0;
  }
  // Concurrent plans: the one job that gains most. Sequential plans: every job runs on the
  // whole cluster in turn, so each job that gains takes it.
  std::vector<size_t> takers;
  if (p.sequential) {
    for (size_t j = 0; j < np.jobs.size(); ++j)
      if (gain[j] > 0) takers.push_back(j);
  } else {
    size_t best = np.jobs.size();
    for (size_t j = 0; j < np.jobs.size(); ++j)
      if (gain[j] > 0 && (best == np.jobs.size() || gain[j] > gain[best])) best = j;
    if (best < np.jobs.size()) takers.push_back(best);
  }
  const std::string label = machine_label(nc, x);
  for (size_t j : takers) {
    np.jobs[j] = std::move(with_x[j]);
    np.notes.push_back(label + " joined job " + std::to_string(j));
  }
  if (takers.empty()) np.notes.push_back(label + " joined and stays idle (no job gets faster with it)");
  r.moved = changed_machines(p, np, nc.size(), [](int64_t old) { return old; });
  np.schedule(waits);
  r.seconds = seconds_since(t0);
  np.planning_s = r.seconds;
  return r;
}

}  // namespace hulk::plan

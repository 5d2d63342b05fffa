// The cost model's formulas (documented in cost.h), implemented once.
//
// Choices the header leaves open, stated once here:
// - F_i = tflops * 1e12 FLOP/s; memory capacity = memory_gb * 1e9 bytes.
// - b = B / (D m) and, for tensor parallelism, b = B / m: real numbers, never rounded.
// - Bottleneck stage s* of a replica = the first stage (lowest s) with the largest C_s + X_s.
//   The replica's compute share is sum_s C_s + (m - 1) C_{s*}; its communication share is
//   computed directly as sum_s X_s + (m - 1) X_{s*} (same total as T_pipe, no subtraction).
// - The replica whose T_pipe is largest (the first on ties) supplies the compute/comm split.
//   compute_s = its compute share + T_opt; comm_s = its communication share + T_allreduce.
//   iteration_s = compute_s + comm_s.
// - Data-parallel rings: position s's ring visits the replicas in the given order (replica 0,
//   1, ..., D-1, back to 0); the all-reduced bytes are 2 * params_per_layer * n_s.
// - T_opt = max over every stage of every replica of stage_optimizer_s(i_s, n_s)
//   (optimizer_flops_per_param * params_per_layer * n_s / F_{i_s}, or the profile's)
//   (tensor parallel: max over the group of the step of machine i's P / n parameters).
// - Tensor parallel has no pipeline: the m micro-batches run one after another, each paying
//   its compute (the slowest machine's 1/n share, without recomputation) and 4 L all-reduces:
//     compute_s = m * max_i (C(i, [0, L), b) / n) + T_opt   (FLOP model; a profile's own
//     degree-n entries when it has them)
//     comm_s    = m * 4 * L * allreduce_time(group, b * seq * h * 2)
//   Memory per machine: state_bytes(L) / n + b * seq * L * activation_bytes_per_token / n.
// - Infeasibility is reported, never thrown. An over-full machine leaves the times as the
//   formulas give them (finite; useful to penalised search) with feasible = false. A pair that
//   cannot communicate makes the affected send or all-reduce time +inf, hence comm_s and
//   iteration_s +inf. All reasons found are joined with "; ".
// - allreduce_time throws std::invalid_argument on an index out of range, a repeated machine
//   or negative bytes; it returns +inf when a ring neighbour pair is unreachable.
#include "csrc/plan/cost.h"

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

std::string num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}



// Why a pair cannot communicate, naming the rule that applied.
std::string unreachable_why(const Cluster& c) {
  return c.rule() == MissingLinkRule::Forbid
             ? "no direct link, and missing links are forbidden (MissingLinkRule::Forbid)"
             : "no path joins them: the cluster is disconnected (missing links are routed, MissingLinkRule::Route)";
}

void add_reason(JobCost& jc, const std::string& r) {
  if (!jc.reason.empty()) jc.reason += "; ";
  jc.reason += r;
}

// (m - 1) * x without 0 * inf = NaN when m == 1.
double steady(int64_t m, double x) { return m > 1 ? static_cast<double>(m - 1) * x : 0.0; }

void check_machine(const Cluster& c, int64_t i, const std::string& where) {
  if (i < 0 || i >= c.size())
    throw std::invalid_argument(where + ": machine index " + std::to_string(i) + " out of range [0, " +
                                std::to_string(c.size()) + ")");
}

void check_options(const CostOptions& o) {
  if (!std::isfinite(o.optimizer_flops_per_param) || o.optimizer_flops_per_param < 0)
    throw std::invalid_argument("CostOptions: optimizer_flops_per_param must be finite and >= 0, got " +
                                num(o.optimizer_flops_per_param));
}

// First unreachable neighbour pair of a ring (wrapping from last to first), or {-1, -1}.
std::pair<int64_t, int64_t> ring_gap(const Cluster& c, const std::vector<int64_t>& ring) {
  const size_t n = ring.size();
  if (n < 2) return {-1, -1};
  for (size_t k = 0; k < n; ++k) {
    const int64_t a = ring[k], b = ring[(k + 1) % n];
    if (!c.reachable(a, b)) return {a, b};
  }
  return {-1, -1};
}

}  // namespace

std::string format_gb(double bytes) {
  std::ostringstream os;
  os.precision(4);
  os << bytes / 1e9 << " GB";
  return os.str();
}

double flop_efficiency(double hidden, double tokens) {
  return kEffMax * hidden / (hidden + kEffHalfHidden) * tokens / (tokens + kEffHalfTokens);
}

double stage_compute_s(const Cluster& c, const ModelSpec& m, int64_t machine, int64_t first, int64_t last, double b) {
  const Machine& mc = c.machine(machine);
  if (const Profile* p = m.profile_for(mc.gpu)) return p->compute_s(first, last, b / mc.gpus, 1, m.recompute);
  double flops_per_s = mc.tflops * 1e12;
  if (m.efficiency_curve)
    flops_per_s *= flop_efficiency(static_cast<double>(m.hidden), b / mc.gpus * static_cast<double>(m.seq_len)) /
                   kClusterUtilisation;
  return static_cast<double>(last - first) * (m.flops_per_token / static_cast<double>(m.layers)) *
         m.recompute_factor() * b * static_cast<double>(m.seq_len) / flops_per_s;
}

double layer_compute_s(const Cluster& c, const ModelSpec& m, int64_t machine, double b) {
  // The FLOP model's layers are alike: one layer's C, the same doubles as before profiles.
  if (!m.profile_for(c.machine(machine).gpu)) return stage_compute_s(c, m, machine, 0, 1, b);
  return stage_compute_s(c, m, machine, 0, m.layers, b) / static_cast<double>(m.layers);
}

double stage_optimizer_s(const Cluster& c, const ModelSpec& m, int64_t machine, double n_layers, const CostOptions& opts) {
  const Machine& mc = c.machine(machine);
  if (const Profile* p = m.profile_for(mc.gpu)) return p->optimizer_s_per_param * m.params_per_layer() * n_layers / mc.gpus;
  return opts.optimizer_flops_per_param * m.params_per_layer() * n_layers / (mc.tflops * 1e12);
}

double gpipe_time(double sum, double bottleneck, int64_t micro_batches) { return sum + steady(micro_batches, bottleneck); }

double allreduce_time(const Cluster& c, const std::vector<int64_t>& ring, double bytes) {
  if (!(bytes >= 0)) throw std::invalid_argument("allreduce_time: bytes must be >= 0, got " + num(bytes));
  std::vector<char> seen(static_cast<size_t>(c.size()), 0);
  for (int64_t i : ring) {
    check_machine(c, i, "allreduce_time");
    if (seen[static_cast<size_t>(i)])
      throw std::invalid_argument("allreduce_time: machine " + std::to_string(i) + " appears twice in the ring");
    seen[static_cast<size_t>(i)] = 1;
  }
  return allreduce_time(ring_links(c, ring), bytes);
}

RingLinks ring_links(const Cluster& c, const std::vector<int64_t>& ring) {
  RingLinks out;
  out.n = ring.size();
  if (out.n <= 1) return out;
  for (size_t k = 0; k < out.n; ++k) {
    const int64_t a = ring[k], b = ring[(k + 1) % out.n];
    if (!c.reachable(a, b)) {
      out.reachable = false;
      return out;
    }
    out.max_latency_s = std::max(out.max_latency_s, c.latency_s(a, b));
    out.min_bandwidth_Bps = std::min(out.min_bandwidth_Bps, c.bandwidth_Bps(a, b));
  }
  return out;
}

double allreduce_time(const RingLinks& ring, double bytes) {
  if (ring.n <= 1) return 0.0;
  if (!ring.reachable) return kInf;
  const double nd = static_cast<double>(ring.n);
  return 2.0 * (nd - 1.0) * ring.max_latency_s + 2.0 * (nd - 1.0) / nd * bytes / ring.min_bandwidth_Bps;
}

namespace {

// pipeline_cost's argument checks: every replica a valid chain of distinct machines with
// strictly increasing bounds over all layers, all replicas splitting the layers alike.
void check_replicas_slowly(const Cluster& c, const ModelSpec& m, const std::vector<Replica>& replicas) {
  const std::string where = "pipeline_cost";
  if (replicas.empty()) throw std::invalid_argument(where + ": no replicas");
  const int64_t L = m.layers;
  const size_t S = replicas[0].machines.size();
  std::vector<char> used(static_cast<size_t>(c.size()), 0);
  for (size_t r = 0; r < replicas.size(); ++r) {
    const Replica& rep = replicas[r];
    const std::string rw = where + ": replica " + std::to_string(r);
    if (rep.machines.empty()) throw std::invalid_argument(rw + " has no machines");
    if (rep.bounds.size() != rep.machines.size() + 1)
      throw std::invalid_argument(rw + ": bounds has " + std::to_string(rep.bounds.size()) + " entries, expected " +
                                  std::to_string(rep.machines.size() + 1) + " (stages + 1)");
    if (rep.bounds.front() != 0 || rep.bounds.back() != L)
      throw std::invalid_argument(rw + ": bounds must run from 0 to layers = " + std::to_string(L) + ", got " +
                                  std::to_string(rep.bounds.front()) + " .. " + std::to_string(rep.bounds.back()));
    for (size_t s = 0; s + 1 < rep.bounds.size(); ++s)
      if (rep.bounds[s + 1] <= rep.bounds[s])
        throw std::invalid_argument(rw + ": bounds must increase strictly (every stage holds a layer), got bounds[" +
                                    std::to_string(s) + "] = " + std::to_string(rep.bounds[s]) + ", bounds[" +
                                    std::to_string(s + 1) + "] = " + std::to_string(rep.bounds[s + 1]));
    for (int64_t i : rep.machines) {
      check_machine(c, i, rw);
      if (used[static_cast<size_t>(i)])
        throw std::invalid_argument(rw + ": machine " + std::to_string(i) + " is used more than once");
      used[static_cast<size_t>(i)] = 1;
    }
    if (r > 0 && (rep.machines.size() != S || rep.bounds != replicas[0].bounds))
      throw std::invalid_argument(rw + ": layer split differs from replica 0 (data-parallel replicas must split "
                                       "the layers the same way)");
  }
}

// pipeline_cost's argument checks: every replica a valid chain of distinct machines with
// strictly increasing bounds over all layers, all replicas splitting the layers alike. The
// planners call pipeline_cost for every layout they split, so valid replicas are checked
// without building messages or a flag per machine of the cluster; anything amiss is checked
// again by check_replicas_slowly, which words the first fault.
void check_replicas(const Cluster& c, const ModelSpec& m, const std::vector<Replica>& replicas) {
  bool ok = !replicas.empty();
  const size_t S = ok ? replicas[0].machines.size() : 0;
  size_t total = 0;
  for (size_t r = 0; ok && r < replicas.size(); ++r) {
    const Replica& rep = replicas[r];
    ok = !rep.machines.empty() && rep.machines.size() == S && rep.bounds == replicas[0].bounds &&
         rep.bounds.size() == S + 1 && rep.bounds.front() == 0 && rep.bounds.back() == m.layers;
    for (size_t s = 0; ok && s < S; ++s) ok = rep.bounds[s + 1] > rep.bounds[s];
    for (size_t s = 0; ok && s < S; ++s) ok = rep.machines[s] >= 0 && rep.machines[s] < c.size();
    total += S;
  }
  if (ok) {  // distinct machines: a sorted copy of the ids has no repeat
    std::vector<int64_t> ids;
    ids.reserve(total);
    for (const Replica& rep : replicas) ids.insert(ids.end(), rep.machines.begin(), rep.machines.end());
    std::sort(ids.begin(), ids.end());
    ok = std::adjacent_find(ids.begin(), ids.end()) == ids.end();
  }
  if (!ok) check_replicas_slowly(c, m, replicas);
}

// One replica's GPipe time, split into compute and communication shares, and its slowest
// stage's optimiser step.
struct ReplicaTime {
  std::vector<StageCost> stages;
  double compute = 0, comm = 0, optimizer = 0;
};

// Costs replica `r`'s stages at micro-batch b; unreachable neighbours and stages over their
// machine's memory are added to jc's reason (and shortfall).
ReplicaTime replica_time(const Cluster& c, const ModelSpec& m, const Replica& rep, size_t r, double b,
                         const CostOptions& opts, JobCost& jc) {
  const size_t S = rep.machines.size();
  const int64_t mb = m.micro_batches;
  const double boundary = m.boundary_bytes(b);
  ReplicaTime out;
  out.stages.resize(S);
  double sum_c = 0, sum_x = 0, best = -1, c_star = 0, x_star = 0;
  for (size_t s = 0; s < S; ++s) {
    StageCost& st = out.stages[s];
    const int64_t i = rep.machines[s];
    const int64_t n_s = rep.bounds[s + 1] - rep.bounds[s];
    st.machine = i;
    st.first_layer = rep.bounds[s];
    st.last_layer = rep.bounds[s + 1];
    st.compute_s = stage_compute_s(c, m, i, st.first_layer, st.last_layer, b);
    if (s + 1 < S) {
      const int64_t j = rep.machines[s + 1];
      if (!c.reachable(i, j))
        add_reason(jc, "replica " + std::to_string(r) + ": stages " + std::to_string(s) + " and " +
                           std::to_string(s + 1) + " are on " + c.label(i) + " and " + c.label(j) +
                           ", which cannot communicate (" + unreachable_why(c) + ")");
      st.send_s = 2.0 * c.send_time(i, j, boundary);
    }
    st.memory_bytes = m.state_bytes(n_s) + m.stage_activation_bytes(n_s, b, mb);
    st.memory_capacity_bytes = c.machine(i).memory_gb * 1e9;
    if (st.memory_bytes > st.memory_capacity_bytes) {
      jc.memory_shortfall_bytes += st.memory_bytes - st.memory_capacity_bytes;
      add_reason(jc, c.label(i) + " needs " + format_gb(st.memory_bytes) + " for layers [" +
                         std::to_string(st.first_layer) + ", " + std::to_string(st.last_layer) + ") of replica " +
                         std::to_string(r) + " but has " + format_gb(st.memory_capacity_bytes));
    }
    sum_c += st.compute_s;
    sum_x += st.send_s;
    const double cx = st.compute_s + st.send_s;
    if (cx > best) {
      best = cx;
      c_star = st.compute_s;
      x_star = st.send_s;
    }
    out.optimizer = std::max(out.optimizer, stage_optimizer_s(c, m, i, static_cast<double>(n_s), opts));
  }
  out.compute = gpipe_time(sum_c, c_star, mb);  // the replica's compute share
  out.comm = gpipe_time(sum_x, x_star, mb);     // and its communication share
  return out;
}

// The slowest stage position's gradient all-reduce over its ring of replicas (0 for one
// replica); broken rings are added to jc's reason.
double allreduce_s(const Cluster& c, const ModelSpec& m, const std::vector<Replica>& replicas, JobCost& jc) {
  double t_ar = 0;
  if (replicas.size() <= 1) return t_ar;
  std::vector<int64_t> ring(replicas.size());
  for (size_t s = 0; s < replicas[0].machines.size(); ++s) {
    for (size_t r = 0; r < replicas.size(); ++r) ring[r] = replicas[r].machines[s];
    const auto gap = ring_gap(c, ring);
    if (gap.first >= 0)
      add_reason(jc, "data-parallel ring of stage " + std::to_string(s) + ": " + c.label(gap.first) + " and " +
                         c.label(gap.second) + " cannot communicate (" + unreachable_why(c) + ")");
    const double n_s = static_cast<double>(replicas[0].bounds[s + 1] - replicas[0].bounds[s]);
    // check_replicas found the machines distinct and in range: allreduce_time's own checks are moot
    t_ar = std::max(t_ar, allreduce_time(ring_links(c, ring), 2.0 * m.params_per_layer() * n_s));
  }
  return t_ar;
}

// One micro-batch's compute on machine i of a tensor-parallel group of n (cost.h): no
// recomputation (the group keeps one micro-batch's activations).
double tensor_parallel_compute_s(const Cluster& c, const ModelSpec& m, int64_t i, size_t n, double b) {
  const Machine& mc = c.machine(i);
  if (const Profile* p = m.profile_for(mc.gpu))
    return p->compute_s(0, m.layers, b / mc.gpus, static_cast<int64_t>(n), false);
  const double seq = static_cast<double>(m.seq_len);
  double flops_per_s = mc.tflops * 1e12;
  if (m.efficiency_curve)
    flops_per_s *= flop_efficiency(static_cast<double>(m.hidden), b / mc.gpus * seq) / kClusterUtilisation;
  return m.flops_per_token * b * seq / (static_cast<double>(n) * flops_per_s);
}

// The optimiser step of machine i's 1/n share of all parameters.
double tensor_parallel_optimizer_s(const Cluster& c, const ModelSpec& m, int64_t i, double n, const CostOptions& opts) {
  const Machine& mc = c.machine(i);
  if (const Profile* p = m.profile_for(mc.gpu)) return p->optimizer_s_per_param * m.params / n / mc.gpus;
  return opts.optimizer_flops_per_param * m.params / n / (mc.tflops * 1e12);
}

}  // namespace

JobCost pipeline_cost(const Cluster& c, const ModelSpec& m, const std::vector<Replica>& replicas,
                      const CostOptions& opts) {
  m.validate();
  check_options(opts);
  check_replicas(c, m, replicas);
  const double D = static_cast<double>(replicas.size());
  const double b = static_cast<double>(m.global_batch) / (D * static_cast<double>(m.micro_batches));

  JobCost jc;
  jc.feasible = true;
  // The slowest replica's pipeline = gpipe_time(sum_s (C_s + X_s), C_s* + X_s*, m), its
  // compute and communication shares kept apart.
  double worst_pipe = -1, worst_compute = 0, worst_comm = 0, t_opt = 0;
  for (size_t r = 0; r < replicas.size(); ++r) {
    ReplicaTime rt = replica_time(c, m, replicas[r], r, b, opts, jc);
    const double pipe = rt.compute + rt.comm;
    if (pipe > worst_pipe) {
      worst_pipe = pipe;
      worst_compute = rt.compute;
      worst_comm = rt.comm;
    }
    t_opt = std::max(t_opt, rt.optimizer);
    jc.stages.push_back(std::move(rt.stages));
  }
  const double t_ar = allreduce_s(c, m, replicas, jc);

  jc.feasible = jc.reason.empty();
  jc.compute_s = worst_compute + t_opt;
  jc.comm_s = worst_comm + t_ar;
  jc.iteration_s = jc.compute_s + jc.comm_s;
  return jc;
}

JobCost tensor_parallel_cost(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& machines,
                             const CostOptions& opts) {
  m.validate();
  check_options(opts);
  const std::string where = "tensor_parallel_cost";
  if (machines.empty()) throw std::invalid_argument(where + ": no machines");
  std::vector<char> used(static_cast<size_t>(c.size()), 0);
  for (int64_t i : machines) {
    check_machine(c, i, where);
    if (used[static_cast<size_t>(i)])
      throw std::invalid_argument(where + ": machine " + std::to_string(i) + " is used more than once");
    used[static_cast<size_t>(i)] = 1;
  }

  const double n = static_cast<double>(machines.size());
  const int64_t mb = m.micro_batches;
  const double b = static_cast<double>(m.global_batch) / static_cast<double>(mb);
  const double seq = static_cast<double>(m.seq_len);
  const double L = static_cast<double>(m.layers);

  JobCost jc;
  double c_micro = 0, t_opt = 0;
  const double need = m.state_bytes(m.layers) / n + b * seq * L * m.activation_bytes_per_token / n;
  for (int64_t i : machines) {
    c_micro = std::max(c_micro, tensor_parallel_compute_s(c, m, i, machines.size(), b));
    t_opt = std::max(t_opt, tensor_parallel_optimizer_s(c, m, i, n, opts));
    const double cap = c.machine(i).memory_gb * 1e9;
    if (need > cap) {
      jc.memory_shortfall_bytes += need - cap;
      add_reason(jc, c.label(i) + " needs " + format_gb(need) + " for its 1/" + std::to_string(machines.size()) +
                         " tensor-parallel share but has " + format_gb(cap));
    }
  }
  const auto gap = ring_gap(c, machines);
  if (gap.first >= 0)
    add_reason(jc, "tensor-parallel ring: " + c.label(gap.first) + " and " + c.label(gap.second) +
                       " cannot communicate (" + unreachable_why(c) + ")");
  const double t_ar = allreduce_time(c, machines, b * seq * static_cast<double>(m.hidden) * 2.0);

  jc.feasible = jc.reason.empty();
  jc.compute_s = static_cast<double>(mb) * c_micro + t_opt;
  jc.comm_s = (machines.size() > 1) ? static_cast<double>(mb) * 4.0 * L * t_ar : 0.0;
  jc.iteration_s = jc.compute_s + jc.comm_s;
  return jc;
}

}  // namespace hulk::plan

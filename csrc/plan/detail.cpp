// Helpers shared by the planner files (declared in detail.h).
#include "csrc/plan/detail.h"

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

// Even split, the remainder going to the first stages (System B).
std::vector<int64_t> even_bounds(int64_t S, int64_t L) {
  std::vector<int64_t> b(static_cast<size_t>(S + 1), 0);
  for (int64_t s = 0; s < S; ++s) b[static_cast<size_t>(s + 1)] = b[static_cast<size_t>(s)] + L / S + (s < L % S ? 1 : 0);
  return b;
}

// ---- what the cluster is -------------------------------------------------------------------

std::vector<std::string> cluster_facts(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  std::vector<std::string> out;
  const int64_t N = c.size();
  if (N == 0) return out;
  const bool forbid = c.rule() == MissingLinkRule::Forbid;
  // Pairs without a direct link, and the rule that applies to them.
  std::ostringstream links;
  if (c.regional()) {
    const RegionalNetwork& net = c.network();
    int64_t missing = 0;
    for (int64_t a = 0; a < net.regions; ++a)
      for (int64_t b = a + 1; b < net.regions; ++b) missing += net.region_link[static_cast<size_t>(a * net.regions + b)] == 0;
    if (missing > 0)
      links << missing << " of " << net.regions * (net.regions - 1) / 2 << " region pairs have no direct link";
  } else {
    int64_t missing = 0;
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = i + 1; j < N; ++j) missing += !c.direct(i, j);
    if (missing > 0) links << missing << " of " << N * (N - 1) / 2 << " machine pairs have no direct link";
  }
  if (!links.str().empty())
    out.push_back("cluster: " + links.str() +
                  (forbid ? "; such pairs cannot communicate (missing links forbidden)"
                          : "; they are relayed along the lowest-latency path (missing links routed)"));
  // Sets of machines that cannot reach each other.
  std::vector<int64_t> all(static_cast<size_t>(N));
  std::iota(all.begin(), all.end(), 0);
  const auto parts = reach_groups(c, all);
  if (parts.size() > 1) {
    std::ostringstream o;
    o << "cluster: " << parts.size() << " sets of machines cannot reach each other ("
      << (forbid ? "no direct link, missing links forbidden" : "no path joins them") << "); sizes";
    for (size_t k = 0; k < parts.size() && k < 8; ++k) o << (k ? ", " : " ") << parts[k].size();
    if (parts.size() > 8) o << ", ...";
    o << "; a job runs inside one set";
    out.push_back(o.str());
  }
  // Machines that cannot hold one layer of any job (at the smallest micro-batch).
  int64_t useless = 0;
  for (int64_t i = 0; i < N; ++i) {
    bool helps = false;
    for (const ModelSpec& m : jobs) {
      const int64_t max_d = std::max<int64_t>(1, std::min<int64_t>(N, m.global_batch / std::max<int64_t>(1, m.micro_batches)));
      if (layers_that_fit(m, micro_batch(m, max_d), capacity_bytes(c, i)) >= 1) {
        helps = true;
        break;
      }
    }
    useless += !helps;
  }
  if (useless > 0 && !jobs.empty())
    out.push_back("cluster: " + std::to_string(useless) + " machines cannot hold one layer of any job and stay idle");
  return out;
}

}  // namespace hulk::plan::detail

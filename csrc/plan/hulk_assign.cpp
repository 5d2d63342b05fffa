// Hulk: the heuristic classification and the paper's Algorithm 1.
#include "csrc/plan/job_helpers.h"
#include "csrc/plan/assignment.h"
#include "csrc/plan/cluster_facts.h"
#include "csrc/plan/split.h"
#include "csrc/plan/planners.h"

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

// ---- Hulk: heuristic classification and Algorithm 1 -------------------------------------------

namespace {

// Machines by region name, regions in order of first appearance.
std::vector<std::vector<int64_t>> machines_by_region(const Cluster& c) {
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
  return regions;
}

// Region distances [R x R]: the lowest latency between any of their machines. In a regional
// network that is the pair of machines with the least access latency, found in O(N).
std::vector<double> region_distances(const Cluster& c, const std::vector<std::vector<int64_t>>& regions) {
  const size_t R = regions.size();
  std::vector<double> dist(R * R, kInf);
  bool one_network_region_each = c.regional();  // region names and network regions agree
  for (size_t r = 0; r < R && one_network_region_each; ++r)
    for (int64_t x : regions[r])
      if (c.network().region[static_cast<size_t>(x)] != c.network().region[static_cast<size_t>(regions[r][0])])
        one_network_region_each = false;
  if (one_network_region_each) {
    std::vector<int64_t> rep(R);
    for (size_t r = 0; r < R; ++r)
      rep[r] = *std::min_element(regions[r].begin(), regions[r].end(), [&](int64_t x, int64_t y) {
        return c.network().access_ms[static_cast<size_t>(x)] < c.network().access_ms[static_cast<size_t>(y)];
      });
    for (size_t a = 0; a < R; ++a)
      for (size_t b = 0; b < R; ++b) dist[a * R + b] = c.latency_s(rep[a], rep[b]);
  } else {
    for (size_t a = 0; a < R; ++a)
      for (size_t b = 0; b < R; ++b)
        for (int64_t x : regions[a])
          for (int64_t y : regions[b]) dist[a * R + b] = std::min(dist[a * R + b], c.latency_s(x, y));
  }
  return dist;
}

}  // namespace

std::vector<int64_t> heuristic_classes(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  const std::vector<std::vector<int64_t>> regions = machines_by_region(c);
  const size_t R = regions.size();
  const std::vector<double> dist = region_distances(c, regions);
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

namespace {

// Machines of job j under `assign`, in id order.
std::vector<int64_t> group_of(const Cluster& c, const std::vector<int64_t>& assign, int64_t j) {
  std::vector<int64_t> g;
  for (int64_t i = 0; i < c.size(); ++i)
    if (assign[static_cast<size_t>(i)] == j) g.push_back(i);
  return g;
}

// Cheap memory test first; best_pipeline decides (layer granularity, activations).
bool fits(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& g) {
  return !g.empty() && group_memory(c, g) >= memory_need(m) && best_pipeline(c, m, g).cost.feasible;
}

double distance(const Cluster& c, int64_t x, const std::vector<int64_t>& g) {
  double d = kInf;
  for (int64_t y : g) d = std::min(d, c.latency_s(x, y));
  return d;
}

// The machine job j, short of memory on group g, takes next; -1 when none helps.
// Candidates: machines that help, i.e. hold at least one layer of the job and can reach the
// group; idle machines first, then machines of other groups (only surplus: the donor must
// still fit without it); within each, in order of usefulness (the layers a machine holds,
// most first), then closest first.
int64_t machine_to_take(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& assign,
                        const std::vector<bool>& waiting, int64_t j, const std::vector<int64_t>& g) {
  const ModelSpec& m = jobs[static_cast<size_t>(j)];
  const double b_min = micro_batch(m, std::max<int64_t>(1, m.global_batch / std::max<int64_t>(1, m.micro_batches)));
  std::vector<std::pair<std::tuple<int, int64_t, double>, int64_t>> cand;
  for (int64_t x = 0; x < c.size(); ++x) {
    const int64_t o = assign[static_cast<size_t>(x)];
    if (o == j || (o >= 0 && waiting[static_cast<size_t>(o)])) continue;
    const int64_t held = layers_that_fit(m, b_min, capacity_bytes(c, x));
    if (held < 1 || (!g.empty() && !c.reachable(g.front(), x))) continue;  // useless to this job
    const double d = g.empty() ? -capacity_bytes(c, x) : distance(c, x, g);  // empty group: most memory first
    cand.push_back({{o < 0 ? 0 : 1, -held, d}, x});
  }
  std::sort(cand.begin(), cand.end());
  for (const auto& cd : cand) {
    const int64_t x = cd.second, o = assign[static_cast<size_t>(x)];
    if (o >= 0) {
      std::vector<int64_t> rest = group_of(c, assign, o);
      rest.erase(std::find(rest.begin(), rest.end(), x));
      if (!fits(c, jobs[static_cast<size_t>(o)], rest)) continue;
    }
    return x;
  }
  return -1;
}

// Algorithm 1's groups: jobs in order of memory need take their classified machines; a group
// short of memory takes machines (machine_to_take) until it fits. A group that cannot be made
// to fit releases its machines and waits (true in the result). Moves are noted in `notes`.
std::vector<bool> fit_groups(const Cluster& c, const std::vector<ModelSpec>& jobs, std::vector<int64_t>& assign,
                             std::vector<std::string>& notes) {
  std::vector<bool> waiting(jobs.size(), false);
  for (int64_t j : jobs_by_need(jobs)) {
    const ModelSpec& m = jobs[static_cast<size_t>(j)];
    std::vector<int64_t> g = group_of(c, assign, j);
    while (!fits(c, m, g)) {
      const int64_t taken = machine_to_take(c, jobs, assign, waiting, j, g);
      if (taken < 0) break;
      const int64_t from = assign[static_cast<size_t>(taken)];
      notes.push_back("moved " + c.label(taken) + " from " + (from < 0 ? std::string("idle") : job_label(jobs, from)) +
                      " to " + job_label(jobs, j) + " (short of memory)");
      assign[static_cast<size_t>(taken)] = j;
      g.push_back(taken);
      std::sort(g.begin(), g.end());
    }
    if (!fits(c, m, g)) {
      waiting[static_cast<size_t>(j)] = true;
      for (int64_t x : g) assign[static_cast<size_t>(x)] = -1;  // released for the others
    }
  }
  return waiting;
}

// Waiting jobs, in order of memory need, queue on a running group ("slot"): the one that
// frees a fitting set of machines first. If no single group fits, every group is merged after
// all finish. Fills the waiting jobs of p (running ones are planned) and returns which job
// each job waits for (-1: none).
std::vector<int64_t> queue_waiting_jobs(const Cluster& c, const std::vector<ModelSpec>& jobs,
                                        const std::vector<int64_t>& assign, const std::vector<bool>& waiting, Plan& p) {
  const size_t J = jobs.size();
  struct Slot {
    std::vector<int64_t> machines;
    double free_at;
    int64_t last;
  };
  std::vector<Slot> slots;
  for (size_t j = 0; j < J; ++j)
    if (!waiting[j]) slots.push_back({group_of(c, assign, static_cast<int64_t>(j)), job_time(p.jobs[j]), static_cast<int64_t>(j)});
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
      // Reported without machines: an infeasible job never lists machines others use.
      const std::string why = "does not fit even on the whole cluster: " + jp.cost.reason;
      p.notes.push_back(job_label(jobs, j) + " " + why);
      p.jobs[static_cast<size_t>(j)] = infeasible_job(m, why, std::max(jp.cost.memory_shortfall_bytes, 1.0));
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
  return waits;
}

}  // namespace

Plan plan_hulk(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& classes) {
  const auto t0 = Clock::now();
  check_assignment(c, jobs, classes, "classes");
  Plan p;
  p.planner = "hulk";
  std::vector<int64_t> assign = classes;
  const std::vector<bool> waiting = fit_groups(c, jobs, assign, p.notes);
  p.jobs.resize(jobs.size());
  for (size_t j = 0; j < jobs.size(); ++j)
    if (!waiting[j]) p.jobs[j] = best_pipeline(c, jobs[j], group_of(c, assign, static_cast<int64_t>(j)));
  const std::vector<int64_t> waits = queue_waiting_jobs(c, jobs, assign, waiting, p);
  for (size_t j = 0; j < jobs.size(); ++j)
    if (!p.jobs[j].cost.feasible && !waiting[j])
      p.notes.push_back(job_label(jobs, static_cast<int64_t>(j)) + " infeasible: " + p.jobs[j].cost.reason);
  const std::vector<std::string> facts = cluster_facts(c, jobs);
  p.notes.insert(p.notes.begin(), facts.begin(), facts.end());
  p.schedule(waits);
  p.planning_s = seconds_since(t0);
  return p;
}

}  // namespace hulk::plan

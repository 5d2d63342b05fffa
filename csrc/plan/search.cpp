// The search planner: greedy start, then annealing over moves and swaps.
#include "csrc/plan/job_helpers.h"
#include "csrc/plan/evaluator.h"
#include "csrc/plan/growth.h"
#include "csrc/plan/descent.h"
#include "csrc/plan/aligned_chain.h"
#include "csrc/plan/reseed.h"
#include "csrc/plan/idle_check.h"
#include "csrc/plan/assignment.h"
#include "csrc/plan/cluster_facts.h"
#include "csrc/plan/split.h"
#include "csrc/plan/planners.h"
#include "csrc/plan/rules.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_set>
#include <utility>

namespace hulk::plan {

using namespace detail;

// ---- search ----------------------------------------------------------------------------------------

namespace {

// The other growth, as Hulk's (hulk/planner.py grow_bottleneck): the job that finishes last
// tries 1, 2, 4, 8 or 16 more of the fastest idle machines of the regions it already uses
// (ties: lower id), keeping the best trial that shortens it; it stops when the last job cannot
// be sped up this way. grow_groups adds the closest machines in halving batches, which misses
// a few fast machines in a region of slow ones.
void grow_fastest_in_regions(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev,
                             std::vector<int64_t>& assign, const std::function<bool()>& out_of_time) {
  const int64_t N = c.size();
  const size_t J = jobs.size();
  std::vector<std::vector<int64_t>> g = groups_of(assign, J);
  std::vector<int64_t> by_speed(static_cast<size_t>(N));
  std::iota(by_speed.begin(), by_speed.end(), 0);
  std::stable_sort(by_speed.begin(), by_speed.end(),
                   [&](int64_t a, int64_t b) { return c.machine(a).tflops > c.machine(b).tflops; });
  constexpr size_t kSteps[] = {1, 2, 4, 8, 16};
  const std::vector<uint8_t> none_done(J, 0);
  for (int round = 0; round < 16 && !out_of_time(); ++round) {
    const auto [pick, worst] = slowest_job(ev, g, none_done);
    if (pick < 0) return;
    const size_t j = static_cast<size_t>(pick);
    std::unordered_set<std::string> regions;
    for (int64_t x : g[j]) regions.insert(c.machine(x).region);
    std::vector<int64_t> candidates;
    for (int64_t x : by_speed) {
      if (candidates.size() == 16) break;
      if (assign[static_cast<size_t>(x)] < 0 && regions.count(c.machine(x).region)) candidates.push_back(x);
    }
    double best = worst * (1 - 1e-9);
    size_t best_k = 0;
    for (size_t k : kSteps) {
      if (k > candidates.size() || out_of_time()) break;
      std::vector<int64_t> trial = g[j];
      trial.insert(trial.end(), candidates.begin(), candidates.begin() + static_cast<std::ptrdiff_t>(k));
      std::sort(trial.begin(), trial.end());
      const double t = ev.job(j, trial).time;
      if (t < best) {
        best = t;
        best_k = k;
      }
    }
    if (best_k == 0) return;  // the last job cannot be sped up this way: the makespan stays
    for (size_t i = 0; i < best_k; ++i) {
      assign[static_cast<size_t>(candidates[i])] = static_cast<int64_t>(j);
      g[j].push_back(candidates[i]);
    }
    std::sort(g[j].begin(), g[j].end());
  }
}

// Greedy start: jobs by decreasing memory need each grow a group from the free machine with
// the most memory, adding the free machine closest to the group, until best_pipeline fits.
// A job that cannot fit on every free machine takes none (so the others still can). Then
// grow_groups hands out the idle machines (until `until`).
std::vector<int64_t> greedy_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev,
                                       const std::function<bool()>& out_of_time, const JobDistance& distance,
                                       GrowUntil until) {
  const int64_t N = c.size();
  std::vector<int64_t> assign(static_cast<size_t>(N), -1);
  for (int64_t j : jobs_by_need(jobs)) {
    if (out_of_time()) return assign;
    const ModelSpec& m = jobs[static_cast<size_t>(j)];
    std::vector<int64_t> g;
    std::vector<uint8_t> in(static_cast<size_t>(N), 0);
    std::vector<double> dist(static_cast<size_t>(N), kInf);
    double mem = 0;
    bool ok = false;
    size_t next_test = 0;
    while (!ok && !out_of_time()) {
      int64_t pick = -1;
      double best = kInf;
      for (int64_t x = 0; x < N; ++x) {
        if (assign[static_cast<size_t>(x)] >= 0 || in[static_cast<size_t>(x)]) continue;
        const double d = g.empty() ? -capacity_bytes(c, x) : dist[static_cast<size_t>(x)];
        if (pick < 0 || d < best) {
          pick = x;
          best = d;
        }
      }
      if (pick < 0) break;
      g.insert(std::upper_bound(g.begin(), g.end(), pick), pick);
      in[static_cast<size_t>(pick)] = 1;
      mem += capacity_bytes(c, pick);
      for (int64_t x = 0; x < N; ++x)
        dist[static_cast<size_t>(x)] = std::min(dist[static_cast<size_t>(x)], distance(static_cast<size_t>(j), x, pick));
      // Once the memory suffices, test feasibility (a best_pipeline call, O(|g|^2)) only at
      // sizes growing by a quarter, so a job that needs many more machines than its memory
      // bound costs O(log N) tests, not one per machine.
      if (mem >= memory_need(m) && g.size() >= next_test) {
        ok = ev.job(static_cast<size_t>(j), g).feasible;
        next_test = g.size() + std::max<size_t>(1, g.size() / 4);
      }
    }
    if (ok)
      for (int64_t x : g) assign[static_cast<size_t>(x)] = j;
  }
  grow_groups(c, jobs, ev, assign, out_of_time, distance, until);
  return assign;
}

// Each job on the fewest machines that fit it: jobs by decreasing memory need take free
// machines in order of the layers each can hold (most first; ties: faster, lower id) until
// best_pipeline finds a feasible plan, testing at sizes growing by a quarter. A job that does
// not fit on every free machine takes none.
std::vector<int64_t> fewest_machines_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev,
                                                const std::function<bool()>& out_of_time) {
  const int64_t N = c.size();
  std::vector<int64_t> assign(static_cast<size_t>(N), -1);
  for (int64_t j : jobs_by_need(jobs)) {
    if (out_of_time()) break;
    const ModelSpec& m = jobs[static_cast<size_t>(j)];
    const double b = micro_batch(m, 1);
    std::vector<std::pair<int64_t, int64_t>> by_use;  // (-layers it holds, id)
    for (int64_t x = 0; x < N; ++x)
      if (assign[static_cast<size_t>(x)] < 0) {
        const int64_t k = layers_that_fit(m, b, capacity_bytes(c, x));
        if (k > 0) by_use.push_back({-k, x});
      }
    std::stable_sort(by_use.begin(), by_use.end(), [&](const auto& a, const auto& q) {
      if (a.first != q.first) return a.first < q.first;
      return c.machine(a.second).tflops > c.machine(q.second).tflops;
    });
    std::vector<int64_t> g;
    int64_t held = 0;
    size_t next_test = 0;
    bool ok = false;
    for (const auto& u : by_use) {
      g.insert(std::upper_bound(g.begin(), g.end(), u.second), u.second);
      held -= u.first;
      if (held >= m.layers && g.size() >= next_test) {
        ok = ev.job(static_cast<size_t>(j), g).feasible;
        next_test = g.size() + std::max<size_t>(1, g.size() / 4);
        if (ok || out_of_time()) break;
      }
    }
    if (!ok && !g.empty() && !out_of_time()) ok = ev.job(static_cast<size_t>(j), g).feasible;
    if (ok)
      for (int64_t x : g) assign[static_cast<size_t>(x)] = j;
  }
  return assign;
}

// System C's machines as a concurrent start: every machine, dealt to the jobs round robin in
// id order (C runs each job on all of them; concurrently they must be shared).
std::vector<int64_t> round_robin_assignment(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  std::vector<int64_t> assign(static_cast<size_t>(c.size()), -1);
  if (jobs.empty()) return assign;
  for (int64_t x = 0; x < c.size(); ++x) assign[static_cast<size_t>(x)] = x % static_cast<int64_t>(jobs.size());
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

// Simulated annealing on the makespan from `start`. The temperature follows the iteration
// count (not the clock), so a fixed iteration budget gives the same walk for the same seed.
// Every `period` moves the walk restarts from the best assignment seen, hot again. With
// `focus` (Hulk's walk; Search's draws every move uniformly), half the moves involve the job that
// finishes last: it takes a machine, gives one back, or swaps one, drawn from a second stream.
struct Walk {
  std::vector<int64_t> best;
  Score score;
  int64_t moves = 0;
};
Walk anneal(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev, std::vector<int64_t> cur,
            const SearchOptions& opts, Clock::time_point t0, bool focus = false) {
  const int64_t N = c.size();
  const int64_t J = static_cast<int64_t>(jobs.size());
  Score cur_s = ev.score(cur);
  std::vector<int64_t> best = cur;
  Score best_s = cur_s;
  std::mt19937_64 rng(opts.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::mt19937_64 focus_rng(opts.seed ^ 0x9e3779b97f4a7c15ULL);
  std::vector<int64_t> in_last, not_last;  // cur's machines of its last job, and the others
  bool members_stale = true;
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
        members_stale = true;
      }
      const double temp = t_start * std::pow(1e-4, static_cast<double>(it % period) / static_cast<double>(period));
      std::vector<int64_t> next = cur;
      if (focus && cur_s.infeasible == 0 && cur_s.last >= 0 && focus_rng() % 2 == 0) {
        if (members_stale) {
          in_last.clear();
          not_last.clear();
          for (int64_t z = 0; z < N; ++z) (cur[static_cast<size_t>(z)] == cur_s.last ? in_last : not_last).push_back(z);
          members_stale = false;
        }
        const uint64_t kind = focus_rng() % 3;  // 0 take, 1 give back, 2 swap
        if (not_last.empty() || (kind != 0 && in_last.size() < 2)) continue;
        const int64_t y = not_last[focus_rng() % not_last.size()];
        const int64_t x = in_last[focus_rng() % in_last.size()];
        if (kind == 0) {
          next[static_cast<size_t>(y)] = cur_s.last;
        } else if (kind == 1) {
          next[static_cast<size_t>(x)] = -1;
        } else {
          std::swap(next[static_cast<size_t>(x)], next[static_cast<size_t>(y)]);
        }
      } else if (const int64_t x = static_cast<int64_t>(rng() % static_cast<uint64_t>(N)); unit(rng) < 0.5) {  // move x to another job or to idle
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
        members_stale = true;
        if (cur_s < best_s) {
          best = cur;
          best_s = cur_s;
        }
      }
    }
  }
  return {std::move(best), best_s, it};
}

// The assignment of a concurrent plan whose groups are disjoint; empty when jobs share
// machines (a job waits for another) or the plan is sequential.
std::vector<int64_t> disjoint_assignment(const Cluster& c, const Plan& p) {
  if (p.sequential) return {};
  std::vector<int64_t> a(static_cast<size_t>(c.size()), -1);
  for (size_t j = 0; j < p.jobs.size(); ++j)
    for (int64_t x : p.jobs[j].machines()) {
      if (a[static_cast<size_t>(x)] >= 0) return {};
      a[static_cast<size_t>(x)] = static_cast<int64_t>(j);
    }
  return a;
}

}  // namespace

namespace {

// plan_search's starts, each grown, and the best of them.
struct Starts {
  std::vector<int64_t> best;
  Score score;
  std::string name;  // the best start's
  std::vector<std::string> tried, skipped;
  double first_start_s = 0;  // the first start's wall time (it runs to the end whatever the limit)
  double longest = 0;        // the longest start's wall time
  std::vector<int64_t> regions;  // the "per region" start's classification
  std::vector<int64_t> hulk_start;  // Hulk's start after growth; empty when it did not run
  GrowUntil grow_until = GrowUntil::EveryJobDone;  // each start's growth (Search: every job)
  bool best_grown_to_makespan = false;  // best came from grow_groups stopped at a final makespan
  // Hulk's plans through Algorithm 1 and partition (which may make a job wait for another,
  // as no concurrent assignment can), candidates as they are.
  Plan hulk, hulk_fastest;
  bool have_hulk = false, have_hulk_fastest = false;
  // plan_hulk by classification, shared by the "Hulk" start and Hulk's own sources (the region
  // heuristic's groups are both; laying out a group of thousands costs tenths of a second).
  std::map<std::vector<int64_t>, Plan> algorithm1;
  const Plan& plan_hulk_once(const Cluster& c, const std::vector<ModelSpec>& jobs, const std::vector<int64_t>& classes) {
    auto it = algorithm1.find(classes);
    if (it == algorithm1.end()) it = algorithm1.emplace(classes, plan_hulk(c, jobs, classes)).first;
    return it->second;
  }
};

constexpr size_t kStarts = AnytimePlanner::kSearchStarts;  // plan_search's starts

// Starts number [from, to) of the eight below, cheapest first, each only while time is left
// (the first always runs, so there is a plan); each start's idle machines go to its bottleneck
// jobs in two ways, the better kept. Hulk's planner runs them in two parts with its own
// candidates between.
void run_starts(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev, const SearchOptions& opts,
                Clock::time_point t0, Starts& st, size_t from = 0, size_t to = kStarts) {
  const auto out_of_time = [&] { return seconds_since(t0) >= opts.time_limit_s; };
  auto add = [&](const std::string& name, const std::function<std::vector<int64_t>()>& make) {
    if (!st.best.empty() && seconds_since(t0) + st.longest >= opts.time_limit_s) {
      st.skipped.push_back(name);
      return;
    }
    const auto ts = Clock::now();
    std::vector<int64_t> a = make();
    // Idle machines to the bottleneck jobs while that helps, in two ways; the better one stays.
    std::vector<int64_t> b = a;
    grow_groups(c, jobs, ev, a, out_of_time, latency_distance(c), st.grow_until);
    grow_fastest_in_regions(c, jobs, ev, b, out_of_time);
    Score s = ev.score(a);
    bool grown_to_makespan = st.grow_until == GrowUntil::MakespanFixed;
    if (const Score sb = ev.score(b); sb < s) {
      a = std::move(b);
      s = sb;
      grown_to_makespan = false;
    }
    st.tried.push_back(name);
    st.longest = std::max(st.longest, seconds_since(ts));
    if (name == "Hulk") st.hulk_start = a;
    if (st.best.empty() || s < st.score) {
      st.best = std::move(a);
      st.score = s;
      st.name = name;
      st.best_grown_to_makespan = grown_to_makespan;
    }
  };
  const std::pair<const char*, std::function<std::vector<int64_t>()>> starts[kStarts] = {
      // The first start is never cut short by the clock: stopped half way it left jobs with no
      // machines ("no machines assigned") on large clusters with small budgets, where a plan exists.
      {"each job on the fewest machines", [&] { return fewest_machines_assignment(c, jobs, ev, [] { return false; }); }},
      // Also a candidate through Hulk's Algorithm 1 and partition, as Hulk's own plan below.
      {"fastest machines in one region",
       [&] {
         std::vector<int64_t> a = greedy_classes(c, jobs);  // hulk.greedy's rule
         st.hulk_fastest = plan_hulk(c, jobs, a);
         st.have_hulk_fastest = true;
         return a;
       }},
      {"System A's machines", [&] { return whole_model_assignment(c, jobs); }},
      {"System B's blocks", [&] { return block_assignment(c, jobs); }},
      {"System C's machines dealt round robin", [&] { return round_robin_assignment(c, jobs); }},
      {"per region", [&] { return st.regions = heuristic_classes(c, jobs); }},
      // Hulk's own plan (region heuristic, Algorithm 1): a start when its groups are disjoint,
      // and a candidate as it is.
      {"Hulk",
       [&] {
         st.hulk = st.plan_hulk_once(c, jobs, st.regions.empty() ? heuristic_classes(c, jobs) : st.regions);
         st.have_hulk = true;
         std::vector<int64_t> a = disjoint_assignment(c, st.hulk);
         return a.empty() ? std::vector<int64_t>(static_cast<size_t>(c.size()), -1) : a;
       }},
      // Grown twice (here and as every start above): its first growth is Search's (every job)
      // whatever st.grow_until says, so that it ends with Search's makespan (growth.h GrowUntil).
      {"greedy", [&] { return greedy_assignment(c, jobs, ev, out_of_time, latency_distance(c), GrowUntil::EveryJobDone); }},
  };
  for (size_t k = from; k < std::min(to, kStarts); ++k) {
    add(starts[k].first, starts[k].second);
    if (k == 0) st.first_start_s = seconds_since(t0);
  }
}

// Two walks, each with half of the time and moves left: from `first`, then from `second`; the
// better result, with the moves of both.
Walk two_walks(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev, const std::vector<int64_t>& first,
               bool first_focus, const std::vector<int64_t>& second, bool second_focus, const SearchOptions& opts,
               Clock::time_point t0) {
  SearchOptions half = opts;
  half.time_limit_s = seconds_since(t0) + std::max(0.0, opts.time_limit_s - seconds_since(t0)) / 2;
  if (opts.max_iterations > 0) half.max_iterations = (opts.max_iterations + 1) / 2;
  Walk walk = anneal(c, jobs, ev, first, half, t0, first_focus);
  SearchOptions rest = opts;
  if (opts.max_iterations > 0) rest.max_iterations = std::max<int64_t>(1, opts.max_iterations - walk.moves);
  Walk other = anneal(c, jobs, ev, second, rest, t0, second_focus);
  walk.moves += other.moves;
  if (other.score < walk.score) {
    walk.best = std::move(other.best);
    walk.score = other.score;
  }
  return walk;
}

// The annealing: two walks when Hulk's start is not the best one, from the best start and
// then from Hulk's (what Hulk's own refinement does), each with half of the time and moves
// left; otherwise one from the best start. Names the walks' starts in st.name.
Walk walk_from_starts(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev, Starts& st,
                      const SearchOptions& opts, Clock::time_point t0, bool focus = false) {
  Walk walk;
  if (!st.hulk_start.empty() && st.hulk_start != st.best) {
    walk = two_walks(c, jobs, ev, st.best, focus, st.hulk_start, focus, opts, t0);
    st.name += " start and from Hulk's";
  } else {
    st.name += " start";
  }
  if (walk.best.empty()) walk = anneal(c, jobs, ev, st.best, opts, t0, focus);
  return walk;
}

// The share of the machines that job `last` holds in `a` (0 when no job is last).
double last_job_share(const std::vector<int64_t>& a, int64_t last) {
  if (last < 0 || a.empty()) return 0;
  return static_cast<double>(std::count(a.begin(), a.end(), last)) / static_cast<double>(a.size());
}

// The sequential baselines that would run, for the note of a search that found no feasible
// plan (Search never returns them as its own); empty when none would.
std::string feasible_sequential_plans(const Cluster& c, const std::vector<ModelSpec>& jobs) {
  std::string seq;
  for (Plan q : {plan_system_a(c, jobs), plan_system_b(c, jobs), plan_system_c(c, jobs)})
    if (q.feasible()) {
      std::ostringstream o;
      o << q.planner << " (jobs one after another on the whole cluster, " << q.makespan_s / 3600 << " h)";
      seq += (seq.empty() ? "" : ", ") + o.str();
    }
  return seq;
}

// The walk's plan, or one of Hulk's plans where it is better, with the notes that say which.
Plan search_result(const Cluster& c, const std::vector<ModelSpec>& jobs, const Walk& walk, const Starts& st,
                   const SearchOptions& opts) {
  Plan p = plan_from_assignment(c, jobs, walk.best, "search");
  std::ostringstream summary;
  summary << "search: local search from the best of " << st.tried.size() << " starts";
  if (!st.skipped.empty()) summary << " (no time left for " << st.skipped.size() << " more)";
  summary << ", the " << st.name << ", " << walk.moves << " local-search moves";
  if (st.first_start_s > opts.time_limit_s)
    summary << "; the time limit (" << opts.time_limit_s << " s) was shorter than the first start, which ran to "
            << "its end (" << st.first_start_s << " s) so that there is a plan";
  bool from_hulk = false;
  std::string hulk_note;
  for (const auto& [have, plan, what] :
       {std::tuple<bool, const Plan*, const char*>{st.have_hulk, &st.hulk, "Hulk's plan"},
        {st.have_hulk_fastest, &st.hulk_fastest, "Hulk's Algorithm 1 on the fastest machines in one region"}}) {
    if (have && score_of(*plan) < score_of(p)) {
      from_hulk = true;
      p = *plan;
      p.planner = "search";
      hulk_note = std::string("search: ") + what +
                  " (a start, with jobs waiting for others) beat every concurrent assignment found; returned as is";
    }
  }
  if (from_hulk) p.notes.insert(p.notes.begin(), hulk_note);
  p.notes.insert(p.notes.begin(), summary.str());
  if (!from_hulk) {  // Hulk's plan carries the facts otherwise
    const std::vector<std::string> facts = cluster_facts(c, jobs);
    p.notes.insert(p.notes.begin() + 1, facts.begin(), facts.end());
  }
  if (!p.feasible()) {
    const std::string seq = feasible_sequential_plans(c, jobs);
    p.notes.push_back("search: no feasible plan found" + std::string(seq.empty() ? "" : "; feasible sequential plans: " + seq +
                                                                                          ", not returned as Search's"));
  }
  return p;
}

}  // namespace

Plan plan_search(const Cluster& c, const std::vector<ModelSpec>& jobs, const SearchOptions& opts) {
  const auto t0 = Clock::now();
  Evaluator ev(c, jobs);
  Starts starts;
  run_starts(c, jobs, ev, opts, t0, starts);
  const Walk walk = walk_from_starts(c, jobs, ev, starts, opts, t0);
  Plan p = search_result(c, jobs, walk, starts, opts);
  p.planning_s = seconds_since(t0);
  return p;
}


Plan refine_plan(const Cluster& c, const std::vector<ModelSpec>& jobs, const Plan& p, const SearchOptions& opts) {
  const auto t0 = Clock::now();
  std::vector<int64_t> start = disjoint_assignment(c, p);
  if (start.empty() || p.jobs.size() != jobs.size()) return p;
  Evaluator ev(c, jobs);
  grow_groups(c, jobs, ev, start, [&] { return seconds_since(t0) >= opts.time_limit_s; }, latency_distance(c));  // idle machines to the bottleneck jobs, then annealing
  const Walk walk = anneal(c, jobs, ev, std::move(start), opts, t0);
  std::ostringstream what;
  what << "refinement: idle machines given to bottleneck jobs, then " << walk.moves << " local-search moves";
  Plan q = plan_from_assignment(c, jobs, walk.best, p.planner.c_str());
  if (!(score_of(q) < score_of(p))) {
    Plan same = p;
    same.notes.push_back(what.str() + " found nothing better");
    same.planning_s = p.planning_s + seconds_since(t0);
    return same;
  }
  what << " shortened the makespan from " << p.makespan_s / 3600 << " h to " << q.makespan_s / 3600 << " h";
  q.notes = p.notes;
  q.notes.push_back(what.str());
  q.planning_s = p.planning_s + seconds_since(t0);
  return q;
}


// ---- Hulk within a time budget -------------------------------------------------------------------

// From this many machines Hulk grows Search's starts and its own only until the makespan is
// final (GrowUntil::MakespanFixed): the same makespans at less than half the time, so more of
// Search's starts fit in the sources' share (5,000 measured machines, #301 paper4: the eight
// starts 0.31 s -> 0.14 s; at 0.3 s Hulk ran three of them before, all eight now, and took
// Search's winner, System B's, 5.48 h -> 5.10 h). Below it the eight starts take milliseconds
// (0.3-20 ms at 47-200 measured machines), and the refinement there retraces Search's own walk
// from Search's best start, which needs that start as Search grows it. Every start grown in
// full (as Search grows them) at 1,000-20,000 machines was tried again: it mended #453 (5,000
// measured, OPT+RoBERTa+BERT, 1.07 / 1.04x Search(t) at 1 / 3 s -> 1.00) but on fresh
// k = 456-458 (1 and 3 s, both modes) Hulk(t)/Search(t) went 0.879 -> 0.889 (measured 1,000
// machines at 1 s 0.834 -> 0.872); only Search's greedy start, grown twice, is (growth.h).
constexpr int64_t kMakespanGrowthFromMachines = 1000;

struct AnytimePlanner::State {
  std::shared_ptr<const Cluster> shared;  // keeps c alive
  const Cluster& c;
  std::vector<ModelSpec> jobs;
  SearchOptions opts;
  Clock::time_point t0 = Clock::now();
  Evaluator ev;
  Starts st;
  bool started = false;  // a step has run (the first always runs)
  double longest = 0;
  std::vector<std::string> skipped;
  // Every step that ran (Search's starts included) and its wall time, in order, for the notes.
  std::vector<std::pair<std::string, double>> step_times;
  double classification_s = 0;  // the caller's last record_step, charged to the next classification
  void count_step(double seconds) {  // towards the skip rule's longest step
    longest = std::max(longest, seconds);
    started = true;
  }
  // Each source's plan before refinement (Algorithm 1 with growth, or grown further as a start).
  struct Candidate {
    std::string source;
    Plan plan;
  };
  std::vector<Candidate> candidates;
  Descent descent;  // the descents' steps and layouts, early and in finish()
  Reseed reseed;    // the last job's groups grown from other regions in finish()
  Aligned aligned;  // the last job laid out on replica-aligned region chains in finish()
  double aligned_s = 0;  // and the time that took
  std::vector<int64_t> hulk_best;  // the best of Hulk's own candidates as a start
  Score hulk_score;
  std::string hulk_name;

  State(std::shared_ptr<const Cluster> cc, std::vector<ModelSpec> jj, const SearchOptions& o)
      : shared(std::move(cc)), c(*shared), jobs(std::move(jj)), opts(o), ev(c, jobs) {}
  // Search in a second thread (start_search_thread): its plan, or what it threw. Joined before
  // the rest of the state goes, so that the thread never outlives what it writes to.
  std::thread search_thread;
  Plan search_plan;
  std::string search_error;
  ~State() {
    if (search_thread.joinable()) search_thread.join();
  }
  // plan_from_assignment, once per assignment: the walk often returns one of the starts (at
  // 20,000 machines laying out every job costs tens of ms).
  struct Layout {
    std::vector<int64_t> assign;
    Plan plan;
    double seconds;  // what laying it out took
  };
  std::vector<Layout> layouts;
  const Layout& layout_of(const std::vector<int64_t>& a) {
    for (const Layout& l : layouts)
      if (l.assign == a) return l;
    const auto ts = Clock::now();
    Plan p = plan_from_assignment(c, jobs, a, "hulk");
    layouts.push_back({a, std::move(p), seconds_since(ts)});
    return layouts.back();
  }
  const Plan& laid_out(const std::vector<int64_t>& a) { return layout_of(a).plan; }
  // The time kept after the walks for the steps that end the plan: 5% of the budget (at most
  // 0.25 s), and at least kFinishLayouts times what laying out the walks' start took. After
  // the walk the idle check lays out the groups again (machines without a stage released,
  // then the first batches offered), the plan is laid out, its notes written and it goes back
  // to Python: 5-6 layouts' time at 20,000 measured machines (12 ms where a layout took 2 ms;
  // #361 paper4 at 0.1 s, planning 0.106-0.111 s with the 5% alone). The idle check and the
  // last descent end kEndLayouts of them before the budget.
  static constexpr double kFinishLayouts = 6;
  static constexpr double kEndLayouts = 3;
  double finish_reserve_s(double start_layout_s) const {
    return std::max(std::min(0.05 * opts.time_limit_s, 0.25), kFinishLayouts * start_layout_s);
  }
  // Hulk's own candidate sources (the classifications, the send-time start) share this part of
  // the budget; the rest is kept for the refinement, whose descent on the last job gains more
  // per second on measured networks than a further start does. Search's starts run under
  // Search's own rule (add_search_starts).
  static constexpr double kSourceShare = 0.6;
  double sources_limit_s() const { return kSourceShare * opts.time_limit_s; }
  bool sources_out_of_time() const { return seconds_since(t0) >= sources_limit_s(); }
  // Whether a step of step_s seconds, started now, would end within the sources' share.
  bool room_in_share(double step_s) const { return seconds_since(t0) + step_s < sources_limit_s(); }
  // One of Hulk's own starts: a candidate, and the walk's start if it is the best so far.
  void add_start(const std::string& name, std::vector<int64_t> a, const Score& score) {
    candidates.push_back({name, laid_out(a)});
    if (hulk_best.empty() || score < hulk_score) {
      hulk_best = std::move(a);
      hulk_score = score;
      hulk_name = name;
    }
  }
};

AnytimePlanner::AnytimePlanner(std::shared_ptr<const Cluster> c, std::vector<ModelSpec> jobs, const SearchOptions& opts) {
  if (!c) throw std::invalid_argument("AnytimePlanner: cluster is null");
  if (!(opts.time_limit_s > 0)) throw std::invalid_argument("AnytimePlanner: time_limit_s must be > 0");
  s_ = std::make_unique<State>(std::move(c), std::move(jobs), opts);
  if (s_->c.size() >= kMakespanGrowthFromMachines) s_->st.grow_until = GrowUntil::MakespanFixed;
}
AnytimePlanner::~AnytimePlanner() = default;

double AnytimePlanner::elapsed_s() const { return seconds_since(s_->t0); }

void AnytimePlanner::start_search_thread() {
  State& s = *s_;
  if (s.search_thread.joinable() || s.started)
    throw std::logic_error("AnytimePlanner::start_search_thread: call it once, before any step");
  SearchOptions o = s.opts;  // the same seed and move cap; the budget left on Hulk's clock
  o.time_limit_s = std::max(1e-9, s.opts.time_limit_s - seconds_since(s.t0));
  // The thread reads the cluster (immutable, kept alive by its own pointer) and a copy of the
  // jobs; plan_search has its own Evaluator, so nothing is shared with Hulk's steps.
  s.search_thread = std::thread([&s, cluster = s.shared, jobs = s.jobs, o] {
    try {
      s.search_plan = plan_search(*cluster, jobs, o);
    } catch (const std::exception& e) {
      s.search_error = e.what();
    } catch (...) {  // nothing may leave a thread's function: std::terminate
      s.search_error = "an exception that is not a std::exception";
    }
  });
}

bool AnytimePlanner::time_for_another_step(double expected_s) const {
  return !s_->started || s_->room_in_share(std::max(s_->longest, expected_s));
}

void AnytimePlanner::record_step(double seconds, const std::string& nothing_from) {
  s_->count_step(seconds);
  if (nothing_from.empty())
    s_->classification_s = seconds;
  else
    s_->step_times.push_back({nothing_from + " (no new classification)", seconds});
}

void AnytimePlanner::skip(const std::string& source) { s_->skipped.push_back(source); }
bool AnytimePlanner::skipped_any() const { return !s_->skipped.empty() || !s_->st.skipped.empty(); }

// The last job's share of the machines from which Hulk runs Search's starts under Search's own
// time rule and Search's plain walk first.
// Measured shares of the walks' start: 0.17-0.92 on 47-200 machines; on 1,000-20,000 machines
// usually a few percent, but 38% on 1,000 #1 (start "each job on the fewest machines") and
// about 15% where OPT-175B finishes last on 20,000.
constexpr double kPlainWalkLastJobShare = 0.1;
// From this many machines the early descent always runs (AnytimePlanner::descend_best).
constexpr int64_t kEarlyDescentAlwaysFromMachines = 1000;

// Hulk runs Search's starts in plan_search's order (cheapest first, so that the longest start so
// far predicts the next one), but System A's start last: in the 7,851 plans of Search's with a
// recorded start in benchmarks/*.jsonl (measured and paper-fitted clusters, 47-20,000 machines,
// 0.1-60 s) it was never the best start, and on 20,000 measured machines it costs 36-48 ms
// (k = 282-300, a quiet 2-core VM), which at a 0.1 s budget left Hulk's refinement ~12 ms
// (k = 280-287, 20,000 machines, 0.1 s, three seeds: Hulk(t)/Search(t) 0.900-0.905 with it in
// Search's place, 0.861-0.862 with it last). On a set it was not chosen on (k = 300-307,
// benchmarks/plan_anytime_fresh300*.jsonl): 0.875 -> 0.857 at 0.1 s, 0.881 -> 0.867-0.873 at
// 0.3 s (plans over 1.02x 3 -> 0-1 of 48, two runs); at 1 s and on 47-5,000 machines within 0.005.
constexpr size_t kHulkOrderOfSearchStarts[AnytimePlanner::kSearchStarts] = {0, 1, 3, 4, 5, 6, 7, 2};

void AnytimePlanner::add_search_starts(size_t from, size_t to) {
  State& s = *s_;
  if (from > to || to > kSearchStarts)
    throw std::invalid_argument("AnytimePlanner::add_search_starts: [" + std::to_string(from) + ", " + std::to_string(to) +
                                ") is not a range of Search's " + std::to_string(kSearchStarts) + " starts");
  s.st.longest = std::max(s.st.longest, s.longest);  // one skip rule for Hulk's steps and Search's starts
  // Where the job that finishes last in the best start so far holds at least
  // kPlainWalkLastJobShare of the machines (most clusters of 47-200 machines), Search's starts run
  // under Search's own rule (while the time left exceeds the longest start), not within the
  // sources' share: at short budgets Search's winning start can be one of its later, cheap ones
  // (200 measured machines, k = 55, paper4, 0.1 s: "System B's blocks", 8.61 h with no walk
  // move; cut at the share, Hulk had 10.53 h). Elsewhere (a last job on a few percent of the
  // machines: 1,000 and more) the descent on the last job gains more per second than a further
  // start: Search's rule there made Hulk(1 s) 1.073x Search(60 s) on average at 20,000 measured
  // machines, against 0.959 within the share.
  for (size_t k = from; k < to; ++k) {
    SearchOptions o = s.opts;
    // Search's second start runs as Search runs it where its first left no room in the sources'
    // share (elapsed + the longest step past it): then none of Hulk's own sources would run
    // either, and Search with the same budget would have this start too. On 20,000
    // paper-fitted machines #380 with the Llama-2 jobs at 0.1 s the first start took 45 ms of
    // the 60 ms share; Hulk then returned that start walked, 1.22x Search's plan from its second
    // start, in 4 of 6 repeated runs (1.00x in all six with the rule); 20,000 measured #367
    // OPT+RoBERTa+BERT at 0.1 s 1.059x -> 1.000x. Cell means at 1,000-20,000 machines moved
    // within run-to-run noise (k = 380-384 and 390-394, 0.1 and 0.3 s).
    if (!s.st.best.empty() && last_job_share(s.st.best, s.st.score.last) < kPlainWalkLastJobShare) {
      if (k >= 2 || s.room_in_share(std::max(s.st.longest, s.longest))) o.time_limit_s = s.sources_limit_s();
    }
    const size_t start = kHulkOrderOfSearchStarts[k];
    const size_t before = s.st.tried.size();
    const auto ts = Clock::now();
    run_starts(s.c, s.jobs, s.ev, o, s.t0, s.st, start, start + 1);
    if (s.st.tried.size() > before)  // the one start ran (not skipped)
      s.step_times.push_back({"Search's start \"" + s.st.tried.back() + "\"", seconds_since(ts)});
  }
  s.started = true;
  s.longest = std::max(s.longest, s.st.longest);
}

std::vector<std::string> AnytimePlanner::search_starts_tried() const { return s_->st.tried; }

void AnytimePlanner::add_classification(const std::string& source, const std::vector<int64_t>& classes, int grow_rounds) {
  State& s = *s_;
  const auto ts = Clock::now();
  check_assignment(s.c, s.jobs, classes, "classes");
  const auto known = s.st.algorithm1.find(classes);
  Growth g = grow_bottleneck(s.c, s.jobs, classes, grow_rounds, default_growth_steps(),
                             [&] { return s.sources_out_of_time(); }, known == s.st.algorithm1.end() ? nullptr : &known->second);
  s.st.algorithm1.emplace(classes, g.start);
  g.plan.planner = "hulk";
  s.candidates.push_back({source + " (Algorithm 1" + std::string(grow_rounds > 0 ? ", growth" : "") + ")", g.plan});
  std::vector<int64_t> a = disjoint_assignment(s.c, g.plan);
  if (!a.empty()) {  // as a start: idle machines to the bottleneck jobs as Search grows its starts (any region)
    std::vector<int64_t> b = a;
    const auto out_of_time = [&] { return s.sources_out_of_time(); };
    grow_groups(s.c, s.jobs, s.ev, a, out_of_time, latency_distance(s.c), s.st.grow_until);
    grow_fastest_in_regions(s.c, s.jobs, s.ev, b, out_of_time);
    Score sa = s.ev.score(a);
    if (const Score sb = s.ev.score(b); sb < sa) {
      a = std::move(b);
      sa = sb;
    }
    s.add_start(source + " (Algorithm 1, growth, idle machines to the bottleneck jobs)", std::move(a), sa);
  }
  s.step_times.push_back({source, s.classification_s + seconds_since(ts)});
  s.count_step(seconds_since(ts));
  s.classification_s = 0;
}

void AnytimePlanner::add_send_time_start() {
  // Search's greedy start with distances in send time rather than latency: on measured
  // networks latency says little about bandwidth, and a large model's pipeline is bound by it.
  State& s = *s_;
  const auto ts = Clock::now();
  const auto out_of_time = [&] { return s.sources_out_of_time(); };
  std::vector<int64_t> a = greedy_assignment(s.c, s.jobs, s.ev, out_of_time, send_time_distance(s.c, s.jobs), s.st.grow_until);
  const Score sa = s.ev.score(a);
  s.add_start("the closest machines by send time (Search's greedy start, bandwidth-aware)", std::move(a), sa);
  s.step_times.push_back({"the closest machines by send time", seconds_since(ts)});
  s.count_step(seconds_since(ts));
}

void AnytimePlanner::descend_best(double share) {
  State& s = *s_;
  const bool hulk_better = !s.hulk_best.empty() && (s.st.best.empty() || s.hulk_score < s.st.score);
  std::vector<int64_t> a = hulk_better ? s.hulk_best : s.st.best;
  if (a.empty()) return;
  // On clusters of under 1,000 machines where the job that finishes last holds a large share of
  // them (most clusters of 47-200 machines), finish() retraces Search's own walk first, and the
  // time this descent takes (up to the share: 73 ms of 0.3 s on 47 measured machines) is worth
  // more in that walk. Measured at 47-200 machines, 0.1-1 s, 3 seeds, on measured k = 300-327
  // and paper-fitted k = 320-327 (k = 320-327 run after the choice): plans over 1.02x Search's
  // at the same budget 22 -> 13 of 1,152 (worst 1.154 -> 1.089), instances over 1.02x on the
  // seed means 6 -> 4 of 384, cell means within 0.015 (benchmarks/RESULTS.md,
  // plan_anytime_fresh320.jsonl). Not on 1,000 machines and more: there the descent on a last
  // job of hundreds of machines is worth its time (1,000 measured machines #3 at 1 s, last job
  // 20%: Hulk / Search(60 s) 0.929 -> 1.037 and 0.974 -> 1.084 without it; k = 290-317 at
  // 1,000-20,000 machines: cell means up to 0.013 worse).
  if (s.c.size() < kEarlyDescentAlwaysFromMachines && !s.st.best.empty() &&
      last_job_share(s.st.best, s.st.score.last) >= kPlainWalkLastJobShare)
    return;
  const std::string from = hulk_better ? s.hulk_name : "Search's start \"" + s.st.name + "\"";
  const double until = std::min(share, 1.0) * s.opts.time_limit_s;
  const auto ts = Clock::now();
  const Descent d = descend_last_job(s.c, s.jobs, s.ev, a, [&] { return seconds_since(s.t0) >= until; });
  if (d.evaluations > 0) s.step_times.push_back({"the early descent", seconds_since(ts)});
  s.descent += d;
  s.started = true;
  if (d.steps == 0) return;
  const Score score = s.ev.score(a);
  s.add_start(from + " after the descent on the last job", std::move(a), score);
}

// After the idle check and the last descent, the walk goes on while at least this share of the
// budget is left (beyond twice what they took).
constexpr double kWalkAgainFromShareOfBudget = 0.01;
// The descents on the walks' starts in finish() end by this share of the time left; the walk
// gets the rest (but the final reserve).
constexpr double kDescentShareOfRest = 0.5;
// The last job's replica-aligned region chains (aligned_chain.h) before the reseed end by
// this share of the time left (the reseed's own share; not tuned): at 200 measured machines
// they take 60-120 ms of a 1 s budget; on mixed GPUs, where only each D's first chain is laid
// out, 13-51 ms at 200-20,000 machines and 0.3-1 s.
constexpr double kAlignedShareOfRest = 0.25;
// The reseed before them ends by this share of the time left.
constexpr double kReseedShareOfRest = 0.25;

Plan AnytimePlanner::finish() {
  State& s = *s_;
  const double refinement_from = seconds_since(s.t0);
  // Search's best start as Search's own first walk starts from it (no descent).
  std::vector<int64_t> search_start = s.st.best;
  const std::string search_start_name = s.st.name;
  const bool search_start_grown_to_makespan = s.st.best_grown_to_makespan;
  // Search's starts as candidates: the best concurrent one and its two Algorithm 1 plans.
  if (!s.st.best.empty())
    s.candidates.push_back({"Search's start \"" + s.st.name + "\"", s.laid_out(s.st.best)});
  for (const auto& [have, plan, what] :
       {std::tuple<bool, const Plan*, const char*>{s.st.have_hulk, &s.st.hulk, "Search's start \"Hulk\" (region heuristic, Algorithm 1)"},
        {s.st.have_hulk_fastest, &s.st.hulk_fastest, "Search's start \"fastest machines in one region\" (Algorithm 1)"}})
    if (have) s.candidates.push_back({what, *plan});
  // The walks start from Search's best start when it is the best candidate; otherwise from
  // Hulk's best candidate and from Search's best start, each with half the time and moves (an
  // annealing walk from a worse start often ends better).
  // There Search's start "Hulk" (the region heuristic and Algorithm 1, grown), from which
  // Search walks second when it is not its best start, would be dropped: it is kept as a third
  // start, descended and walked when the best of the three. Measured 47 #466 paper4 at 1 s:
  // Hulk 23.45 h -> 18.5-19.4 h (Search 18.69 h from that walk). Paired on fresh k = 475-479
  // (47 and 200 machines, both modes, the bundled cluster, 0.3/1/3 s, two runs per arm;
  // benchmarks/RESULTS.md, "Paired variants of 2026-11-28"): Hulk(t) / Search(t) 0.9721 /
  // 0.9712 -> 0.9672 / 0.9664, plans over 1.02x 7 / 7 -> 3 / 2 of 126, every 47-machine miss
  // mended; at 1,000-5,000 (k = 470-474) 0.9042 / 0.8969 -> 0.8971, where the two descents
  // before it mostly use the window.
  // Search's second walk starts here where it differs from Search's best start (walk_from_starts).
  const std::vector<int64_t> search_second_start = s.st.hulk_start != s.st.best ? s.st.hulk_start : std::vector<int64_t>{};
  std::vector<int64_t> search_hulk_start;
  std::string walked = "from Search's best start, \"" + s.st.name + "\" (and its start \"Hulk\" when that differs)";
  if (!s.hulk_best.empty() && (s.st.best.empty() || s.hulk_score < s.st.score)) {
    if (s.st.hulk_start != s.st.best && s.st.hulk_start != s.hulk_best) search_hulk_start = s.st.hulk_start;
    walked = "from " + s.hulk_name + (s.st.best.empty() ? "" : " and from Search's best start, \"" + s.st.name + "\"") +
             (search_hulk_start.empty() ? "" : " and its start \"Hulk\"");
    s.st.hulk_start = s.st.best;
    s.st.best = s.hulk_best;
    s.st.score = s.hulk_score;
  }
  // The best candidate before refinement, waiting plans (Algorithm 1's) included.
  size_t k_best = 0;
  for (size_t k = 1; k < s.candidates.size(); ++k)
    if (score_of(s.candidates[k].plan) < score_of(s.candidates[k_best].plan)) k_best = k;
  if (s.candidates.empty()) throw std::invalid_argument("AnytimePlanner::finish: no candidate was added");
  const Plan before = s.candidates[k_best].plan;
  // The descent, then the walks for the time left but a reserve for the idle check, then the
  // check and the descent again.
  Walk walk;
  IdleCheck idle;
  Descent& descent = s.descent;
  // The idle check and the last descent end this much before the budget: the plan's layout,
  // its notes and its way back to Python take about three layouts' time (State::kEndLayouts).
  const double start_layout_s = s.st.best.empty() ? 0 : s.layout_of(s.st.best).seconds;  // laid out as a candidate above
  const double end_s = s.opts.time_limit_s - State::kEndLayouts * start_layout_s;
  const auto out_of_time = [&] { return seconds_since(s.t0) >= end_s; };
  if (!s.st.best.empty()) {
    // Where the job that finishes last holds a large share of the machines, Search's own first
    // walk runs first, for half of the time left: from Search's best start before any descent,
    // every move uniform, the same seed, so it retraces Search's walk for as many moves as it
    // gets. There uniform moves touch the last job often and that walk often ends in a better
    // basin than a focused one (47-200 machines). Where the last job holds a few percent of the
    // machines (usual on 1,000 and more), uniform moves rarely touch it and two focused walks do
    // better. Run first rather than after the descent (where it got a quarter of the time left):
    // fresh measured clusters k = 50-57, 47-1,000 machines, both job sets, 0.1-1 s, with
    // Search's starts under Search's own time rule (add_search_starts) in both: instances over
    // 1.02x Search's plan at the same budget 3 of 144 against 5, worst 1.030 against 1.118,
    // means equal (0.920). Search's second walk (from its start "Hulk", which wins Search's plan
    // on the bundled cluster at 0.3 s) was tried here too, sharing this half with the first or
    // after it for a quarter: on 47 machines, k = 50-54 it mended the paper-fitted misses
    // (3 -> 0 of 60), on k = 55-59 it lost (misses 2 -> 3-4 of 132, measured means up to 1% longer).
    // Nor did going on past this half while the walk still improves (until 70% or 85% of the time
    // left, stopping once the last tenth of its moves found nothing): k = 50-54, 47-200 machines,
    // both modes and the bundled cluster, plans over 1.02x 6 -> 7-8 of 252, means equal.
    const double share = search_start.empty() ? 0 : last_job_share(s.st.best, s.st.score.last);
    Walk plain;
    if (share >= kPlainWalkLastJobShare) {
      SearchOptions half = s.opts;
      half.time_limit_s = seconds_since(s.t0) + std::max(0.0, s.opts.time_limit_s - seconds_since(s.t0)) / 2;
      if (s.opts.max_iterations > 0) half.max_iterations = (s.opts.max_iterations + 1) / 2;
      // Search's start as Search grows it (every job, not only until the makespan is final):
      // the growth's deterministic rest, so the walk is Search's own.
      if (search_start_grown_to_makespan)
        grow_groups(s.c, s.jobs, s.ev, search_start, [&] { return seconds_since(s.t0) >= half.time_limit_s; },
                    latency_distance(s.c));
      plain = anneal(s.c, s.jobs, s.ev, search_start, half, s.t0, /*focus=*/false);
      if (plain.score < s.st.score) {
        s.st.best = plain.best;
        s.st.score = plain.score;
      }
    }
    // First the last job laid out on replica-aligned region chains (aligned_chain.h), then its
    // group grown afresh from other regions (reseed.h), each for a share of the time left: the
    // descent below improves the group it is given, and on measured networks the group's basin
    // decides the plan. The chains reach groups no single-machine step does (each stage's
    // replicas in one region), the reseed chains of fast pairs.
    // Each step runs only if its window holds one layout of the start: each lays out at least a
    // few groups before it looks at the clock (20,000 measured machines at 0.1 s, after a first
    // start of 60-90 ms: the two took 20-30 ms past the budget).
    const auto window_holds_a_layout = [&](double until) { return until - seconds_since(s.t0) >= start_layout_s; };
    {
      const double from = seconds_since(s.t0);
      const double until = from + kAlignedShareOfRest * std::max(0.0, s.opts.time_limit_s - from);
      if (window_holds_a_layout(until)) {
        s.aligned = align_last_job(s.c, s.jobs, s.ev, s.st.best, [&] { return seconds_since(s.t0) >= until; });
        s.aligned_s = seconds_since(s.t0) - from;
      }
    }
    const double before_reseed = seconds_since(s.t0);
    const double reseed_until = before_reseed + kReseedShareOfRest * std::max(0.0, s.opts.time_limit_s - before_reseed);
    if (window_holds_a_layout(reseed_until))
      s.reseed += reseed_last_job(s.c, s.jobs, s.ev, s.st.best, [&] { return seconds_since(s.t0) >= reseed_until; });
    s.st.score = s.ev.score(s.st.best);
    // The descent on the last job (it gets there in a few hundred layouts where the walk's
    // uniform draws rarely touch that job), from both walks' starts.
    // At most half of the time left: on a group of ~100 machines a layout costs milliseconds
    // and a step over a thousand layouts, so an unbounded descent could use the whole budget
    // and leave the walk no moves (1,000 measured machines at 10-30 s: stuck at 1.05-1.12x
    // Search's plan; with the walk, 0.83-0.88x).
    const double now = seconds_since(s.t0);
    const double descent_until = now + kDescentShareOfRest * std::max(0.0, s.opts.time_limit_s - now);
    const auto descent_out_of_time = [&] { return seconds_since(s.t0) >= descent_until; };
    // Where the plain walk retraced Search's first walk, Search's second start is not descended
    // but walked as Search walks it second (every move uniform, the same seed), until the
    // descents' deadline: that walk can end in a basin no descent reaches. Bundled cluster,
    // OPT+RoBERTa+BERT, 0.3 s: Search 87.0-87.7 h from its second walk, Hulk 89.37 h in 8 of 8
    // replans; held-out large-regions 47 #541 paper4: Search 71.96 h from it at 0.3-3 s, Hulk
    // 75.4-76.1 h. Paired on the tuning set k = 55-59 (47 and 200 machines, both modes, the
    // bundled cluster, 0.3/1/3 s, 126 plans): plans over 1.02x Search(t) 1 -> 0 (worst 1.027 ->
    // 1.008), Hulk(t) / Search(t) 0.958 -> 0.962 at 0.3 s, 0.957 -> 0.956 at 1 s, 0.961 -> 0.962
    // at 3 s. Search's two walks in the plain walk's half instead (each a quarter) lost there:
    // misses 0 -> 2, its first walk finding its best after 1,600-1,800 moves.
    int64_t second_walk_moves = 0;
    for (auto* start : {&s.st.best, &s.st.hulk_start, &search_hulk_start}) {
      if (start->empty() || !window_holds_a_layout(descent_until)) continue;
      if (!plain.best.empty() && start != &s.st.best && *start == search_second_start) {
        SearchOptions second = s.opts;
        second.time_limit_s = descent_until;
        // With a move cap, Search's second walk gets the moves its first left (two_walks).
        if (s.opts.max_iterations > 0) second.max_iterations = std::max<int64_t>(1, s.opts.max_iterations - plain.moves);
        Walk w = anneal(s.c, s.jobs, s.ev, *start, second, s.t0, /*focus=*/false);
        second_walk_moves += w.moves;
        *start = std::move(w.best);
      } else {
        descent += descend_last_job(s.c, s.jobs, s.ev, *start, descent_out_of_time);
      }
    }
    for (auto* other : {&s.st.hulk_start, &search_hulk_start})
      if (!other->empty() && s.ev.score(*other) < s.ev.score(s.st.best)) std::swap(s.st.best, *other);
    s.st.score = s.ev.score(s.st.best);
    SearchOptions o = s.opts;
    o.time_limit_s = std::max(seconds_since(s.t0), s.opts.time_limit_s - s.finish_reserve_s(start_layout_s));
    if (!plain.best.empty()) {  // then one focused walk from the better descended start, with the moves left
      // With a move cap Hulk walks as many moves as Search: none may be left after both of
      // Search's walks.
      const int64_t left = o.max_iterations - plain.moves - second_walk_moves;
      if (o.max_iterations > 0) o.max_iterations = std::max<int64_t>(1, left);
      walk = o.max_iterations > 0 && left <= 0 && second_walk_moves > 0
                 ? Walk{s.st.best, s.st.score, 0}
                 : anneal(s.c, s.jobs, s.ev, s.st.best, o, s.t0, /*focus=*/true);
      walk.moves += plain.moves + second_walk_moves;
      if (plain.score < walk.score) {
        walk.best = std::move(plain.best);
        walk.score = plain.score;
      }
      std::ostringstream w;
      w << "from Search's best start, \"" << search_start_name << "\", as Search walks it (every move uniform; the last "
        << "job holds " << std::lround(100 * share) << "% of the machines)";
      if (second_walk_moves > 0)
        w << ", and from Search's second start, \"Hulk\", as Search walks it second (" << second_walk_moves << " moves)";
      w << ", then from the better of the descended starts (" << walked << "), half of the moves on the last job";
      walked = w.str();
    } else {
      walk = walk_from_starts(s.c, s.jobs, s.ev, s.st, o, s.t0, /*focus=*/true);
    }
  }
  Plan p = before;
  bool idle_notes_apply = false;  // p is the plan the idle check last looked at
  if (!walk.best.empty()) {
    // The idle check and the descent, then, while the reserve they were given is mostly left
    // (at 3-10 s they took a few percent of it: Hulk ended at 96-98% of its budget where Search
    // plans to the end, plan_anytime_long350.jsonl), the focused walk again from their result
    // for the time left but twice what they took, and both again on anything shorter it finds,
    // so the idle check's notes are always the returned plan's. Not with a move cap, whose
    // moves the walks above have already spent.
    for (;;) {
      const double check_from = seconds_since(s.t0);
      const auto check_idle = [&] {
        const int64_t given = idle.given;
        idle = offer_idle_to_last_job(s.c, s.jobs, s.ev, walk.best, out_of_time);
        idle.given += given;
      };
      check_idle();
      const Descent d = descend_last_job(s.c, s.jobs, s.ev, walk.best, out_of_time);
      descent += d;
      // The descent may give machines back (or take idle ones): the check again, so that its
      // notes are the plan's (out of time it still writes them, without offering).
      if (d.steps > 0) check_idle();
      const double check_s = seconds_since(s.t0) - check_from;
      SearchOptions more = s.opts;
      more.time_limit_s = end_s - 2 * check_s;
      if (s.opts.max_iterations > 0 || more.time_limit_s - seconds_since(s.t0) < kWalkAgainFromShareOfBudget * s.opts.time_limit_s)
        break;
      const Score now = s.ev.score(walk.best);
      Walk again = anneal(s.c, s.jobs, s.ev, walk.best, more, s.t0, /*focus=*/true);
      walk.moves += again.moves;
      if (!(again.score < now)) break;
      walk.best = std::move(again.best);
    }
    // The walk's plan unless the best candidate before refinement is strictly shorter (an
    // Algorithm 1 plan where a job waits for another): on a tie, the plan the idle check's
    // notes describe.
    const Plan& q = s.laid_out(walk.best);
    if (!(score_of(p) < score_of(q))) {
      p = q;
      idle_notes_apply = true;
    }
  }
  p.planner = "hulk";
  std::vector<std::string> notes;
  std::ostringstream won;
  won << "hulk: best candidate before refinement: " << s.candidates[k_best].source << " (" << hours(before.makespan_s)
      << ")";
  // each source's best
  std::vector<std::pair<std::string, double>> others;
  for (size_t k = 0; k < s.candidates.size(); ++k)
    if (k != k_best) others.push_back({s.candidates[k].source, s.candidates[k].plan.makespan_s});
  if (!others.empty()) {
    won << "; others:";
    for (size_t k = 0; k < others.size(); ++k) won << (k ? "," : "") << " " << others[k].first << " " << hours(others[k].second);
  }
  notes.push_back(won.str());
  std::ostringstream ref;
  ref << "hulk: refinement (" << walk.moves << " local-search moves " << walked;
  if (idle.given > 0) ref << ", then " << idle.given << " idle machine(s) given to the job that finished last";
  ref << "; " << descent.steps << " moves of the last job's machines";
  if (descent.resplits > 0) ref << " (" << descent.resplits << " of them re-splits with another job's)";
  ref << ", " << descent.evaluations << " layouts tried";
  if (s.aligned.chains > 0)
    ref << "; the last job laid out on " << s.aligned.chains << " replica-aligned region chain(s), " << s.aligned.evaluations
        << " layouts in " << std::lround(1000 * s.aligned_s) << " ms, "
        << (s.aligned.improved ? "a shorter group taken (" + std::to_string(s.aligned.machines) +
                                     " machines of a chain aligned to " + std::to_string(s.aligned.replicas) + " replica(s))"
                               : std::string("no shorter group"));
  if (s.reseed.seeds > 0)
    ref << "; the last job regrown from " << s.reseed.seeds << " seed region(s), " << s.reseed.evaluations << " layouts, "
        << (s.reseed.improved ? "a shorter group taken" : "no shorter group");
  if (s.reseed.cut_dismissed > 0)
    ref << " (" << s.reseed.cut_dismissed << " shorter group(s) from descents the clock cut left out, by less than "
        << 100 * kCutGroupMargin << "%)";
  ref << ", " << seconds_since(s.t0) << " s in all) ";
  if (p.makespan_s < before.makespan_s)
    ref << "shortened the makespan from " << hours(before.makespan_s) << " to " << hours(p.makespan_s) << " ("
        << 100 * (1 - p.makespan_s / before.makespan_s) << "% shorter)";
  else
    ref << "found nothing shorter";
  notes.push_back(ref.str());
  // Where the budget went: each step in the order run, then the refinement.
  std::ostringstream steps;
  steps << "hulk: time per step (ms, in the order run):";
  for (size_t k = 0; k < s.step_times.size(); ++k)
    steps << (k ? "," : "") << " " << s.step_times[k].first << " " << std::lround(1000 * s.step_times[k].second);
  steps << "; refinement " << std::lround(1000 * (seconds_since(s.t0) - refinement_from)) << " (from "
        << std::lround(1000 * refinement_from) << " ms)";
  notes.push_back(steps.str());
  if (idle_notes_apply)
    for (const auto& n : idle.notes) notes.push_back(n);
  const size_t skipped = s.skipped.size() + s.st.skipped.size();
  if (skipped > 0) {
    std::ostringstream o;
    o << "hulk: no time left for " << skipped << " candidate source(s):";
    size_t i = 0;
    for (const auto* v : {&s.st.skipped, &s.skipped})
      for (const auto& name : *v) o << (i++ ? "," : "") << " " << name;
    notes.push_back(o.str());
  }
  // Then the cluster's facts (once), then the plan's own notes (Algorithm 1's moves).
  const std::vector<std::string> facts = cluster_facts(s.c, s.jobs);
  notes.insert(notes.end(), facts.begin(), facts.end());
  for (const auto& n : p.notes)
    if (std::find(facts.begin(), facts.end(), n) == facts.end()) notes.push_back(n);
  p.notes = std::move(notes);
  if (s.search_thread.joinable()) p = better_of_hulk_and_search_thread(std::move(p));
  p.planning_s = seconds_since(s.t0);
  return p;
}

Plan AnytimePlanner::better_of_hulk_and_search_thread(Plan hulk) {
  State& s = *s_;
  s.search_thread.join();
  std::ostringstream o;
  o << "hulk: Search in a second thread (the same budget, seed and move cap) ";
  const auto makespan = [](const Plan& p) { return p.feasible() ? hours(p.makespan_s) : std::string("no feasible plan"); };
  // Hulk's plan (on a tie too: its notes say how it was found), the thread's line after its first note.
  const auto keep_hulks = [&](const std::string& what) {
    o << what << "; Hulk's own plan (" << makespan(hulk) << ") returned";
    hulk.notes.insert(hulk.notes.begin() + (hulk.notes.empty() ? 0 : 1), o.str());
    return std::move(hulk);
  };
  if (!s.search_error.empty()) return keep_hulks("failed (" + s.search_error + ")");
  if (!(score_of(s.search_plan) < score_of(hulk))) return keep_hulks("gave " + makespan(s.search_plan));
  o << "found the shorter plan, returned: " << makespan(s.search_plan) << " against Hulk's own " << makespan(hulk)
    << "; Search's notes follow";
  Plan p = std::move(s.search_plan);
  p.planner = "hulk";
  p.notes.insert(p.notes.begin(), o.str());
  return p;
}

}  // namespace hulk::plan

#include "csrc/plan/descent.h"

#include "csrc/plan/planners.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

namespace hulk::plan::detail {

namespace {

// One candidate move of the last job: `in` joins it (-1: none), `out` leaves it for idle (-1: none).
struct Move {
  int64_t in = -1, out = -1;
  Score score;
  double donor_time = 0;  // the donor job's time without `in` (when `in` belonged to a job)
};

std::vector<int64_t> with_without(const std::vector<int64_t>& g, int64_t add, int64_t drop) {
  std::vector<int64_t> out;
  out.reserve(g.size() + 1);
  for (int64_t x : g)
    if (x != drop) out.push_back(x);
  if (add >= 0) out.insert(std::upper_bound(out.begin(), out.end(), add), add);
  return out;
}

// The machines by compute, fastest first, and by memory, most first.
struct Orders {
  std::vector<int64_t> by_speed, by_memory;
};

Orders orders_of(const Cluster& c) {
  Orders o;
  o.by_speed = fastest_first(c);
  o.by_memory.resize(static_cast<size_t>(c.size()));
  std::iota(o.by_memory.begin(), o.by_memory.end(), 0);
  std::stable_sort(o.by_memory.begin(), o.by_memory.end(),
                   [&](int64_t a, int64_t b) { return capacity_bytes(c, a) > capacity_bytes(c, b); });
  return o;
}

// The machines outside job `last` (group `gl`) worth trying in it: the `pool` closest in the
// time to send its boundary activations, the `pool` fastest and the `pool` with the most memory.
std::vector<int64_t> outside_candidates(const Cluster& c, const ModelSpec& job, const std::vector<int64_t>& assign,
                                        int64_t last, const std::vector<int64_t>& gl, const Orders& order, size_t pool) {
  std::vector<uint8_t> outside(assign.size());
  for (size_t x = 0; x < assign.size(); ++x) outside[x] = assign[x] != last;
  return closest_then_ordered(c, gl, outside, job.boundary_bytes(micro_batch(job, 1)), pool,
                              {&order.by_speed, &order.by_memory});
}

// The jobs' groups and times under an assignment, as the descent changes them.
struct JobsState {
  std::vector<int64_t>& assign;
  std::vector<std::vector<int64_t>> g;
  std::vector<double> t;

  // Machine `y` joins job `j` (leaving its own job's group, if any); groups stay sorted.
  void join(int64_t y, size_t j) {
    const int64_t from = assign[static_cast<size_t>(y)];
    if (from >= 0) {
      auto& gd = g[static_cast<size_t>(from)];
      gd.erase(std::find(gd.begin(), gd.end(), y));
    }
    assign[static_cast<size_t>(y)] = static_cast<int64_t>(j);
    g[j].insert(std::upper_bound(g[j].begin(), g[j].end(), y), y);
  }

  // Machine `y` leaves job `j` for idle.
  void leave(int64_t y, size_t j) {
    g[j].erase(std::find(g[j].begin(), g[j].end(), y));
    assign[static_cast<size_t>(y)] = -1;
  }

  // The score with job `j`'s time replaced by `tj` for each (j, tj) in `changed`.
  Score score_with(const std::vector<std::pair<size_t, double>>& changed) const {
    Score s;
    for (size_t j = 0; j < t.size(); ++j) {
      double tj = t[j];
      for (const auto& [k, tk] : changed)
        if (k == j) tj = tk;
      s.makespan = std::max(s.makespan, tj);
      s.total += tj;
    }
    return s;
  }
};

// Several machines joining the last job at once, and the donor jobs' times without them.
struct Batch {
  std::vector<int64_t> machines;
  std::vector<std::pair<size_t, double>> times;  // (job, time) of the last job and the donors
  Score score;
};

// The best batch of 2 to `batch_max` machines for job `last` that beats `cur`: each candidate
// with its nearest outside machines in the time to send the job's boundary activations (no
// machines when no batch beats it). Why: a layout with one more stage in each of r replicas, or one more
// replica, needs r (or a replica's worth of) machines at once, and each one alone makes the
// plan worse (47 measured machines, OPT-175B on 2 replicas x 14 stages: 15.72 h; one machine
// more 16.13 h; four more at once 15.05 h), so single moves never get there.
Batch best_batch(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev, const JobsState& s, size_t last,
                 const std::vector<int64_t>& cand, const Score& cur, size_t batch_max,
                 const std::function<bool()>& out_of_time, int64_t& evaluations) {
  Batch best;
  best.score = cur;
  const int64_t N = c.size();
  const double bytes = jobs[last].boundary_bytes(micro_batch(jobs[last], 1));
  std::vector<int64_t> outside;
  for (int64_t x = 0; x < N; ++x)
    if (s.assign[static_cast<size_t>(x)] != static_cast<int64_t>(last)) outside.push_back(x);
  for (size_t i = 0; i < cand.size() && !out_of_time(); ++i) {
    const int64_t x = cand[i];
    std::vector<std::pair<double, int64_t>> near;  // (send time from x, machine)
    near.reserve(outside.size());
    for (int64_t y : outside)
      if (y != x) near.push_back({c.send_time(x, y, bytes), y});
    const size_t more = std::min(batch_max - 1, near.size());
    std::partial_sort(near.begin(), near.begin() + static_cast<std::ptrdiff_t>(more), near.end());
    std::vector<int64_t> batch{x};
    std::vector<int64_t> gl = s.g[last];
    gl.insert(std::upper_bound(gl.begin(), gl.end(), x), x);
    for (size_t q = 0; q < more && !out_of_time(); ++q) {
      const int64_t y = near[q].second;
      batch.push_back(y);
      gl.insert(std::upper_bound(gl.begin(), gl.end(), y), y);
      // The donors' times without their machines in the batch (a donor that cannot run
      // without them ends this candidate's batches).
      std::map<size_t, std::vector<int64_t>> donors;
      for (int64_t z : batch) {
        const int64_t dj = s.assign[static_cast<size_t>(z)];
        if (dj >= 0) donors[static_cast<size_t>(dj)].push_back(z);
      }
      std::vector<std::pair<size_t, double>> times;
      for (const auto& [dj, gone] : donors) {
        std::vector<int64_t> gd;
        for (int64_t z : s.g[dj])
          if (std::find(gone.begin(), gone.end(), z) == gone.end()) gd.push_back(z);
        const Evaluator::JobEval e = ev.job(dj, gd);
        ++evaluations;
        if (!e.feasible) break;
        times.push_back({dj, e.time});
      }
      if (times.size() < donors.size()) break;
      const Evaluator::JobEval e = ev.job(last, gl);
      ++evaluations;
      if (!e.feasible) continue;
      times.push_back({last, e.time});
      const Score sc = s.score_with(times);
      if (sc < best.score) best = {batch, times, sc};
    }
  }
  return best;
}

// The best re-split of job `last` with another job (descent.h) that beats `cur`: the last
// job's new group in `machines` (empty when none beats it); `times` holds the last job's time,
// then the other job's.
Batch best_resplit(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev, const JobsState& s, size_t last,
                   const Score& cur, const std::function<bool()>& out_of_time, int64_t& evaluations) {
  Batch best;
  best.score = cur;
  for (size_t j = 0; j < jobs.size() && !out_of_time(); ++j) {
    if (j == last || s.g[j].empty()) continue;
    std::vector<int64_t> pool = s.g[last];
    pool.insert(pool.end(), s.g[j].begin(), s.g[j].end());
    const std::vector<int64_t> chain = chain_order(c, jobs[last], pool);
    for (size_t t : resplit_cuts(s.g[last].size(), chain.size())) {
      if (out_of_time()) break;
      std::vector<int64_t> a(chain.begin(), chain.begin() + static_cast<std::ptrdiff_t>(t));
      std::vector<int64_t> b(chain.begin() + static_cast<std::ptrdiff_t>(t), chain.end());
      std::sort(a.begin(), a.end());
      std::sort(b.begin(), b.end());
      const Evaluator::JobEval ea = ev.job(last, a);
      ++evaluations;
      if (!ea.feasible) continue;
      const Evaluator::JobEval eb = ev.job(j, b);
      ++evaluations;
      if (!eb.feasible) continue;
      std::vector<std::pair<size_t, double>> times{{last, ea.time}, {j, eb.time}};
      const Score sc = s.score_with(times);
      if (sc < best.score) best = {std::move(a), std::move(times), sc};
    }
  }
  return best;
}

}  // namespace

std::vector<size_t> resplit_cuts(size_t now, size_t pool) {
  std::vector<size_t> cuts;
  if (pool < 2) return cuts;
  const size_t w = std::max<size_t>(4, now / 2);
  const size_t lo = now > w ? now - w : 1, hi = std::min(pool - 1, now + w);
  for (size_t t = lo; t <= hi; ++t) cuts.push_back(t);
  return cuts;
}

Descent descend_last_job(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev,
                         std::vector<int64_t>& assign, const std::function<bool()>& out_of_time, size_t pool,
                         size_t batch_max) {
  Descent r;
  const size_t J = jobs.size();
  if (J == 0 || c.size() == 0 || out_of_time()) return r;  // laying out every job costs ms on large groups
  JobsState s{assign, groups_of(assign, J), std::vector<double>(J, 0.0)};
  for (size_t j = 0; j < J; ++j) {
    const Evaluator::JobEval e = ev.job(j, s.g[j]);
    ++r.evaluations;
    if (!e.feasible) return r;  // the walk deals with infeasible jobs
    s.t[j] = e.time;
  }
  const Orders order = orders_of(c);
  Score cur = s.score_with({});
  while (!out_of_time()) {
    const size_t last = static_cast<size_t>(std::max_element(s.t.begin(), s.t.end()) - s.t.begin());
    const std::vector<int64_t>& gl = s.g[last];
    const std::vector<int64_t> cand = outside_candidates(c, jobs[last], assign, static_cast<int64_t>(last), gl, order, pool);
    Move best;
    best.score = cur;
    bool found = false;
    const auto consider = [&](int64_t in, int64_t out, int64_t donor, double t_donor) {
      const Evaluator::JobEval e = ev.job(last, with_without(gl, in, out));
      ++r.evaluations;
      if (!e.feasible) return;
      std::vector<std::pair<size_t, double>> times{{last, e.time}};
      if (donor >= 0) times.push_back({static_cast<size_t>(donor), t_donor});
      const Score sc = s.score_with(times);
      if (sc < best.score) {
        best = {in, out, sc, t_donor};
        found = true;
      }
    };
    for (int64_t y : gl) {  // give one machine back
      if (out_of_time()) break;
      if (gl.size() > 1) consider(-1, y, -1, 0);
    }
    // The donor job's time without each candidate (+inf: it cannot run without it).
    std::vector<double> t_donor(cand.size(), 0.0);
    for (size_t i = 0; i < cand.size() && !out_of_time(); ++i) {
      const int64_t donor = assign[static_cast<size_t>(cand[i])];
      if (donor < 0) continue;
      const Evaluator::JobEval e = ev.job(static_cast<size_t>(donor), with_without(s.g[static_cast<size_t>(donor)], -1, cand[i]));
      ++r.evaluations;
      t_donor[i] = e.feasible ? e.time : kInf;
    }
    // Take one; swaps (|group| x candidates layouts) only when no single move helps.
    for (int pass = 0; pass < 2 && !found; ++pass)
      for (size_t i = 0; i < cand.size() && !out_of_time(); ++i) {
        if (!std::isfinite(t_donor[i])) continue;
        const int64_t donor = assign[static_cast<size_t>(cand[i])];
        if (pass == 0) {
          consider(cand[i], -1, donor, t_donor[i]);
          continue;
        }
        for (int64_t y : gl) {
          if (out_of_time()) break;
          consider(cand[i], y, donor, t_donor[i]);
        }
      }
    // Then several machines at once, only when no move or swap helps.
    if (!found && batch_max >= 2 && !out_of_time()) {
      const Batch b = best_batch(c, jobs, ev, s, last, cand, cur, batch_max, out_of_time, r.evaluations);
      if (b.machines.empty()) {  // the last resort: a re-split with another job
        // Only where the last job holds a tenth of the machines or more (most clusters of 47-200):
        // on fresh measured clusters of 1,000-5,000 machines (k = 160-167, three seeds) Hulk's
        // plans with it everywhere were up to 1% longer on average per size and budget.
        const bool share = s.g[last].size() * kResplitShareInverse >= static_cast<size_t>(c.size());
        const Batch q = !share || out_of_time() ? Batch{} : best_resplit(c, jobs, ev, s, last, cur, out_of_time, r.evaluations);
        if (q.machines.empty()) break;
        const size_t other = q.times[1].first;
        std::vector<int64_t> rest;  // the last job's machines outside the prefix go to the other job
        for (int64_t y : s.g[last])
          if (!std::binary_search(q.machines.begin(), q.machines.end(), y)) rest.push_back(y);
        for (int64_t y : q.machines) s.join(y, last);
        for (int64_t y : rest) s.join(y, other);
        for (const auto& [j, tj] : q.times) s.t[j] = tj;
        cur = q.score;
        ++r.steps;
        ++r.resplits;
        continue;
      }
      for (int64_t y : b.machines) s.join(y, last);
      for (const auto& [j, tj] : b.times) s.t[j] = tj;
      cur = b.score;
      ++r.steps;
      continue;
    }
    if (!found) break;
    if (best.in >= 0) {
      const int64_t donor = assign[static_cast<size_t>(best.in)];
      if (donor >= 0) s.t[static_cast<size_t>(donor)] = best.donor_time;
      s.join(best.in, last);
    }
    if (best.out >= 0) s.leave(best.out, last);
    s.t[last] = ev.job(last, s.g[last]).time;
    cur = best.score;
    ++r.steps;
  }
  return r;
}

}  // namespace hulk::plan::detail

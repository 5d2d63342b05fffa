#include "csrc/plan/descent.h"

#include <algorithm>
#include <cmath>
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

}  // namespace

Descent descend_last_job(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev,
                         std::vector<int64_t>& assign, const std::function<bool()>& out_of_time, size_t pool) {
  Descent r;
  const size_t J = jobs.size();
  const int64_t N = c.size();
  if (J == 0 || N == 0 || out_of_time()) return r;  // laying out every job costs ms on large groups
  std::vector<std::vector<int64_t>> g = groups_of(assign, J);
  std::vector<double> t(J, 0.0);
  for (size_t j = 0; j < J; ++j) {
    const Evaluator::JobEval e = ev.job(j, g[j]);
    ++r.evaluations;
    if (!e.feasible) return r;  // the walk deals with infeasible jobs
    t[j] = e.time;
  }
  std::vector<int64_t> by_speed(static_cast<size_t>(N)), by_memory(static_cast<size_t>(N));
  std::iota(by_speed.begin(), by_speed.end(), 0);
  std::iota(by_memory.begin(), by_memory.end(), 0);
  std::stable_sort(by_speed.begin(), by_speed.end(),
                   [&](int64_t a, int64_t b) { return c.machine(a).tflops > c.machine(b).tflops; });
  std::stable_sort(by_memory.begin(), by_memory.end(),
                   [&](int64_t a, int64_t b) { return capacity_bytes(c, a) > capacity_bytes(c, b); });
  const auto score_with = [&](size_t last, double t_last, int64_t donor, double t_donor) {
    Score s;
    for (size_t j = 0; j < J; ++j) {
      const double tj = j == last ? t_last : static_cast<int64_t>(j) == donor ? t_donor : t[j];
      s.makespan = std::max(s.makespan, tj);
      s.total += tj;
    }
    return s;
  };
  Score cur = score_with(J, 0, -1, 0);
  std::vector<double> d(static_cast<size_t>(N));
  while (!out_of_time()) {
    const size_t last = static_cast<size_t>(std::max_element(t.begin(), t.end()) - t.begin());
    const std::vector<int64_t>& gl = g[last];
    // Outside machines: closest in send time, fastest, most memory; `pool` of each.
    const double bytes = jobs[last].boundary_bytes(micro_batch(jobs[last], 1));
    std::vector<int64_t> outside;
    for (int64_t x = 0; x < N; ++x) {
      if (assign[static_cast<size_t>(x)] == static_cast<int64_t>(last)) continue;
      double best = kInf;
      for (int64_t y : gl) best = std::min(best, c.send_time(x, y, bytes));
      d[static_cast<size_t>(x)] = best;
      outside.push_back(x);
    }
    std::vector<int64_t> cand;
    const size_t k = std::min(pool, outside.size());
    std::partial_sort(outside.begin(), outside.begin() + static_cast<std::ptrdiff_t>(k), outside.end(), [&](int64_t a, int64_t b) {
      return d[static_cast<size_t>(a)] < d[static_cast<size_t>(b)] || (d[static_cast<size_t>(a)] == d[static_cast<size_t>(b)] && a < b);
    });
    cand.assign(outside.begin(), outside.begin() + static_cast<std::ptrdiff_t>(k));
    for (const auto* order : {&by_speed, &by_memory}) {
      size_t taken = 0;
      for (int64_t x : *order) {
        if (taken == pool) break;
        if (assign[static_cast<size_t>(x)] == static_cast<int64_t>(last)) continue;
        ++taken;
        if (std::find(cand.begin(), cand.end(), x) == cand.end()) cand.push_back(x);
      }
    }
    Move best;
    best.score = cur;
    bool found = false;
    const auto consider = [&](int64_t in, int64_t out, int64_t donor, double t_donor) {
      const Evaluator::JobEval e = ev.job(last, with_without(gl, in, out));
      ++r.evaluations;
      if (!e.feasible) return;
      const Score s = score_with(last, e.time, donor, t_donor);
      if (s < best.score) {
        best = {in, out, s, t_donor};
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
      const Evaluator::JobEval e = ev.job(static_cast<size_t>(donor), with_without(g[static_cast<size_t>(donor)], -1, cand[i]));
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
    if (!found) break;
    if (best.in >= 0) {
      const int64_t donor = assign[static_cast<size_t>(best.in)];
      if (donor >= 0) {
        auto& gd = g[static_cast<size_t>(donor)];
        gd.erase(std::find(gd.begin(), gd.end(), best.in));
        t[static_cast<size_t>(donor)] = best.donor_time;
      }
      assign[static_cast<size_t>(best.in)] = static_cast<int64_t>(last);
    }
    if (best.out >= 0) assign[static_cast<size_t>(best.out)] = -1;
    g[last] = with_without(gl, best.in, best.out);
    t[last] = ev.job(last, g[last]).time;
    cur = best.score;
    ++r.steps;
  }
  return r;
}

}  // namespace hulk::plan::detail

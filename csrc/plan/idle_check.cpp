// The idle check that ends Hulk's refinement (idle_check.h).
#include "csrc/plan/idle_check.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "csrc/plan/assignment.h"
#include "csrc/plan/job_helpers.h"

namespace hulk::plan::detail {

namespace {

// The job with the latest finish under `assign` and its time ({-1, 0} without jobs).
std::pair<int64_t, double> last_job(Evaluator& ev, const std::vector<std::vector<int64_t>>& g) {
  return slowest_job(ev, g, std::vector<uint8_t>(g.size(), 0));
}

// Machines a job's layout leaves without a stage go back to idle where that costs the job
// nothing (best_pipeline leaves machines that do not help idle), so that the idle check sees them.
// Out of time it stops: the plan's makespan is the same either way (the layout of the machines
// used is the layout of the group), and the idle check's note counts the machines without a
// stage. Each job's layout costs milliseconds on groups of thousands of machines: run after the
// walk at 20,000 measured machines it took 16-22 ms past a 0.1 s budget (#361, paper4).
void release_unused(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev, std::vector<int64_t>& assign,
                    const std::function<bool()>& out_of_time) {
  const auto groups = groups_of(assign, jobs.size());
  for (size_t j = 0; j < jobs.size() && !out_of_time(); ++j) {
    // the Evaluator knows (cached) whether the layout leaves any machine without a stage
    if (groups[j].empty() || ev.job(j, groups[j]).stageless == 0) continue;
    const JobPlan jp = best_pipeline(c, jobs[j], groups[j]);
    if (!jp.cost.feasible) continue;
    std::vector<int64_t> used = jp.machines();
    std::sort(used.begin(), used.end());
    if (used.size() == groups[j].size() || ev.job(j, used).time > ev.job(j, groups[j]).time) continue;
    for (int64_t x : groups[j])
      if (!std::binary_search(used.begin(), used.end(), x)) assign[static_cast<size_t>(x)] = -1;
  }
}

}  // namespace

IdleCheck offer_idle_to_last_job(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev,
                                 std::vector<int64_t>& assign, const std::function<bool()>& out_of_time) {
  IdleCheck out;
  const int64_t N = c.size();
  // The last round that gave machines: to whom, how many, and the largest batch it weighed.
  int64_t gave_to = -1;
  size_t gave = 0, gave_weighed = 0;
  release_unused(c, jobs, ev, assign, out_of_time);
  for (;;) {
    const auto g = groups_of(assign, jobs.size());
    const auto [j, worst] = last_job(ev, g);
    std::vector<int64_t> idle;
    for (int64_t x = 0; x < N; ++x)
      if (assign[static_cast<size_t>(x)] < 0) idle.push_back(x);
    if (j < 0 || idle.empty() || !std::isfinite(worst)) return out;
    const auto& gj = g[static_cast<size_t>(j)];
    const auto with_batch = [&](size_t k) {  // the group and the k closest idle machines, sorted
      std::vector<int64_t> trial = gj;
      trial.insert(trial.end(), idle.begin(), idle.begin() + static_cast<std::ptrdiff_t>(k));
      std::sort(trial.begin(), trial.end());
      return trial;
    };
    double best = kInf;
    size_t best_k = 0, offered = 0;
    bool cut = out_of_time();  // then only the note
    std::vector<size_t> sizes;
    if (!cut) {
      // Each idle machine's latency to the group: the same minimum over the group's closest
      // machine per region, O(idle x regions) where the pairs were O(idle x group), 15-20 ms
      // at 20,000 measured machines (OPT-175B on 384 of them), enough to overrun a 0.1 s budget.
      std::vector<double> d(static_cast<size_t>(N), kInf);
      const std::vector<int64_t> near = closest_per_region(c, gj);
      for (int64_t x : idle)
        for (int64_t y : near) d[static_cast<size_t>(x)] = std::min(d[static_cast<size_t>(x)], c.latency_s(x, y));
      std::stable_sort(idle.begin(), idle.end(), [&](int64_t a, int64_t b) {
        const double da = d[static_cast<size_t>(a)], db = d[static_cast<size_t>(b)];
        return da < db || (da == db && c.machine(a).tflops > c.machine(b).tflops);
      });
      // Batches up to four replicas' worth (plus 16): a job on a few machines gains nothing from
      // thousands more, and laying out such a group costs seconds at 20,000 machines.
      const size_t cap = std::min(idle.size(), 4 * gj.size() + 16);
      for (size_t k = 1; k < cap; k *= 2) sizes.push_back(k);
      sizes.push_back(cap);
      if (gj.size() <= cap) sizes.push_back(gj.size());
      std::sort(sizes.begin(), sizes.end());
      sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
    }
    for (size_t k : sizes) {
      if (out_of_time()) {
        cut = true;
        break;
      }
      const double t = ev.job(static_cast<size_t>(j), with_batch(k)).time;
      offered = k;
      if (t < best) {
        best = t;
        best_k = k;
      }
    }
    if (best < worst * (1 - 1e-9)) {
      for (size_t i = 0; i < best_k; ++i) assign[static_cast<size_t>(idle[i])] = j;
      out.given += static_cast<int64_t>(best_k);
      gave_to = j;
      gave = best_k;
      gave_weighed = offered;
      continue;
    }
    // Machines a job holds but its layout leaves without a stage are idle too (release_unused
    // keeps them where the layout of the others alone is slower).
    int64_t stageless = 0;
    for (size_t k = 0; k < g.size(); ++k)
      if (!g[k].empty()) stageless += ev.job(k, g[k]).stageless;
    std::ostringstream o;
    o << "hulk: " << static_cast<int64_t>(idle.size()) + stageless << " machine(s) stay idle";
    if (stageless > 0) o << " (" << stageless << " of them in a job's group, without a stage in its layout)";
    o << ": " << job_label(jobs, j) << ", the job that finishes last (" << hours(worst) << ", on " << gj.size() << " machines), ";
    if (cut) {
      if (offered == 0 && gave_to == j)  // batches larger than the one taken were weighed and were slower
        o << "took the batch of the closest idle ones that shortened it most (" << gave << " more, of batches of up to "
          << gave_weighed << " weighed by the cost model); the time limit came before it was offered the rest again";
      else if (offered == 0)
        o << "was not offered them: the time limit came first";
      else
        o << "was offered batches of up to " << offered << " of them (none shortened it) before the time limit ended the check";
    } else if (best_k == 0 || !std::isfinite(best)) {
      o << "cannot use them (no layout of its machines and the idle ones is feasible)";
    } else {
      const std::vector<int64_t> trial = with_batch(best_k);
      const JobPlan now = best_pipeline(c, jobs[static_cast<size_t>(j)], gj);
      const JobPlan more = best_pipeline(c, jobs[static_cast<size_t>(j)], trial);
      o << "would take " << hours(best) << " with the best batch of the closest ones (" << best_k
        << " more); the cost model's iteration: " << now.cost.iteration_s << " s now (compute " << now.cost.compute_s
        << " s, communication " << now.cost.comm_s << " s), " << more.cost.iteration_s << " s with them (compute "
        << more.cost.compute_s << " s, communication " << more.cost.comm_s << " s)";
      if (more.cost.comm_s > now.cost.comm_s)
        o << ": the longer pipeline and all-reduce over their links cost more than their compute saves";
      if (more.machines().size() < trial.size()) o << "; its best layout leaves " << trial.size() - more.machines().size()
                                                   << " of them without a stage";
    }
    out.notes.push_back(o.str());
    return out;
  }
}

}  // namespace hulk::plan::detail

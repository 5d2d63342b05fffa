#include "csrc/plan/reseed.h"

#include <algorithm>
#include <map>
#include <string>

#include "csrc/plan/job_helpers.h"

namespace hulk::plan::detail {

namespace {

// A group's standing while it grows: feasible ones by time, the rest by memory shortfall.
struct Standing {
  bool feasible = false;
  double value = kInf;  // time when feasible, else shortfall
};

bool better(const Standing& a, const Standing& b) {
  if (a.feasible != b.feasible) return a.feasible;
  return a.value < b.value;
}

Standing standing_of(const Evaluator::JobEval& e) { return {e.feasible, e.feasible ? e.time : e.shortfall}; }

std::vector<int64_t> toggled(const std::vector<int64_t>& g, int64_t x) {
  std::vector<int64_t> out = g;
  const auto it = std::lower_bound(out.begin(), out.end(), x);
  if (it != out.end() && *it == x)
    out.erase(it);
  else
    out.insert(it, x);
  return out;
}

// The candidates of one step: the group's own machines (when it has two or more), then the
// `pool` free outside machines closest to it in send time of `bytes` and the `pool` fastest
// free outside machines (`by_speed`: fastest_first).
std::vector<int64_t> step_candidates(const Cluster& c, const std::vector<int64_t>& g, std::vector<uint8_t> free,
                                     const std::vector<int64_t>& by_speed, double bytes, size_t pool) {
  std::vector<int64_t> cand;
  if (g.size() > 1) cand = g;
  for (int64_t x : g) free[static_cast<size_t>(x)] = 0;  // outside machines only
  const std::vector<int64_t> out = closest_then_ordered(c, g, free, bytes, pool, {&by_speed});
  cand.insert(cand.end(), out.begin(), out.end());
  return cand;
}

// Each seed region gets two descents: from all of its free machines, and from the fewest of its
// fastest that hold the job. One machine at a time, the descent from the whole region stops in
// the first local optimum on the way down: on 200 paper-fitted machines #408 (paper4, 1 s) the
// descents from the free machines of three regions ended on groups of 35, 31 and 47 machines,
// each longer than the plan's, while OPT-175B's best group there is 13 machines of one region. The smaller
// start goes first where the region holds at least this many times its machines (a region of
// dozens or hundreds of machines, where the descent from all of them is slow too), else the
// descent from all of them does (regions of a few machines, measured networks, where the good
// groups chain regions). Against the descent from all alone (the same build, a toggle, each
// plan beside Search's of the same seed; Hulk(t)/Search(t), geometric means): fresh clusters
// k = 425-429, 47-1,000 machines, paper4 and OPT+RoBERTa+BERT, 0.1-1 s, two seeds: 0.9574 ->
// 0.9551 (paper-fitted 200: 0.996-1.000 -> 0.981-0.989; measured within 0.8% either way;
// plans over 1.02x 4 -> 4 of 360); at 5,000-20,000 machines (paper4, one seed): 0.924 -> 0.902,
// paper-fitted 20,000 at 0.1 s 0.997 -> 0.745, measured 20,000 at 0.1 s 0.892 -> 0.905.
constexpr size_t kFewFirstRatio = 4;

// Where a seed region alone cannot hold the job (measured networks: regions of 1-8 machines,
// OPT-175B on 13 or more), its descent starts from the fewest machines that do: the region's,
// fastest first, then the free machines outside it closest in send time, this many of them at
// most. The descent from the region's machines alone spent its time adding machines one
// steepest step at a time (about 430 layouts for one seed region on measured 1,000 #438 at
// 0.3 s). Against that descent (the same build, a toggle, each plan beside Search's of the same
// seed; Hulk(t)/Search(t), geometric means, measured clusters): tuning clusters k = 50-54,
// 47-1,000 machines, 0.3 and 1 s, two seeds, 0.8947 -> 0.8934 (1,000 machines 0.8273 -> 0.8216
// at 0.3 s, 0.8126 -> 0.8073 at 1 s); k = 50-53 at 5,000-20,000, 0.3-3 s, 0.8250 -> 0.8213; fresh
// k = 440-444 at 1,000 machines, 0.3-3 s, two seeds, 0.8088 -> 0.7976, and k = 440-443 at 200
// and 5,000, 0.8781 -> 0.8749; plans over 1.02x 0 -> 0, 1 -> 1, 2 -> 2 and 1 -> 2 of 120, 48,
// 60 and 48. Held out (fresh k = 445-449, 1,000 machines, 0.3-3 s, seed 0): the paper's six
// jobs and Llama-2 0.8326 -> 0.8308; large regions and paper-fitted clusters unchanged (their
// regions hold the job, so this path is not taken).
constexpr size_t kGrowPool = 256;

}  // namespace

std::vector<int64_t> smallest_fitting_prefix(Evaluator& ev, size_t job, const std::vector<int64_t>& machines,
                                             const std::function<bool()>& out_of_time, int64_t& evaluations) {
  const auto prefix = [&](size_t k) {
    std::vector<int64_t> h(machines.begin(), machines.begin() + static_cast<std::ptrdiff_t>(k));
    std::sort(h.begin(), h.end());
    return h;
  };
  if (machines.empty()) return {};
  ++evaluations;
  if (!ev.job(job, prefix(machines.size())).feasible) return {};
  // Invariant: prefix(hi) fits; every prefix shorter than lo tried did not.
  size_t lo = 1, hi = machines.size();
  while (lo < hi && !out_of_time()) {
    const size_t mid = lo + (hi - lo) / 2;
    ++evaluations;
    if (ev.job(job, prefix(mid)).feasible)
      hi = mid;
    else
      lo = mid + 1;
  }
  return prefix(hi);
}

std::vector<int64_t> region_then_closest(const Cluster& c, const std::vector<int64_t>& fast, std::vector<uint8_t> free,
                                         double bytes, size_t pool) {
  for (int64_t x : fast) free[static_cast<size_t>(x)] = 0;
  std::vector<int64_t> out = fast;
  const std::vector<int64_t> near = closest_then_ordered(c, fast, free, bytes, pool, {});
  out.insert(out.end(), near.begin(), near.end());
  return out;
}

std::vector<int64_t> region_index(const Cluster& c) {
  std::vector<int64_t> r(static_cast<size_t>(c.size()));
  if (c.regional()) {
    r = c.network().region;
    return r;
  }
  std::map<std::string, int64_t> id;
  for (int64_t x = 0; x < c.size(); ++x) {
    const auto it = id.emplace(c.machine(x).region, static_cast<int64_t>(id.size())).first;
    r[static_cast<size_t>(x)] = it->second;
  }
  return r;
}

std::vector<int64_t> seed_regions(const Cluster& c, const std::vector<int64_t>& region, const std::vector<uint8_t>& free,
                                  size_t seeds) {
  const int64_t R = region.empty() ? 0 : *std::max_element(region.begin(), region.end()) + 1;
  std::vector<double> tflops(static_cast<size_t>(R), 0.0);
  std::vector<uint8_t> any(static_cast<size_t>(R), 0);
  for (int64_t x = 0; x < c.size(); ++x)
    if (free[static_cast<size_t>(x)]) {
      tflops[static_cast<size_t>(region[static_cast<size_t>(x)])] += c.machine(x).tflops;
      any[static_cast<size_t>(region[static_cast<size_t>(x)])] = 1;
    }
  std::vector<int64_t> order;
  for (int64_t r = 0; r < R; ++r)
    if (any[static_cast<size_t>(r)]) order.push_back(r);
  const size_t k = std::min(seeds, order.size());
  std::partial_sort(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k), order.end(), [&](int64_t a, int64_t b) {
    return tflops[static_cast<size_t>(a)] > tflops[static_cast<size_t>(b)] ||
           (tflops[static_cast<size_t>(a)] == tflops[static_cast<size_t>(b)] && a < b);
  });
  order.resize(k);
  return order;
}

Reseed reseed_last_job(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev, std::vector<int64_t>& assign,
                       const std::function<bool()>& out_of_time, size_t seeds, size_t pool) {
  Reseed r;
  const size_t J = jobs.size();
  if (J == 0 || c.size() == 0 || out_of_time()) return r;
  const auto groups = groups_of(assign, J);
  const std::pair<int64_t, double> found = last_job_if_all_feasible(ev, groups, r.evaluations);
  if (found.first < 0) return r;  // the walk deals with infeasible jobs
  const size_t last = static_cast<size_t>(found.first);
  const double t_last = found.second;
  std::vector<uint8_t> free(static_cast<size_t>(c.size()), 0);
  for (int64_t x = 0; x < c.size(); ++x) {
    const int64_t a = assign[static_cast<size_t>(x)];
    free[static_cast<size_t>(x)] = a < 0 || a == static_cast<int64_t>(last);
  }
  const std::vector<int64_t> region = region_index(c);
  const std::vector<int64_t> by_speed = fastest_first(c);
  const double bytes = jobs[last].boundary_bytes(micro_batch(jobs[last], 1));
  std::vector<int64_t> best_group;
  double best_time = t_last;
  // Why a descent the clock cut needs kCutGroupMargin (reseed.h): it has not reached its basin's
  // floor, and a group just below the job's time is often in a worse basin than the job's own,
  // which the descent and the walks after the reseed would have shortened further. Measured
  // 1,000 #438 (OPT+RoBERTa+BERT, 1 s), planned 20 times per arm, twice: with every cut group
  // taken, 8 of 20 plans over 11.5 h both times (8.2-12.8 h; Search(60 s) 9.44 h); with the
  // margin, 1 of 20 (8.2-11.8 h). Taking only finished descents was tried first (tuning
  // clusters k = 50-54, 1,000 and 5,000 machines, 0.3-3 s, both modes, 120 plans): 0.8935 ->
  // 0.8989 of Search(t), measured 5,000 at 0.3 s 0.794 -> 0.837, where a cut group is the
  // reseed's only gain. The margin on that set: 0.8893 -> 0.8874 (5%: 0.8875), measured
  // 5,000 at 0.3 s 0.797 -> 0.799.
  // A steepest descent on the last job's time from group g (see reseed.h); the best group so far
  // is kept in best_group.
  const auto descend = [&](std::vector<int64_t> g) {
    Standing cur = standing_of(ev.job(last, g));
    ++r.evaluations;
    bool cut = false;
    for (;;) {
      if (out_of_time()) {
        cut = true;
        break;
      }
      Standing step = cur;
      int64_t pick = -1;
      for (int64_t x : step_candidates(c, g, free, by_speed, bytes, pool)) {
        if (out_of_time()) {
          cut = true;
          break;
        }
        const Standing s = standing_of(ev.job(last, toggled(g, x)));
        ++r.evaluations;
        if (better(s, step)) {
          step = s;
          pick = x;
        }
      }
      if (pick < 0) break;
      g = toggled(g, pick);
      cur = step;
    }
    if (!cur.feasible || !(cur.value < best_time)) return;
    if (cut && !(cur.value < (1 - kCutGroupMargin) * t_last)) {
      ++r.cut_dismissed;
      return;
    }
    best_time = cur.value;
    best_group = std::move(g);
  };
  for (int64_t seed : seed_regions(c, region, free, seeds)) {
    if (out_of_time()) break;
    ++r.seeds;
    std::vector<int64_t> all, fast;  // the region's free machines: by index, and fastest first
    for (int64_t x = 0; x < c.size(); ++x)
      if (free[static_cast<size_t>(x)] && region[static_cast<size_t>(x)] == seed) all.push_back(x);
    for (int64_t x : by_speed)
      if (free[static_cast<size_t>(x)] && region[static_cast<size_t>(x)] == seed) fast.push_back(x);
    std::vector<int64_t> few = smallest_fitting_prefix(ev, last, fast, out_of_time, r.evaluations);
    if (few.empty() && !fast.empty()) {  // the region cannot hold the job: grown to the fewest that do
      std::vector<int64_t> grown =
          smallest_fitting_prefix(ev, last, region_then_closest(c, fast, free, bytes, kGrowPool), out_of_time, r.evaluations);
      if (!grown.empty()) {
        descend(std::move(grown));
        continue;
      }
    }
    if (few.empty() || few.size() >= all.size()) {
      descend(all);
      continue;
    }
    const bool few_first = all.size() >= kFewFirstRatio * few.size();
    descend(few_first ? few : all);
    if (out_of_time()) break;
    descend(few_first ? all : few);
  }
  if (best_group.empty()) return r;
  for (size_t x = 0; x < assign.size(); ++x)
    if (assign[x] == static_cast<int64_t>(last)) assign[x] = -1;
  for (int64_t x : best_group) assign[static_cast<size_t>(x)] = static_cast<int64_t>(last);
  r.improved = true;
  return r;
}

}  // namespace hulk::plan::detail

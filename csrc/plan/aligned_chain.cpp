#include "csrc/plan/aligned_chain.h"

#include <algorithm>

#include "csrc/plan/job_helpers.h"
#include "csrc/plan/reseed.h"

namespace hulk::plan::detail {

AlignedChain aligned_chain(const std::vector<std::vector<int64_t>>& members, const DistanceRow& dist, int64_t start,
                           int64_t d, size_t max_machines) {
  const size_t R = members.size();
  const size_t D = static_cast<size_t>(d);
  std::vector<uint8_t> open(R, 0);
  for (size_t r = 0; r < R; ++r) open[r] = members[r].size() >= D;
  AlignedChain ch;
  size_t at = static_cast<size_t>(start);
  while (at < R && open[at]) {
    open[at] = 0;
    const size_t take = members[at].size() / D * D;
    ch.order.insert(ch.order.end(), members[at].begin(), members[at].begin() + static_cast<std::ptrdiff_t>(take));
    ch.ends.push_back(ch.order.size());
    if (ch.order.size() >= max_machines) break;
    const double* row = dist(at);
    if (row == nullptr) break;  // no time for another row of distances
    size_t next = R;
    for (size_t r = 0; r < R; ++r)
      if (open[r] && (next == R || row[r] < row[next])) next = r;
    at = next;
  }
  return ch;
}

namespace {

// At most k of the indices 0 .. n-1, spread evenly, n-1 always among them, ascending.
std::vector<size_t> spread(size_t n, size_t k) {
  std::vector<size_t> idx;
  if (n == 0 || k == 0) return idx;
  const size_t step = (n + k - 1) / k;
  for (size_t i = (n - 1) % step; i < n; i += step) idx.push_back(i);
  return idx;
}

}  // namespace

Aligned align_last_job(const Cluster& c, const std::vector<ModelSpec>& jobs, Evaluator& ev, std::vector<int64_t>& assign,
                       const std::function<bool()>& out_of_time) {
  Aligned out;
  const size_t J = jobs.size();
  if (J == 0 || c.size() == 0 || out_of_time()) return out;
  const auto groups = groups_of(assign, J);
  const std::pair<int64_t, double> found = last_job_if_all_feasible(ev, groups, out.evaluations);
  if (found.first < 0) return out;  // the walk deals with infeasible jobs
  const size_t last = static_cast<size_t>(found.first);
  const double t_last = found.second;
  const ModelSpec& job = jobs[last];
  // Free machines by region, fastest first.
  const std::vector<int64_t> region = region_index(c);
  const size_t R = static_cast<size_t>(*std::max_element(region.begin(), region.end()) + 1);
  std::vector<std::vector<int64_t>> members(R);
  for (int64_t x : fastest_first(c)) {
    const int64_t a = assign[static_cast<size_t>(x)];
    if (a < 0 || a == static_cast<int64_t>(last)) members[static_cast<size_t>(region[static_cast<size_t>(x)])].push_back(x);
  }
  // Region distances: the send time of the job's boundary activations between the regions'
  // fastest free machines, a row at a time as the chains reach the region (20,000 measured
  // machines have ~1,700 regions: the whole matrix would be 3M pairs).
  const double bytes = job.boundary_bytes(micro_batch(job, 1));
  std::vector<std::vector<double>> rows(R);
  const DistanceRow dist = [&](size_t a) -> const double* {
    std::vector<double>& row = rows[a];
    if (row.empty()) {
      if (out_of_time()) return nullptr;
      row.assign(R, kInf);
      for (size_t b = 0; b < R; ++b)
        if (b != a && !members[b].empty()) row[b] = c.send_time(members[a].front(), members[b].front(), bytes);
    }
    return row.data();
  };
  const double need = memory_need(job);
  const size_t max_machines = kAlignedGrowth * groups[last].size();

  std::vector<int64_t> best_group;
  double best_time = t_last;
  // The prefixes `idx` of chain `ch` that hold the job's memory, laid out in order; returns the
  // chain's shortest time and the index of its prefix.
  std::vector<double> cum_mem;
  const auto walk = [&](const AlignedChain& ch, int64_t d, const std::vector<size_t>& idx) {
    std::pair<double, size_t> here{kInf, 0};
    cum_mem.assign(ch.order.size() + 1, 0.0);
    for (size_t i = 0; i < ch.order.size(); ++i) cum_mem[i + 1] = cum_mem[i] + capacity_bytes(c, ch.order[i]);
    for (size_t i : idx) {
      if (cum_mem[ch.ends[i]] < need) continue;
      if (out_of_time()) break;
      std::vector<int64_t> g(ch.order.begin(), ch.order.begin() + static_cast<std::ptrdiff_t>(ch.ends[i]));
      std::sort(g.begin(), g.end());
      const Evaluator::JobEval e = ev.job(last, g);
      ++out.evaluations;
      if (!e.feasible || !(e.time < here.first)) continue;
      here = {e.time, i};
      if (e.time < best_time) {
        best_time = e.time;
        best_group = std::move(g);
        out.replicas = d;
      }
    }
    return here;
  };
  // Start regions per D: those with at least D free machines, the most aligned machines first.
  const auto starts = [&](int64_t d) {
    std::vector<int64_t> s;
    for (size_t r = 0; r < R; ++r)
      if (members[r].size() >= static_cast<size_t>(d)) s.push_back(static_cast<int64_t>(r));
    const auto aligned = [&](int64_t r) { return members[static_cast<size_t>(r)].size() / static_cast<size_t>(d); };  // multiples of D
    std::stable_sort(s.begin(), s.end(), [&](int64_t a, int64_t b) { return aligned(a) > aligned(b); });
    if (s.size() > kAlignedStarts) s.resize(kAlignedStarts);
    return s;
  };
  struct Best {
    double time = kInf;
    int64_t d = 0, start = -1;
    size_t index = 0, step = 1;  // the prefix's index on its chain, and the spread's step there
  } overall;
  const auto run_chain = [&](int64_t d, int64_t start, size_t prefixes) {
    const AlignedChain ch = aligned_chain(members, dist, start, d, max_machines);
    ++out.chains;
    const size_t n = ch.ends.size();
    const auto [t, i] = walk(ch, d, spread(n, prefixes));
    if (t < overall.time) overall = {t, d, start, i, n == 0 ? 1 : (n + prefixes - 1) / prefixes};
    return t;
  };
  // Round 1: each D from its first start, a coarse spread of its prefixes.
  std::vector<std::pair<double, int64_t>> by_d;  // (shortest time, D)
  for (int64_t d : kAlignedReplicas) {
    if (out_of_time()) break;
    const std::vector<int64_t> s = starts(d);
    if (s.empty()) continue;
    by_d.push_back({run_chain(d, s.front(), kAlignedFirstPrefixes), d});
  }
  // Round 2: the other starts, the most promising D first, for the D whose first chain came
  // within kAlignedPromise of the job's time.
  std::stable_sort(by_d.begin(), by_d.end());
  for (const auto& [t, d] : by_d) {
    if (!(t < kAlignedPromise * t_last)) break;
    const std::vector<int64_t> s = starts(d);
    for (size_t k = 1; k < s.size() && !out_of_time(); ++k) run_chain(d, s[k], kAlignedPrefixes);
  }
  // Round 3: every prefix between the shortest group's evaluated neighbours on its chain.
  if (overall.start >= 0 && !out_of_time()) {
    const AlignedChain ch = aligned_chain(members, dist, overall.start, overall.d, max_machines);
    const size_t n = ch.ends.size(), step = overall.step;
    std::vector<size_t> near;
    for (size_t i = overall.index >= step ? overall.index - step + 1 : 0; i < std::min(n, overall.index + step); ++i)
      if (i != overall.index) near.push_back(i);
    walk(ch, overall.d, near);
  }
  if (best_group.empty()) return out;
  for (size_t x = 0; x < assign.size(); ++x)
    if (assign[x] == static_cast<int64_t>(last)) assign[x] = -1;
  for (int64_t x : best_group) assign[static_cast<size_t>(x)] = static_cast<int64_t>(last);
  out.improved = true;
  out.machines = static_cast<int64_t>(best_group.size());
  return out;
}

}  // namespace hulk::plan::detail

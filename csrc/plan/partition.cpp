// Chain order and the layer split by dynamic programming (planners.h building blocks).
#include "csrc/plan/job_helpers.h"
#include "csrc/plan/cluster_facts.h"
#include "csrc/plan/split.h"
#include "csrc/plan/planners.h"
#include "csrc/plan/interchangeable.h"
#include "csrc/plan/layout_memo.h"

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

namespace {

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


}  // namespace

// ---- building blocks --------------------------------------------------------------------------

namespace {

// The machine of `machines` the chain starts at: where the memory is (the chain's head is kept
// by every D); ties: faster, lower id.
size_t chain_head(const Cluster& c, const std::vector<int64_t>& machines) {
  size_t start = 0;
  for (size_t k = 1; k < machines.size(); ++k) {
    const Machine& a = c.machine(machines[k]);
    const Machine& b = c.machine(machines[start]);
    if (std::make_tuple(a.memory_gb, a.tflops, -machines[k]) > std::make_tuple(b.memory_gb, b.tflops, -machines[start]))
      start = k;
  }
  return start;
}

// The nearest-neighbour walk on a regional cluster, the same chain as the plain walk (ties
// included). There send_time(x, y) = access(x) + access(y) + latency(r(x), r(y)) +
// bytes / bandwidth(r(x), r(y)), which within one region of y grows with access(y): the
// closest remaining machine of a region is the first of its run of least access latency
// (runs: machines of equal access, by id). So a step compares one candidate per region (plus,
// for a rounding tie, the next runs' first): O(R) instead of O(n). And most steps stay home:
// when the best machine of the walk's own region is closer than any other region can be
// (access(x) + least access + Cluster::other_region_bound), it is taken without a scan, so
// the regions are scanned only when the walk leaves one. A job's group of 10,000 machines
// laid out once cost ~0.3 s in the plain walk; 20,000 machines in 1,668 regions ~0.13 s with a
// scan per step, 14-28 ms with the stay (bench_layout.py, "all machines").
std::vector<int64_t> regional_walk(const Cluster& c, double bytes, std::vector<int64_t> machines, size_t start) {
  const RegionalNetwork& net = c.network();
  const auto access = [&](int64_t x) { return net.access_ms[static_cast<size_t>(x)]; };
  const auto region_of = [&](int64_t x) { return net.region[static_cast<size_t>(x)]; };
  struct Region {
    int64_t id = 0;
    std::vector<int64_t> ids;     // by (access, id)
    std::vector<size_t> run_end;  // per position: one past its run of equal access
    std::vector<size_t> taken;    // per run start: how many of the run are in the chain (a prefix)
    size_t first = 0;             // the first run with a machine left
    size_t left = 0;
    size_t slot = 0;              // index in `active`
  };
  double least_access_s = c.access_s(machines[start]);
  for (int64_t x : machines) least_access_s = std::min(least_access_s, c.access_s(x));
  std::vector<int64_t> out{machines[start]};
  machines.erase(machines.begin() + static_cast<std::ptrdiff_t>(start));
  std::map<int64_t, Region> by_region;
  for (int64_t x : machines) by_region[region_of(x)].ids.push_back(x);
  Region* home = &by_region[region_of(out.front())];  // the region of the chain's last machine
  std::vector<Region*> active;
  for (auto& [r, reg] : by_region) {
    reg.id = r;
    const size_t n = reg.ids.size();
    if (n == 0) continue;
    std::sort(reg.ids.begin(), reg.ids.end(), [&](int64_t a, int64_t b) {
      return access(a) < access(b) || (access(a) == access(b) && a < b);
    });
    reg.run_end.assign(n, n);
    reg.taken.assign(n, 0);
    for (size_t k = n - 1; k-- > 0;) reg.run_end[k] = access(reg.ids[k]) == access(reg.ids[k + 1]) ? reg.run_end[k + 1] : k + 1;
    reg.left = n;
    reg.slot = active.size();
    active.push_back(&reg);
  }
  // Per slot of `active`, its region's closest candidate (the first machine left of its first
  // run), kept in flat arrays: a scan reads them in order.
  std::vector<double> cand_access_s(active.size());
  std::vector<int64_t> cand_region(active.size());
  const auto refresh = [&](const Region& reg) {
    cand_access_s[reg.slot] = c.access_s(reg.ids[reg.first + reg.taken[reg.first]]);
    cand_region[reg.slot] = reg.id;
  };
  for (const Region* reg : active) refresh(*reg);
  std::vector<size_t> ties;
  // The closest remaining machine of `reg` from `from` (its send time), ties to the lower id.
  struct Pick {
    double t = kInf;
    int64_t y = -1;
    Region* reg = nullptr;
    size_t run = 0;
  };
  const auto consider = [&](int64_t from, Region& reg, Pick& best) {
    double t0 = kInf;
    bool have = false;
    // Runs by increasing access: the send time only grows, so later runs matter only on a tie.
    for (size_t k = reg.first; k < reg.ids.size(); k = reg.run_end[k]) {
      if (reg.taken[k] == reg.run_end[k] - k) continue;  // the whole run is in the chain
      const int64_t y = reg.ids[k + reg.taken[k]];
      const double t = c.send_time(from, y, bytes);
      if (have && t != t0) break;
      have = true;
      t0 = t;
      if (best.y < 0 || t < best.t || (t == best.t && y < best.y)) best = Pick{t, y, &reg, k};
    }
  };
  while (!active.empty()) {
    const int64_t from = out.back();
    Pick best;
    if (home->left > 0) consider(from, *home, best);
    // The bound is exact arithmetic; the margin covers the rounding of send_time's sum.
    const double af = c.access_s(from);
    const int64_t rf = home->id;
    const bool stay = best.y >= 0 && best.t < (af + least_access_s + c.other_region_bound(rf, bytes)) * (1 - 1e-12);
    if (!stay) {
      // Every other region's candidate; the regions whose candidate ties the least time are
      // then compared in full (their later runs may tie too, and the lower id wins).
      double least = kInf;
      ties.clear();
      for (size_t k = 0; k < active.size(); ++k) {
        if (active[k] == home) continue;
        const double t = c.regional_send_time(af, cand_access_s[k], rf, cand_region[k], bytes);
        if (t < least) {
          least = t;
          ties.clear();
        }
        if (t == least) ties.push_back(k);
      }
      if (best.y < 0 || least < best.t) best = Pick{};
      if (best.y < 0 || least == best.t)
        for (size_t k : ties) consider(from, *active[k], best);
    }
    out.push_back(best.y);
    home = best.reg;
    Region& reg = *best.reg;
    ++reg.taken[best.run];
    while (reg.first < reg.ids.size() && reg.taken[reg.first] == reg.run_end[reg.first] - reg.first) reg.first = reg.run_end[reg.first];
    if (--reg.left == 0) {
      const size_t slot = reg.slot;
      active[slot] = active.back();
      cand_access_s[slot] = cand_access_s.back();
      cand_region[slot] = cand_region.back();
      active[slot]->slot = slot;
      active.pop_back();
      cand_access_s.pop_back();
      cand_region.pop_back();
    } else {
      refresh(reg);
    }
  }
  return out;
}

}  // namespace

std::vector<int64_t> chain_order_reference(const Cluster& c, const ModelSpec& m, std::vector<int64_t> machines) {
  if (machines.size() <= 1) return machines;
  const double bytes = m.boundary_bytes(micro_batch(m, 1));
  const size_t start = chain_head(c, machines);
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
    machines[next] = machines.back();  // O(1) removal; ties go to the lower id, so order is irrelevant
    machines.pop_back();
  }
  return out;
}

std::vector<int64_t> chain_order(const Cluster& c, const ModelSpec& m, std::vector<int64_t> machines) {
  if (machines.size() <= 1 || !c.regional()) return chain_order_reference(c, m, std::move(machines));
  const size_t start = chain_head(c, machines);
  return regional_walk(c, m.boundary_bytes(micro_batch(m, 1)), std::move(machines), start);
}

std::vector<int64_t> partition_layers(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& chain,
                                      int64_t replicas) {
  if (replicas < 1) throw std::invalid_argument("partition_layers: replicas = " + std::to_string(replicas) + " (must be >= 1)");
  for (int64_t i : chain)
    if (i < 0 || i >= c.size()) throw std::invalid_argument("partition_layers: machine " + std::to_string(i) + " out of range");
  if (chain.empty()) return {};
  return optimise_split(split_problem(c, m, {chain}, CostOptions{}, replicas));
}

void two_opt(const Cluster& c, std::vector<int64_t>& path, double bytes) {
  const size_t n = path.size();
  if (n < 3 || n > 256) return;
  // The send times between the path's machines, by their first positions (at(k): where the
  // machine now at position k started): each is asked for up to 8 times per pass, and on 200
  // measured machines they were a sixth of best_pipeline's time. The same values as asking.
  thread_local std::vector<double> times;
  thread_local std::vector<size_t> at;
  times.resize(n * n);
  at.resize(n);
  for (size_t a = 0; a < n; ++a) {
    at[a] = a;
    for (size_t b = 0; b < n; ++b)
      if (a != b) times[a * n + b] = c.send_time(path[a], path[b], bytes);
  }
  auto w = [&](size_t a, size_t b) { return times[at[a] * n + at[b]]; };
  for (int pass = 0; pass < 4; ++pass) {
    bool improved = false;
    for (size_t i = 0; i + 1 < n; ++i)
      for (size_t j = i + 1; j < n; ++j) {
        double before = 0, after = 0;
        if (i > 0) { before += w(i - 1, i); after += w(i - 1, j); }
        if (j + 1 < n) { before += w(j, j + 1); after += w(i, j + 1); }
        if (after < before * (1 - 1e-12)) {
          std::reverse(path.begin() + static_cast<std::ptrdiff_t>(i), path.begin() + static_cast<std::ptrdiff_t>(j + 1));
          std::reverse(at.begin() + static_cast<std::ptrdiff_t>(i), at.begin() + static_cast<std::ptrdiff_t>(j + 1));
          improved = true;
        }
      }
    if (!improved) break;
  }
}

namespace {

constexpr int64_t kAllOrders = 4;  // pipelines of at most this many stages try every stage order
constexpr double kOrderExhaustive = 256;  // splits enumerated per order (beyond: the exact-greedy path)

// Replica counts tried: every D up to 8, then growing by a quarter, and the largest.
std::vector<int64_t> replica_counts(int64_t max_d) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= max_d; d = d < 8 ? d + 1 : (d * 5 + 3) / 4) out.push_back(d);
  if (out.empty() || out.back() != max_d) out.push_back(max_d);
  return out;
}

// A ring order of D replicas laid along a chain that avoids the long wrap-around edge:
// 0, 2, 4, ..., then back down the odd ones (every ring neighbour at most two pieces away).
std::vector<size_t> zigzag(size_t D) {
  std::vector<size_t> o;
  for (size_t r = 0; r < D; r += 2) o.push_back(r);
  for (size_t r = (D % 2 == 0 ? D - 1 : D - 2); r >= 1 && r < D; r -= 2) o.push_back(r);
  return o;
}

}  // namespace

JobPlan bottleneck_pipeline(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& group) {
  if (group.empty()) return infeasible_job(m, "no machines assigned", memory_need(m));
  const std::vector<int64_t> chain = chain_order(c, m, group);
  const int64_t n = static_cast<int64_t>(chain.size());
  const int64_t max_d = std::min<int64_t>(n, std::max<int64_t>(1, m.global_batch / std::max<int64_t>(1, m.micro_batches)));
  JobPlan best = infeasible_job(m, "no split fits in memory (bottleneck layout)", memory_need(m));
  for (int64_t D = 1; D <= max_d; ++D) {
    const int64_t k = std::min(n / D, m.layers);
    std::vector<std::vector<int64_t>> pieces(static_cast<size_t>(D));
    for (int64_t r = 0; r < D; ++r) pieces[static_cast<size_t>(r)].assign(chain.begin() + r * k, chain.begin() + (r + 1) * k);
    const std::vector<int64_t> bounds = bottleneck_split(split_problem(c, m, pieces));
    if (bounds.empty()) continue;
    JobPlan jp;
    jp.model = m;
    for (auto& pc : pieces) jp.replicas.push_back(Replica{std::move(pc), bounds});
    jp.cost = pipeline_cost(c, m, jp.replicas);
    if (jp.cost.feasible && (!best.cost.feasible || jp.cost.iteration_s < best.cost.iteration_s)) best = std::move(jp);
  }
  return best;
}

namespace {

// The cheapest feasible layout of those offered, and the infeasible one of least shortfall;
// ties go to the layout offered first. Offered layouts are queued with a lower bound of their
// iteration time (split_lower_bound) and split in order of that bound, so once the best so far
// beats the next bound, the rest is not split at all: same result as splitting every layout in
// the order offered (a skipped layout costs more than the best), a fraction of the work.
class LayoutSearch {
 public:
  // `every_layout`: split every layout in the order offered (best_pipeline_reference).
  // `memo` (may be null): the job's splits from earlier calls (layout_memo.h), read and added to.
  LayoutSearch(const Cluster& c, const ModelSpec& m, bool every_layout, LayoutMemo* memo)
      : c_(c), m_(m), skip_by_bound_(!every_layout && m.profiles.empty()), memo_(memo), terms_(c, m, CostOptions{}) {}
  ~LayoutSearch() {
    for (Queued& q : queue_) release(std::move(q.sp));
  }
  LayoutSearch(const LayoutSearch&) = delete;
  LayoutSearch& operator=(const LayoutSearch&) = delete;

  // Queues `reps` (D replicas' machines in stage order) to be split by optimise_split in run().
  void offer(std::vector<std::vector<int64_t>> reps, double exhaustive_limit = 4096) {
    Queued q{acquire(), std::move(reps), exhaustive_limit, offered_++, 0};
    fill_split_problem(q.sp, c_, m_, q.reps, CostOptions{}, 0, &terms_);
    q.bound = split_lower_bound(q.sp);
    if (std::isnan(q.bound)) q.bound = -kInf;  // split it first, never skipped
    queue_.push_back(std::move(q));
  }

  // Splits the queued layouts, least bound first, until the best one's time is below the next
  // bound (the bound's margin covers the rounding between split_objective and pipeline_cost;
  // with a profile whose layers differ the split's T is an approximation: every layout is split).
  void run() {
    if (skip_by_bound_) {
      // Sorted by index: a Queued holds several vectors, and moving them is most of a sort's work.
      order_.resize(queue_.size());
      for (size_t k = 0; k < order_.size(); ++k) order_[k] = k;
      std::stable_sort(order_.begin(), order_.end(), [&](size_t a, size_t b) { return queue_[a].bound < queue_[b].bound; });
      for (size_t k : order_) {
        const Queued& q = queue_[k];
        if (have && q.bound > best.cost.iteration_s * (1 + kBoundMargin)) break;
        split(q);
      }
    } else {
      for (const Queued& q : queue_) split(q);
    }
    for (Queued& q : queue_) release(std::move(q.sp));
    queue_.clear();
  }

  // The best layout's plan (have) and the least-short infeasible one's (have_bad): the model is
  // copied into a JobPlan only here, not for every layout split.
  JobPlan best_plan() const { return plan_of(best); }
  JobPlan least_bad_plan() const { return plan_of(least_bad); }

  struct Layout {
    std::vector<Replica> replicas;
    JobCost cost;
  };
  Layout best, least_bad;
  bool have = false, have_bad = false;

 private:
  struct Queued {
    SplitProblem sp;
    std::vector<std::vector<int64_t>> reps;
    double exhaustive_limit;
    size_t order;  // offered as the order-th layout
    double bound;
  };

  // Split problems are reused across layouts and calls (a thread's own pool): each holds six
  // vectors, and allocating them for every layout offered was a sixth of a Search run's time
  // (callgrind, bundled cluster, OPT+RoBERTa+BERT, 1,000 moves). Problems beyond
  // kPooledValues values are let go, so a layout of thousands of machines is not kept.
  static std::vector<SplitProblem>& pool() {
    thread_local std::vector<SplitProblem> p;
    return p;
  }
  static SplitProblem acquire() {
    std::vector<SplitProblem>& p = pool();
    if (p.empty()) return SplitProblem{};
    SplitProblem sp = std::move(p.back());
    p.pop_back();
    return sp;
  }
  static void release(SplitProblem&& sp) {
    if (sp.c.capacity() <= kPooledValues && pool().size() < kPooledProblems) pool().push_back(std::move(sp));
  }
  static constexpr size_t kPooledValues = 4096, kPooledProblems = 256;

  void split(const Queued& q) {
    LayoutMemo::Found e;
    if (memo_ && memo_->find(q.reps, q.exhaustive_limit, e)) {
      // Split in an earlier call: its outcome; the layout's cost is computed again only if it wins.
      if (e.bounds_size > 0) keep(q, e.bounds, e.bounds_size, e.feasible, e.iteration_s, e.shortfall_bytes, nullptr);
      return;
    }
    const std::vector<int64_t> bounds = optimise_split(q.sp, q.exhaustive_limit);
    Layout l;
    if (!bounds.empty()) l = layout_of(q.reps, bounds);
    if (memo_) memo_->add(q.reps, q.exhaustive_limit, {bounds, l.cost.feasible, l.cost.iteration_s, l.cost.memory_shortfall_bytes});
    if (!bounds.empty()) keep(q, bounds.data(), bounds.size(), l.cost.feasible, l.cost.iteration_s, l.cost.memory_shortfall_bytes, &l);
  }

  Layout layout_of(const std::vector<std::vector<int64_t>>& reps, const std::vector<int64_t>& bounds) const {
    Layout l;
    l.replicas.reserve(reps.size());
    for (const auto& r : reps) l.replicas.push_back(Replica{r, bounds});
    l.cost = pipeline_cost(c_, m_, l.replicas);
    return l;
  }

  JobPlan plan_of(const Layout& l) const {
    JobPlan jp;
    jp.model = m_;
    jp.replicas = l.replicas;
    jp.cost = l.cost;
    return jp;
  }

  // Keeps q's split if it is the best feasible or the least-short infeasible layout so far
  // (ties: the layout offered first); `l` is its layout when made already.
  void keep(const Queued& q, const int64_t* bounds, size_t bounds_size, bool feasible, double t, double shortfall, Layout* l) {
    const auto made = [&] { return l ? std::move(*l) : layout_of(q.reps, std::vector<int64_t>(bounds, bounds + bounds_size)); };
    if (feasible) {
      if (!have || t < best.cost.iteration_s || (t == best.cost.iteration_s && q.order < best_order_)) {
        best = made();
        best_order_ = q.order;
        have = true;
      }
    } else {
      const double s_bad = least_bad.cost.memory_shortfall_bytes;
      if (!have_bad || shortfall < s_bad || (shortfall == s_bad && q.order < bad_order_)) {
        least_bad = made();
        bad_order_ = q.order;
        have_bad = true;
      }
    }
  }

  static constexpr double kBoundMargin = 1e-6;
  const Cluster& c_;
  const ModelSpec& m_;
  const bool skip_by_bound_;  // split_objective is pipeline_cost's iteration time (no measured profile)
  LayoutMemo* const memo_;
  MachineTerms terms_;  // the layouts' machines' terms, shared by their split problems
  std::vector<Queued> queue_;
  std::vector<size_t> order_;
  size_t offered_ = 0, best_order_ = 0, bad_order_ = 0;
};

// The layouts of D replicas of S stages on `ok` (chain order). Every D gets the replica-major
// layout (as the bottleneck layout had); with `all_layouts` (the D of the grid) also other
// stage orders (D = 1), the zigzag all-reduce ring (D >= 3) and the stage-major layout.
void try_layouts(LayoutSearch& search, const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& ok,
                 int64_t D, int64_t S, bool all_layouts, double b) {
  // Replica-major: replicas are consecutive pieces of the chain (each compact); the
  // chain's tail (farthest from its head) is what is left out.
  std::vector<std::vector<int64_t>> pieces(static_cast<size_t>(D));
  for (int64_t r = 0; r < D; ++r) pieces[static_cast<size_t>(r)].assign(ok.begin() + r * S, ok.begin() + (r + 1) * S);
  search.offer(pieces);
  if (!all_layouts) return;
  if (D == 1) {
    if (S <= kAllOrders) {  // few stages: every order
      std::vector<int64_t> perm = pieces[0];
      std::sort(perm.begin(), perm.end());
      do search.offer({perm}, kOrderExhaustive);
      while (std::next_permutation(perm.begin(), perm.end()));
      return;
    }
    // Stage order: 2-opt on the send times, and the reverse (the last stage sends nothing).
    std::vector<int64_t> path = pieces[0];
    two_opt(c, path, m.boundary_bytes(b));
    if (path != pieces[0]) search.offer({path});
    std::reverse(path.begin(), path.end());
    search.offer({path});
    return;
  }
  if (D >= 3) {  // all-reduce ring without the long wrap-around edge
    std::vector<std::vector<int64_t>> ring;
    for (size_t r : zigzag(static_cast<size_t>(D))) ring.push_back(pieces[r]);
    search.offer(std::move(ring));
  }
  if (S > 1) {
    // Stage-major (DT-FM's stage groups): D consecutive chain machines form one stage's
    // data-parallel group, so its all-reduce stays local; stage groups follow the chain.
    std::vector<std::vector<int64_t>> reps(static_cast<size_t>(D), std::vector<int64_t>(static_cast<size_t>(S)));
    for (int64_t s = 0; s < S; ++s)
      for (int64_t r = 0; r < D; ++r) reps[static_cast<size_t>(r)][static_cast<size_t>(s)] = ok[static_cast<size_t>(s * D + r)];
    search.offer(std::move(reps));
  }
}

// No split fits in memory: one pipeline over the usable chain (or the group's largest
// machines when none can hold a layer), layers in proportion to memory, so the cost model
// states the shortfall.
JobPlan proportional_pipeline(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& group,
                              const std::vector<int64_t>& chain) {
  std::vector<int64_t> pool = chain;
  if (pool.empty()) {
    pool = group;
    std::stable_sort(pool.begin(), pool.end(), [&](int64_t a, int64_t b) { return capacity_bytes(c, a) > capacity_bytes(c, b); });
  }
  const int64_t k = std::min<int64_t>(static_cast<int64_t>(pool.size()), m.layers);
  std::vector<int64_t> ms(pool.begin(), pool.begin() + k);
  std::vector<double> w;
  for (int64_t i : ms) w.push_back(capacity_bytes(c, i));
  JobPlan jp;
  jp.model = m;
  jp.replicas.push_back(Replica{ms, proportional_bounds(w, m.layers)});
  jp.cost = pipeline_cost(c, m, jp.replicas);
  jp.cost.feasible = false;  // the split found nothing that fits; stay honest
  return jp;
}

// Words why no layout on `group` is feasible into the least-short infeasible plan.
JobPlan explain_infeasible(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& group, int64_t too_small,
                           JobPlan least_bad) {
  std::ostringstream why;
  why << "no feasible pipeline on " << group.size() << " machines (" << format_gb(group_memory(c, group))
      << " of memory for a model needing at least " << format_gb(memory_need(m)) << ")";
  if (too_small > 0)
    why << "; " << too_small << " of them cannot hold one layer (" << format_gb(m.state_bytes(1)) << " of state plus activations)";
  if (!least_bad.cost.reason.empty()) why << ": " << least_bad.cost.reason;
  least_bad.cost.reason = why.str();
  if (least_bad.cost.memory_shortfall_bytes <= 0) least_bad.cost.memory_shortfall_bytes = 1;
  return least_bad;
}

// The layouts of best_pipeline on `usable` (machines of `group` that can hold a layer, all
// able to reach each other); `group` only words the reason when nothing fits.
JobPlan layouts_on(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& group,
                   const std::vector<int64_t>& usable, int64_t max_d, bool every_layout, LayoutMemo* memo) {
  const int64_t n_all = static_cast<int64_t>(group.size());
  const std::vector<int64_t> chain = chain_order(c, m, usable);
  LayoutSearch search(c, m, every_layout, memo);
  int64_t too_small = n_all;  // machines that hold no layer at any D tried
  const std::vector<int64_t> grid = replica_counts(max_d);
  for (int64_t D = 1; D <= max_d; ++D) {
    const bool all_layouts = std::binary_search(grid.begin(), grid.end(), D);
    // A machine that cannot hold one layer at this micro-batch never holds a stage.
    const double b = micro_batch(m, D);
    LayersThatFit fit(m, b);
    std::vector<int64_t> ok;
    for (int64_t i : chain)
      if (fit(capacity_bytes(c, i)) >= 1) ok.push_back(i);
    too_small = std::min<int64_t>(too_small, n_all - static_cast<int64_t>(ok.size()));
    const int64_t n = static_cast<int64_t>(ok.size());
    if (n < D) continue;
    const int64_t k = std::min(n / D, m.layers);
    try_layouts(search, c, m, ok, D, k, all_layouts, b);
    if (k >= 4 && all_layouts) try_layouts(search, c, m, ok, D, (k + 1) / 2, all_layouts, b);  // fewer, fuller stages: fewer hops
  }
  search.run();
  if (search.have) {
    // The winner's stages in reverse order too (the last stage sends nothing, so the order
    // matters): the result is then never worse than the even split in either order.
    std::vector<std::vector<int64_t>> reversed;
    for (const Replica& r : search.best.replicas) reversed.emplace_back(r.machines.rbegin(), r.machines.rend());
    search.offer(std::move(reversed));
    search.run();
    return search.best_plan();
  }
  return explain_infeasible(c, m, group, too_small,
                            search.have_bad ? search.least_bad_plan() : proportional_pipeline(c, m, group, chain));
}

}  // namespace

namespace {

JobPlan best_pipeline_of(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& group, bool every_layout,
                         LayoutMemo* memo) {
  if (group.empty()) return infeasible_job(m, "no machines assigned", memory_need(m));
  const int64_t n_all = static_cast<int64_t>(group.size());
  // A replica needs at least one sequence per micro-batch.
  const int64_t max_d = std::min<int64_t>(n_all, std::max<int64_t>(1, m.global_batch / std::max<int64_t>(1, m.micro_batches)));
  // Machines that cannot hold one layer even at the smallest micro-batch are left out
  // before the chain is ordered, so the chain does not wander through them.
  std::vector<int64_t> usable;
  LayersThatFit fit(m, micro_batch(m, max_d));
  for (int64_t i : group)
    if (fit(capacity_bytes(c, i)) >= 1) usable.push_back(i);
  const std::vector<std::vector<int64_t>> parts = reach_groups(c, usable);
  if (parts.size() <= 1) return layouts_on(c, m, group, usable, max_d, every_layout, memo);
  // Machines that cannot reach each other never share a job: plan on each reachable set.
  JobPlan best;
  bool have = false;
  size_t largest = 0;
  for (size_t k = 0; k < parts.size(); ++k) {
    if (group_memory(c, parts[k]) > group_memory(c, parts[largest])) largest = k;
    if (group_memory(c, parts[k]) < memory_need(m)) continue;
    JobPlan jp = layouts_on(c, m, parts[k], parts[k], std::min<int64_t>(max_d, static_cast<int64_t>(parts[k].size())),
                            every_layout, memo);
    if (jp.cost.feasible && (!have || jp.cost.iteration_s < best.cost.iteration_s)) {
      best = std::move(jp);
      have = true;
    }
  }
  if (have) return best;
  JobPlan bad = layouts_on(c, m, parts[largest], parts[largest],
                           std::min<int64_t>(max_d, static_cast<int64_t>(parts[largest].size())), every_layout, memo);
  std::ostringstream why;
  why << "no feasible pipeline: the " << n_all << " machines fall into " << parts.size()
      << " sets that cannot reach each other ("
      << (c.rule() == MissingLinkRule::Forbid ? "missing links are forbidden" : "no path joins them; missing links are routed")
      << "); the largest set has " << parts[largest].size() << " machines and " << format_gb(group_memory(c, parts[largest]))
      << " for a model needing at least " << format_gb(memory_need(m)) << ": " << bad.cost.reason;
  bad.cost.reason = why.str();
  return bad;
}

}  // namespace

namespace {

// best_pipeline_of on the group's classes' first members (interchangeable.h), mapped back onto
// the group's own machines: the same cost, and one layout for every group with the same class
// counts. An infeasible result is laid out again on the group as given, so that its reason
// names the group's own machines.
JobPlan on_canonical_group(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& group, bool every_layout,
                           LayoutMemo* memo) {
  const CanonicalGroup g = canonical_group(c, group);
  JobPlan jp = best_pipeline_of(c, m, g.group, every_layout, memo);
  if (g.same) return jp;
  if (!jp.cost.feasible) return best_pipeline_of(c, m, group, every_layout, memo);
  relabel(jp, g);
  return jp;
}

}  // namespace

JobPlan best_pipeline(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& group) {
  return on_canonical_group(c, m, group, /*every_layout=*/false, nullptr);
}

JobPlan best_pipeline(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& group, detail::LayoutMemo& memo) {
  return on_canonical_group(c, m, group, /*every_layout=*/false, &memo);
}

JobPlan best_pipeline_reference(const Cluster& c, const ModelSpec& m, const std::vector<int64_t>& group) {
  return on_canonical_group(c, m, group, /*every_layout=*/true, nullptr);
}

}  // namespace hulk::plan
